"""Text a spreadsheet would run as a formula, made inert in every CSV file the project writes.

A cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return is a formula to Excel, LibreOffice
and Google Sheets (OWASP "CSV injection"): a tag value such as `=HYPERLINK("http://evil", "x")` would
run when finance opens an export. Such text gets a leading `'`, which spreadsheets show as text.
Numbers are never touched (a negative amount stays a number); only text values are.
"""

from __future__ import annotations

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet treat a cell as a formula."""


def neutralise(value: str) -> str:
    """A text value safe to write into a CSV cell."""
    return "'" + value if value.startswith(FORMULA_PREFIXES) else value


def neutralise_sql(column_sql: str) -> str:
    """The SQL expression equivalent of `neutralise` for a VARCHAR expression (vectorized writers)."""
    prefixes = ", ".join(f"chr({ord(prefix)})" for prefix in FORMULA_PREFIXES)
    return f"case when left({column_sql}, 1) in ({prefixes}) then '''' || {column_sql} else {column_sql} end"
