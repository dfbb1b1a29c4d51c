"""The FOCUS 1.0–1.3 Cost and Usage format's names, rules and messages, and its CSV reader (polars).

Real files differ from the spec in known ways, all handled here: the literal string `NULL` or an
empty string for nulls, a UTF-8 byte-order mark, provider columns with or without the `x_` prefix, 1.3 renames
(`ServiceProviderName`), timestamps with or without `Z` or fractions. Money is parsed straight to
DECIMAL(38, 12): never through a binary float. Parquet files are typed by DuckDB with the same names, rules
and messages (`sources.focus.parquet`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from sources.common.delivery import LINEAGE_SCHEMA
from sources.common.errors import RejectedInput
from sources.common.files import read_text_table
from sources.common.row_checks import (
    WARNING,
    AllOf,
    Check,
    IsNull,
    NonNegative,
    OneOf,
    RowRules,
    check_values,
    ordered,
    required,
)
from sources.common.sql import quote_identifier, sql_text
from sources.common.typed import report_unparsed, typed_text_column
from sources.common.types import DECIMAL_EXPECTED, Kind, polars_type
from sources.focus.columns import (
    CHARGE_CATEGORIES,
    CHARGE_CLASSES,
    EXTENSIONS_COLUMN,
    FOCUS_1_1_ONLY,
    FOCUS_1_2_ONLY,
    FOCUS_1_3_ONLY,
    FOCUS_COLUMNS,
    MANDATORY_ALTERNATIVES,
    MANDATORY_COLUMNS,
    NOT_NULL_COLUMNS,
)

LINEAGE_COLUMNS = ("_focus_version", "_source_file", "_source_row")

_PLAIN_USAGE = AllOf((OneOf("ChargeCategory", ("Usage",)), IsNull("ChargeClass")))
ROW_RULES = RowRules(
    non_negative=tuple(
        # FOCUS allows any decimal (ConsumedQuantity, PricingQuantity); Microsoft emits usage reversals this way.
        NonNegative(
            column,
            _PLAIN_USAGE,
            "on usage lines that are not corrections (a correction may be negative)",
            severity=WARNING,
        )
        for column in ("ConsumedQuantity", "PricingQuantity")
    )
)
"""FOCUS defines no line item id, so no key is checked for uniqueness."""


def _not_one_of(column: str, values: Iterable[str], reason: str) -> Check:
    """A present value outside `values` breaks the rule."""
    listed = sorted(values)
    name = quote_identifier(column)
    failed_sql = f"{name} IS NOT NULL AND {name} NOT IN ({', '.join(map(sql_text, listed))})"
    return Check(column, pl.col(column).is_not_null() & ~pl.col(column).is_in(listed), reason, failed_sql)


_VALUES = (
    _not_one_of("ChargeCategory", CHARGE_CATEGORIES, f"must be one of {', '.join(sorted(CHARGE_CATEGORIES))}"),
    _not_one_of("ChargeClass", CHARGE_CLASSES, "must be empty or Correction"),
    ordered(
        "BillingPeriodEnd", "BillingPeriodStart", "must be after BillingPeriodStart (End is exclusive)", exclusive=True
    ),
    ordered("ChargePeriodEnd", "ChargePeriodStart", "must not be before ChargePeriodStart"),
)
_MANDATORY_VALUES = (
    *(required(column) for column in NOT_NULL_COLUMNS),
    # FOCUS: neither may be null, and nothing on the line says what they would be (1.3 names the provider
    # ServiceProviderName), so the line cannot be represented faithfully
    Check(
        "ProviderName",
        pl.col("ProviderName").is_null() & pl.col("ServiceProviderName").is_null(),
        "must not be empty (nor ServiceProviderName, its FOCUS 1.3 name)",
        '"ProviderName" IS NULL AND "ServiceProviderName" IS NULL',
    ),
    required("ServiceName"),
)
FILE_RULES = RowRules(values=(*_MANDATORY_VALUES, *_VALUES))
"""Checked on each file as it is read; a partial file (the spec's worked examples) skips the mandatory values."""
PARTIAL_FILE_RULES = RowRules(values=_VALUES)
_EXPECTED = {
    Kind.DECIMAL: DECIMAL_EXPECTED,
    Kind.DATETIME: "an ISO 8601 UTC date-time such as 2026-09-01T00:00:00Z",
    Kind.JSON: "a JSON object",
}
_CANONICAL_BY_LOWER = {name.lower(): name for name in FOCUS_COLUMNS}


@dataclass(frozen=True)
class FocusFile:
    """One parsed file: every FOCUS column typed, extras in `x_extensions`, lineage columns last."""

    frame: pl.DataFrame
    focus_version: str


def output_schema() -> dict[str, pl.DataType]:
    """The columns and types of every frame this module returns, in order."""
    schema: dict[str, pl.DataType] = {name: polars_type(kind) for name, kind in FOCUS_COLUMNS.items()}
    schema[EXTENSIONS_COLUMN] = pl.String()
    schema["_focus_version"] = pl.String()
    return schema | LINEAGE_SCHEMA


def read_focus_csv(path: Path, *, source_file: str | None = None, require_mandatory: bool = True) -> FocusFile:
    """One FOCUS CSV (or gzip CSV) file, parsed and validated as `deliveries.read_focus_file` says."""
    name = source_file or str(path)
    raw = read_text_table(path, name)
    if raw.height == 0:
        raise RejectedInput(name, "the file has a header but no data rows")
    raw = raw.rename(canonical_names(raw.columns, name))
    if require_mandatory:
        check_mandatory_columns(raw.columns, name)
    version = detect_focus_version(raw.columns)
    typed = _typed_frame(raw, name)
    typed = typed.with_columns(
        pl.lit(version).alias("_focus_version"),
        pl.lit(name).alias("_source_file"),
        pl.int_range(1, typed.height + 1, dtype=pl.Int64).alias("_source_row"),
    )
    check_values(typed, file_rules(require_mandatory=require_mandatory))
    return FocusFile(frame=typed.select(output_schema().keys()), focus_version=version)


def file_rules(*, require_mandatory: bool = True) -> RowRules:
    return FILE_RULES if require_mandatory else PARTIAL_FILE_RULES


def detect_focus_version(columns: list[str]) -> str:
    """The lowest FOCUS version whose column set explains the columns present."""
    present = set(columns)
    if present & FOCUS_1_3_ONLY:
        return "1.3"
    if present & FOCUS_1_2_ONLY:
        return "1.2"
    if present & FOCUS_1_1_ONLY:
        return "1.1"
    return "1.0"


def canonical_names(columns: list[str], name: str) -> dict[str, str]:
    """Header -> FOCUS spelling (case-insensitive, BOM and spaces stripped); a column twice rejects the file."""
    renames: dict[str, str] = {}
    seen: dict[str, str] = {}
    for column in columns:
        cleaned = column.lstrip("\ufeff").strip()
        canonical = _CANONICAL_BY_LOWER.get(cleaned.lower(), cleaned)
        if canonical in seen:
            raise RejectedInput(name, f"has the column twice (as {seen[canonical]!r} and {column!r})", column=canonical)
        seen[canonical] = column
        renames[column] = canonical
    return renames


def check_mandatory_columns(columns: list[str], name: str) -> None:
    present = set(columns)
    missing = [
        column
        for column in MANDATORY_COLUMNS
        if column not in present and MANDATORY_ALTERNATIVES.get(column) not in present
    ]
    if not missing:
        return
    raise RejectedInput(name, f"is missing mandatory FOCUS column(s) {', '.join(missing)}", column=missing[0])


def _typed_frame(raw: pl.DataFrame, name: str) -> pl.DataFrame:
    extras = [column for column in raw.columns if column not in FOCUS_COLUMNS]
    columns = []
    for column, kind in FOCUS_COLUMNS.items():
        if column not in raw.columns:
            columns.append(pl.lit(None, dtype=polars_type(kind)).alias(column))
            continue
        columns.append(typed_text_column(column, kind))
    extensions = (
        pl.struct([pl.col(column) for column in extras]).struct.json_encode()
        if extras
        else pl.lit(None, dtype=pl.String)
    )
    typed = raw.select(*columns, extensions.alias(EXTENSIONS_COLUMN))
    for column, kind in FOCUS_COLUMNS.items():
        if column in raw.columns:
            report_unparsed(typed, column, kind, name, present=raw[column], expected=_EXPECTED.get(kind, ""))
    return typed
