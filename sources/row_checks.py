"""Checks every connector runs on its typed frame before handing it to the loader.

Each reader validates its own format (columns, types, enums). These checks are the ones that hold
for every billing source alike, so they live once, here, and work on the typed frame every
connector returns (which carries `_source_file` and `_source_row` for the message):

- no text value longer than `MAX_FIELD_BYTES` (a 10 MB cell is a broken export or an attack,
  not a tag value);
- every timestamp between `EARLIEST` and `LATEST` (a year 2999 is a typo that would otherwise
  create a billing period nobody asked for);
- the quantities the connector names are not negative on the rows it says they apply to;
- the connector's line item key, where the format has one, is unique within the delivery (the
  same line twice would count its cost twice).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

import polars as pl

from sources.errors import RejectedInput

MAX_FIELD_BYTES = 1 << 20
EARLIEST = datetime(2000, 1, 1)
LATEST = datetime(2100, 1, 1)
"""Billing data, purchase and commitment dates all fall inside [EARLIEST, LATEST)."""


@dataclass(frozen=True)
class NonNegative:
    column: str
    applies: pl.Expr | None = None
    """Rows the rule holds on (e.g. usage lines only: a refund may carry a negative quantity); None: all."""
    applies_to: str = ""
    """How `applies` reads in a message, e.g. `on usage lines`."""


@dataclass(frozen=True)
class RowRules:
    non_negative: Sequence[NonNegative] = ()
    line_item_key: tuple[str, ...] = ()
    """Columns that identify a line within one delivery; empty where the format has no such key."""


def check_rows(frame: pl.DataFrame, rules: RowRules = RowRules()) -> None:
    """Raise RejectedInput at the first row that breaks a rule, naming its file, row and column."""
    for column, dtype in frame.schema.items():
        if dtype == pl.String and not column.startswith("_"):
            _reject_where(
                frame,
                column,
                pl.col(column).str.len_bytes() > MAX_FIELD_BYTES,
                lambda value, column=column: (
                    f"{column} holds a value of {len(value.encode()):,} bytes; "
                    f"the limit is {MAX_FIELD_BYTES:,} (a broken export?)"
                ),
            )
    for column, dtype in frame.schema.items():
        if isinstance(dtype, pl.Datetime):
            value = pl.col(column).dt.replace_time_zone(None) if dtype.time_zone else pl.col(column)
            _reject_where(
                frame,
                column,
                (value < EARLIEST) | (value >= LATEST),
                lambda found, column=column: (
                    f"{column} {_plain(found)} is outside the plausible range {EARLIEST.year}–{LATEST.year - 1}"
                ),
            )
    for rule in rules.non_negative:
        negative = pl.col(rule.column) < 0
        if rule.applies is not None:
            negative = negative & rule.applies
        _reject_where(
            frame,
            rule.column,
            negative,
            lambda found, rule=rule: (
                f"{rule.column} must not be negative{' ' + rule.applies_to if rule.applies_to else ''}"
                f" (found {_plain(found)})"
            ),
        )
    if rules.line_item_key:
        key = list(rules.line_item_key)
        repeated = pl.all_horizontal(pl.col(key).is_not_null()) & (pl.int_range(pl.len()).over(key) > 0)
        mask = frame.select(repeated.fill_null(False)).to_series()
        if mask.any():
            values = frame.row(int(mask.arg_true()[0]), named=True)
            shown = ", ".join(f"{column} {_plain(values[column])!r}" for column in key)
            _reject_where(
                frame,
                key[-1] if len(key) > 1 else key[0],
                repeated,
                lambda _: (
                    f"the line with {shown} appears on an earlier line of this delivery too (a line delivered twice)"
                ),
            )


def _plain(value: object) -> str:
    """`-5` rather than `-5.000000000000`, `2999-09-01T00:00:00Z` rather than a datetime repr."""
    if isinstance(value, Decimal):
        text = format(value, "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    if isinstance(value, datetime):
        return value.isoformat() + "Z"
    return str(value)


def _reject_where(frame: pl.DataFrame, column: str, failed: pl.Expr, describe) -> None:
    mask = frame.select(failed.fill_null(False)).to_series()
    if not mask.any():
        return
    index = int(mask.arg_true()[0])
    count = int(mask.sum())
    more = f" ({count - 1} more row(s) like it)" if count > 1 else ""
    value = frame[column][index]
    raise RejectedInput(
        str(frame["_source_file"][index]),
        describe(value) + more,
        row=int(frame["_source_row"][index]),
        column=column,
    )
