"""Read-only looks into a warehouse file for tests."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pipelines.lib.warehouse import connect


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
