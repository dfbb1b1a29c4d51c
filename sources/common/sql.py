"""SQL text built from code-side names and constants (never from data): identifiers and string literals."""

from __future__ import annotations

from collections.abc import Iterable


def quote_identifier(name: str) -> str:
    """A column, table or schema name as a SQL identifier: double-quoted, inner quotes doubled.

    Names come from code (table specs) or the catalog, never from data; quoting keeps even an odd
    catalog name an identifier.
    """
    return '"' + name.replace('"', '""') + '"'


def sql_text(value: str) -> str:
    """A SQL string literal (DuckDB cannot prepare a parameter inside CREATE VIEW or as a COPY target)."""
    return "'" + value.replace("'", "''") + "'"


def sql_text_list(texts: Iterable[str]) -> str:
    """A SQL list of string literals."""
    return "[" + ", ".join(sql_text(text) for text in texts) + "]"
