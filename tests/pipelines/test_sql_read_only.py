"""`gpu-finops sql` reads the warehouse and nothing else: the marts and the raw and audit views over the lake answer;
writing a file, reading one outside the lake, attaching a database, installing or loading an extension and changing
the locked settings are refused with a clear message, and nothing is written. A warehouse built by the real
`gpu-finops ingest`, the real CLI as a process; the expected figures are the delivery's own, added up here."""

from __future__ import annotations

import csv
import hashlib
import io
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from pipelines.lib.settings import FinopsHome
from pipelines.lib.transform.spark_tables import SparkTable, publish_spark_tables
from pipelines.lib.warehouse.connection import connect, query_connection, run_query
from tests.support.cli import run_cli
from tests.support.focus_fixtures import focus_rows, write_csv
from tests.support.focus_ingest import SEPTEMBER

REFUSED = "error: the SQL surface reads the warehouse only"


@pytest.fixture(scope="module")
def delivery(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sql-read-only")
    return write_csv(
        folder / "sep.csv",
        focus_rows(
            SEPTEMBER | {"BilledCost": "10.5", "ChargeDescription": "p5.48xlarge On Demand Linux"},
            SEPTEMBER | {"BilledCost": "0.25", "ChargeDescription": "g5.xlarge On Demand Linux"},
            SEPTEMBER | {"BilledCost": "3.125", "ChargeDescription": "p4d.24xlarge On Demand Linux"},
        ),
    )


@pytest.fixture(scope="module")
def home(delivery: Path) -> FinopsHome:
    """One FOCUS delivery loaded and the models built by `gpu-finops ingest`, as a user would."""
    home = FinopsHome(delivery.parent / "home")
    result = run_cli(home.root, "ingest", str(delivery), "--source", "focus")
    assert result.returncode == 0, result.stdout + result.stderr
    return home


def _sql_csv(home: FinopsHome, query: str) -> list[list[str]]:
    result = run_cli(home.root, "sql", query, "--format", "csv")
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    return list(csv.reader(io.StringIO(result.stdout)))


def _files(folder: Path) -> dict[str, str]:
    """Every file under `folder` with a hash of its bytes: equal when nothing was written there."""
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_sql_answers_a_mart_and_the_raw_and_audit_views_over_the_lake(home: FinopsHome, delivery: Path):
    with delivery.open(newline="") as file:
        lines = list(csv.DictReader(file))
    billed = sum((Decimal(line["BilledCost"]) for line in lines), Decimal(0))

    raw = _sql_csv(home, "select count(*), sum(BilledCost) from raw.focus_cost_and_usage")
    assert int(raw[1][0]) == len(lines) == 3
    assert Decimal(raw[1][1]) == billed == Decimal("13.875")
    mart = _sql_csv(home, "select sum(billed_cost), sum(cost_line_count) from marts.fct_cost_daily")
    assert (Decimal(mart[1][0]), int(mart[1][1])) == (billed, len(lines))
    assert _sql_csv(home, "select status, row_count from audit.loads") == [["status", "row_count"], ["loaded", "3"]]


def test_every_table_and_view_answers_on_the_locked_connection(home: FinopsHome):
    """Every mart, model and raw or audit view reads what it reads without the lock: the lake is all they need."""
    counting = "select table_schema, table_name from information_schema.tables order by all"
    with connect(home.warehouse, read_only=True) as con:
        relations = con.execute(counting).fetchall()
        unlocked = {f"{s}.{t}": con.execute(f'select count(*) from "{s}"."{t}"').fetchall() for s, t in relations}
    with query_connection(home) as con:
        assert con.execute("select current_setting('enable_external_access')").fetchall() == [(False,)]
        locked = {f"{s}.{t}": run_query(con, f'select count(*) from "{s}"."{t}"').fetchall() for s, t in relations}
    assert {name.split(".")[0] for name in locked} >= {"marts", "raw", "audit", "staging", "intermediate"}
    assert locked == unlocked


def test_sql_refuses_what_is_not_reading_the_warehouse_and_writes_nothing(home: FinopsHome, tmp_path: Path):
    secret = tmp_path / "secret.csv"
    secret.write_text("name,value\nsecret-marker,42\n")
    other = tmp_path / "other.duckdb"
    with duckdb.connect(str(other)) as con:
        con.execute("create table t as select 'other-marker' as v")
    outside, inside = tmp_path / "copied.csv", home.lake / "copied.csv"
    statements = [
        f"copy (select * from marts.fct_cost_daily) to '{outside}'",
        f"copy (select 1) to '{inside}'",  # DuckDB itself would let it write where it may read
        f"select 1; copy (select 1) to '{outside}'",
        f"explain analyze copy (select 1) to '{inside}'",
        f"select * from read_csv('{secret}')",
        "select * from read_csv('/etc/passwd')",
        "select * from read_text('/etc/passwd')",
        f"attach '{other}' as other",
        "install httpfs",
        "load httpfs",
        "select * from read_parquet('https://example.com/x.parquet')",
        "set enable_external_access = true",
        "set lock_configuration = false",
        "reset allowed_directories",
        "create temp table t as select 1",
    ]
    lake_before, other_before = _files(home.lake), other.read_bytes()
    for statement in statements:
        result = run_cli(home.root, "sql", statement)
        assert result.returncode == 1, statement
        assert result.stderr.startswith(REFUSED), (statement, result.stderr)
        assert "Traceback" not in result.stderr and result.stdout == "", statement
        assert "secret-marker" not in result.stdout + result.stderr and "root:" not in result.stdout
    assert "Cannot access file" in run_cli(home.root, "sql", f"select * from read_csv('{secret}')").stderr
    assert "COPY statements are refused" in run_cli(home.root, "sql", f"copy (select 1) to '{outside}'").stderr
    assert not outside.exists() and not inside.exists()
    assert _files(home.lake) == lake_before and other.read_bytes() == other_before


def test_the_connection_itself_refuses_without_the_statement_check(home: FinopsHome, tmp_path: Path):
    """DuckDB's own settings hold even for statements that `run_query` would have refused before running them."""
    secret = tmp_path / "secret.csv"
    secret.write_text("name\nsecret-marker\n")
    other = tmp_path / "other.duckdb"
    duckdb.connect(str(other)).close()
    with query_connection(home) as con:
        for statement in (
            f"select * from read_csv('{secret}')",
            f"copy (select 1) to '{tmp_path / 'copied.csv'}'",
            f"attach '{other}' as other",
            "install httpfs",
            "load httpfs",
        ):
            with pytest.raises(duckdb.PermissionException):
                con.execute(statement)
        for statement in (
            "set enable_external_access = true",
            "set lock_configuration = false",
            "set autoload_known_extensions = true",
            "reset allowed_directories",
        ):
            with pytest.raises(duckdb.InvalidInputException, match="the configuration has been locked"):
                con.execute(statement)
    assert not (tmp_path / "copied.csv").exists()


def test_sql_reads_the_marts_spark_built(tmp_path: Path):
    """On FINOPS_ENGINE=spark the marts are views over Parquet under FINOPS_HOME/spark/warehouse: readable too."""
    home = FinopsHome(tmp_path / "home").create_folders()
    table = SparkTable("marts", "fct_cost_daily", home.spark_warehouse / "marts.db" / "fct_cost_daily")
    table.folder.mkdir(parents=True)
    with connect(home.warehouse) as con:
        con.execute(
            f"copy (select 'USD' as billing_currency, 12.5::decimal(38, 12) as billed_cost) "
            f"to '{table.folder / 'part-0.parquet'}' (format parquet)"
        )
        assert publish_spark_tables(con, [table]) == []
    rows = _sql_csv(home, "select billing_currency, billed_cost from marts.fct_cost_daily")
    assert rows == [["billing_currency", "billed_cost"], ["USD", "12.500000000000"]]
