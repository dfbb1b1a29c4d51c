"""Loading deliveries into a real DuckDB file: idempotent, restatements replace, bad input changes nothing."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from pipelines.lib.catalog.billing import FOCUS
from pipelines.lib.ingest.landing import register
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.loads import audit_mismatches
from tests.support.focus_fixtures import focus_rows, write_csv
from tests.support.focus_ingest import OCTOBER, SEPTEMBER, ingest_focus
from tests.support.warehouse_helpers import query, table_fingerprint


@pytest.fixture
def home(tmp_path: Path) -> FinopsHome:
    return FinopsHome(tmp_path / "home").create_folders()


def billed_by_period(home: FinopsHome) -> dict[str, Decimal]:
    sql = "select strftime(BillingPeriodStart, '%Y-%m'), sum(BilledCost) from raw.focus_cost_and_usage group by 1"
    return dict(query(home.warehouse, sql))


def test_same_file_twice_changes_nothing(home: FinopsHome, tmp_path: Path):
    source = write_csv(
        tmp_path / "sep.csv", focus_rows(SEPTEMBER | {"BilledCost": "10.5"}, SEPTEMBER | {"BilledCost": "0.25"})
    )
    register(home, "focus", source)
    first = ingest_focus(home)
    assert [r.status for r in first] == ["loaded"]
    assert first[0].totals == {"USD": {"billed": "10.75", "effective": "196.64"}}
    before = table_fingerprint(home.warehouse)

    register(home, "focus", source)  # the same bytes delivered again
    second = ingest_focus(home)
    assert [r.status for r in second] == ["duplicate", "duplicate"]
    assert table_fingerprint(home.warehouse) == before


def test_restatement_replaces_only_the_periods_it_carries(home: FinopsHome, tmp_path: Path):
    register(
        home,
        "focus",
        write_csv(tmp_path / "both.csv", focus_rows(SEPTEMBER | {"BilledCost": "1"}, OCTOBER | {"BilledCost": "2"})),
    )
    ingest_focus(home)
    assert billed_by_period(home) == {"2026-09": Decimal(1), "2026-10": Decimal(2)}

    register(
        home,
        "focus",
        write_csv(
            tmp_path / "sep-v2.csv", focus_rows(SEPTEMBER | {"BilledCost": "5"}, SEPTEMBER | {"BilledCost": "6"})
        ),
    )
    restated = ingest_focus(home)[-1]
    assert (restated.status, restated.replaced_rows, restated.rows) == ("loaded", 1, 2)
    assert billed_by_period(home) == {"2026-09": Decimal(11), "2026-10": Decimal(2)}

    register(home, "focus", write_csv(tmp_path / "oct-v2.csv", focus_rows(OCTOBER | {"BilledCost": "7"})))
    ingest_focus(home)
    assert billed_by_period(home) == {"2026-09": Decimal(11), "2026-10": Decimal(7)}
    statuses = query(home.warehouse, "select status from audit.loads order by loaded_at")
    assert statuses == [("superseded",), ("loaded",), ("loaded",)]


def test_bad_delivery_is_quarantined_and_the_warehouse_is_unchanged(home: FinopsHome, tmp_path: Path):
    register(home, "focus", write_csv(tmp_path / "good.csv", focus_rows(SEPTEMBER)))
    ingest_focus(home)
    before = table_fingerprint(home.warehouse)

    bad = register(
        home, "focus", write_csv(tmp_path / "bad.csv", focus_rows(SEPTEMBER, SEPTEMBER | {"EffectiveCost": "n/a"}))
    )
    results = ingest_focus(home)
    rejected = [r for r in results if r.status == "rejected"]
    assert len(rejected) == 1
    assert "row 2, column EffectiveCost" in rejected[0].reason
    assert table_fingerprint(home.warehouse) == before
    assert not bad.path.exists()
    reason = (home.quarantine / "focus" / f"{bad.path.name}.reason.txt").read_text()
    assert "column: EffectiveCost" in reason and "row: 2" in reason
    assert (home.quarantine / "focus" / bad.path.name).exists()


def test_folder_delivery_loads_its_part_files_as_one(home: FinopsHome, tmp_path: Path):
    folder = tmp_path / "export-run"
    folder.mkdir()
    write_csv(folder / "part-0.csv", focus_rows(SEPTEMBER | {"BilledCost": "3"}))
    write_csv(folder / "part-1.csv", focus_rows(SEPTEMBER | {"BilledCost": "4"}))
    register(home, "focus", folder)
    (result,) = ingest_focus(home)
    assert (result.status, result.rows) == ("loaded", 2)
    assert billed_by_period(home) == {"2026-09": Decimal(7)}
    files = query(home.warehouse, "select distinct _source_file from raw.focus_cost_and_usage")
    assert {Path(f).name for (f,) in files} == {"part-0.csv", "part-1.csv"}


def test_warehouse_money_columns_are_decimal(home: FinopsHome, tmp_path: Path):
    register(home, "focus", write_csv(tmp_path / "a.csv", focus_rows(SEPTEMBER)))
    ingest_focus(home)
    types = query(
        home.warehouse,
        "select distinct data_type from information_schema.columns "
        "where table_schema = 'raw' and column_name in ('BilledCost', 'EffectiveCost', 'PricingQuantity')",
    )
    assert types == [("DECIMAL(38,12)",)]


def test_audit_check_finds_a_row_lost_after_loading(home: FinopsHome, tmp_path: Path):
    register(home, "focus", write_csv(tmp_path / "a.csv", focus_rows(SEPTEMBER, SEPTEMBER | {"BilledCost": "1.5"})))
    ingest_focus(home)
    with connect(home.warehouse) as con:
        assert audit_mismatches(con, FOCUS.raw_table)[1] == []
        # A row lost from the lake's file after loading (a damaged copy, a hand edit).
        (data_file,) = [
            p
            for p in (home.lake / "raw" / "focus_cost_and_usage").rglob("*.parquet")
            if p.parent.name != "focus_cost_and_usage"
        ]
        con.execute(
            f"copy (select * from read_parquet('{data_file}') where BilledCost <> 1.5) "
            f"to '{data_file}.new' (format parquet)"
        )
        data_file.with_name(data_file.name + ".new").rename(data_file)
        header, mismatches = audit_mismatches(con, FOCUS.raw_table)
    (row,) = mismatches
    found = dict(zip(header, row, strict=True))
    assert (found["expected_rows"], found["found_rows"]) == (2, 1)
    assert found["expected_billed"] - found["found_billed"] == Decimal("1.5")
