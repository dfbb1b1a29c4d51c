"""Typed frames from the CSV layouts this project defines itself (GPU cloud usage, on-premises inventory).

Provider exports have their own readers; these two layouts are ours, so the rules are simple and the
same for both: snake_case column names matched case-insensitively (BOM and spaces stripped); a missing
required column or an empty required value rejects the delivery; a missing optional column is null;
unknown columns are kept as text in one JSON column, `_extra`. File handling (CSV, gzip CSV, Parquet,
BOM, `NULL` literals, encodings, ragged rows) is the FOCUS reader's, so those quirks live in one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from pathlib import Path

import polars as pl

from sources.errors import RejectedInput
from sources.focus.columns import DECIMAL_PRECISION, DECIMAL_SCALE
from sources.focus.reader import DATETIME_FORMATS, read_raw, shorten
from sources.focus.reader import reject_first as reject_first_of_mask

DECIMAL = pl.Decimal(DECIMAL_PRECISION, DECIMAL_SCALE)
TIMESTAMP = pl.Datetime("us")
EXTRA_COLUMN = "_extra"
LINEAGE_COLUMNS = {"_source_file": pl.String(), "_source_row": pl.Int64()}


class Kind(StrEnum):
    TEXT = "text"
    DECIMAL = "decimal"
    INTEGER = "integer"
    TIMESTAMP = "timestamp"
    DATE = "date"
    JSON_OBJECT = "json object"


_POLARS_TYPES: dict[Kind, pl.DataType] = {
    Kind.TEXT: pl.String(),
    Kind.DECIMAL: DECIMAL,
    Kind.INTEGER: pl.Int64(),
    Kind.TIMESTAMP: TIMESTAMP,
    Kind.DATE: TIMESTAMP,
    Kind.JSON_OBJECT: pl.String(),
}

_EXPECTED: dict[Kind, str] = {
    Kind.DECIMAL: f"a decimal number (at most {DECIMAL_PRECISION - DECIMAL_SCALE} integer digits)",
    Kind.INTEGER: "a whole number",
    Kind.TIMESTAMP: "an ISO 8601 date-time such as 2026-09-01T00:00:00Z (UTC) or 2026-09-01T02:00:00+02:00",
    Kind.DATE: "a date such as 2026-09-01",
    Kind.JSON_OBJECT: 'a JSON object such as {"team": "research"}',
}


@dataclass(frozen=True)
class Column:
    name: str
    kind: Kind
    required: bool = False

    @property
    def dtype(self) -> pl.DataType:
        """Dates are stored as midnight UTC timestamps: the warehouse loader knows timestamps, not dates."""
        return _POLARS_TYPES[self.kind]


def schema_of(columns: Sequence[Column]) -> dict[str, pl.DataType]:
    """The typed columns, `_extra`, then the lineage columns, as `read_contract_file` returns them."""
    return {column.name: column.dtype for column in columns} | {EXTRA_COLUMN: pl.String()} | LINEAGE_COLUMNS


def read_contract_file(path: Path, name: str, columns: Sequence[Column]) -> pl.DataFrame:
    """One delivered file as typed columns (see `schema_of`), or RejectedInput naming file, row and column.

    `name` is the file's display name, used for lineage (`_source_file`) and in messages.
    """
    raw = read_raw(path, name)
    if raw.height == 0:
        raise RejectedInput(name, "the file has a header but no data rows")
    raw = _snake_case_names(raw, name)
    missing = [column.name for column in columns if column.required and column.name not in raw.columns]
    if missing:
        raise RejectedInput(name, f"is missing required column(s) {', '.join(missing)}", column=missing[0])
    known = {column.name for column in columns}
    extras = [column for column in raw.columns if column not in known]
    typed = raw.select(
        *[_typed(raw, column) for column in columns],
        (
            pl.struct([_text(raw, extra) for extra in extras]).struct.json_encode()
            if extras
            else pl.lit(None, dtype=pl.String)
        ).alias(EXTRA_COLUMN),
    )
    for column in columns:
        if column.name in raw.columns:
            report_unparsed(raw, typed, column, name)
    for column in columns:
        if column.required:
            reject_first(typed, name, column.name, pl.col(column.name).is_null(), "must not be empty")
    return typed.with_columns(
        pl.lit(name).alias("_source_file"),
        pl.int_range(1, typed.height + 1, dtype=pl.Int64).alias("_source_row"),
    )


def reject_first(frame: pl.DataFrame, name: str, column: str, failed: pl.Expr, reason: str) -> None:
    """Reject at the first row where `failed` holds, quoting that row's value of `column`."""
    mask = frame.select(failed.fill_null(False)).to_series()
    reject_first_of_mask(
        mask,
        frame[column],
        name,
        column,
        lambda value: f"{column} {reason}" + ("" if value is None else f" (found {shorten(plain(value))!r})"),
    )


def plain(value: object) -> str:
    """A typed value as a person would write it: `12.5` (not `12.500000000000`), `2026-09-01T00:00:00Z`."""
    if isinstance(value, Decimal):
        text = format(value, "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    if isinstance(value, datetime):
        return value.isoformat() + "Z"
    return str(value)


def _snake_case_names(raw: pl.DataFrame, name: str) -> pl.DataFrame:
    renames: dict[str, str] = {}
    seen: dict[str, str] = {}
    for column in raw.columns:
        cleaned = column.lstrip("\ufeff").strip().lower()
        if cleaned in seen:
            raise RejectedInput(name, f"has the column twice (as {seen[cleaned]!r} and {column!r})", column=cleaned)
        seen[cleaned] = column
        renames[column] = cleaned
    return raw.rename(renames)


def _text(raw: pl.DataFrame, column: str) -> pl.Expr:
    """Any column as text, surrounding spaces dropped and blanks as null; nested Parquet values as JSON."""
    dtype = raw.schema[column]
    if dtype.is_nested():
        text = pl.struct(pl.col(column).alias("v")).struct.json_encode().str.json_path_match("$.v")
    else:
        text = pl.col(column).cast(pl.String).str.strip_chars()
    return pl.when(text == "").then(None).otherwise(text).alias(column)


def _typed(raw: pl.DataFrame, column: Column) -> pl.Expr:
    if column.name not in raw.columns:
        return pl.lit(None, dtype=column.dtype).alias(column.name)
    dtype = raw.schema[column.name]
    source = pl.col(column.name)
    text = _text(raw, column.name)
    if column.kind is Kind.DECIMAL:
        # Parquet doubles go through their shortest decimal text: 0.1 stays 0.1.
        return text.cast(DECIMAL, strict=False).alias(column.name)
    if column.kind is Kind.INTEGER:
        return (source if dtype.is_integer() else text).cast(pl.Int64, strict=False).alias(column.name)
    if column.kind in (Kind.TIMESTAMP, Kind.DATE):
        if isinstance(dtype, pl.Datetime):
            if dtype.time_zone is not None:
                source = source.dt.convert_time_zone("UTC").dt.replace_time_zone(None)
            return source.cast(TIMESTAMP).alias(column.name)
        if dtype == pl.Date:
            return source.cast(TIMESTAMP).alias(column.name)
        formats = DATETIME_FORMATS if column.kind is Kind.TIMESTAMP else ("%Y-%m-%d",)
        parsed = [text.str.to_datetime(fmt, strict=False, time_zone="UTC", time_unit="us") for fmt in formats]
        return pl.coalesce(parsed).dt.replace_time_zone(None).alias(column.name)
    return text


def report_unparsed(raw: pl.DataFrame, typed: pl.DataFrame, column: Column, name: str) -> None:
    """Reject at the first value present in the file that is not of the column's kind."""
    if column.kind is Kind.TEXT:
        return
    present = raw.select(_text(raw, column.name).is_not_null()).to_series()
    if column.kind is Kind.JSON_OBJECT:
        value = typed[column.name]
        failed = value.is_not_null() & (value.str.json_path_match("$").is_null() | ~value.str.starts_with("{"))
    else:
        failed = present & typed[column.name].is_null()
    expected = _EXPECTED[column.kind]
    reject_first_of_mask(
        failed, raw[column.name], name, column.name, lambda value: f"{shorten(value)!r} is not {expected}"
    )
