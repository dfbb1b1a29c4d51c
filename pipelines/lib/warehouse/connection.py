"""Opening the warehouse: one writer at a time, bounded memory, and a read-only door for ad-hoc SQL."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from pipelines.lib.settings import FinopsHome, duckdb_memory_limit
from pipelines.lib.warehouse.lake import (
    lake_of,
)


class WarehouseBusy(RuntimeError):
    """Another process holds the DuckDB file's write lock (DuckDB allows one writer process)."""


@contextmanager
def connect(
    path: Path, *, read_only: bool = False, config: dict[str, Any] | None = None
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection that is always closed: DuckDB allows one writer process at a time."""
    if read_only and not path.exists():
        raise FileNotFoundError(f"no warehouse at {path}: run `gpu-finops demo` or `gpu-finops ingest PATH` first")
    try:
        con = duckdb.connect(
            str(path), read_only=read_only, config={"memory_limit": duckdb_memory_limit(), **(config or {})}
        )
    except duckdb.IOException as exc:
        if "lock" not in str(exc).lower():
            raise
        raise WarehouseBusy(
            f"the warehouse {path} is locked by another process (DuckDB allows one writer at a time): "
            f"{str(exc).strip().splitlines()[0]}. Wait for that run to finish and try again; in Dagster, "
            "writers queue in the duckdb_writer concurrency pool."
        ) from exc
    try:
        # DuckDB draws a progress bar on the terminal itself for a query over 2 s, past the CLI's quiet output.
        con.execute("SET enable_progress_bar = false")
        yield con
    finally:
        con.close()


class QueryRefused(ValueError):
    """What the SQL surface does not run: it reads the warehouse and nothing else."""


NO_EXTENSIONS = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
}
"""A query connection uses the extensions built into DuckDB (parquet, json, icu) and installs or loads no other."""


_EXPLAINED = re.compile(r"\s*explain\s+(?:analy[sz]e\s+|\([^)]*\)\s*)?", re.IGNORECASE)


@contextmanager
def query_connection(home: FinopsHome) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection for SQL a user wrote (`gpu-finops sql`): it reads the warehouse and nothing else.

    DuckDB's external access is off except for the folders the warehouse's views read (the lake; Spark's tables
    on FINOPS_ENGINE=spark), no extension is installed or loaded, and the configuration is locked, so no statement
    turns any of it back on. Run statements through `run_query`: DuckDB lets a query write where it may read (a
    COPY TO into the lake). The settings hold for the database instance, which DuckDB shares between the
    connections of one process to one file: open no other connection to the warehouse while this one is open.
    """
    with connect(home.warehouse, read_only=True, config=NO_EXTENSIONS) as con:
        readable = [f"{folder}/" for folder in (lake_of(con).root, home.spark_warehouse)]
        # In this order: DuckDB takes allowed_directories only while external access is on, and nothing after the lock.
        con.execute("SET allowed_directories = ?", [readable])
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        yield con


def run_query(con: duckdb.DuckDBPyConnection, sql: str) -> duckdb.DuckDBPyConnection:
    """`sql` on a `query_connection` if every statement in it is a query; the result of the last.

    Raises QueryRefused for any other statement (COPY, ATTACH, INSTALL, SET, CREATE…, and an EXPLAIN ANALYZE of
    one, which runs it) and for a file the connection may not read.
    """
    for statement in con.extract_statements(sql):
        if refused := _refused_statement(con, statement):
            raise QueryRefused(
                f"the SQL surface reads the warehouse only: {refused} statements are refused; run a query (SELECT, "
                "WITH, FROM, VALUES, DESCRIBE, SHOW, SUMMARIZE, or EXPLAIN of one)"
            )
    try:
        return con.execute(sql)
    except duckdb.PermissionException as exc:
        raise QueryRefused(
            f"the SQL surface reads the warehouse only (its tables and the lake's files under {lake_of(con).root}): "
            f"{exc}"
        ) from exc


def _refused_statement(con: duckdb.DuckDBPyConnection, statement: Any) -> str | None:
    """None for a SELECT (DuckDB parses DESCRIBE, SHOW, SUMMARIZE as one) or an EXPLAIN of one; otherwise what the
    statement is, e.g. `COPY`. EXPLAIN ANALYZE runs what it explains, so that is checked too."""
    if statement.type == duckdb.StatementType.SELECT:
        return None
    word = re.match(r"\s*([A-Za-z]+)", statement.query)
    kind = word[1].upper() if word else statement.type.name
    explained = _EXPLAINED.match(statement.query) if statement.type == duckdb.StatementType.EXPLAIN else None
    if explained is None:
        return kind
    try:
        inner = con.extract_statements(statement.query[explained.end() :])
    except duckdb.ParserException:
        return kind
    if len(inner) != 1:
        return kind
    refused = _refused_statement(con, inner[0])
    return f"{kind} of {refused}" if refused else None
