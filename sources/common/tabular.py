"""Typed frames from the CSV layouts this project defines itself (GPU cloud usage, on-premises inventory).

Provider exports have their own readers; these two layouts are ours, so the rules are simple and the
same for both: snake_case column names matched case-insensitively (BOM and spaces stripped); a missing
required column or an empty required value rejects the delivery; a missing optional column is null;
unknown columns are kept as text in one JSON column, `_extra`. File handling (CSV, gzip CSV, Parquet,
BOM, `NULL` literals, encodings, ragged rows) is the toolkit's (`sources.common.files`), as for every reader.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from sources.common.delivery import LINEAGE_SCHEMA
from sources.common.errors import RejectedInput
from sources.common.files import read_raw
from sources.common.rejects import plain, shorten
from sources.common.row_checks import RowRules, Wording, check_values, required
from sources.common.typed import parse_timestamp, report_unparsed, trimmed_text, utc_timestamp
from sources.common.types import DATETIME_FORMATS, DECIMAL, DECIMAL_EXPECTED, Kind, polars_type

EXTRA_COLUMN = "_extra"
WORDING = Wording(named=True, found=lambda value: repr(shorten(plain(value))))
"""How the contract layouts quote a bad value: `gpu_count must be more than 0 (found '-1')`."""

_EXPECTED: dict[Kind, str] = {
    Kind.DECIMAL: DECIMAL_EXPECTED,
    Kind.INTEGER: "a whole number",
    Kind.DATETIME: "an ISO 8601 date-time such as 2026-09-01T00:00:00Z (UTC) or 2026-09-01T02:00:00+02:00",
    Kind.DATE: "a date such as 2026-09-01",
    Kind.JSON: 'a JSON object such as {"team": "research"}',
}


@dataclass(frozen=True)
class Column:
    name: str
    kind: Kind
    required: bool = False

    @property
    def dtype(self) -> pl.DataType:
        """Dates are stored as midnight UTC timestamps: the warehouse loader knows timestamps, not dates."""
        return polars_type(self.kind)


def schema_of(columns: Sequence[Column]) -> dict[str, pl.DataType]:
    """The typed columns, `_extra`, then the lineage columns, as `read_contract_file` returns them."""
    return {column.name: column.dtype for column in columns} | {EXTRA_COLUMN: pl.String()} | LINEAGE_SCHEMA


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
            pl.struct([trimmed_text(raw, extra) for extra in extras]).struct.json_encode()
            if extras
            else pl.lit(None, dtype=pl.String)
        ).alias(EXTRA_COLUMN),
    )
    for column in columns:
        if column.name in raw.columns and column.kind is not Kind.STRING:
            report_unparsed(
                typed,
                column.name,
                column.kind,
                name,
                present=raw.select(trimmed_text(raw, column.name)).to_series(),
                quoted=raw[column.name],
                expected=_EXPECTED[column.kind],
            )
    typed = typed.with_columns(
        pl.lit(name).alias("_source_file"),
        pl.int_range(1, typed.height + 1, dtype=pl.Int64).alias("_source_row"),
    )
    check_values(typed, RowRules(values=[required(c.name) for c in columns if c.required], wording=WORDING))
    return typed


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


def _typed(raw: pl.DataFrame, column: Column) -> pl.Expr:
    if column.name not in raw.columns:
        return pl.lit(None, dtype=column.dtype).alias(column.name)
    dtype = raw.schema[column.name]
    source = pl.col(column.name)
    text = trimmed_text(raw, column.name)
    if column.kind is Kind.DECIMAL:
        # Parquet doubles go through their shortest decimal text: 0.1 stays 0.1.
        return text.cast(DECIMAL, strict=False).alias(column.name)
    if column.kind is Kind.INTEGER:
        return (source if dtype.is_integer() else text).cast(pl.Int64, strict=False).alias(column.name)
    if column.kind in (Kind.DATETIME, Kind.DATE):
        stored = utc_timestamp(raw, column.name)
        if stored is not None:
            return stored
        formats = DATETIME_FORMATS if column.kind is Kind.DATETIME else ("%Y-%m-%d",)
        return parse_timestamp(text, formats).alias(column.name)
    return text
