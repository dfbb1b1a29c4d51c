"""The Prometheus query_range client over real HTTP (tests/support/local_http.py), its parser, and the daily load."""

from __future__ import annotations

import gzip
import logging
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from urllib.parse import parse_qs

import dagster as dg
import pytest
from dagster_duckdb import DuckDBResource

from pipelines.defs.telemetry.assets import prometheus_gpu_samples, serving_metric_samples
from pipelines.lib.catalog.telemetry import PROMETHEUS_SAMPLES
from pipelines.lib.ingest.telemetry import (
    SERVING_FEED,
    fetch_prometheus_days,
    payload_file_name,
    prometheus_payloads,
    store_responses,
    stored_responses,
)
from pipelines.lib.settings import FinopsHome, Settings
from pipelines.lib.warehouse.connection import connect
from sources.common.http import HttpClient
from sources.telemetry import prometheus
from sources.telemetry.prometheus import PrometheusClient, PrometheusError, split_windows
from sources.telemetry.samples import SAMPLE_SCHEMA
from tests.support import FIXTURES_ROOT
from tests.support.local_http import Reply, local_server

FIXTURES = FIXTURES_ROOT / "telemetry"
MATRIX = (FIXTURES / "query_range_sm_active.json").read_bytes()
EMPTY = (FIXTURES / "query_range_empty.json").read_bytes()
TOO_MANY_POINTS = (FIXTURES / "query_range_too_many_points.json").read_bytes()
K8S_PODS = (FIXTURES / "query_range_k8s_pods.json").read_bytes()
PATH = "/api/v1/query_range"
TOKEN = "prom-tok-9f8e7d6c5b4a"
log = logging.getLogger(__name__)


def _client(url: str, **http: object) -> PrometheusClient:
    settings = {"provider": prometheus.PROVIDER, "backoff_seconds": 0.01, "sleep": lambda _: None} | http
    return PrometheusClient(url, token=TOKEN, http=HttpClient(**settings, secrets=(TOKEN,)))


def _form(body: bytes) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(body.decode()).items()}


def test_matrix_answer_becomes_long_rows_with_labels_decimals_and_utc_times():
    start = datetime(2026, 10, 5, 10, 0, tzinfo=UTC)
    end = datetime(2026, 10, 5, 10, 2, tzinfo=UTC)
    with local_server() as server:
        server.route(PATH, Reply(MATRIX, headers={"Content-Type": "application/json"}))
        answers = _client(server.url).query_range("DCGM_FI_PROF_SM_ACTIVE", start, end, 60)
    assert len(answers) == 1 and len(server.requests) == 1
    sent = server.requests[0]
    assert sent.method == "POST"
    assert _form(sent.body) == {
        "query": "avg_over_time(DCGM_FI_PROF_SM_ACTIVE[60s])",
        "start": "1791194400",
        "end": "1791194520",
        "step": "60s",
    }
    assert sent.headers["Authorization"] == f"Bearer {TOKEN}"
    frame = prometheus.parse_responses(answers).sort("gpu_uuid", "sampled_at")
    rows = frame.to_dicts()
    assert frame.height == 5
    h100 = [row for row in rows if row["gpu_model_name"] == "NVIDIA H100 80GB HBM3"]
    assert [row["value"] for row in h100] == [Decimal("0.875"), Decimal("0.9125"), None]  # NaN is null
    assert [row["sampled_at"] for row in h100] == [
        datetime(2026, 10, 5, 10, 0),
        datetime(2026, 10, 5, 10, 1),
        datetime(2026, 10, 5, 10, 2),
    ]
    # a sample describes the step before it: the one at 10:00 covers 09:59-10:00 on 5 October
    assert {row["sample_date"] for row in h100} == {date(2026, 10, 5)}
    first = h100[0]
    assert first["host"] == "ip-10-0-1-23.us-east-2.compute.internal"
    assert first["gpu_uuid"] == "GPU-585834da-1b2c-4d5e-8f90-a1b2c3d4e5f6"
    assert first["gpu_index"] == 0
    assert (first["namespace"], first["pod"]) == ("research", "llm-pretrain-0")
    assert first["resource_id"] == "i-0123456789abcdef0"  # from the AWS providerID label
    assert first["metric"] == "DCGM_FI_PROF_SM_ACTIVE" and first["sample_seconds"] == 60
    l40s = [row for row in rows if row["gpu_model_name"] == "NVIDIA L40S"]
    # honorLabels: false renamed the workload's labels; the exporter's own pod is not the workload
    assert {(row["namespace"], row["pod"]) for row in l40s} == {("inference", "chat-serving-5d9")}
    assert [row["value"] for row in l40s] == [Decimal("1.08"), Decimal("0.25")]  # raw; clamped in dbt
    assert {row["resource_id"] for row in l40s} == {None}


def test_empty_result_is_an_empty_frame_not_an_error():
    with local_server() as server:
        server.route(PATH, Reply(EMPTY))
        answers = _client(server.url).query_range(
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE", datetime(2026, 10, 5, tzinfo=UTC), datetime(2026, 10, 6, tzinfo=UTC), 300
        )
    frame = prometheus.parse_responses(answers)
    assert frame.is_empty() and frame.columns == list(SAMPLE_SCHEMA)


def test_too_many_points_400_is_reported_with_prometheus_reason_and_not_retried():
    with local_server() as server:
        server.route(PATH, Reply(TOO_MANY_POINTS, status=400))
        # Prometheus counts points its own way (a server-side limit lower than 11,000, a Thanos front end):
        # the 400 it answers must reach the user with its reason.
        with pytest.raises(PrometheusError) as error:
            _client(server.url).query_range(
                "DCGM_FI_DEV_GPU_UTIL", datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC), 60
            )
    assert len(server.requests) == 1
    message = str(error.value)
    assert error.value.url == server.url + PATH
    assert "HTTP 400" in message and "exceeded maximum resolution of 11,000 points" in message


def test_timeout_is_retried_then_reported_naming_the_url():
    with local_server() as server:
        server.route(PATH, Reply(MATRIX, delay=1.0))
        client = _client(server.url, read_timeout=0.2, max_attempts=2)
        with pytest.raises(PrometheusError, match="Timeout") as error:
            client.query_range(
                "DCGM_FI_PROF_SM_ACTIVE", datetime(2026, 10, 5, tzinfo=UTC), datetime(2026, 10, 5, 1, tzinfo=UTC), 60
            )
    assert len(server.requests) == 2
    assert server.url + PATH in str(error.value)


def test_error_envelope_and_malformed_json_name_url_and_reason():
    with local_server() as server:
        server.route(
            PATH,
            Reply(
                b'{"status":"error","errorType":"execution","error":"query timed out in expression evaluation"}',
                status=422,
            ),
            Reply(b'{"status":"success","data":{"resultType":"matrix","result":[', status=200),
        )
        client = _client(server.url)
        window = (datetime(2026, 10, 5, tzinfo=UTC), datetime(2026, 10, 5, 1, tzinfo=UTC), 60)
        with pytest.raises(PrometheusError, match="execution: query timed out in expression evaluation"):
            client.query_range("DCGM_FI_PROF_SM_ACTIVE", *window)
        with pytest.raises(PrometheusError, match="malformed JSON") as error:
            client.query_range("DCGM_FI_PROF_SM_ACTIVE", *window)
    assert error.value.url == server.url + PATH
    with pytest.raises(PrometheusError, match="value 'busy' is not a number"):
        prometheus.parse_query_range(
            prometheus.matrix_payload([({"UUID": "GPU-1"}, [(1791194400, "busy")])]),
            metric="DCGM_FI_DEV_GPU_UTIL",
            query="avg_over_time(DCGM_FI_DEV_GPU_UTIL[60s])",
            step_seconds=60,
            source_ref="test",
        )


def test_a_long_range_is_split_so_no_request_asks_more_than_11000_points():
    # 2 days at a 10 s step: 17,281 points, so two windows; the second starts one step after the first ends.
    start, end = datetime(2026, 10, 1, tzinfo=UTC), datetime(2026, 10, 3, tzinfo=UTC)
    with local_server() as server:
        server.route(PATH, Reply(EMPTY))
        _client(server.url).query_range("DCGM_FI_PROF_SM_ACTIVE", start, end, 10)
    forms = [_form(request.body) for request in server.requests]
    bounds = [(int(form["start"]), int(form["end"])) for form in forms]
    first, last = int(start.timestamp()), int(end.timestamp())
    assert bounds == [(first, first + 10 * 10_999), (first + 10 * 11_000, last)]
    assert all((stop - begin) // 10 + 1 <= 11_000 for begin, stop in bounds)
    assert split_windows(start, start, 60) == [prometheus.Window(start, start)]


def test_bearer_token_is_sent_but_never_in_errors_or_logs(caplog):
    with local_server() as server:
        server.route(PATH, Reply(b"upstream down " + TOKEN.encode(), status=503))
        client = _client(server.url, max_attempts=2)
        with caplog.at_level(logging.DEBUG), pytest.raises(PrometheusError) as error:
            client.query_range(
                "DCGM_FI_PROF_SM_ACTIVE", datetime(2026, 10, 5, tzinfo=UTC), datetime(2026, 10, 5, 1, tzinfo=UTC), 60
            )
    assert [request.headers["Authorization"] for request in server.requests] == [f"Bearer {TOKEN}"] * 2
    assert TOKEN not in str(error.value)
    assert TOKEN not in caplog.text


def test_daily_load_fetches_stores_reparses_offline_and_skips_without_url(tmp_path: Path, monkeypatch):
    home = FinopsHome(tmp_path / "home").create_folders()
    day = date(2026, 10, 5)
    with local_server() as server, connect(home.warehouse) as con:
        server.route(PATH, Reply(MATRIX))
        monkeypatch.setenv(prometheus.BASE_URL_ENV, server.url)
        monkeypatch.setenv(prometheus.TOKEN_ENV, TOKEN)
        load = fetch_prometheus_days(
            home, con, [day], offline=False, log=log, step_seconds=60, metrics=("DCGM_FI_PROF_SM_ACTIVE",)
        )
        assert load.outcome.status == "loaded" and load.days == [day]
        # one window: the day's 1,440 points, 00:01 .. 24:00
        assert _form(server.requests[0].body)["start"] == str(int(datetime(2026, 10, 5, 0, 1, tzinfo=UTC).timestamp()))
        # the fixture's five samples all describe minutes of 5 October
        assert load.rows == 5 and load.hosts == 2
        stored = sorted(prometheus_payloads(home, day).iterdir())
        assert len(stored) == 1 and gzip.decompress(stored[0].read_bytes()) == MATRIX
        assert TOKEN.encode() not in stored[0].read_bytes()
        # offline: the stored answer is re-parsed, no request, and being the same payload changes nothing
        again = fetch_prometheus_days(home, con, [day], offline=True, log=log, step_seconds=60)
        assert len(server.requests) == 1 and again.outcome.status == "duplicate"
        # a fresh fetch of the day with fewer series replaces the day whole
        server.route(PATH, Reply(EMPTY))
        replaced = fetch_prometheus_days(
            home, con, [day], offline=False, log=log, step_seconds=60, metrics=("DCGM_FI_PROF_SM_ACTIVE",)
        )
        assert replaced.outcome.replaced_rows == 5
        assert con.execute(f"select count(*) from {PROMETHEUS_SAMPLES.name}").fetchone()[0] == 0
        monkeypatch.delenv(prometheus.BASE_URL_ENV)
        skipped = fetch_prometheus_days(home, con, [day], offline=False, log=log)
        assert skipped.outcome is None and "set FINOPS_PROMETHEUS_URL" in skipped.skipped[0]
        nothing = fetch_prometheus_days(home, con, [date(2026, 10, 6)], offline=True, log=log)
        assert nothing.outcome is None and "no recorded query_range answers" in nothing.skipped[0]


def test_kubernetes_pod_labels_reach_the_raw_table_one_series_per_gpu_and_pod(tmp_path: Path):
    """dcgm-exporter with Kubernetes mapping: one series per (GPU, pod); a GPU no pod holds has none of the labels, and
    a scrape with honorLabels: false carries the workload's labels as exported_* (the recording's serve-7)."""
    home = FinopsHome(tmp_path / "home").create_folders()
    day = date(2026, 10, 5)
    with local_server() as server, connect(home.warehouse) as con:
        server.route(PATH, Reply(K8S_PODS))
        load = fetch_prometheus_days(
            home,
            con,
            [day],
            offline=False,
            log=log,
            client=_client(server.url),
            step_seconds=900,
            metrics=("DCGM_FI_PROF_GR_ENGINE_ACTIVE",),
        )
        assert load.outcome.status == "loaded"
        rows = con.execute(
            f"select gpu_index, namespace, pod, container, count(*), min(sampled_at), max(sampled_at), "
            f"count(distinct host), min(host), min(resource_id), min(gpu_model_name), count(distinct gpu_uuid) "
            f"from {PROMETHEUS_SAMPLES.name} group by all order by gpu_index, min(sampled_at)"
        ).fetchall()
    at = datetime(2026, 10, 5)
    hours = [at + timedelta(hours=h) for h in (0.25, 6, 6.25, 10.5, 12, 12.25, 12.5, 12.75, 24)]
    node = (1, "gpu-node-a", "k8s-node-a", "NVIDIA A100 80GB PCIe", 1)
    # 15-minute samples: a series from 00:15 to 12:00 is 48 of them (12 hours, the first covering 00:00-00:15)
    assert rows == [
        (0, "research", "train-0", "trainer", 48, hours[0], hours[4], *node),
        (0, "sandbox", "notebook-1", "jupyter", 3, hours[5], hours[7], *node),
        (0, "inference", "serve-7", "server", 47, hours[6], hours[8], *node),
        (1, None, None, None, 78, hours[0], hours[8], *node),
        (1, "data", "etl-3", "spark", 18, hours[2], hours[3], *node),
        (2, None, None, None, 96, hours[0], hours[8], *node),
    ]


@pytest.mark.parametrize(
    ("asset", "first", "last"),
    [
        # DCGM: a point describes the step before it, so 00:15 .. 24:00; serving counters are read at 00:00 .. 23:45
        (prometheus_gpu_samples, datetime(2026, 10, 5, 0, 15, tzinfo=UTC), datetime(2026, 10, 6, tzinfo=UTC)),
        (serving_metric_samples, datetime(2026, 10, 5, tzinfo=UTC), datetime(2026, 10, 5, 23, 45, tzinfo=UTC)),
    ],
)
def test_the_range_feed_assets_ask_prometheus_with_the_settings_step(tmp_path: Path, monkeypatch, asset, first, last):
    home = FinopsHome(tmp_path / "home").create_folders()
    monkeypatch.delenv(prometheus.TOKEN_ENV, raising=False)
    with local_server() as server, dg.instance_for_test() as instance:
        server.route(PATH, Reply(EMPTY))
        monkeypatch.setenv(prometheus.BASE_URL_ENV, server.url)
        result = dg.materialize(
            [asset],
            partition_key="2026-10-05",
            resources={
                "duckdb": DuckDBResource(database=str(home.warehouse)),
                "settings": Settings(home=home, prometheus_step_seconds=900),
            },
            instance=instance,
        )
    assert result.success and server.requests
    asked = {(form["step"], form["start"], form["end"]) for form in (_form(r.body) for r in server.requests)}
    assert asked == {("900s", str(int(first.timestamp())), str(int(last.timestamp())))}


def test_asset_is_skipped_not_failed_without_a_url_and_loads_a_recorded_range_in_one_run(tmp_path: Path, monkeypatch):
    home = FinopsHome(tmp_path / "home").create_folders()
    monkeypatch.setenv("FINOPS_HOME", str(home.root))
    monkeypatch.delenv(prometheus.BASE_URL_ENV, raising=False)
    duckdb = DuckDBResource(database=str(home.warehouse))
    with dg.instance_for_test() as instance:
        skipped = dg.materialize(
            [prometheus_gpu_samples],
            partition_key="2026-10-05",
            resources={"duckdb": duckdb, "settings": Settings(home=home)},
            instance=instance,
        )
        assert skipped.success
        assert skipped.get_asset_materialization_events() == []
        # two recorded days, loaded offline in one single-run backfill over three partitions
        for day in (date(2026, 10, 4), date(2026, 10, 5)):
            folder = prometheus_payloads(home, day)
            folder.mkdir(parents=True)
            start = datetime(day.year, day.month, day.day, 0, 1, tzinfo=UTC)
            end = start + timedelta(minutes=1439)  # 24:00
            payload = prometheus.matrix_payload(
                [({"UUID": "GPU-1", "Hostname": "n1"}, [(start.timestamp(), "0.5"), (end.timestamp(), "1")])]
            )
            (folder / payload_file_name("DCGM_FI_PROF_SM_ACTIVE", 60, start, end)).write_bytes(gzip.compress(payload))
        loaded = dg.materialize(
            [prometheus_gpu_samples],
            resources={"duckdb": duckdb, "settings": Settings(home=home, offline=True)},
            instance=instance,
            tags={
                "dagster/asset_partition_range_start": "2026-10-04",
                "dagster/asset_partition_range_end": "2026-10-06",
            },
        )
    assert loaded.success
    metadata = loaded.get_asset_materialization_events()[0].step_materialization_data.materialization.metadata
    assert metadata["days_loaded"].value == 2 and metadata["rows_loaded"].value == 4
    assert "2026-10-06: offline, and no recorded" in metadata["days_skipped"].value[0]


MIG_UTIL = (FIXTURES / "query_range_mig_gpu_util.json").read_bytes()


def test_mig_slices_keep_their_instance_and_gpu_util_sentinels_are_no_reading():
    frame = prometheus.parse_query_range(
        MIG_UTIL, metric="DCGM_FI_DEV_GPU_UTIL", query="q", step_seconds=900, source_ref="mig"
    )
    by_series = {
        (row["gpu_uuid"][-3:], row["gpu_instance_id"], row["gpu_instance_profile"], row["value_invalid"])
        for row in frame.to_dicts()
    }
    # the parent's 9223372036854775794 and the slice's 100 (GPU_UTIL is not valid under MIG) are flagged, not kept
    assert by_series == {("e50", None, None, True), ("e50", "1", "3g.40gb", True), ("e51", None, None, False)}
    assert frame.filter(frame["value_invalid"])["value"].null_count() == frame["value_invalid"].sum() == 2 * 96
    assert set(frame.filter(~frame["value_invalid"])["value"].to_list()) == {Decimal(50), Decimal(0)}


@pytest.mark.parametrize(
    ("labels", "reason"),
    [
        ({"GPU_I_ID": "1"}, "series 0 has GPU_I_ID without GPU_I_PROFILE"),
        ({"GPU_I_ID": "1", "GPU_I_PROFILE": "MIG 3g"}, "series 0: GPU_I_PROFILE 'MIG 3g' is not <g>g.<memory>gb"),
    ],
)
def test_a_slice_without_a_readable_profile_is_rejected_naming_the_series(labels: dict[str, str], reason: str):
    payload = prometheus.matrix_payload([({"UUID": "GPU-1", "Hostname": "h"} | labels, [(1791159300, "0.5")])])
    with pytest.raises(PrometheusError, match=reason):
        prometheus.parse_query_range(
            payload, metric="DCGM_FI_PROF_GR_ENGINE_ACTIVE", query="q", step_seconds=900, source_ref="x"
        )


ENERGY = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"


def test_a_counter_capture_says_it_holds_readings_and_an_unmarked_one_is_an_old_increase(tmp_path: Path):
    """Captures are re-parsed offline with the query their name rebuilds: a bare counter's readings are marked
    `.counter`, so an energy capture without the marker was stored when the feed asked `increase(…)`."""
    start, end = datetime(2026, 10, 5, 0, 15, tzinfo=UTC), datetime(2026, 10, 6, tzinfo=UTC)
    window, span = prometheus.Window(start, end), f"{int(start.timestamp())}-{int(end.timestamp())}"
    payload = prometheus.matrix_payload([({"UUID": "GPU-1", "Hostname": "n1"}, [(end.timestamp(), "540000000")])])
    power = "avg_over_time(DCGM_FI_DEV_POWER_USAGE[900s])"
    store_responses(
        tmp_path / "new",
        [
            prometheus.RangeResponse(ENERGY, ENERGY, window, 900, "u", payload),
            prometheus.RangeResponse("DCGM_FI_DEV_POWER_USAGE", power, window, 900, "u", payload),
        ],
    )
    assert sorted(path.name for path in (tmp_path / "new").iterdir()) == [
        f"DCGM_FI_DEV_POWER_USAGE__900s__{span}.json.gz",  # a gauge's name as it always was
        f"{ENERGY}__900s__{span}.counter.json.gz",
    ]
    new = stored_responses(tmp_path / "new", "recorded")
    assert [(answer.metric, answer.query) for answer in new] == [("DCGM_FI_DEV_POWER_USAGE", power), (ENERGY, ENERGY)]
    old = tmp_path / "old"
    old.mkdir()
    (old / payload_file_name(ENERGY, 900, start, end)).write_bytes(gzip.compress(payload))
    (answer,) = stored_responses(old, "recorded")
    assert answer.query == f"increase({ENERGY}[900s])" == prometheus.legacy_query_for(ENERGY, 900)
    rows = prometheus.parse_responses([answer])
    assert rows.select("promql", "value").rows() == [(f"increase({ENERGY}[900s])", Decimal(540000000))]
    assert rows.schema == SAMPLE_SCHEMA
    # the serving feed always asked the bare counters: its unmarked captures are readings
    served = tmp_path / "serving"
    served.mkdir()
    (served / payload_file_name("vllm:prompt_tokens_total", 900, start, end)).write_bytes(gzip.compress(payload))
    (serving_answer,) = stored_responses(served, "recorded", SERVING_FEED)
    assert serving_answer.query == "vllm:prompt_tokens_total"
    (old / "sm_active.json.gz").write_bytes(gzip.compress(payload))
    with pytest.raises(
        PrometheusError, match=r"<metric>__<step>s__<start>-<end>\.counter\.json\.gz for a bare counter"
    ):
        stored_responses(old, "recorded")
