"""Loading deliveries into a real DuckDB file: idempotent, restatements replace, bad input changes nothing."""

from __future__ import annotations

import hashlib
import logging
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from pipelines.lib.ingest import ingest_landing_zone
from pipelines.lib.landing import register
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse import FOCUS_RAW, connect
from sources.focus import read_focus_files
from tests.focus_fixtures import focus_rows, write_csv

SEP = {"BillingPeriodStart": "2026-09-01T00:00:00Z", "BillingPeriodEnd": "2026-10-01T00:00:00Z"}
OCT = {
    "BillingPeriodStart": "2026-10-01T00:00:00Z",
    "BillingPeriodEnd": "2026-11-01T00:00:00Z",
    "ChargePeriodStart": "2026-10-01T00:00:00Z",
    "ChargePeriodEnd": "2026-10-02T00:00:00Z",
}
log = logging.getLogger("test")


@pytest.fixture
def home(tmp_path: Path) -> FinopsHome:
    return FinopsHome(tmp_path / "home").ensure()


def run_ingest(home: FinopsHome):
    with connect(home.warehouse) as con:
        return ingest_landing_zone(home, con, source="focus", table=FOCUS_RAW, parse=read_focus_files, log=log)


def billed_by_period(home: FinopsHome) -> dict[str, Decimal]:
    with connect(home.warehouse, read_only=True) as con:
        rows = con.execute(
            "select strftime(BillingPeriodStart, '%Y-%m'), sum(BilledCost) from raw.focus_cost_and_usage group by 1"
        ).fetchall()
    return dict(rows)


def table_fingerprint(home: FinopsHome) -> str:
    """A hash over every row of every table: equal fingerprints mean equal warehouse contents."""
    digest = hashlib.sha256()
    with connect(home.warehouse, read_only=True) as con:
        tables = con.execute("select table_schema, table_name from information_schema.tables order by 1, 2").fetchall()
        for schema, table in tables:
            rows = con.execute(f'select * from "{schema}"."{table}" order by all').fetchall()
            digest.update(f"{schema}.{table}:{rows!r}".encode())
    return digest.hexdigest()


def test_same_file_twice_changes_nothing(home: FinopsHome, tmp_path: Path):
    source = write_csv(tmp_path / "sep.csv", focus_rows(SEP | {"BilledCost": "10.5"}, SEP | {"BilledCost": "0.25"}))
    register(home, "focus", source)
    first = run_ingest(home)
    assert [r.status for r in first] == ["loaded"]
    assert first[0].totals == {"USD": {"billed": "10.75", "effective": "196.64"}}
    before = table_fingerprint(home)

    register(home, "focus", source)  # the same bytes delivered again
    second = run_ingest(home)
    assert [r.status for r in second] == ["duplicate", "duplicate"]
    assert table_fingerprint(home) == before


def test_restatement_replaces_only_the_periods_it_carries(home: FinopsHome, tmp_path: Path):
    register(
        home,
        "focus",
        write_csv(tmp_path / "both.csv", focus_rows(SEP | {"BilledCost": "1"}, OCT | {"BilledCost": "2"})),
    )
    run_ingest(home)
    assert billed_by_period(home) == {"2026-09": Decimal(1), "2026-10": Decimal(2)}

    register(
        home,
        "focus",
        write_csv(tmp_path / "sep-v2.csv", focus_rows(SEP | {"BilledCost": "5"}, SEP | {"BilledCost": "6"})),
    )
    restated = run_ingest(home)[-1]
    assert (restated.status, restated.replaced_rows, restated.rows) == ("loaded", 1, 2)
    assert billed_by_period(home) == {"2026-09": Decimal(11), "2026-10": Decimal(2)}

    register(home, "focus", write_csv(tmp_path / "oct-v2.csv", focus_rows(OCT | {"BilledCost": "7"})))
    run_ingest(home)
    assert billed_by_period(home) == {"2026-09": Decimal(11), "2026-10": Decimal(7)}
    with connect(home.warehouse, read_only=True) as con:
        statuses = con.execute("select delivery, status from audit.loads order by loaded_at").fetchall()
    assert [status for _, status in statuses] == ["superseded", "loaded", "loaded"]


def test_bad_delivery_is_quarantined_and_the_warehouse_is_unchanged(home: FinopsHome, tmp_path: Path):
    register(home, "focus", write_csv(tmp_path / "good.csv", focus_rows(SEP)))
    run_ingest(home)
    before = table_fingerprint(home)

    bad = register(home, "focus", write_csv(tmp_path / "bad.csv", focus_rows(SEP, SEP | {"EffectiveCost": "n/a"})))
    results = run_ingest(home)
    rejected = [r for r in results if r.status == "rejected"]
    assert len(rejected) == 1
    assert "row 2, column EffectiveCost" in rejected[0].reason
    assert table_fingerprint(home) == before
    assert not bad.path.exists()
    reason = (home.quarantine / "focus" / f"{bad.path.name}.reason.txt").read_text()
    assert "column: EffectiveCost" in reason and "row: 2" in reason
    assert (home.quarantine / "focus" / bad.path.name).exists()


def test_folder_delivery_loads_its_part_files_as_one(home: FinopsHome, tmp_path: Path):
    folder = tmp_path / "export-run"
    folder.mkdir()
    write_csv(folder / "part-0.csv", focus_rows(SEP | {"BilledCost": "3"}))
    write_csv(folder / "part-1.csv", focus_rows(SEP | {"BilledCost": "4"}))
    register(home, "focus", folder)
    (result,) = run_ingest(home)
    assert (result.status, result.rows) == ("loaded", 2)
    assert billed_by_period(home) == {"2026-09": Decimal(7)}
    with connect(home.warehouse, read_only=True) as con:
        files = {row[0] for row in con.execute("select _source_file from raw.focus_cost_and_usage").fetchall()}
    assert {Path(f).name for f in files} == {"part-0.csv", "part-1.csv"}


def test_warehouse_money_columns_are_decimal(home: FinopsHome, tmp_path: Path):
    register(home, "focus", write_csv(tmp_path / "a.csv", focus_rows(SEP)))
    run_ingest(home)
    con = duckdb.connect(str(home.warehouse), read_only=True)
    try:
        types = dict(
            con.execute(
                "select column_name, data_type from information_schema.columns "
                "where table_schema = 'raw' and column_name in ('BilledCost', 'EffectiveCost', 'PricingQuantity')"
            ).fetchall()
        )
    finally:
        con.close()
    assert set(types.values()) == {"DECIMAL(38,12)"}
