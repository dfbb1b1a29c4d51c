"""Serving counters' hourly increases on a real dbt build: the recorded query_range answer fetched over real HTTP and a
/federate capture of 12:15 read offline, then `dbt build --select +int_serving__token_increases_hourly`.

The recording (tests/fixtures/telemetry/serving/query_range_vllm_counters.json, 15-minute points 10:00-12:00 on
5 October 2026) holds Llama-3.1-8B-Instruct on vllm-llama-0 and Qwen2.5-72B-Instruct on vllm-qwen-0 with two engines
(data parallel); Qwen's engine 1 restarts between 10:45 and 11:00. By hand, Qwen's prompt tokens in hour 10 are
engine 0's 30000 + 32000 + 28000 + 35000 and engine 1's 6000 + 5000 + 6000 + 4000 (the restart: the new value) =
146000, where differencing the summed engines gives 109000; its requests 250 + 10 + 42 = 302 (not 228), its prefill
seconds 11.25 with 4 counter resets. The capture adds Llama's 12:15 values (pod labels renamed exported_*): 700 prompt
and 210 generation tokens in hour 12. Every figure is recomputed below from the two files with `json`, `re` and
`Decimal`.
"""

from __future__ import annotations

import json
import logging
import re
from collections import defaultdict
from datetime import UTC, date, datetime
from decimal import Decimal
from itertools import pairwise

import pytest

from pipelines.lib.ingest.telemetry import SERVING_FEED, fetch_prometheus_days, prometheus_payloads
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from sources.common.http import HttpClient
from sources.telemetry import prometheus
from tests.support import FIXTURES_ROOT
from tests.support.dbt_helpers import run_dbt
from tests.support.local_http import Reply, local_server
from tests.support.warehouse_helpers import query

DAY = date(2026, 10, 5)
FIXTURES = FIXTURES_ROOT / "telemetry" / "serving"
RANGE = FIXTURES / "query_range_vllm_counters.json"
CAPTURE = FIXTURES / "federate_vllm_1215.prom"
COLUMNS = {
    "prompt_tokens": ("vllm:prompt_tokens_total", "sglang:prompt_tokens_total"),
    "generation_tokens": ("vllm:generation_tokens_total", "sglang:generation_tokens_total"),
    "prefix_cache_queries": ("vllm:prefix_cache_queries_total",),
    "prefix_cache_hits": ("vllm:prefix_cache_hits_total",),
    "requests": ("vllm:request_success_total",),
    "prefill_seconds": ("vllm:request_prefill_time_seconds_sum",),
    "decode_seconds": ("vllm:request_decode_time_seconds_sum",),
}


def fixture_points() -> dict[tuple, list[tuple[datetime, Decimal]]]:
    """(model, namespace, pod, engine, metric, finished_reason) -> [(time, value)] from both fixtures."""
    points: dict[tuple, list[tuple[datetime, Decimal]]] = defaultdict(list)

    def add(name: str, labels: dict[str, str], at: datetime, value: Decimal) -> None:
        namespace = labels.get("exported_namespace") or labels.get("namespace")
        pod = labels.get("exported_pod") or labels.get("pod")
        key = (labels["model_name"], namespace, pod, labels.get("engine"), name, labels.get("finished_reason"))
        points[key].append((at, value))

    for series in json.loads(RANGE.read_text())["data"]["result"]:
        for at, value in series["values"]:
            add(series["metric"]["__name__"], series["metric"], datetime.fromtimestamp(at, UTC), Decimal(value))
    for line in CAPTURE.read_text().splitlines():
        if line and not line.startswith("#"):
            name = re.match(r"[^{ ]+", line)[0]
            *_, value, millis = line.split()
            labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', line))
            add(name, labels, datetime.fromtimestamp(int(millis) / 1000, UTC), Decimal(value))
    return points


def expected_hourly() -> dict[tuple, dict[str, Decimal | int]]:
    """(hour, model, namespace, pod) -> column -> increase: per series, a drop counting as the new value, in the hour
    the interval starts in; then summed."""
    rows: dict[tuple, dict[str, Decimal | int]] = defaultdict(lambda: {"counter_resets": 0})
    for (model, namespace, pod, _, metric, _), series in fixture_points().items():
        column = next((name for name, metrics in COLUMNS.items() if metric in metrics), None)
        if column is None:
            continue
        for (before, old), (_, new) in pairwise(sorted(series)):
            row = rows[(before.replace(minute=0, tzinfo=None), model, namespace, pod)]
            row[column] = row.get(column, Decimal(0)) + (new if new < old else new - old)
            row["counter_resets"] += new < old
    return rows


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> FinopsHome:
    tmp_path = tmp_path_factory.mktemp("serving")
    home = FinopsHome(tmp_path / "home").create_folders()
    log = logging.getLogger("test")
    with local_server() as server, connect(home.warehouse) as con:
        server.route("/api/v1/query_range", Reply(RANGE.read_bytes()))
        recover_and_ensure_raw_tables(con)
        client = prometheus.PrometheusClient(server.url, http=HttpClient(provider=prometheus.PROVIDER))
        fetched = fetch_prometheus_days(
            home, con, [DAY], offline=False, log=log, client=client, step_seconds=900,
            metrics=("vllm:prompt_tokens_total",), feed=SERVING_FEED,
        )  # fmt: skip
        assert fetched.outcome.status == "loaded"
        (prometheus_payloads(home, DAY, SERVING_FEED.folder) / CAPTURE.name).write_bytes(CAPTURE.read_bytes())
        assert fetch_prometheus_days(home, con, [DAY], offline=True, log=log, feed=SERVING_FEED).outcome.rows == 103
    build = run_dbt(
        home.root, tmp_path / "target",
        "build", "--select", "+int_serving__token_increases_hourly", "--exclude", "test_type:unit",
        "--indirect-selection", "cautious", "--log-path", str(tmp_path / "logs"),
    )  # fmt: skip
    assert build.returncode == 0, build.stdout[-4000:]
    assert "int_serving__token_increases_hourly_column_rules" in build.stdout
    return home


def test_hourly_increases_are_taken_per_series_with_resets_then_summed(built: FinopsHome):
    rows = query(
        built.warehouse,
        f"select hour_start, model_name, namespace, pod, {', '.join(COLUMNS)}, counter_resets "
        "from intermediate.int_serving__token_increases_hourly",
    )
    found = {
        row[:4]: {name: value for name, value in zip([*COLUMNS, "counter_resets"], row[4:], strict=True) if value}
        for row in rows
    }
    expected = {key: {name: value for name, value in row.items() if value} for key, row in expected_hourly().items()}
    assert found == expected
    qwen_10 = found[(datetime(2026, 10, 5, 10), "Qwen2.5-72B-Instruct", "inference", "vllm-qwen-0")]
    assert qwen_10 == {
        "prompt_tokens": Decimal(146000),  # 109000 if the engines were summed before differencing
        "generation_tokens": Decimal(36500),
        "requests": Decimal(302),  # 228 summed first
        "prefill_seconds": Decimal("11.25"),
        "counter_resets": 4,
    }
    llama_12 = found[(datetime(2026, 10, 5, 12), "Llama-3.1-8B-Instruct", "inference", "vllm-llama-0")]
    assert llama_12 == {"prompt_tokens": Decimal(700), "generation_tokens": Decimal(210)}
