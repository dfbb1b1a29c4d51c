"""Rejecting a file at its first bad row, with the value quoted the way a person would write it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from decimal import Decimal

import polars as pl

from sources.common.errors import RejectedInput


def reject_first(
    failed: pl.Series,
    values: pl.Series,
    name: str,
    column: str,
    describe: Callable[[object], str],
    *,
    rows: pl.Series | None = None,
) -> None:
    """Reject the file at the first failing row, saying how many more rows fail the same way.

    The row is the failing position counted from 1, or `rows` at that position where the frame is
    not in file order (a reader that exploded or joined rows keeps each row's number beside it).
    """
    failed = failed.fill_null(False)
    if not failed.any():
        return
    index = int(failed.arg_true()[0])
    count = int(failed.sum())
    more = f" ({count - 1} more row(s) like it)" if count > 1 else ""
    row = int(rows[index]) if rows is not None else index + 1
    raise RejectedInput(name, describe(values[index]) + more, row=row, column=column)


def shorten(value: object) -> str:
    """A value cut to 60 characters, so a 10 MB cell does not become a 10 MB message."""
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def plain(value: object) -> str:
    """A typed value as a person would write it: `12.5` (not `12.500000000000`), `2026-09-01T00:00:00Z`."""
    if isinstance(value, Decimal):
        text = format(value, "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    if isinstance(value, datetime):
        return value.isoformat() + "Z"
    return str(value)


def shown(value: object) -> str:
    """A found value in a message, never a Python repr: text in quotes as the file wrote it (`'Refund'`), a typed value
    as a person writes it (`-1`, `2024-09-01T00:00:00Z`, not `datetime.datetime(2024, 9, 1, 0, 0)`)."""
    text = shorten(plain(value))
    return repr(text) if isinstance(value, str) else text
