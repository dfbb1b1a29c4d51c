"""Read AWS Cost and Usage Report files (CUR 2.0, legacy CSV, legacy Athena/Parquet) into one shape.

Every file becomes the pinned column list of `sources.aws.columns` under CUR 2.0 / Athena names,
typed (money and quantities DECIMAL(38, 12), timestamps UTC), plus four JSON object columns
(`product`, `resource_tags`, `cost_category`, `discount`), the flavour it came in and its lineage.
Legacy CSV headers are renamed the way Athena renames them, and legacy per-key columns
(`resourceTags/user:Team`, `resource_tags_user_team`, `product/vcpu`) are gathered into the JSON
objects under CUR 2.0's keys (`user_team`, `vcpu`), so downstream SQL sees one format.

This module holds the format's names, rules and messages, and reads the CSV flavours with polars
(`read_cur_csv`); Parquet files are typed by DuckDB with the same names, rules and messages
(`sources.aws.cur_parquet`). File reading, typing and first-failing-row reporting are the connector
toolkit's (`sources.common`): gzip is inflated completely so truncation is caught, and a bad value rejects
the file naming its row and column.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from sources.aws.columns import (
    CUR1_CSV,
    CUR1_PARQUET,
    CUR2,
    JSON_COLUMNS,
    LEGACY_CSV_NAMES,
    LINEAGE_COLUMNS,
    PINNED_COLUMNS,
    REQUIRED_COLUMNS,
    athena_name,
)
from sources.common.delivery import LINEAGE_SCHEMA
from sources.common.errors import RejectedInput
from sources.common.files import ZIP_MAGIC, magic_bytes, read_text_table
from sources.common.row_checks import (
    WARNING,
    NonNegative,
    OneOf,
    RowRules,
    Wording,
    check_values,
    ordered,
    required,
)
from sources.common.typed import report_unparsed, typed_text_column
from sources.common.types import DECIMAL_EXPECTED, Kind, polars_type

CUR_DATA_SUFFIXES = (".csv", ".csv.gz", ".gz", ".parquet")


def output_schema() -> dict[str, pl.DataType]:
    """The columns and types of every frame this module returns, in order."""
    schema: dict[str, pl.DataType] = {name: polars_type(kind) for name, kind in PINNED_COLUMNS.items()}
    schema.update({name: pl.String() for name in JSON_COLUMNS})
    schema["_cur_format"] = pl.String()
    return schema | LINEAGE_SCHEMA


_USAGE_LINE_TYPES = ("Usage", "DiscountedUsage", "SavingsPlanCoveredUsage")
ROW_RULES = RowRules(
    non_negative=(
        NonNegative(
            "line_item_usage_amount",
            OneOf("line_item_line_item_type", _USAGE_LINE_TYPES),
            "on usage lines (credits and refunds may be negative)",
            severity=WARNING,
        ),
    ),
    line_item_key=("identity_line_item_id", "identity_time_interval"),
)
FILE_RULES = RowRules(
    values=(
        *(required(column) for column in REQUIRED_COLUMNS),
        ordered(
            "bill_billing_period_end_date",
            "bill_billing_period_start_date",
            "must be after the billing period start (the end is exclusive)",
            exclusive=True,
        ),
        ordered("line_item_usage_end_date", "line_item_usage_start_date", "must not be before the usage start date"),
    ),
    wording=Wording(named=False, found=str),
)
"""Checked on each file as it is read, naming the column as the file spells it."""
_EXPECTED = {
    Kind.DECIMAL: DECIMAL_EXPECTED,
    Kind.DATETIME: "an ISO 8601 UTC date-time such as 2026-09-01T00:00:00Z",
    Kind.JSON: "a JSON object",
}


def read_cur_csv(path: Path, *, source_file: str | None = None) -> pl.DataFrame:
    """One CUR CSV (or gzip CSV) file in `output_schema()`, parsed and validated as `deliveries.read_cur_file` says."""
    name = source_file or str(path)
    _reject_zip(path, name)
    raw = read_text_table(path, name)
    if raw.height == 0:
        raise RejectedInput(name, "the file has a header but no data rows")
    raw = raw.rename({column: column.lstrip("\ufeff").strip() for column in raw.columns})
    text = pl.col(pl.String)
    raw = raw.with_columns(pl.when(text.str.strip_chars() == "").then(None).otherwise(text).name.keep())
    flavour = _flavour(raw.columns)
    canonical = _canonical_names(raw.columns, flavour, name)
    _check_required_columns(canonical, flavour, name)

    header_of = {target: header for header, target in canonical.items()}
    pinned = [header for header, target in canonical.items() if target in PINNED_COLUMNS]
    typed = raw.select(typed_text_column(header, PINNED_COLUMNS[canonical[header]]) for header in pinned)
    for header in pinned:
        kind = PINNED_COLUMNS[canonical[header]]
        report_unparsed(typed, header, kind, name, present=raw[header], expected=_EXPECTED.get(kind, ""))
    typed = typed.rename({header: canonical[header] for header in pinned})

    objects = raw.select(_json_object(raw, canonical, bucket, name).alias(bucket) for bucket in JSON_COLUMNS)
    frame = (
        pl.concat([typed, objects], how="horizontal")
        .with_columns(
            pl.lit(flavour).alias("_cur_format"),
            pl.lit(name).alias("_source_file"),
            pl.int_range(1, raw.height + 1, dtype=pl.Int64).alias("_source_row"),
        )
        .select(_output_column(column, dtype, typed.columns) for column, dtype in output_schema().items())
    )
    check_values(frame, FILE_RULES, headers=header_of)
    return frame


def _reject_zip(path: Path, name: str) -> None:
    if magic_bytes(path, name) == ZIP_MAGIC:
        raise RejectedInput(name, "is a ZIP archive; set the report's compression to GZIP or Parquet")


def _flavour(columns: list[str]) -> str:
    """Legacy CSV has slash headers; CUR 2.0 has its MAP columns and the payer account name."""
    if any("/" in column for column in columns):
        return CUR1_CSV
    if {"bill_payer_account_name", *JSON_COLUMNS} & set(columns):
        return CUR2
    return CUR1_PARQUET


def _canonical_names(columns: list[str], flavour: str, name: str) -> dict[str, str]:
    """Header -> CUR 2.0 / Athena name; two headers that mean one pinned or MAP column reject the file."""
    canonical = {column: athena_name(column) if flavour == CUR1_CSV else column for column in columns}
    seen: dict[str, str] = {}
    for header, target in canonical.items():
        if target not in PINNED_COLUMNS and target not in JSON_COLUMNS:
            continue
        if target in seen:
            raise RejectedInput(name, f"has the column twice (as {seen[target]!r} and {header!r})", column=header)
        seen[target] = header
    return canonical


def _check_required_columns(canonical: dict[str, str], flavour: str, name: str) -> None:
    present = set(canonical.values())
    missing = [column for column in REQUIRED_COLUMNS if column not in present]
    if not missing:
        return
    spelled = [LEGACY_CSV_NAMES[column] if flavour == CUR1_CSV else column for column in missing]
    raise RejectedInput(name, f"is missing required CUR column(s) {', '.join(spelled)}", column=spelled[0])


def _json_object(raw: pl.DataFrame, canonical: dict[str, str], bucket: str, name: str) -> pl.Expr:
    """One JSON object from CUR 2.0's MAP column and/or legacy CUR's per-key columns; null when empty.

    A MAP column in CSV is JSON text and must be an object. Per-key columns (`resource_tags_user_team`) add
    `"user_team": value` for each non-null value; two spellings of one key (tags `user:Team` and `user:team`)
    keep the first non-null one.
    """
    fragments: list[pl.Expr] = []
    map_header = next((header for header, target in canonical.items() if target == bucket), None)
    if map_header is not None:
        fragments.append(_map_members(raw, map_header, name))
    for key, headers in per_key_columns(canonical, bucket).items():
        value = pl.coalesce([pl.col(header) for header in headers])
        fragments.append(pl.lit(json.dumps(key) + ":") + _json_string(value))
    if not fragments:
        return pl.lit(None, dtype=pl.String)
    members = pl.concat_str(fragments, separator=",", ignore_nulls=True)
    return pl.when(members.is_null() | (members == "")).then(None).otherwise(pl.lit("{") + members + pl.lit("}"))


def per_key_columns(canonical: dict[str, str], bucket: str) -> dict[str, list[str]]:
    """Legacy CUR's columns that hold one key of `bucket`'s JSON object (`resource_tags_user_team`), by key.

    Two headers can spell one key (tags `user:Team` and `user:team`): the first non-null value wins.
    """
    prefix = f"{bucket}_"
    keys: dict[str, list[str]] = {}
    for header, target in canonical.items():
        if target.startswith(prefix) and target not in PINNED_COLUMNS and len(target) > len(prefix):
            keys.setdefault(target[len(prefix) :], []).append(header)
    return keys


def _map_members(raw: pl.DataFrame, header: str, name: str) -> pl.Expr:
    """The members of a MAP column's JSON object, without the braces; null when the map is empty."""
    text = pl.col(header).str.strip_chars()
    checked = raw.select(text.alias(header))
    report_unparsed(checked, header, Kind.JSON, name, present=raw[header], expected=_EXPECTED[Kind.JSON])
    inner = text.str.strip_prefix("{").str.strip_suffix("}").str.strip_chars()
    return pl.when(inner == "").then(None).otherwise(inner)


def _json_string(value: pl.Expr) -> pl.Expr:
    """A string expression as a JSON string literal (quotes and escapes included); null stays null."""
    encoded = pl.struct(value.alias("v")).struct.json_encode().str.strip_prefix('{"v":').str.strip_suffix("}")
    return pl.when(value.is_null()).then(None).otherwise(encoded)


def _output_column(column: str, dtype: pl.DataType, present: list[str]) -> pl.Expr:
    if column in present or column in JSON_COLUMNS or column in LINEAGE_COLUMNS:
        return pl.col(column)
    return pl.lit(None, dtype=dtype).alias(column)
