"""The column kinds connectors read and the warehouse types they become, defined once for all of them."""

from __future__ import annotations

from enum import StrEnum

import polars as pl

DECIMAL_PRECISION = 38
DECIMAL_SCALE = 12
"""Money and quantities are DECIMAL(38, 12): exact, 26 integer digits, 12 decimals (CUR rates use 10)."""
DECIMAL = pl.Decimal(DECIMAL_PRECISION, DECIMAL_SCALE)
TIMESTAMP = pl.Datetime("us")
"""Naive UTC microseconds: every reader converts to UTC first, the warehouse stores no zone."""
DECIMAL_EXPECTED = f"a decimal number (at most {DECIMAL_PRECISION - DECIMAL_SCALE} integer digits)"
"""How a rejection names what a money or quantity value should have been."""

DATETIME_FORMATS = (
    "%Y-%m-%dT%H:%M:%SZ",
    "%Y-%m-%dT%H:%M:%S%.fZ",
    "%Y-%m-%dT%H:%M:%S%z",
    "%Y-%m-%dT%H:%M:%S%.f%z",
    "%Y-%m-%dT%H:%M:%S",
    "%Y-%m-%dT%H:%M:%S%.f",
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%d %H:%M:%S%.f",
    "%Y-%m-%d %H:%M:%S%z",
    "%Y-%m-%dT%H:%MZ",
    "%Y-%m-%d",
)
"""Timestamp spellings seen in real exports (FOCUS, OCI, our own layouts); all are read as UTC."""


class Kind(StrEnum):
    """What a column holds, which decides its type and how a value that does not parse is reported."""

    STRING = "string"
    DECIMAL = "decimal"
    INTEGER = "integer"
    DATETIME = "datetime"
    DATE = "date"
    """Stored as midnight UTC: the warehouse loader knows timestamps, not dates."""
    JSON = "json"


_POLARS_TYPES: dict[Kind, pl.DataType] = {
    Kind.STRING: pl.String(),
    Kind.DECIMAL: DECIMAL,
    Kind.INTEGER: pl.Int64(),
    Kind.DATETIME: TIMESTAMP,
    Kind.DATE: TIMESTAMP,
    Kind.JSON: pl.String(),
}


def polars_type(kind: Kind) -> pl.DataType:
    return _POLARS_TYPES[kind]


def sql_type(dtype: pl.DataType) -> str:
    """The warehouse's SQL type of a reader's polars column type."""
    if isinstance(dtype, pl.Decimal):
        return f"DECIMAL({dtype.precision}, {dtype.scale})"
    if isinstance(dtype, pl.Datetime):
        return "TIMESTAMP"
    if dtype == pl.Date:
        return "DATE"
    if dtype == pl.Int64:
        return "BIGINT"
    if dtype == pl.Boolean:
        return "BOOLEAN"
    return "VARCHAR"
