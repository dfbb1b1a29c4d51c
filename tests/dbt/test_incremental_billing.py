"""Incremental billing models: after a restating delivery, an incremental run equals a full refresh, exactly.

Real CUR 2.0 Parquet from the scale generator, the real ingest into a real DuckDB file, real dbt runs of the
cost lines, both daily marts, the monthly commitment coverage, the GPU utilization mart and the anomalies' resource
days (both incremental by usage month) and the FOCUS export (a view over the cost lines) and what they read: a
first build, a delivery that restates one billing period, an incremental build, a run on the tables as a
pre-incremental warehouse holds them (no bookkeeping columns), then `--full-refresh` of the same warehouse. Every
column but the bookkeeping must be equal, Decimal for Decimal; and the incremental build must have rebuilt only the
restated period (the other period keeps the first build's x_built_at). A restatement that drops every GPU line of a
period must drop the period from the GPU spend mart too. Telemetry and host map changes rebuild the usage months of
the utilization mart they touch, and only those. The same restatements on Spark (marker `spark`), where the models
overwrite the partitions of the periods they rebuild, must equal Spark's full refresh too, read from the tables'
Parquet files."""

from __future__ import annotations

import json
import logging
import re
import subprocess
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import NamedTuple

import duckdb
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from bench.phases import ingest
from pipelines.lib.ingest.landing import register
from pipelines.lib.ingest.telemetry import ingest_host_maps, ingest_nvidia_smi_logs
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from synthetic_data.scale import GPU_TYPES, write_cur2
from tests.support.dbt_helpers import dbt_environment, run_dbt

SELECT = [
    "+fct_cost_daily",
    "+fct_gpu_spend_daily",
    "+fct_commitment_coverage_monthly",
    "+fct_gpu_utilization_daily",
    "+int_anomalies__resource_daily",
    "+focus_cost_and_usage",
]
FOCUS = "marts.focus_cost_and_usage"


class Compared(NamedTuple):
    """How a table is compared: its bookkeeping columns (left out), an order for its rows, and for the marts the
    column of the period or month a run rebuilds (their rows' `built_at` says when each was last written)."""

    bookkeeping: tuple[str, ...]
    order: str
    period: str | None = None


TABLES = {
    "intermediate.int_billing__cost_lines": Compared(
        ("x_built_at",), "x_source, x_load_id, x_source_file, x_source_row"
    ),
    "marts.fct_cost_daily": Compared(("cost_lines_built_at", "built_at"), "cost_daily_key", "billing_period_start"),
    "marts.fct_gpu_spend_daily": Compared(
        ("cost_lines_built_at", "built_at"), "gpu_spend_daily_key", "billing_period_start"
    ),
    "marts.fct_commitment_coverage_monthly": Compared(
        ("cost_lines_built_at", "built_at"), "commitment_coverage_monthly_key", "billing_month"
    ),
    "marts.fct_gpu_utilization_daily": Compared(
        ("inputs_fingerprint", "built_at"), "gpu_utilization_daily_key", "usage_month"
    ),
    "intermediate.int_anomalies__resource_daily": Compared(
        ("inputs_fingerprint", "built_at"),
        "charge_date, billing_currency, provider_name, gpu_model, team, resource_id, pricing_category",
        "usage_month",
    ),
}
"""Each incremental table."""
FOCUS_ORDER = "x_SourceFormat, x_LoadId, x_SourceFile, x_SourceRow, x_RowOrigin"
COMPARED = TABLES | {FOCUS: Compared(("_cost_lines_built_at",), FOCUS_ORDER)}
"""What an incremental run must leave as a full refresh does: the incremental tables and the export read from them."""


def _dbt(
    home: FinopsHome,
    target: Path,
    *extra: str,
    engine: str = "duckdb",
    action: str = "build",
    tests: bool = False,
    select: list[str] = SELECT,
    succeeds: bool = True,
) -> subprocess.CompletedProcess:
    """dbt on the incremental models and what they read; data tests only with `tests`. A build must succeed unless
    told otherwise; `dbt test`'s failures are its result."""
    command = [action, "--select", *select]
    if action == "build":
        command += ["--exclude-resource-type", "unit_test", *([] if tests else ["test"])]
    # only the tests of the selected models, not those that also read models outside the selection
    command += ["--indirect-selection", "cautious"]
    command += extra
    # The owned servers' last day from the environment, not --vars: dbt's saved parse hashes the vars, and the
    # project's parse (run_dbt) holds only for the vars it was made with.
    completed = run_dbt(
        home.root,
        target,
        *command,
        environment=dbt_environment(home.root, engine) | {"FINOPS_ONPREM_COSTS_THROUGH": "2026-02-20"},
        timeout=900 if engine == "duckdb" else 2400,
    )
    if action == "build" and succeeds:
        assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    return completed


def _deliver_first(tmp_path: Path, home: FinopsHome) -> list:
    """A new warehouse, then 40 days from 1 January, 50 line items a day: January (31 days) and 9 days of February."""
    home.root.mkdir()
    with connect(home.warehouse) as con:
        recover_and_ensure_raw_tables(con)
    first = write_cur2(tmp_path / "first", rows=2000, seed=1, start=date(2026, 1, 1), days=40)
    assert [(w.billing_period, w.rows) for w in first] == [("2026-01", 1550), ("2026-02", 450)]
    for written in first:
        register(home, "aws_cur", written.path)
    ingest(home, "aws_cur")
    return first


def _restate_february(tmp_path: Path, home: FinopsHome):
    """February re-delivered with one more day and other values (another seed): a restatement."""
    february = write_cur2(tmp_path / "second", rows=2050, seed=2, start=date(2026, 1, 1), days=41, last_month_only=True)
    assert len(february) == 1
    february = february[0]
    assert (february.billing_period, february.rows) == ("2026-02", 500)
    register(home, "aws_cur", february.path)
    ingest(home, "aws_cur")
    return february


def _snapshot(home: FinopsHome, tables: tuple[str, ...] = tuple(COMPARED)) -> dict[str, list[tuple]]:
    """Every row of each compared table (or those of `tables`), bookkeeping left out, in a fixed order."""
    with connect(home.warehouse, read_only=True) as con:
        snapshot = {}
        for table in tables:
            compared = COMPARED[table]
            described = con.execute(f"describe {table}").fetchall()
            quoted = ", ".join(f'"{row[0]}"' for row in described if row[0] not in compared.bookkeeping)
            snapshot[table] = con.execute(f"select {quoted} from {table} order by {compared.order}").fetchall()
        return snapshot


def _built_at(home: FinopsHome) -> dict[str, object]:
    with connect(home.warehouse, read_only=True) as con:
        rows = con.execute(
            "select strftime(BillingPeriodStart, '%Y-%m'), max(x_built_at) "
            "from intermediate.int_billing__cost_lines group by 1"
        ).fetchall()
    return dict(rows)


def _marts_built_at(home: FinopsHome, marts: tuple[str, ...] | None = None) -> dict[tuple[str, str], object]:
    """When each incremental mart (or those of `marts`) last wrote each billing (or usage) month: (mart, month) →
    built_at."""
    periods = {mart: compared.period for mart, compared in TABLES.items() if compared.period}
    with connect(home.warehouse, read_only=True) as con:
        return {
            (mart, month): built_at
            for mart, period in periods.items()
            if marts is None or mart in marts
            for month, built_at in con.execute(
                f"select strftime({period}, '%Y-%m'), max(built_at) from {mart} group by 1"
            ).fetchall()
        }


def _parquet_cost(path: Path) -> Decimal:
    """Sum of line_item_unblended_cost over a delivery's Parquet files, read independently of the project."""
    total = Decimal(0)
    for file in sorted(path.rglob("*.parquet")):
        for value in pq.read_table(file, columns=["line_item_unblended_cost"]).column(0).to_pylist():
            total += Decimal(repr(value))
    return total


def test_incremental_run_after_a_restatement_equals_a_full_refresh(tmp_path: Path):
    home = FinopsHome(tmp_path / "home")
    first = _deliver_first(tmp_path, home)
    _dbt(home, tmp_path / "target")
    before, marts_before = _built_at(home), _marts_built_at(home)

    february = _restate_february(tmp_path, home)
    _dbt(home, tmp_path / "target")
    after, marts_after = _built_at(home), _marts_built_at(home)
    assert after["2026-01"] == before["2026-01"], "January did not change and must not be rebuilt"
    assert after["2026-02"] > before["2026-02"]
    assert len(marts_before) == 10, "each of the five tables has January and February"
    for mart, month in marts_before:
        if month == "2026-01":
            assert marts_after[mart, month] == marts_before[mart, month], f"{mart}: January was rebuilt"
        else:
            assert marts_after[mart, month] > marts_before[mart, month], f"{mart}: February was not rebuilt"
    incremental = _snapshot(home)

    expected_cost = _parquet_cost(first[0].path) + _parquet_cost(february.path)
    lines = incremental["intermediate.int_billing__cost_lines"]
    assert len(lines) == 1550 + 500
    with connect(home.warehouse, read_only=True) as con:
        billed, count = con.execute(
            "select sum(billed_cost), sum(cost_line_count) from marts.fct_cost_daily"
        ).fetchone()
    assert (billed, count) == (expected_cost, 2050)

    # A warehouse built before these models were incremental has plain tables without the bookkeeping
    # columns: the next run rebuilds them whole through the incremental path and adds the columns.
    with connect(home.warehouse) as con:
        con.execute("alter table intermediate.int_billing__cost_lines drop column x_built_at")
        con.execute("alter table marts.fct_cost_daily drop column cost_lines_built_at")
        con.execute("alter table marts.fct_gpu_spend_daily drop column cost_lines_built_at")
        con.execute("alter table marts.fct_commitment_coverage_monthly drop column cost_lines_built_at")
        for table in ("marts.fct_gpu_utilization_daily", "intermediate.int_anomalies__resource_daily"):
            for column in ("usage_month", "inputs_fingerprint", "built_at"):
                con.execute(f"alter table {table} drop column {column}")
    _dbt(home, tmp_path / "target")
    assert _snapshot(home) == incremental
    assert min(_built_at(home).values()) > after["2026-02"]

    _dbt(home, tmp_path / "target", "--full-refresh")
    assert _snapshot(home) == incremental


def _restate_february_without_gpu_lines(tmp_path: Path, home: FinopsHome) -> None:
    """February restated without its GPU lines (every other line stays, with other values)."""
    february = write_cur2(tmp_path / "second", rows=2050, seed=2, start=date(2026, 1, 1), days=41, last_month_only=True)
    gpu_types = ", ".join(f"'{name}'" for name, _, _ in GPU_TYPES)
    with duckdb.connect() as con:
        for part in sorted(february[0].path.rglob("*.parquet")):
            kept = part.with_suffix(".kept")
            con.execute(
                f"copy (select * from read_parquet('{part}') "
                f"where coalesce(product_instance_type, '') not in ({gpu_types})) to '{kept}' (format parquet)"
            )
            kept.replace(part)
    register(home, "aws_cur", february[0].path)
    ingest(home, "aws_cur")


def test_a_restatement_that_drops_every_gpu_line_of_a_period_drops_it_from_the_gpu_mart(tmp_path: Path):
    """February restated without its GPU lines: its cost lines are rebuilt, but no GPU line is left to carry
    February into fct_gpu_spend_daily's new rows. The mart must lose February's GPU spend, as a full refresh does,
    not keep the first build's rows (macro clear_billing_periods_to_rebuild)."""
    home = FinopsHome(tmp_path / "home")
    _deliver_first(tmp_path, home)
    _dbt(home, tmp_path / "target")
    with connect(home.warehouse, read_only=True) as con:
        periods = con.execute("select distinct billing_period_start::date::varchar from marts.fct_gpu_spend_daily")
        assert sorted(periods.fetchall()) == [("2026-01-01",), ("2026-02-01",)]

    _restate_february_without_gpu_lines(tmp_path, home)
    _dbt(home, tmp_path / "target")
    incremental = _snapshot(home)
    assert {row[2].date().isoformat() for row in incremental["marts.fct_gpu_spend_daily"]} == {"2026-01-01"}
    _dbt(home, tmp_path / "target", "--full-refresh")
    assert _snapshot(home) == incremental


def _failing_tests(target: Path) -> dict[str, int]:
    results = json.loads((target / "run_results.json").read_text(encoding="utf-8"))["results"]
    return {r["unique_id"].split(".")[2]: r["failures"] for r in results if r["status"] == "fail"}


def test_an_incremental_run_tests_only_the_rows_it_wrote(tmp_path: Path):
    """The data tests of an incremental model read the rows the run wrote (macros/incremental/get_where_subquery.sql),
    and those of the FOCUS export, a view, the lines the run rebuilt: a January line broken behind dbt's back goes
    unseen by the run that rebuilds only February, while `dbt test` alone, which builds nothing, reads the whole
    table and the whole view and finds it in both. So does a build of the view alone, which rebuilt no line."""
    home = FinopsHome(tmp_path / "home")
    _deliver_first(tmp_path, home)
    target = tmp_path / "target"
    _dbt(home, target, tests=True)
    with connect(home.warehouse) as con:
        broken = con.execute(
            "update intermediate.int_billing__cost_lines set x_gpu_hours = -1 "
            "where BillingPeriodStart = '2026-01-01' and x_source_row = 7"
        ).fetchall()[0][0]
    assert broken == 1

    _restate_february(tmp_path, home)
    _dbt(home, target, tests=True)  # passes: January was not rebuilt, so not tested again
    compiled = next(target.rglob("int_billing__cost_lines_column_rules.sql")).read_text(encoding="utf-8")
    written = re.search(r"x_built_at = (cast\('[^']+' as timestamp\))", compiled)
    assert written, "the column rules of the cost lines read every row"
    with connect(home.warehouse, read_only=True) as con:
        tested = con.execute(
            "select strftime(BillingPeriodStart, '%Y-%m'), count(*) from intermediate.int_billing__cost_lines "
            f"where x_built_at = {written.group(1)} group by 1"
        ).fetchall()
    assert tested == [("2026-02", 500)], "the run tested exactly the lines it wrote: February's 500"
    exported = next(target.rglob("focus_cost_and_usage_column_rules.sql")).read_text(encoding="utf-8")
    assert f"_cost_lines_built_at = {written.group(1)}" in exported, "the export's rules read the rebuilt lines"

    found = _dbt(home, target, action="test")
    assert found.returncode != 0
    # one rule broken, GPU-hours negative only on a usage reversal, seen in the cost lines and in the export
    assert _failing_tests(target) == {"int_billing__cost_lines_column_rules": 1, "focus_cost_and_usage_column_rules": 1}

    view_alone = _dbt(home, target, tests=True, select=["focus_cost_and_usage"], succeeds=False)
    assert view_alone.returncode != 0
    assert _failing_tests(target) == {"focus_cost_and_usage_column_rules": 1}


def _spark_table(home: FinopsHome, table: str) -> Path:
    """A Spark table's folder: the `spark` target's managed tables are Parquet under FINOPS_HOME/spark/warehouse."""
    schema, name = table.split(".")
    return home.root / "spark" / "warehouse" / f"{schema}.db" / name


def _spark_snapshot(home: FinopsHome) -> dict[str, list[tuple]]:
    """Every row of the incremental tables as Spark wrote them (partition folders included), bookkeeping left out,
    columns by name and rows sorted: the files are the truth, read without Spark."""
    snapshot = {}
    for table, compared in TABLES.items():
        rows = ds.dataset(_spark_table(home, table), format="parquet", partitioning="hive").to_table().to_pylist()
        snapshot[table] = sorted(
            tuple(sorted((column, repr(value)) for column, value in row.items() if column not in compared.bookkeeping))
            for row in rows
        )
    return snapshot


def _spark_period_files(home: FinopsHome, table: str, period: str) -> set[Path]:
    """The Parquet files of one billing period's partition of a Spark table."""
    folders = [f for f in _spark_table(home, table).rglob("*") if f.is_dir() and f"={period}" in f.name]
    assert folders, f"no partition of {period} in {table}"
    return {file for folder in folders for file in folder.glob("*.parquet")}


@pytest.mark.spark
def test_incremental_run_after_a_restatement_equals_a_full_refresh_on_spark(tmp_path: Path):
    """On Spark the models overwrite the partitions of the periods a run rebuilds: after February's restatement,
    January's files stay as the first build wrote them, February's are replaced, and the tables equal what
    `--full-refresh` builds from the same lake."""
    home = FinopsHome(tmp_path / "home")
    first = _deliver_first(tmp_path, home)
    _dbt(home, tmp_path / "target", engine="spark")
    january = {table: _spark_period_files(home, table, "2026-01-01") for table in TABLES}
    february_before = {table: _spark_period_files(home, table, "2026-02-01") for table in TABLES}

    february = _restate_february(tmp_path, home)
    _dbt(home, tmp_path / "target", engine="spark")
    for table in TABLES:
        assert _spark_period_files(home, table, "2026-01-01") == january[table], f"{table}: January was rewritten"
        assert not _spark_period_files(home, table, "2026-02-01") & february_before[table], f"{table}: February kept"
    incremental = _spark_snapshot(home)

    lines = incremental["intermediate.int_billing__cost_lines"]
    assert len(lines) == 1550 + 500
    daily = ds.dataset(_spark_table(home, "marts.fct_cost_daily"), format="parquet", partitioning="hive").to_table()
    billed = sum(daily.column("billed_cost").to_pylist(), Decimal(0))
    assert (billed, sum(daily.column("cost_line_count").to_pylist())) == (
        _parquet_cost(first[0].path) + _parquet_cost(february.path),
        2050,
    )

    _dbt(home, tmp_path / "target", "--full-refresh", engine="spark")
    assert _spark_snapshot(home) == incremental


@pytest.mark.spark
def test_a_restatement_that_drops_every_gpu_line_of_a_period_drops_it_from_the_gpu_mart_on_spark(tmp_path: Path):
    """The same on Spark, whose insert_overwrite replaces only the partitions the new rows fall in: February's
    partition of fct_gpu_spend_daily is dropped, and the tables equal Spark's full refresh."""
    home = FinopsHome(tmp_path / "home")
    _deliver_first(tmp_path, home)
    _dbt(home, tmp_path / "target", engine="spark")
    assert _spark_period_files(home, "marts.fct_gpu_spend_daily", "2026-02-01")

    _restate_february_without_gpu_lines(tmp_path, home)
    _dbt(home, tmp_path / "target", engine="spark")
    incremental = _spark_snapshot(home)
    spend = ds.dataset(_spark_table(home, "marts.fct_gpu_spend_daily"), format="parquet", partitioning="hive")
    assert {str(value)[:7] for value in spend.to_table().column("billing_period_start").to_pylist()} == {"2026-01"}
    _dbt(home, tmp_path / "target", "--full-refresh", engine="spark")
    assert _spark_snapshot(home) == incremental


def test_a_source_row_delivered_twice_fails_the_run_that_rebuilds_its_period(tmp_path: Path):
    """A source's row key is tested once, on the cost lines every source's rows reach (no per-source test reads the
    whole source on every run): a February line copied behind the loader's back changes February's row count, so
    the next run rebuilds February and its key test there finds the copy, naming the source."""
    home = FinopsHome(tmp_path / "home")
    _deliver_first(tmp_path, home)
    target = tmp_path / "target"
    _dbt(home, target, tests=True)

    february = next((home.lake / "raw" / "aws_cur_line_items").glob("*/2026-02-01/*.parquet"))
    with connect(home.warehouse) as con:
        con.execute(
            f"copy (select * from read_parquet('{february}') where _source_row = 7) "
            f"to '{february.with_name('copied.parquet')}' (format parquet)"
        )

    found = _dbt(home, target, tests=True, succeeds=False)
    assert found.returncode != 0
    failing = _failing_tests(target)
    key_test = "unique_combination_of_columns_int_billing__cost_lines_x_source__x_load_id__x_source_file__x_source_row"
    assert failing == {key_test: 1}, "one key on two rows, and nothing else broken"
    with connect(home.warehouse, read_only=True) as con:
        rebuilt = con.execute(
            "select strftime(BillingPeriodStart, '%Y-%m'), count(*) from intermediate.int_billing__cost_lines "
            "where x_source = 'aws_cur' and x_source_row = 7 group by 1 order by 1"
        ).fetchall()
    assert rebuilt == [("2026-01", 1), ("2026-02", 2)], "February rebuilt with the copy, January untouched"


UTILIZATION = "marts.fct_gpu_utilization_daily"


def _nvidia_smi_log(folder: Path, name: str, days: list[date], busy_percent: int) -> Path:
    """An nvidia-smi CSV log of host gpu-node-a as `nvidia-smi --query-gpu=… --format=csv -l 600` writes it: two
    GPUs sampled every 10 minutes from 10:10 to 12:00 UTC on each day: each sample stands for the 10 minutes before
    it, so each GPU is observed for exactly 10:00–12:00, two GPU-hours a day."""
    lines = ["timestamp, name, uuid, utilization.gpu [%], memory.used [MiB], power.draw [W]"]
    for day in days:
        for minute in range(10, 121, 10):
            for gpu in (1, 2):
                stamp = f"{day:%Y/%m/%d} {10 + minute // 60:02d}:{minute % 60:02d}:00.000"
                uuid = f"GPU-aaaa0000-0000-0000-0000-00000000000{gpu}"
                lines.append(f"{stamp}, NVIDIA H100 80GB HBM3, {uuid}, {busy_percent // gpu} %, 40960 MiB, 500.00 W")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _load_telemetry(home: FinopsHome, *deliveries: tuple[str, Path]) -> None:
    """Telemetry deliveries through the landing zone and the real telemetry ingest (earlier ones come back as
    duplicates)."""
    for source, path in deliveries:
        register(home, source, path)
    log = logging.getLogger(__name__)
    with connect(home.warehouse) as con:
        loaded = ingest_nvidia_smi_logs(home, con, timezone="UTC", log=log) + ingest_host_maps(home, con, log=log)
    assert [r.status for r in loaded if r.status != "duplicate"] == ["loaded"] * len(deliveries), loaded


def _utilization_built_at(home: FinopsHome) -> dict[str, object]:
    return {month: at for (_, month), at in _marts_built_at(home, (UTILIZATION,)).items()}


def _incremental_then_full_refresh(home: FinopsHome, target: Path, rebuilt: set[str]) -> list[tuple]:
    """An incremental run must rebuild exactly the `rebuilt` usage months, leave the others as they were, and give
    what a full refresh of the same warehouse gives, Decimal for Decimal. Returns the mart's rows."""
    before = _utilization_built_at(home)
    _dbt(home, target, select=["+fct_gpu_utilization_daily"])
    after = _utilization_built_at(home)
    assert after.keys() == before.keys() == {"2026-01", "2026-02"}
    assert {month for month in after if after[month] != before[month]} == rebuilt
    incremental = _snapshot(home, (UTILIZATION,))
    _dbt(home, target, "--full-refresh", select=["+fct_gpu_utilization_daily"])
    assert _snapshot(home, (UTILIZATION,)) == incremental
    return incremental[UTILIZATION]


def test_utilization_rebuilds_the_usage_months_whose_telemetry_or_host_map_changed(tmp_path: Path):
    """fct_gpu_utilization_daily is incremental by usage month, and its hourly telemetry is rebuilt whole on every
    run: a month is rebuilt when its fingerprint (GPU cost lines, hourly telemetry rows) changes. Telemetry arriving
    for both months rebuilds both; a log of one more February day, February only; a host map that points
    gpu-node-a at another instance from 1 February on, February only, and February's rows change with it. After
    each run the mart equals a full refresh."""
    home = FinopsHome(tmp_path / "home")
    _deliver_first(tmp_path, home)
    target = tmp_path / "target"
    _dbt(home, target, select=["+fct_gpu_utilization_daily"])
    with connect(home.warehouse, read_only=True) as con:
        billed = {
            day: [
                row[0]
                for row in con.execute(
                    "select distinct ResourceId from intermediate.int_billing__cost_lines where x_gpu_model is not null"
                    " and ResourceId is not null and ChargePeriodStart::date = ? order by 1",
                    [day],
                ).fetchall()
            ]
            for day in (date(2026, 1, 10), date(2026, 2, 5))
        }
    january, (february, *_, other) = billed[date(2026, 1, 10)][0], billed[date(2026, 2, 5)]

    logs, maps = tmp_path / "logs", tmp_path / "maps"
    host_map = "host,resource_id,provider_name,valid_from,valid_to\n"
    maps.mkdir()
    (maps / "hosts.csv").write_text(
        host_map + f"gpu-node-a,{january},AWS,,2026-02-01\ngpu-node-a,{february},AWS,2026-02-01,\n", encoding="utf-8"
    )
    first_log = _nvidia_smi_log(logs / "1", "gpu-node-a--jan-feb.csv", [date(2026, 1, 10), date(2026, 2, 5)], 80)
    _load_telemetry(home, ("nvidia_smi", first_log), ("telemetry_host_map", maps / "hosts.csv"))
    with_telemetry = _incremental_then_full_refresh(home, target, rebuilt={"2026-01", "2026-02"})
    with connect(home.warehouse, read_only=True) as con:
        matched = con.execute(
            f"select resource_id, usage_date::varchar from {UTILIZATION} where match_status = 'matched' order by 2"
        ).fetchall()
    assert matched == [(january, "2026-01-10"), (february, "2026-02-05")]

    _load_telemetry(home, ("nvidia_smi", _nvidia_smi_log(logs / "2", "gpu-node-a--feb-06.csv", [date(2026, 2, 6)], 40)))
    one_more_day = _incremental_then_full_refresh(home, target, rebuilt={"2026-02"})
    with connect(home.warehouse, read_only=True) as con:
        seen = con.execute(
            f"select sum(telemetry_gpu_hours) from {UTILIZATION} where host = 'gpu-node-a' and usage_date = ?",
            [date(2026, 2, 6)],
        ).fetchall()
    assert seen == [(Decimal(4),)], "two GPUs, two hours each, on 6 February"
    assert one_more_day != with_telemetry

    (maps / "hosts.csv").write_text(
        host_map + f"gpu-node-a,{january},AWS,,2026-02-01\ngpu-node-a,{other},AWS,2026-02-01,\n", encoding="utf-8"
    )
    _load_telemetry(home, ("telemetry_host_map", maps / "hosts.csv"))
    remapped = _incremental_then_full_refresh(home, target, rebuilt={"2026-02"})
    changed = {row[1].isoformat()[:7] for row in set(remapped) ^ set(one_more_day)}
    assert changed == {"2026-02"}, "the new host map changes February's rows only"
