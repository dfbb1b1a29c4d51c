"""Quality suites on each load: a bad delivery is rejected before commit, odd rows load with warnings, every
result is recorded, and nothing already in raw blocks the models.

Real DuckDB files and real Dagster runs (`dg.materialize`) of the FOCUS ingest asset with its checks.
The bad delivery is one the parser accepts (its values parse) but the suite must reject.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import dagster as dg
import pytest
from dagster_duckdb import DuckDBResource

from pipelines.defs.ingest.billing import build_ingest_asset
from pipelines.defs.quality.freshness_checks import build_delivery_freshness_check
from pipelines.defs.quality.load_quality_checks import build_load_quality_check, build_load_warnings_check
from pipelines.lib.catalog.billing import BILLING_SOURCES, FOCUS, SOURCES_BY_NAME
from pipelines.lib.catalog.registry import CATALOGUE
from pipelines.lib.ingest.landing import register
from pipelines.lib.quality.freshness import ensure_freshness_view, source_freshness
from pipelines.lib.quality.rules import build_expectations
from pipelines.lib.quality.suite import loads_to_check
from pipelines.lib.reporting.report import write_report
from pipelines.lib.settings import PROJECT_ROOT, FinopsHome, Settings
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.loads import load_delivery
from tests.support.focus_fixtures import focus_rows, write_csv
from tests.support.focus_ingest import INGEST_FOCUS_SCRIPT, SEPTEMBER
from tests.support.home_helpers import isolated_home
from tests.support.warehouse_helpers import query, rewrite_lake_files, table_fingerprint

FOCUS_SUBJECT = next(subject for subject in CATALOGUE if subject.name == "focus")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FinopsHome:
    return isolated_home(tmp_path, monkeypatch)


@dg.asset(deps=[dg.AssetKey(["raw", "focus_cost_and_usage"])])
def downstream_of_focus() -> None:
    """Stands in for the dbt models: must not run when a blocking check on raw fails."""


def run_focus(home: FinopsHome, *extra) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [build_ingest_asset(FOCUS), build_load_quality_check(FOCUS_SUBJECT), downstream_of_focus, *extra],
        resources={"duckdb": DuckDBResource(database=str(home.warehouse)), "settings": Settings(home=home)},
        raise_on_error=False,
    )


def check_passed(result: dg.ExecuteInProcessResult, name: str) -> bool:
    (evaluation,) = [e for e in result.get_asset_check_evaluations() if e.check_name == name]
    return evaluation.passed


def materialized(result: dg.ExecuteInProcessResult) -> set[str]:
    return {event.asset_key.to_user_string() for event in result.get_asset_materialization_events()}


def test_good_load_passes_and_every_expectation_is_recorded(home: FinopsHome, tmp_path: Path):
    register(home, "focus", write_csv(tmp_path / "good.csv", focus_rows({}, {"BilledCost": "1.5"})))
    result = run_focus(home)

    assert check_passed(result, "load_passes_quality_suite")
    assert "downstream_of_focus" in materialized(result)
    (load_id,) = [row[0] for row in query(home.warehouse, "select load_id from audit.loads")]
    expected = len(build_expectations(FOCUS.raw_table, FOCUS.quality))
    rows = query(
        home.warehouse,
        "select count(*), count(distinct description), bool_and(passed), count(distinct run_id) "
        f"from audit.quality_results where load_id = '{load_id}'",
    )
    assert rows == [(expected, expected, True, 1)]
    # A load that passed is not checked again: its rows never change.
    with connect(home.warehouse) as con:
        assert loads_to_check(con, FOCUS.raw_table.name) == []


def test_bad_delivery_is_rejected_before_commit_and_blocks_nothing(home: FinopsHome, tmp_path: Path):
    register(home, "focus", write_csv(tmp_path / "good.csv", focus_rows({}, {"BilledCost": "1.5"})))
    run_focus(home)
    before = table_fingerprint(home.warehouse)
    bad = focus_rows(
        {"BillingPeriodStart": "2026-10-01T00:00:00Z", "BillingPeriodEnd": "2026-11-01T00:00:00Z"},
        {
            "BillingCurrency": "XYZ",
            "BillingPeriodStart": "2026-10-01T00:00:00Z",
            "BillingPeriodEnd": "2026-11-01T00:00:00Z",
        },
        # A negative quantity on a correction line is accepted by the reader and by the suite alike
        # (one rule: sources/common/row_checks.py); its unknown PricingCategory is what fails.
        {
            "PricingCategory": "OnDemand",
            "ConsumedQuantity": "-2",
            "ConsumedUnit": "Hours",
            "ChargeClass": "Correction",
            "BillingPeriodStart": "2026-10-01T00:00:00Z",
            "BillingPeriodEnd": "2026-11-01T00:00:00Z",
        },
    )
    delivery = register(home, "focus", write_csv(tmp_path / "bad.csv", bad))
    result = run_focus(home)

    # The suite ran inside the load's transaction: nothing of the delivery reached raw or audit ...
    assert table_fingerprint(home.warehouse) == before
    reason = (home.quarantine / "focus" / f"{delivery.path.name}.reason.txt").read_text()
    assert "BillingCurrency is an ISO 4217 currency code" in reason
    assert "PricingCategory is one of Standard, Dynamic, Committed, Other (any case)" in reason
    # ... the first failing rule's row and column are named (row 2: the XYZ line, after the header) ...
    assert f"file: {delivery.name}" in reason and "row: 2" in reason and "column: BillingCurrency" in reason
    # ... and nothing is blocked: the check finds no load left to judge, the downstream models run.
    assert check_passed(result, "load_passes_quality_suite")
    assert "downstream_of_focus" in materialized(result)


def test_warnings_load_and_are_recorded_without_blocking(home: FinopsHome, tmp_path: Path):
    odd = focus_rows(
        {},
        # Late usage billed in a later period, and a usage reversal: both allowed by FOCUS, both odd.
        {"ChargePeriodStart": "2026-08-31T00:00:00Z", "ChargePeriodEnd": "2026-09-01T00:00:00Z"},
        {"ConsumedQuantity": "-2", "PricingQuantity": "-2"},
    )
    delivery = register(home, "focus", write_csv(tmp_path / "odd.csv", odd))
    result = run_focus(home, build_load_warnings_check(FOCUS_SUBJECT))

    assert check_passed(result, "load_passes_quality_suite")
    assert not check_passed(result, "loads_carry_no_warnings")
    (warned,) = [e for e in result.get_asset_check_evaluations() if e.check_name == "loads_carry_no_warnings"]
    assert warned.severity == dg.AssetCheckSeverity.WARN
    assert "downstream_of_focus" in materialized(result)
    warnings = query(
        home.warehouse,
        "select description, severity, unexpected_count, element_count, example_file, example_row "
        "from audit.quality_results where not passed order by description",
    )
    assert warnings == [
        (
            "ChargePeriodStart is not before BillingPeriodStart where ChargeClass.isnull()",
            "warning",
            1,
            3,
            delivery.name,
            2,
        ),
        (
            "ConsumedQuantity is not negative on usage lines that are not corrections (a correction may be negative)",
            "warning",
            1,
            3,
            delivery.name,
            3,
        ),
        (
            "PricingQuantity is not negative on usage lines that are not corrections (a correction may be negative)",
            "warning",
            1,
            3,
            delivery.name,
            3,
        ),
    ]
    with connect(home.warehouse) as con:
        ensure_freshness_view(con, BILLING_SOURCES)
        assert loads_to_check(con, FOCUS.raw_table.name) == []  # warnings do not keep a load pending
    status = query(home.warehouse, "select status, loads_with_warnings from audit.source_status where source = 'focus'")
    assert status == [("ok, with warnings", 1)]

    # The finance report lists them too, in its data-quality section.
    page = write_report(home.warehouse, tmp_path / "report.html").path.read_text()
    section = page[page.index('<section id="data-quality">') :]
    section = section[: section.index("</section>")]
    assert "ok, with warnings" in section
    assert f"<td>{delivery.name}</td><td>PricingQuantity is not negative" in section.replace("\n", "")
    assert f"{delivery.name} row 3" in section


def test_a_failing_load_already_in_raw_is_reported_not_blocking(home: FinopsHome, tmp_path: Path):
    """A load an older version committed unchecked: the check fails, source_status says so, nothing waits on it."""
    delivery = register(home, "focus", write_csv(tmp_path / "old.csv", focus_rows({"BillingCurrency": "XYZ"})))
    with connect(home.warehouse) as con:
        load_delivery(
            con,
            FOCUS.raw_table,
            source="focus",
            delivery=delivery.name,
            sha256=delivery.sha256(),
            frame=FOCUS.parse(delivery).frame,
        )
    result = run_focus(home)

    assert not check_passed(result, "load_passes_quality_suite")
    assert "downstream_of_focus" in materialized(result)
    with connect(home.warehouse) as con:
        ensure_freshness_view(con, BILLING_SOURCES)
    (status,) = query(home.warehouse, "select status, why from audit.source_status where source = 'focus'")
    assert status[0] == "failing"
    assert "1 load(s) in raw fail: BillingCurrency is an ISO 4217 currency code" in status[1]


def test_every_registered_source_gets_a_suite_with_its_own_facts():
    for source in BILLING_SOURCES:
        descriptions = [e.description for e in build_expectations(source.raw_table, source.quality)]
        assert f"{source.raw_table.currency_column} is an ISO 4217 currency code" in descriptions, source.name
        assert f"{source.raw_table.billed_cost_column} is a finite amount (within ±10^15)" in descriptions
        for allowed in source.quality.allowed_values:
            assert any(d.startswith(f"{allowed.column} is one of") for d in descriptions)
    assert "ChargeCategory is one of Usage, Purchase, Tax, Credit, Adjustment" in [
        e.description for e in build_expectations(FOCUS.raw_table, FOCUS.quality)
    ]


def test_freshness_late_on_time_and_never_delivered(home: FinopsHome, tmp_path: Path):
    register(home, "focus", write_csv(tmp_path / "sep.csv", focus_rows({})))
    run_focus(home)
    with connect(home.warehouse) as con:
        ensure_freshness_view(con, BILLING_SOURCES)
        on_time = source_freshness(con, "focus")
        never = source_freshness(con, "gcp_billing")
        # FOCUS declares a 2-day cadence: a last delivery 3 days ago is late, by a day.
        rewrite_lake_files(con, "audit.loads", {"loaded_at": "loaded_at - interval 3 day"})
        late = source_freshness(con, "focus")

    assert FOCUS.delivery_cadence == timedelta(days=2)
    assert (on_time.status, on_time.late, on_time.loads) == ("on time", False, 1)
    assert on_time.expected_by == on_time.last_delivery + timedelta(days=2)
    assert (never.status, never.late, never.last_delivery) == ("never delivered", None, None)
    assert (late.status, late.late) == ("late", True)
    assert datetime.now(UTC).replace(tzinfo=None) - late.expected_by > timedelta(hours=23)

    # In Dagster: the ingest asset finds nothing new, and the delivery check warns without blocking.
    result = run_focus(home, build_delivery_freshness_check(FOCUS))
    (evaluation,) = [e for e in result.get_asset_check_evaluations() if e.check_name == "delivery_is_fresh"]
    assert not evaluation.passed
    assert evaluation.severity == dg.AssetCheckSeverity.WARN
    assert evaluation.metadata["status"].value == "late"
    assert "downstream_of_focus" in materialized(result)


def test_every_source_declares_a_cadence_and_the_ingest_asset_a_freshness_policy():
    for source in BILLING_SOURCES:
        assert source.delivery_cadence >= timedelta(days=1), source.name
        policy = build_ingest_asset(source).specs_by_key[dg.AssetKey(list(source.asset_key))].freshness_policy
        assert policy.fail_window.to_timedelta() == source.delivery_cadence
    assert SOURCES_BY_NAME["onprem_gpu_assets"].delivery_cadence > SOURCES_BY_NAME["aws_cur"].delivery_cadence


def test_a_python_c_process_loads_a_delivery_with_great_expectations_beside_pyspark(tmp_path: Path):
    """With the `spark` extra installed, Great Expectations imports `pyspark.sql.connect`, which ends (status 0, no
    message) any process whose `__main__` has no file, such as `python -c` and pytest-xdist workers. The quality
    rules name `__main__` before they import it: a `python -c` load must still validate and commit its delivery."""
    home = FinopsHome(tmp_path / "home").create_folders()
    register(home, "focus", write_csv(tmp_path / "sep.csv", focus_rows(SEPTEMBER | {"BilledCost": "1.25"})))
    done = subprocess.run(
        [sys.executable, "-c", INGEST_FOCUS_SCRIPT, str(home.root)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert query(home.warehouse, "select sum(BilledCost) from raw.focus_cost_and_usage") == [(Decimal("1.25"),)]


SPAWN_AFTER_QUALITY_IMPORT = """
import multiprocessing
from pipelines.lib.catalog.billing import FOCUS
from pipelines.lib.quality.rules import build_expectations
build_expectations(FOCUS.raw_table, FOCUS.quality)
child = multiprocessing.get_context("spawn").Process(target=print, args=("spawned child ran",))
child.start()
child.join()
raise SystemExit(child.exitcode)
"""


def test_a_python_c_process_that_named_main_can_still_spawn_children():
    """Dagster's multiprocess executor spawns a child per step from a run worker whose `__main__` has no file. The
    name the quality rules give `__main__` must not be a path: a spawned child runs `__main__.__file__` again when
    it is one, and a made-up path crashed every step of every run the daemon launched."""
    done = subprocess.run(
        [sys.executable, "-c", SPAWN_AFTER_QUALITY_IMPORT],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "spawned child ran"
