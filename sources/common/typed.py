"""Typing text columns by `Kind` in polars, and rejecting the first value that does not parse.

Text (CSV) is parsed straight to DECIMAL(38, 12), never through a binary float; timestamps in the
spellings of `DATETIME_FORMATS` become naive UTC. Yes/no columns (`flag`) are stored as the text `true`
or `false`, whatever spelling the provider used. CUR and FOCUS Parquet files are typed by DuckDB
(`sources.common.typed_sql`); the helpers for Parquet values here (`utc_timestamp`, nested values as JSON)
serve the readers that read both formats with polars (Azure, the contract layouts).
"""

from __future__ import annotations

import polars as pl

from sources.common.delivery import DeliveryWarning
from sources.common.rejects import reject_first, shorten
from sources.common.row_checks import flag_rows
from sources.common.types import DATETIME_FORMATS, DECIMAL, TIMESTAMP, Kind

FLAG_SPELLINGS: dict[str, str] = {
    "true": "true",
    "false": "false",
    "yes": "true",
    "no": "false",
    "y": "true",
    "n": "false",
    "1": "true",
    "0": "false",
}
"""How providers write yes or no (compared trimmed and lower-cased: OCI reports write `Y`/`N` as well as
`true`/`false`), and the text the warehouse stores for each."""
FLAG_EXPECTED = "yes or no (true/false, yes/no, y/n or 1/0, in any case)"


def trimmed_text(raw: pl.DataFrame, column: str) -> pl.Expr:
    """Any column as text, surrounding spaces dropped and blanks as null; nested Parquet values as JSON."""
    dtype = raw.schema[column]
    if dtype.is_nested():
        text = pl.struct(pl.col(column).alias("v")).struct.json_encode().str.json_path_match("$.v")
    else:
        text = pl.col(column).cast(pl.String).str.strip_chars()
    return pl.when(text == "").then(None).otherwise(text).alias(column)


def utc_timestamp(raw: pl.DataFrame, column: str) -> pl.Expr | None:
    """A Parquet datetime or date column as naive UTC; None when the column is text to be parsed."""
    dtype = raw.schema[column]
    source = pl.col(column)
    if isinstance(dtype, pl.Datetime):
        if dtype.time_zone is not None:
            source = source.dt.convert_time_zone("UTC").dt.replace_time_zone(None)
        return source.cast(TIMESTAMP).alias(column)
    if dtype == pl.Date:
        return source.cast(TIMESTAMP).alias(column)
    return None


def parse_timestamp(text: pl.Expr, formats: tuple[str, ...] = DATETIME_FORMATS) -> pl.Expr:
    """Text in the first of `formats` it matches, read as UTC and stored naive."""
    parsed = [text.str.to_datetime(fmt, strict=False, time_zone="UTC", time_unit="us") for fmt in formats]
    return pl.coalesce(parsed).dt.replace_time_zone(None)


def flag(text: pl.Expr) -> pl.Expr:
    """A yes/no column as stored: `true` or `false` from any spelling in FLAG_SPELLINGS; null where the file left
    it blank or wrote something else (`unreadable_flags` warns about those)."""
    spelling = text.cast(pl.String).str.strip_chars().str.to_lowercase()
    return spelling.replace_strict(FLAG_SPELLINGS, default=None, return_dtype=pl.String)


def unreadable_flags(frame: pl.DataFrame, column: str, written: pl.Series, *, named: str) -> DeliveryWarning | None:
    """A warning about the rows of `frame` whose yes/no `column` is null although the file wrote a value (`written`,
    by row): a spelling `flag` does not know. The row loads with no value there: an optional flag is not worth a
    rejected delivery, and guessing yes or no would be wrong. `named` is the column as the file spells it."""
    unreadable = written.is_not_null() & frame[column].is_null()
    if not unreadable.any():
        return None
    first = written.filter(unreadable)[0]
    return flag_rows(
        frame,
        named,
        pl.lit(unreadable),
        f"{named} not read as yes or no",
        f"{named} is {shorten(first)!r} where {FLAG_EXPECTED} was expected: stored as no value",
    )


def typed_text_column(column: str, kind: Kind) -> pl.Expr:
    """One text column as `kind`; a value that does not parse becomes null, a blank one too."""
    text = pl.col(column)
    if kind is Kind.DECIMAL:
        return text.str.strip_chars().cast(DECIMAL, strict=False).alias(column)
    if kind is Kind.DATETIME:
        return parse_timestamp(text.str.strip_chars()).alias(column)
    # An empty string is no value (Oracle's rows in FOCUS-Sample-Data write `""`).
    return pl.when(text.str.strip_chars() == "").then(None).otherwise(text).alias(column)


def not_json_object(value: pl.Series) -> pl.Series:
    """True where a present value is not a JSON object."""
    text = value.str.strip_chars()
    return value.is_not_null() & (text.str.json_path_match("$").is_null() | ~text.str.starts_with("{"))


def report_unparsed(
    typed: pl.DataFrame,
    column: str,
    kind: Kind,
    name: str,
    *,
    present: pl.Series,
    expected: str,
    quoted: pl.Series | None = None,
) -> None:
    """Reject the file at the first value `present` in the file that did not parse as `kind`.

    `present` is the column as the file has it (the reader decides whether blanks count as present);
    the message quotes its value, or `quoted`'s where the reader shows the value untrimmed.
    """
    if kind is Kind.STRING:
        return
    is_json = kind is Kind.JSON
    failed = not_json_object(typed[column]) if is_json else present.is_not_null() & typed[column].is_null()
    values = present if quoted is None else quoted
    reject_first(failed, values, name, column, lambda value: f"{shorten(value)!r} is not {expected}")
