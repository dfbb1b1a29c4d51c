"""The lake itself: real Parquet files, a real DuckDB file, real processes killed mid-load."""

from __future__ import annotations

import hashlib
from datetime import date
from decimal import Decimal
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.lib.catalog.billing import FOCUS, OCI_COST
from pipelines.lib.catalog.prices import FX_RATES
from pipelines.lib.ingest.landing import register
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.loads import load_reference_rows
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from pipelines.lib.warehouse.tables import recover_and_ensure_tables
from tests.support.focus_fixtures import focus_rows, write_csv
from tests.support.focus_ingest import OCTOBER, SEPTEMBER, ingest_focus
from tests.support.paused_child import kill_now, start_paused_focus_ingest
from tests.support.warehouse_helpers import query

AUDIT_TABLES = ("loads", "load_totals", "restatements")


@pytest.fixture
def home(tmp_path: Path) -> FinopsHome:
    return FinopsHome(tmp_path / "home").create_folders()


def focus_folder(home: FinopsHome) -> Path:
    return home.lake / "raw" / "focus_cost_and_usage"


def partitions(home: FinopsHome) -> dict[str, list[str]]:
    """Partition folder (account/period) → its data files, read from the filesystem."""
    found: dict[str, list[str]] = {}
    for path in sorted(focus_folder(home).rglob("*.parquet")):
        if path.parent != focus_folder(home):
            found.setdefault(path.parent.relative_to(focus_folder(home)).as_posix(), []).append(path.name)
    return found


def lake_snapshot(home: FinopsHome) -> dict[str, str]:
    """Every file of the lake's data and audit folders with a hash of its bytes (staging etc. excluded)."""
    return {
        path.relative_to(home.lake).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(home.lake.rglob("*"))
        if path.is_file() and not path.relative_to(home.lake).parts[0].startswith("_")
    }


def billed_by_period(home: FinopsHome) -> dict[str, Decimal]:
    sql = "select strftime(BillingPeriodStart, '%Y-%m'), sum(BilledCost) from raw.focus_cost_and_usage group by 1"
    return dict(query(home.warehouse, sql))


def load_sep_and_oct(home: FinopsHome, tmp_path: Path) -> None:
    rows = focus_rows(SEPTEMBER | {"BilledCost": "1"}, SEPTEMBER | {"BilledCost": "2"}, OCTOBER | {"BilledCost": "4"})
    register(home, "focus", write_csv(tmp_path / "sep-oct.csv", rows))
    assert [r.status for r in ingest_focus(home)] == ["loaded"]


def test_a_restatement_swaps_only_the_partitions_it_restates(home: FinopsHome, tmp_path: Path):
    load_sep_and_oct(home, tmp_path)
    before = partitions(home)
    (account,) = {folder.split("/")[0] for folder in before}
    assert sorted(before) == [f"{account}/2026-09-01", f"{account}/2026-10-01"]
    october = focus_folder(home) / f"{account}/2026-10-01" / before[f"{account}/2026-10-01"][0]
    october_inode = october.stat().st_ino

    register(home, "focus", write_csv(tmp_path / "sep.csv", focus_rows(SEPTEMBER | {"BilledCost": "8.5"})))
    (restated,) = [r for r in ingest_focus(home) if r.status == "loaded"]

    after = partitions(home)
    assert after[f"{account}/2026-09-01"] == [f"{restated.load_id}.parquet"]
    # October was not touched: the same file, not a copy.
    assert after[f"{account}/2026-10-01"] == before[f"{account}/2026-10-01"]
    assert october.stat().st_ino == october_inode
    assert billed_by_period(home) == {"2026-09": Decimal("8.5"), "2026-10": Decimal(4)}
    # The first load still holds October: loaded, not superseded; the restatement recorded 3 before, 8.5 after.
    assert query(home.warehouse, "select status from audit.loads order by loaded_at") == [("loaded",), ("loaded",)]
    assert query(
        home.warehouse, "select rows_before, billed_cost_before, rows_after, billed_cost_after from audit.restatements"
    ) == [(2, Decimal(3), 1, Decimal("8.5"))]
    assert not any(home.lake.glob("_staging/*")) and not any(home.lake.glob("_journal/*"))


def test_a_crash_after_staging_before_the_commit_leaves_the_lake_as_it_was(home: FinopsHome, tmp_path: Path):
    load_sep_and_oct(home, tmp_path)
    before = lake_snapshot(home)
    register(home, "focus", write_csv(tmp_path / "sep.csv", focus_rows(SEPTEMBER | {"BilledCost": "8.5"})))

    child = start_paused_focus_ingest(home, "committing", tmp_path / "committing")
    staged = list((home.lake / "_staging").rglob("*.parquet"))
    assert staged, "the load was held after staging its files"
    kill_now(child)

    assert lake_snapshot(home) == before
    with connect(home.warehouse) as con:
        recover_and_ensure_tables(con, FOCUS.raw_table)  # what every writer does first: recovery
    assert not any((home.lake / "_staging").iterdir())
    assert lake_snapshot(home) == before
    assert billed_by_period(home) == {"2026-09": Decimal(3), "2026-10": Decimal(4)}
    assert query(
        home.warehouse,
        "select count(*) from audit.quality_results where load_id not in (select load_id from audit.loads)",
    ) == [(0,)]


def test_a_crash_after_the_commit_mid_swap_is_finished_by_recovery(home: FinopsHome, tmp_path: Path):
    load_sep_and_oct(home, tmp_path)
    restated = focus_rows(
        SEPTEMBER | {"BilledCost": "10"}, OCTOBER | {"BilledCost": "20"}, OCTOBER | {"BilledCost": "0.25"}
    )
    register(home, "focus", write_csv(tmp_path / "restated.csv", restated))

    child = start_paused_focus_ingest(home, "swapping", tmp_path / "swapping")
    kill_now(child)
    (journal,) = (home.lake / "_journal").glob("*.json")
    load_id = journal.stem
    # Half swapped: one period already holds the new load's file, the other still the old one.
    half = partitions(home)
    assert sorted(f"{load_id}.parquet" in files for files in half.values()) == [False, True]

    # The next writer (a plain rerun of the ingest) rolls the journal forward before anything else.
    assert [r.status for r in ingest_focus(home)] == ["duplicate", "duplicate"]
    assert not any((home.lake / "_journal").iterdir()) and not any((home.lake / "_trash").glob("*"))
    assert all(files == [f"{load_id}.parquet"] for files in partitions(home).values())
    assert billed_by_period(home) == {"2026-09": Decimal(10), "2026-10": Decimal("20.25")}
    assert query(home.warehouse, "select status, row_count from audit.loads order by loaded_at") == [
        ("superseded", 3),
        ("loaded", 3),
    ]


def test_lake_files_carry_the_declared_parquet_types(home: FinopsHome, tmp_path: Path):
    load_sep_and_oct(home, tmp_path)
    with connect(home.warehouse) as con:
        recover_and_ensure_raw_tables(con)
    (data_file,) = (focus_folder(home) / next(iter(partitions(home)))).glob("*.parquet")
    schema = pq.read_schema(data_file)
    assert schema.field("BilledCost").type == pa.decimal128(38, 12)
    assert schema.field("EffectiveCost").type == pa.decimal128(38, 12)
    # TIMESTAMP without a time zone (UTC by convention): what Spark reads as TIMESTAMP with inferTimestampNTZ off.
    assert schema.field("BillingPeriodStart").type == pa.timestamp("us")
    assert schema.field("_ingested_at").type == pa.timestamp("us")
    assert schema.field("_load_id").type == pa.string()
    assert schema.field("BillingAccountId").type == pa.string()
    # Every file of the table has the same columns, the zero-row schema file included.
    declared = pq.read_schema(focus_folder(home) / "schema.parquet")
    assert [(f.name, f.type) for f in declared] == [(f.name, f.type) for f in schema]
    assert pq.read_table(focus_folder(home) / "schema.parquet").num_rows == 0

    # A source never delivered reads as an empty relation with its columns, in DuckDB and from the file.
    oci = home.lake / "raw" / "oci_cost_report"
    assert [p.name for p in oci.rglob("*.parquet")] == ["schema.parquet"]
    assert pq.read_table(oci / "schema.parquet").column_names == [
        *OCI_COST.raw_table.columns,
        "_load_id",
        "_ingested_at",
    ]
    assert query(home.warehouse, "select count(*) from raw.oci_cost_report") == [(0,)]
    loads = pq.read_schema(next((home.lake / "audit" / "loads").glob("*-*.parquet")))
    assert (loads.field("loaded_at").type, loads.field("row_count").type) == (pa.timestamp("us"), pa.int64())
    totals = pq.read_schema(next((home.lake / "audit" / "load_totals").glob("*-*.parquet")))
    assert totals.field("billed_cost").type == pa.decimal128(38, 12)


def test_views_follow_the_lake_when_it_moves(home: FinopsHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    load_sep_and_oct(home, tmp_path)
    moved = tmp_path / "elsewhere" / "lake"
    moved.parent.mkdir()
    home.lake.rename(moved)
    monkeypatch.setenv("FINOPS_LAKE", str(moved))
    with connect(home.warehouse) as con:
        recover_and_ensure_raw_tables(con)
        (sql,) = con.execute("select sql from duckdb_views() where view_name = 'focus_cost_and_usage'").fetchall()[0]
    assert str(moved) in sql
    assert billed_by_period(home) == {"2026-09": Decimal(3), "2026-10": Decimal(4)}


def test_a_warehouse_from_before_the_lake_moves_its_tables_into_it(home: FinopsHome, tmp_path: Path):
    load_sep_and_oct(home, tmp_path)
    register(home, "focus", write_csv(tmp_path / "sep.csv", focus_rows(SEPTEMBER | {"BilledCost": "8.5"})))
    ingest_focus(home)
    raw_sql = "select * exclude (_ingested_at) from raw.focus_cost_and_usage order by all"
    loads_sql = "select * from audit.loads order by loaded_at"
    expected_raw, expected_loads = query(home.warehouse, raw_sql), query(home.warehouse, loads_sql)
    assert [row[5] for row in expected_loads] == ["loaded", "loaded"]

    # The same contents as base tables, the way the loader kept them before the lake.
    old = FinopsHome(tmp_path / "old").create_folders()
    with connect(old.warehouse) as con:
        con.execute(f"attach '{home.warehouse}' as current (read_only)")
        for schema, table in [("raw", "focus_cost_and_usage"), *(("audit", t) for t in AUDIT_TABLES)]:
            con.execute(f"create schema if not exists {schema}")
            con.execute(f"create table {schema}.{table} as select * from current.{schema}.{table}")
        con.execute("detach current")
    assert not old.lake.exists()

    with connect(old.warehouse) as con:
        recover_and_ensure_tables(con, FOCUS.raw_table)
        kinds = con.execute(
            "select table_type from information_schema.tables where table_name = 'focus_cost_and_usage'"
        ).fetchall()
    assert kinds == [("VIEW",)]
    assert query(old.warehouse, raw_sql) == expected_raw
    assert query(old.warehouse, loads_sql) == expected_loads
    assert sorted(partitions(old)) == sorted(partitions(home))


def test_a_reference_load_keeps_the_rows_of_keys_it_does_not_carry(home: FinopsHome):
    """ECB rates live in one folder per base currency: a load restating a day rewrites that folder, keeping the
    other days' rows in a file of the load that wrote them."""

    def rates(*rows: tuple[str, str, str]) -> pl.DataFrame:
        return pl.DataFrame(
            [
                {
                    "rate_date": date.fromisoformat(day),
                    "base_currency": "EUR",
                    "quote_currency": quote,
                    "rate": Decimal(rate),
                    "source_url": "test",
                }
                for day, quote, rate in rows
            ],
            schema=FX_RATES.columns,
        )

    with connect(home.warehouse) as con:
        first = load_reference_rows(
            con,
            FX_RATES,
            source="ecb",
            delivery="a",
            sha256="a",
            frame=rates(("2026-10-01", "USD", "1.1"), ("2026-10-01", "GBP", "0.85"), ("2026-10-02", "USD", "1.2")),
        )
        second = load_reference_rows(
            con, FX_RATES, source="ecb", delivery="b", sha256="b", frame=rates(("2026-10-02", "USD", "1.25"))
        )
    assert (second.rows, second.replaced_rows) == (1, 1)
    folder = home.lake / "raw" / "ecb_fx_rates" / "EUR"
    assert sorted(p.name for p in folder.glob("*.parquet")) == sorted(
        [f"{first.load_id}.parquet", f"{second.load_id}.parquet"]
    )
    kept = pq.read_table(folder / f"{first.load_id}.parquet").to_pylist()
    assert sorted((r["rate_date"].isoformat(), r["quote_currency"], r["rate"]) for r in kept) == [
        ("2026-10-01", "GBP", Decimal("0.85")),
        ("2026-10-01", "USD", Decimal("1.1")),
    ]
    assert query(
        home.warehouse, "select rate_date::varchar, quote_currency, rate from raw.ecb_fx_rates order by all"
    ) == [
        ("2026-10-01", "GBP", Decimal("0.85")),
        ("2026-10-01", "USD", Decimal("1.1")),
        ("2026-10-02", "USD", Decimal("1.25")),
    ]
    # The first load still has rows in raw: loaded, not superseded.
    assert query(home.warehouse, "select status from audit.loads order by loaded_at") == [("loaded",), ("loaded",)]
