"""Read-only looks into a warehouse file for tests."""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb

from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.lake import SCHEMA_FILE, lake_of, sql_text


def query(warehouse: Path, sql: str) -> list[tuple]:
    with connect(warehouse, read_only=True) as con:
        return con.execute(sql).fetchall()


def table_fingerprint(warehouse: Path) -> str:
    """A hash over every row of every table: equal fingerprints mean equal warehouse contents."""
    digest = hashlib.sha256()
    with connect(warehouse, read_only=True) as con:
        tables = con.execute("select table_schema, table_name from information_schema.tables order by all").fetchall()
        for schema, table in tables:
            rows = con.execute(f'select * from "{schema}"."{table}" order by all').fetchall()
            digest.update(f"{schema}.{table}:{rows!r}".encode())
    return digest.hexdigest()


RUN_BOOKKEEPING_COLUMNS = frozenset(
    {
        # ids a load or run makes up, and the clock at which it ran: differ between two runs of the same data
        "_load_id",
        "load_id",
        "x_load_id",
        "x_loadid",
        "replaced_load_ids",
        "superseded_by",
        "run_id",
        "_ingested_at",
        "x_ingested_at",
        "loaded_at",
        "checked_at",
        "restated_at",
        "x_built_at",
        "cost_lines_built_at",
        "_cost_lines_built_at",
        "built_at",
        # fingerprints of a month's inputs, which hold the latest x_built_at (int_gpu_usage__month_fingerprints)
        "inputs_fingerprint",
        "cost_lines_fingerprint",
        "cost_lines_and_telemetry_fingerprint",
        "last_delivery",
        "expected_by",
    }
)
ATTEMPT_TABLES = frozenset({"audit.builds", "audit.run_failures"})
"""Tables that record the attempts themselves (a killed build is a row there), not the warehouse's data."""


def warehouse_contents(warehouse: Path) -> dict[str, list[tuple]]:
    """Every table's rows, sorted, without the run bookkeeping columns and attempt tables: what two warehouses
    loaded with the same deliveries must hold alike, value for value (DECIMAL columns come back as Decimal)."""
    contents = {}
    with connect(warehouse, read_only=True) as con:
        tables = con.execute("select table_schema, table_name from information_schema.tables order by all").fetchall()
        for schema, table in tables:
            if f"{schema}.{table}" in ATTEMPT_TABLES:
                continue
            columns = [
                name
                for (name,) in con.execute(
                    "select column_name from information_schema.columns where table_schema = ? and table_name = ? "
                    "order by ordinal_position",
                    [schema, table],
                ).fetchall()
                if name.lower() not in RUN_BOOKKEEPING_COLUMNS
            ]
            selected = ", ".join(f'"{name}"' for name in columns)
            contents[f"{schema}.{table}"] = con.execute(
                f'select {selected} from "{schema}"."{table}" order by all'
            ).fetchall()
    return contents


def _declared_types(con: duckdb.DuckDBPyConnection, table_name: str) -> dict[str, str]:
    schema_file = sql_text(str(lake_of(con).folder(table_name) / SCHEMA_FILE))
    return {row[0]: row[1] for row in con.execute(f"describe select * from read_parquet({schema_file})").fetchall()}


def rewrite_lake_files(
    con: duckdb.DuckDBPyConnection, table_name: str, columns: dict[str, str], params: Sequence[Any] = ()
) -> None:
    """A hand edit of a lake table, as an UPDATE was on a table: every data file rewritten with
    `columns` (name → SQL expression over the file's row) replaced, types kept."""
    types = _declared_types(con, table_name)
    replaced = ", ".join(f'cast({expr} as {types[name]}) as "{name}"' for name, expr in columns.items())
    for path in sorted(lake_of(con).folder(table_name).rglob("*.parquet")):
        if path.name == SCHEMA_FILE:
            continue
        edited = path.with_name(path.name + ".edited")
        con.execute(
            f"copy (select * replace ({replaced}) from read_parquet({sql_text(str(path))})) "
            f"to {sql_text(str(edited))} (format parquet)",
            list(params),
        )
        os.replace(edited, path)


def add_lake_rows(con: duckdb.DuckDBPyConnection, table_name: str, select_sql: str, params: Sequence[Any] = ()) -> None:
    """Rows added to a lake table by hand, as an INSERT was on a table: one more file, cast to the table's types."""
    types = _declared_types(con, table_name)
    selected = ", ".join(f'cast("{name}" as {sql_type}) as "{name}"' for name, sql_type in types.items())
    folder = lake_of(con).folder(table_name)
    target = folder / "added-by-test" / f"{uuid.uuid4()}.parquet"
    target.parent.mkdir(parents=True, exist_ok=True)
    rows = f"select * from read_parquet({sql_text(str(folder / SCHEMA_FILE))}) union all by name ({select_sql})"
    con.execute(f"copy (select {selected} from ({rows})) to {sql_text(str(target))} (format parquet)", list(params))
