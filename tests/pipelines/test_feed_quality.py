"""Quality suites and freshness for the price feeds, exchange rates and telemetry; one non-negative rule for all.

Real DuckDB files; real Dagster runs (`dg.materialize`) of a price feed and the Prometheus asset with
their blocking checks, each fed a raw payload with one bad row the parser accepts but the suite must
reject. Freshness is tested with hand-set capture times.
"""

from __future__ import annotations

import gzip
import json
import logging
import shutil
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import dagster as dg
import polars as pl
import pytest
from dagster_duckdb import DuckDBResource

from pipelines.defs.prices.fx_rates import PRICE_PARTITIONS
from pipelines.defs.prices.market_prices import build_price_feed_asset
from pipelines.defs.quality.freshness_checks import build_delivery_freshness_check
from pipelines.defs.quality.load_quality_checks import build_load_quality_check
from pipelines.defs.telemetry.assets import TELEMETRY_PARTITIONS, prometheus_gpu_samples
from pipelines.lib.catalog.billing import AWS_CUR, AZURE_ACTUAL, FOCUS, GCP_BILLING, OCI_COST
from pipelines.lib.catalog.prices import FEEDS_BY_NAME, PRICE_FEEDS
from pipelines.lib.catalog.registry import CATALOGUE, DELIVERED_SOURCES, FEED_DELIVERIES
from pipelines.lib.catalog.telemetry import HOST_MAP_SOURCE, NVIDIA_SMI_SOURCE, SERVING_SOURCE
from pipelines.lib.ingest.landing import register
from pipelines.lib.ingest.telemetry import (
    SERVING_FEED,
    fetch_prometheus_days,
    ingest_host_maps,
    ingest_nvidia_smi_logs,
    payload_file_name,
    prometheus_payloads,
)
from pipelines.lib.prices.fx_rates import refresh_fx_rates
from pipelines.lib.prices.market_prices import SNAPSHOTS, refresh_price_feed
from pipelines.lib.quality.freshness import ensure_freshness_view, source_freshness
from pipelines.lib.quality.suite import check_pending_loads, validate_load
from pipelines.lib.settings import FinopsHome, Settings
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.tables import recover_and_ensure_tables
from sources.aws import cur
from sources.azure import cost_details
from sources.common.row_checks import check_rows
from sources.focus import reader as focus_reader
from sources.gcp import billing_export
from sources.oci import cost_report
from sources.telemetry import prometheus, samples
from synthetic_data.demo_serving import write_demo_serving
from synthetic_data.demo_telemetry import write_demo_telemetry
from tests.support.home_helpers import isolated_home
from tests.support.warehouse_helpers import add_lake_rows, query, rewrite_lake_files

log = logging.getLogger(__name__)
SUBJECTS = {subject.name: subject for subject in CATALOGUE}
LAMBDA = FEEDS_BY_NAME["lambda"]
LAMBDA_ENTRY = SUBJECTS["prices/lambda"]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FinopsHome:
    return isolated_home(tmp_path, monkeypatch)


# --- one rule for negative quantities: the reader's, which the suite expresses ------------------------------

NEGATIVE_QUANTITY_CASES = [
    # (source, reader rules, quantity column, a correction/credit line, a plain usage line)
    (FOCUS, focus_reader, "ConsumedQuantity", {"ChargeCategory": "Usage", "ChargeClass": "Correction"}, {}),
    (FOCUS, focus_reader, "PricingQuantity", {"ChargeCategory": "Usage", "ChargeClass": "Correction"}, {}),
    (AWS_CUR, cur, "line_item_usage_amount", {"line_item_line_item_type": "Refund"}, {}),
    (AZURE_ACTUAL, cost_details, "Quantity", {"ChargeType": "Refund"}, {"ChargeType": " usage"}),
    (GCP_BILLING, billing_export, "usage_amount", {"cost_type": "adjustment"}, {}),
    (OCI_COST, cost_report, "usage_billed_quantity", {"line_item_is_correction": "TRUE"}, {}),
]
USAGE_DEFAULTS = {
    "ChargeCategory": "Usage",
    "line_item_line_item_type": "Usage",
    "ChargeType": "Usage",
    "cost_type": "regular",
    "line_item_is_correction": "false",
}


@pytest.mark.parametrize(
    ("source", "reader", "column", "correction", "usage"),
    NEGATIVE_QUANTITY_CASES,
    ids=[f"{case[0].name}-{case[2]}" for case in NEGATIVE_QUANTITY_CASES],
)
def test_negative_quantity_on_a_correction_passes_on_a_usage_line_the_reader_loads_and_the_suite_warns(
    tmp_path: Path, source, reader, column, correction, usage
):
    """Providers' usage reversals (FOCUS allows any decimal quantity): loaded, with a warning on the usage line only."""
    table = source.raw_table
    defaults = {name: value for name, value in USAGE_DEFAULTS.items() if name in table.columns}
    lines = [defaults | correction | {column: Decimal("-2")}, defaults | usage | {column: Decimal("-3")}]
    frame = pl.DataFrame(lines, schema=table.columns)
    read = frame.with_columns(_source_file=pl.lit("export.csv"), _source_row=pl.Series([1, 2], dtype=pl.Int64))

    # The reader leaves a warning-severity rule to the suite: both lines pass it.
    check_rows(read, reader.ROW_RULES)

    # The suite on the same two lines once loaded: only the usage line is held to the rule, and fails it as a warning.
    with connect(tmp_path / "warehouse.duckdb") as con:
        recover_and_ensure_tables(con, table)
        con.register("lines", frame.to_arrow())
        add_lake_rows(con, table.name, "select *, 'load-1' as _load_id, now() as _ingested_at from lines")
        results = validate_load(con, table, source.quality, source=source.name, load_id="load-1")
    (rule,) = [r for r in results if r.column_name == column and r.description.startswith(f"{column} is not negative")]
    assert (rule.passed, rule.severity, rule.unexpected_count, rule.element_count) == (False, "warning", 1, 1)
    assert "-3" in rule.observed_value


def test_the_suites_quantity_rules_are_the_readers():
    for source, reader in (
        (FOCUS, focus_reader),
        (AWS_CUR, cur),
        (AZURE_ACTUAL, cost_details),
        (GCP_BILLING, billing_export),
        (OCI_COST, cost_report),
    ):
        assert source.quality.not_negative == tuple(reader.ROW_RULES.non_negative), source.name


# --- suites over every feed's bundled captures: good data passes -------------------------------------------


def test_every_bundled_price_capture_and_the_ecb_rates_pass_their_suites(home: FinopsHome):
    day = date(2026, 11, 20)
    with connect(home.warehouse) as con:
        for feed in PRICE_FEEDS:
            refresh_price_feed(home, con, feed, [day], offline=True, log=log)
        refresh_fx_rates(home, con, day, offline=True, log=log)
        reports = {}
        for name in [f"prices/{feed.name}" for feed in PRICE_FEEDS] + ["ecb"]:
            subject = SUBJECTS[name]
            reports[name] = check_pending_loads(
                con, subject.raw_table, subject.quality, source=name, load_source=subject.load_source
            )
    for name, report in reports.items():
        # each check judges its own feed's one load, though ten feeds share raw.price_observations
        assert len(report.checked_loads) == 1, name
        assert report.passed, (name, [(f.description, f.observed_value) for f in report.failures])


# --- a price feed in a real Dagster run: a bad capture blocks its downstream, for its own day only --------------


@dg.asset(key=["downstream_of_lambda"], deps=[dg.AssetKey(["prices", "lambda"])], partitions_def=PRICE_PARTITIONS)
def downstream_of_lambda() -> None:
    """Stands in for the dbt price models: must not run when the feed's blocking check fails."""


def _store_lambda_capture(home: FinopsHome, day: date, *, observed_at: datetime, gpus: int | None = None) -> None:
    """The bundled Lambda capture as if fetched for `day`; `gpus` rewrites the first instance's GPU count."""
    folder = home.price_payloads("lambda", day)
    shutil.copytree(SNAPSHOTS / "lambda" / "2026-09-01", folder, dirs_exist_ok=True)
    if gpus is not None:
        payload = json.loads((folder / "instance-types.json").read_text())
        payload["data"]["gpu_1x_h100_sxm5"]["instance_type"]["specs"]["gpus"] = gpus
        (folder / "instance-types.json").write_text(json.dumps(payload))
    index = json.loads((folder / "index.json").read_text())
    (folder / "index.json").write_text(json.dumps(index | {"observed_at": observed_at.isoformat()}))


def _run(
    home: FinopsHome, assets: list, partition: str, instance: dg.DagsterInstance, *, offline: bool = False
) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        assets,
        partition_key=partition,
        resources={
            "duckdb": DuckDBResource(database=str(home.warehouse)),
            "settings": Settings(home=home, offline=offline),
        },
        instance=instance,
        raise_on_error=False,
    )


def _check(result: dg.ExecuteInProcessResult) -> bool:
    (evaluation,) = [e for e in result.get_asset_check_evaluations() if e.check_name == "load_passes_quality_suite"]
    return evaluation.passed


def _materialized(result: dg.ExecuteInProcessResult) -> set[str]:
    return {event.asset_key.to_user_string() for event in result.get_asset_materialization_events()}


def test_bad_price_capture_blocks_downstream_of_its_partition_and_is_recorded(home: FinopsHome):
    good, bad, later = date(2026, 10, 1), date(2026, 10, 2), date(2026, 10, 3)
    _store_lambda_capture(home, good, observed_at=datetime(2026, 10, 1, 4, 10))
    # A negative GPU count (the parser takes specs.gpus as given) and a capture made three days after its day.
    _store_lambda_capture(home, bad, observed_at=datetime(2026, 10, 5, 4, 10), gpus=-8)
    _store_lambda_capture(home, later, observed_at=datetime(2026, 10, 3, 4, 10))
    assets = [build_price_feed_asset(LAMBDA_ENTRY), build_load_quality_check(LAMBDA_ENTRY), downstream_of_lambda]

    with dg.instance_for_test() as instance:
        first = _run(home, assets, "2026-10-01", instance)
        second = _run(home, assets, "2026-10-02", instance)
        third = _run(home, assets, "2026-10-03", instance)

    assert _check(first) and "downstream_of_lambda" in _materialized(first)
    assert not _check(second)
    assert "prices/lambda" in _materialized(second) and "downstream_of_lambda" not in _materialized(second)
    # The next day's run judges that day's capture: the failed 2 October load does not block it.
    assert _check(third) and "downstream_of_lambda" in _materialized(third)

    failed = query(
        home.warehouse,
        "select q.source, q.raw_table, l.delivery, q.description, q.unexpected_count, q.observed_value "
        "from audit.quality_results as q join audit.loads as l using (load_id) where not q.passed "
        "order by q.description",
    )
    rows = 7  # the capture's seven instance types
    assert [row[:5] for row in failed] == [
        (
            "prices/lambda",
            "raw.price_observations",
            "lambda@2026-10-02",
            "_captured_by is not before observed_at",
            rows,
        ),
        ("prices/lambda", "raw.price_observations", "lambda@2026-10-02", "gpu_count is not negative", 1),
    ]
    assert '"-8' in failed[1][5]
    checked = query(
        home.warehouse,
        "select l.delivery, count(*) from audit.quality_results join audit.loads as l "
        "using (load_id) group by 1 order by 1",
    )
    # every expectation recorded once per run, and each run checked only its own day's load
    assert [delivery for delivery, _ in checked] == ["lambda@2026-10-01", "lambda@2026-10-02", "lambda@2026-10-03"]
    assert len({count for _, count in checked}) == 1


# --- telemetry in a real Dagster run ---------------------------------------------------------------------------


@dg.asset(deps=[dg.AssetKey(["raw", "prometheus_gpu_samples"])], partitions_def=TELEMETRY_PARTITIONS)
def downstream_of_prometheus() -> None:
    """Stands in for the telemetry dbt models."""


def _record_day(home: FinopsHome, day: date, values: tuple[str, str]) -> None:
    """A recorded SM-active answer for one GPU: a point at 00:01 and one at 24:00 of `day` (UTC)."""
    folder = prometheus_payloads(home, day)
    folder.mkdir(parents=True, exist_ok=True)
    start = datetime(day.year, day.month, day.day, 0, 1, tzinfo=UTC)
    end = start + timedelta(minutes=1439)
    payload = prometheus.matrix_payload(
        [({"UUID": "GPU-1", "Hostname": "n1"}, [(start.timestamp(), values[0]), (end.timestamp(), values[1])])]
    )
    (folder / payload_file_name(samples.SM_ACTIVE, 60, start, end)).write_bytes(gzip.compress(payload))


def test_prometheus_ratio_above_one_blocks_downstream(home: FinopsHome):
    _record_day(home, date(2026, 10, 4), ("0.5", "1"))
    _record_day(home, date(2026, 10, 5), ("0.5", "1.5"))  # SM activity is a ratio: 1.5 is no reading
    assets = [prometheus_gpu_samples, build_load_quality_check(SUBJECTS["dcgm_prometheus"]), downstream_of_prometheus]
    with dg.instance_for_test() as instance:
        good = _run(home, assets, "2026-10-04", instance, offline=True)
        bad = _run(home, assets, "2026-10-05", instance, offline=True)

    assert _check(good) and "downstream_of_prometheus" in _materialized(good)
    assert not _check(bad) and "downstream_of_prometheus" not in _materialized(bad)
    failed = query(
        home.warehouse,
        "select description, unexpected_count, element_count from audit.quality_results where not passed",
    )
    assert failed == [
        (
            'value is within [0, 1] (a ratio) where metric in ["DCGM_FI_PROF_SM_ACTIVE", '
            '"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"]',
            1,
            2,
        )
    ]


# --- freshness: each feed's cadence and grace, measured by its newest capture -----------------------------------


def test_feed_freshness_follows_the_newest_capture_not_the_last_load(home: FinopsHome):
    now = datetime.now(UTC).replace(tzinfo=None)
    with connect(home.warehouse) as con:
        refresh_price_feed(home, con, LAMBDA, [date(2026, 11, 20)], offline=True, log=log)
        ensure_freshness_view(con, DELIVERED_SOURCES)
        states = {}
        # Lambda declares a daily cadence and 12 hours' grace: late once its newest capture is 36 hours old.
        for hours in (35, 37):
            rewrite_lake_files(con, "raw.price_observations", {"observed_at": "?"}, [now - timedelta(hours=hours)])
            states[hours] = source_freshness(con, "prices/lambda")
        never = source_freshness(con, "dcgm_prometheus")
        # Telemetry: the newest sample counts; hand-set sample times two days old are late.
        add_lake_rows(
            con,
            "raw.prometheus_gpu_samples",
            "select ?::date as sample_date, ?::timestamp as sampled_at, 60 as sample_seconds, "
            "'dcgm_prometheus' as source, 'n1' as host, ? as metric, 'l1' as _load_id, ?::timestamp as _ingested_at",
            [(now - timedelta(days=2)).date(), now - timedelta(days=2), samples.SM_ACTIVE, now],
        )
        telemetry = source_freshness(con, "dcgm_prometheus")

    assert (LAMBDA.delivery_cadence, LAMBDA.delivery_grace) == (timedelta(days=1), timedelta(hours=12))
    on_time, late = states[35], states[37]
    # the load itself happened just now: a billing source would be on time; a feed is judged by its capture
    assert late.loads == 1 and late.measured_by == "observed_at"
    assert (on_time.status, on_time.late) == ("on time", False)
    assert (late.status, late.late) == ("late", True)
    assert late.expected_by == late.last_delivery + timedelta(hours=36)
    assert abs(late.last_delivery - (now - timedelta(hours=37))) < timedelta(seconds=1)
    assert (never.status, never.late) == ("never delivered", None)
    assert (telemetry.status, telemetry.measured_by) == ("late", "sampled_at")


def test_late_feed_is_flagged_in_dagster_without_blocking(home: FinopsHome):
    (delivery,) = [d for d in FEED_DELIVERIES if d.name == "prices/lambda"]
    assets = [build_price_feed_asset(LAMBDA_ENTRY), build_delivery_freshness_check(delivery), downstream_of_lambda]
    with dg.instance_for_test() as instance:
        # offline, today's partition reloads the bundled capture of 31 October: not a fresh delivery
        result = _run(home, assets, "2026-11-20", instance, offline=True)
    (evaluation,) = [e for e in result.get_asset_check_evaluations() if e.check_name == "delivery_is_fresh"]
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.WARN
    assert evaluation.metadata["status"].value == "late"
    assert evaluation.metadata["measured_by"].value == "observed_at"
    assert "downstream_of_lambda" in _materialized(result)


def test_every_feed_declares_a_daily_cadence_with_grace():
    names = {delivery.name for delivery in FEED_DELIVERIES}
    telemetry = {"dcgm_prometheus", "nvidia_smi", "serving_prometheus"}
    assert {f"prices/{feed.name}" for feed in PRICE_FEEDS} | {"ecb"} | telemetry == names
    for delivery in FEED_DELIVERIES:
        assert delivery.delivery_cadence == timedelta(days=1), delivery.name
        assert delivery.delivery_grace > timedelta(0), delivery.name


def test_the_demo_telemetry_passes_its_suites(home: FinopsHome, tmp_path: Path):
    """What `make demo` loads must not be blocked: recordings, logs and host map, through the real loaders."""
    written = write_demo_telemetry(tmp_path / "demo", seed=3, start_month="2026-10", months=1)
    days = []
    for folder in sorted(written["prometheus"].iterdir())[:2]:  # two days of recordings are enough to judge
        days.append(date.fromisoformat(folder.name))
        shutil.copytree(folder, prometheus_payloads(home, days[-1]))
    serving = write_demo_serving(tmp_path / "demo", seed=3, start_month="2026-10", months=1)
    for day in days:
        shutil.copytree(serving / day.isoformat(), prometheus_payloads(home, day, SERVING_FEED.folder))
    register(home, NVIDIA_SMI_SOURCE, written["nvidia_smi"])
    register(home, HOST_MAP_SOURCE, written["host_map"])
    with connect(home.warehouse) as con:
        assert fetch_prometheus_days(home, con, days, offline=True, log=log).outcome.rows > 0
        assert fetch_prometheus_days(home, con, days, offline=True, log=log, feed=SERVING_FEED).outcome.rows > 0
        assert {r.status for r in ingest_nvidia_smi_logs(home, con, timezone="UTC", log=log)} == {"loaded"}
        assert {r.status for r in ingest_host_maps(home, con, log=log)} == {"loaded"}
        reports = {
            name: check_pending_loads(
                con,
                SUBJECTS[name].raw_table,
                SUBJECTS[name].quality,
                source=name,
                load_source=SUBJECTS[name].load_source,
            )
            for name in ("dcgm_prometheus", NVIDIA_SMI_SOURCE, HOST_MAP_SOURCE, SERVING_SOURCE)
        }
    for name, report in reports.items():
        assert len(report.checked_loads) == 1, name
        assert report.passed, (name, [(f.description, f.observed_value) for f in report.failures])
