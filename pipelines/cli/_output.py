"""How the CLI prints values: amounts to the cent, plain text tables, CSV and JSON cells."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

from pipelines.lib.reporting.csv_safety import neutralise


def money(value: Decimal | float | int) -> str:
    return f"{Decimal(value):,.2f}"


def text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"  # as DuckDB and PostgreSQL write a boolean, not Python's `True`
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, Decimal):
        return format(value, "f")
    return str(value)


def csv_cell(value: Any) -> str:
    """Text that a spreadsheet would run as a formula is neutralised; numbers and dates are written as they are."""
    return neutralise(value) if isinstance(value, str) else text(value)


def json_value(value: Any) -> Any:
    """Decimals as exact strings (a JSON number would be read back as a binary float)."""
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, date | datetime):
        return value.isoformat()
    return str(value)


def table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(header)]
    lines = [
        "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)),
        "  ".join("-" * w for w in widths),
    ]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(lines)
