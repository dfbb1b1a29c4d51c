"""Reading the marts for a section: whether a mart is there and has rows, its rows as dicts, its currency."""

from __future__ import annotations

from typing import Any

import duckdb

from pipelines.lib.reporting.report.render import Section


def exists(con: duckdb.DuckDBPyConnection, mart: str) -> bool:
    return bool(
        con.execute(
            "select count(*) from information_schema.tables where table_schema = 'marts' and table_name = ?", [mart]
        ).fetchone()[0]
    )


def has_rows(con: duckdb.DuckDBPyConnection, mart: str) -> bool:
    # `mart` is one of the sections' own names, never user input
    return exists(con, mart) and con.execute(f"select exists (select 1 from marts.{mart})").fetchone()[0]


def query(con: duckdb.DuckDBPyConnection, sql: str, parameters: list[Any] | None = None) -> list[dict[str, Any]]:
    cursor = con.execute(sql, parameters or [])
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def reporting_currency(con: duckdb.DuckDBPyConnection, mart: str) -> str:
    found = con.execute(f"select any_value(reporting_currency) from marts.{mart}").fetchone()[0]
    return found or "reporting currency"


def no_data(heading: Section) -> Section:
    """The section saying which marts it waits for and how to fill them."""
    marts = ", ".join(heading.marts)
    return heading.left_empty(
        f"No data yet: {marts} has no rows. It fills once bills (and, where needed, market prices and GPU "
        "telemetry) are loaded: run `gpu-finops demo` or `gpu-finops ingest`, then build this report again."
    )
