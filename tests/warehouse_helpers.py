"""Read-only looks into a warehouse file for tests."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pipelines.lib.warehouse.warehouse import connect


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
