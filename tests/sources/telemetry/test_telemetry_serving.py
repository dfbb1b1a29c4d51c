"""The serving connector (vLLM/SGLang counters from exposition captures and query_range answers) and its daily load.

Expected figures are read from the fixtures here with `json`, `re` and `Decimal`, never from the connector.
"""

from __future__ import annotations

import gzip
import json
import logging
import re
from datetime import UTC, date, datetime
from decimal import Decimal
from itertools import pairwise
from pathlib import Path
from urllib.parse import parse_qs

import dagster as dg
import pytest
from dagster_duckdb import DuckDBResource

from pipelines.defs.telemetry.assets import serving_metric_samples
from pipelines.lib.catalog.telemetry import SERVING_SAMPLES
from pipelines.lib.ingest.telemetry import SERVING_FEED, fetch_prometheus_days, prometheus_payloads
from pipelines.lib.settings import FinopsHome, Settings
from pipelines.lib.warehouse.connection import connect
from sources.common.errors import RejectedInput
from sources.common.http import HttpClient
from sources.telemetry import prometheus, serving
from tests.support import FIXTURES_ROOT
from tests.support.local_http import Reply, local_server

FIXTURES = FIXTURES_ROOT / "telemetry" / "serving"
CAPTURE = FIXTURES / "federate_vllm_1215.prom"
RANGE = FIXTURES / "query_range_vllm_counters.json"
DAY = date(2026, 10, 5)
log = logging.getLogger(__name__)


def capture_samples() -> list[tuple[str, dict[str, str], Decimal, int]]:
    """(name, labels, value, line) of every sample line of the capture, read with a regular expression."""
    found = []
    for number, line in enumerate(CAPTURE.read_text().splitlines(), start=1):
        if line and not line.startswith("#"):
            name = re.match(r"[^{ ]+", line)[0]
            labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', line))
            found.append((name, labels, Decimal(line.split()[-2]), number))
    return found


def per_series_and_summed_first(series: list[list[Decimal]]) -> tuple[Decimal, Decimal]:
    """The increase over the points of several series: per series with reset handling, then summed; and the sum of
    the series first, then differenced with the same rule."""

    def increase(points: list[Decimal]) -> Decimal:
        return sum((b if b < a else b - a for a, b in pairwise(points)), Decimal(0))

    return sum((increase(points) for points in series), Decimal(0)), increase(
        [sum(p) for p in zip(*series, strict=True)]
    )


def test_exposition_capture_keeps_the_serving_counters_and_reads_exported_labels_exactly():
    parsed = serving.parse_exposition(CAPTURE.read_bytes(), name=CAPTURE.name)
    kept = [(name, labels, value, line) for name, labels, value, line in capture_samples() if name in serving.METRICS]
    rows = parsed.frame.sort("source_row").select(
        "metric", "model_name", "namespace", "pod", "engine_index", "finished_reason", "value", "source_row"
    )
    assert rows.rows() == [
        (
            name,
            labels["model_name"],
            labels["exported_namespace"],
            labels["exported_pod"],  # the federating scrape's own pod label (prometheus-0) loses
            labels.get("engine"),
            labels.get("finished_reason"),
            value,
            line,
        )
        for name, labels, value, line in kept
    ]
    # 1.2345e+06 (prometheus_client's spelling above 10^6) is the exact decimal
    assert Decimal("1234500") in rows["value"].to_list()
    assert set(parsed.frame["sampled_at"]) == {datetime(2026, 10, 5, 12, 15)}
    assert set(parsed.frame["engine"]) == {"vllm", "sglang"} and set(parsed.frame["source"]) == {"exposition"}
    # buckets of the kept histograms are skipped quietly; the gauges are named in one warning
    (warning,) = parsed.warnings
    assert warning.rule == serving.UNKNOWN_METRIC and warning.rows == 2
    assert "vllm:kv_cache_usage_perc, vllm:num_requests_running" in warning.message


def test_query_range_rows_and_the_reset_summing_first_would_hide():
    document = json.loads(RANGE.read_text())
    parsed = serving.parse_query_range(RANGE.read_bytes(), metric=serving.PROMPT_TOKENS, source_ref="recorded")
    assert parsed.warnings == ()
    points = sum(len(series["values"]) for series in document["data"]["result"])
    assert parsed.frame.height == points
    first = document["data"]["result"][2]  # Qwen engine 1, the series that restarts
    rows = parsed.frame.filter(
        (parsed.frame["engine_index"] == "1") & (parsed.frame["metric"] == first["metric"]["__name__"])
    )
    assert rows["value"].to_list() == [Decimal(value) for _, value in first["values"]]
    assert rows["sampled_at"].to_list() == [
        datetime.fromtimestamp(at, UTC).replace(tzinfo=None) for at, _ in first["values"]
    ]
    # Qwen's prompt tokens in hour 10 (points 10:00 .. 11:00): engine 1 restarts at 11:00, engine 0 grows by more
    # than engine 1 lost, so the summed series never drops and differencing it misses the restart
    qwen = [
        [Decimal(value) for _, value in series["values"][:5]]
        for series in document["data"]["result"]
        if series["metric"]["__name__"] == serving.PROMPT_TOKENS and series["metric"]["pod"] == "vllm-qwen-0"
    ]
    right, summed_first = per_series_and_summed_first(qwen)
    assert (right, summed_first) == (Decimal(146000), Decimal(109000))


@pytest.mark.parametrize(
    ("text", "row", "column"),
    [
        ('vllm:prompt_tokens_total{model_name="m",pod="p"} twelve 1791202500000', 2, "value"),
        ('vllm:prompt_tokens_total{model_name="m",pod="p" 12 1791202500000', 2, "sample"),
        ('vllm:prompt_tokens_total{pod="p"} 12 1791202500000', 2, "model_name"),
        ('vllm:prompt_tokens_total{model_name="m"} 12', 2, "timestamp"),
    ],
)
def test_a_bad_capture_line_is_rejected_naming_file_line_and_column(text: str, row: int, column: str):
    with pytest.raises(RejectedInput) as rejected:
        serving.parse_exposition(f"# TYPE vllm:prompt_tokens_total counter\n{text}\n".encode(), name="cap.prom")
    assert (rejected.value.file, rejected.value.row, rejected.value.column) == ("cap.prom", row, column)


def test_a_sample_without_time_takes_the_scrape_time_and_a_bad_series_names_its_number():
    scraped = datetime(2026, 10, 5, 9, 30)
    parsed = serving.parse_exposition(b'vllm:prompt_tokens_total{model_name="m"} 12\n', name="c", scraped_at=scraped)
    assert parsed.frame["sampled_at"].to_list() == [scraped] and parsed.frame["pod"].to_list() == [None]
    payload = prometheus.matrix_payload(
        [
            ({"__name__": serving.PROMPT_TOKENS, "model_name": "m"}, [(1791194400, "1")]),
            ({"pod": "p"}, [(1791194400, "2")]),
        ]
    )
    with pytest.raises(RejectedInput, match="series 1: model_name is missing") as rejected:
        serving.parse_query_range(payload, metric=serving.PROMPT_TOKENS, source_ref="q")
    assert rejected.value.column == "model_name"


def test_daily_load_asks_for_the_bare_counters_stores_them_and_reads_captures_offline(tmp_path: Path):
    home = FinopsHome(tmp_path / "home").create_folders()
    with local_server() as server, connect(home.warehouse) as con:
        server.route("/api/v1/query_range", Reply(RANGE.read_bytes()))
        client = prometheus.PrometheusClient(server.url, http=HttpClient(provider=prometheus.PROVIDER))
        load = fetch_prometheus_days(
            home, con, [DAY], offline=False, log=log, client=client, step_seconds=900,
            metrics=(serving.PROMPT_TOKENS,), feed=SERVING_FEED,
        )  # fmt: skip
        form = {key: values[0] for key, values in parse_qs(server.requests[0].body.decode()).items()}
        assert form["query"] == serving.PROMPT_TOKENS
        assert (form["start"], form["end"]) == ("1791158400", str(1791158400 + 86400 - 900))
        folder = prometheus_payloads(home, DAY, "serving")
        (stored,) = folder.iterdir()
        assert gzip.decompress(stored.read_bytes()) == RANGE.read_bytes()
        assert load.outcome.status == "loaded" and load.rows == 90 and load.pods == 2
        (folder / CAPTURE.name).write_bytes(CAPTURE.read_bytes())
        offline = fetch_prometheus_days(home, con, [DAY], offline=True, log=log, feed=SERVING_FEED)
        assert offline.outcome.status == "loaded" and offline.outcome.replaced_rows == 90
        assert offline.rows == 90 + 13 and len(offline.warnings) == 1
        by_source = con.execute(
            f"select source, count(*) from {SERVING_SAMPLES.name} group by source order by source"
        ).fetchall()
    assert by_source == [("exposition", 13), ("query_range", 90)]


def test_asset_is_skipped_without_a_url_and_loads_recordings_offline(tmp_path: Path, monkeypatch):
    home = FinopsHome(tmp_path / "home").create_folders()
    monkeypatch.delenv(prometheus.BASE_URL_ENV, raising=False)
    duckdb = DuckDBResource(database=str(home.warehouse))
    folder = prometheus_payloads(home, DAY, "serving")
    folder.mkdir(parents=True)
    (folder / CAPTURE.name).write_bytes(CAPTURE.read_bytes())
    with dg.instance_for_test() as instance:
        skipped = dg.materialize(
            [serving_metric_samples],
            partition_key=DAY.isoformat(),
            resources={"duckdb": duckdb, "settings": Settings(home=home)},
            instance=instance,
        )
        assert skipped.success and skipped.get_asset_materialization_events() == []
        loaded = dg.materialize(
            [serving_metric_samples],
            partition_key=DAY.isoformat(),
            resources={"duckdb": duckdb, "settings": Settings(home=home, offline=True)},
            instance=instance,
        )
    metadata = loaded.get_asset_materialization_events()[0].step_materialization_data.materialization.metadata
    assert metadata["rows_loaded"].value == 13 and metadata["pods"].value == 2
    assert "vllm:num_requests_running" in metadata["warnings"].value[0]
