"""scripts/compare_warehouses.py, the proof that a refactoring changed no mart: it must see a change in the
twelfth decimal, a lost duplicate row and a dropped column that held values, and let pass what only differs in
build bookkeeping or in all-null padding columns."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from pipelines.lib.settings import PROJECT_ROOT

SCRIPT = PROJECT_ROOT / "scripts" / "compare_warehouses.py"

OLD_ROWS = """
    create schema marts;
    create table marts.fct_spend (
        provider varchar, cost decimal(38, 12), padding varchar, x_built_at timestamp
    );
    insert into marts.fct_spend values
        ('AWS', 1.000000000001, null, timestamp '2026-12-01 10:00:00'),
        ('AWS', 1.000000000001, null, timestamp '2026-12-01 10:00:00'),
        ('Lambda', 2.5, null, timestamp '2026-12-01 10:00:00');
"""


def warehouse(path: Path, sql: str) -> Path:
    con = duckdb.connect(str(path))
    try:
        con.execute(sql)
    finally:
        con.close()
    return path


def compare(old: Path, new: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(old), str(new), "--schema", "marts"],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def old(tmp_path: Path) -> Path:
    return warehouse(tmp_path / "old.duckdb", OLD_ROWS)


def test_a_rebuild_at_another_time_without_the_padding_column_is_equal(old: Path, tmp_path: Path):
    new = warehouse(
        tmp_path / "new.duckdb",
        """
        create schema marts;
        create table marts.fct_spend (x_built_at timestamp, cost decimal(38, 12), provider varchar);
        insert into marts.fct_spend values
            (timestamp '2026-12-02 09:00:00', 2.5, 'Lambda'),
            (timestamp '2026-12-02 09:00:00', 1.000000000001, 'AWS'),
            (timestamp '2026-12-02 09:00:00', 1.000000000001, 'AWS');
        create table marts.rpt_new (x integer);
        """,
    )
    result = compare(old, new)
    assert result.returncode == 0, result.stdout
    assert "added   marts.rpt_new" in result.stdout
    assert "1 tables equal, 1 added, 0 differ" in result.stdout


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("update marts.fct_spend set cost = 1.000000000002 where provider = 'Lambda'", "1 only in old, 1 only in new"),
        ("delete from marts.fct_spend where rowid = 0", "old 3 rows, new 2"),
        ("update marts.fct_spend set padding = 'x' where provider = 'Lambda'", "1 only in old, 1 only in new"),
        ("alter table marts.fct_spend alter cost type decimal(18, 6)", "columns added or retyped"),
        ("drop table marts.fct_spend; create table marts.other (x integer)", "marts.fct_spend: missing"),
    ],
)
def test_a_changed_value_row_type_or_table_differs(old: Path, tmp_path: Path, change: str, expected: str):
    new = warehouse(tmp_path / "new.duckdb", OLD_ROWS + change)
    result = compare(old, new)
    assert result.returncode == 1, result.stdout
    assert expected in result.stdout


def test_a_dropped_column_that_held_values_differs(tmp_path: Path):
    old = warehouse(tmp_path / "old.duckdb", OLD_ROWS + "update marts.fct_spend set padding = 'kept'")
    new = warehouse(tmp_path / "new.duckdb", OLD_ROWS + "alter table marts.fct_spend drop column padding")
    result = compare(old, new)
    assert result.returncode == 1
    assert "column padding dropped though it held values" in result.stdout


def test_separately_loaded_warehouses_compare_without_their_load_lineage(tmp_path: Path):
    table = "create schema marts; create table marts.fct_lines (x_LoadId varchar, x_source_file varchar, cost decimal);"
    old = warehouse(tmp_path / "old.duckdb", table + "insert into marts.fct_lines values ('l1', '20261201T1__a', 1)")
    new = warehouse(tmp_path / "new.duckdb", table + "insert into marts.fct_lines values ('l2', '20261202T1__a', 1)")
    assert compare(old, new).returncode == 1
    result = subprocess.run(
        [sys.executable, str(SCRIPT), str(old), str(new), "--schema", "marts", "--separate-loads"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout
