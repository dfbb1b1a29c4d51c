"""Read FOCUS 1.0–1.3 Cost and Usage files (CSV, gzip CSV, Parquet) into typed polars frames.

Real files differ from the spec in known ways, all handled here: the literal string `NULL` or an
empty string for nulls, a UTF-8 byte-order mark, provider columns with or without the `x_` prefix, 1.3 renames
(`ServiceProviderName`), timestamps with or without `Z` or fractions, and Parquet money columns
stored as doubles. Money is parsed straight to DECIMAL(38, 12): never through a binary float.
"""

from __future__ import annotations

import csv
import gzip
import shutil
import tempfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from sources.delivery import Delivery, ParsedDelivery
from sources.errors import RejectedInput
from sources.focus.columns import (
    CHARGE_CATEGORIES,
    CHARGE_CLASSES,
    DECIMAL_PRECISION,
    DECIMAL_SCALE,
    EXTENSIONS_COLUMN,
    FOCUS_1_1_ONLY,
    FOCUS_1_2_ONLY,
    FOCUS_1_3_ONLY,
    FOCUS_COLUMNS,
    MANDATORY_ALTERNATIVES,
    MANDATORY_COLUMNS,
    NOT_NULL_COLUMNS,
    Kind,
)
from sources.manifests import listed_data_files
from sources.row_checks import WARNING, AllOf, IsNull, NonNegative, OneOf, RowRules, check_rows

DECIMAL = pl.Decimal(DECIMAL_PRECISION, DECIMAL_SCALE)
TIMESTAMP = pl.Datetime("us")
LINEAGE_COLUMNS = ("_focus_version", "_source_file", "_source_row")
NULL_LITERALS = ["NULL", "null"]
"""Spellings of null in real files: FOCUS-Sample-Data writes `NULL`, the spec's worked examples `null`."""

# Timestamp spellings seen in real exports; all are read as UTC.
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

_GZIP_MAGIC = b"\x1f\x8b"
_PARQUET_MAGIC = b"PAR1"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_CANONICAL_BY_LOWER = {name.lower(): name for name in FOCUS_COLUMNS}


@dataclass(frozen=True)
class FocusFile:
    """One parsed file: every FOCUS column typed, extras in `x_extensions`, lineage columns last."""

    frame: pl.DataFrame
    focus_version: str


def output_schema() -> dict[str, pl.DataType]:
    """The columns and types of every frame this module returns, in order."""
    schema: dict[str, pl.DataType] = {name: _polars_type(kind) for name, kind in FOCUS_COLUMNS.items()}
    schema[EXTENSIONS_COLUMN] = pl.String()
    schema["_focus_version"] = pl.String()
    schema["_source_file"] = pl.String()
    schema["_source_row"] = pl.Int64()
    return schema


def read_focus_file(path: Path, *, source_file: str | None = None, require_mandatory: bool = True) -> FocusFile:
    """Parse and validate one FOCUS file.

    `source_file` is the name recorded for lineage and used in messages (defaults to the path).
    `require_mandatory=False` accepts partial files such as the spec's worked examples; the
    values present are still typed and checked.
    Raises RejectedInput naming the file, and where there is one the row and column.
    """
    name = source_file or str(path)
    raw = read_raw(path, name)
    if raw.height == 0:
        raise RejectedInput(name, "the file has a header but no data rows")
    raw = _canonical_column_names(raw, name)
    if require_mandatory:
        _check_mandatory_columns(raw, name)
    version = detect_focus_version(raw.columns)
    typed = _typed_frame(raw, name)
    typed = typed.with_columns(
        pl.lit(version).alias("_focus_version"),
        pl.lit(name).alias("_source_file"),
        pl.int_range(1, typed.height + 1, dtype=pl.Int64).alias("_source_row"),
    )
    _check_rows(typed, name, require_mandatory=require_mandatory)
    return FocusFile(frame=typed.select(output_schema().keys()), focus_version=version)


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


def _polars_type(kind: Kind) -> pl.DataType:
    return {Kind.DECIMAL: DECIMAL, Kind.DATETIME: TIMESTAMP}.get(kind, pl.String())


def read_raw(path: Path, name: str) -> pl.DataFrame:
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise RejectedInput(name, f"cannot be opened: {exc.strerror or exc}") from exc
    if magic.startswith(_PARQUET_MAGIC):
        try:
            frame = pl.read_parquet(path)
        except Exception as exc:
            raise RejectedInput(name, f"is not a readable Parquet file: {first_line(exc)}") from exc
        text = pl.col(pl.String)
        return frame.with_columns(pl.when(text.is_in(NULL_LITERALS)).then(None).otherwise(text).name.keep())
    with decompressed(path, name, gzipped=magic.startswith(_GZIP_MAGIC)) as csv_path:
        return read_csv(csv_path, name)


@contextmanager
def decompressed(path: Path, name: str, *, gzipped: bool) -> Iterator[Path]:
    """Yield a plain-text path; gzip is inflated to a temporary file so truncation is detected.

    polars silently returns the rows before the break of a truncated gzip stream; Python's gzip
    module raises instead, which is what a load that must not lose rows needs.
    """
    if not gzipped:
        yield path
        return
    with tempfile.NamedTemporaryFile(suffix=".csv") as plain:
        try:
            with gzip.open(path, "rb") as compressed:
                shutil.copyfileobj(compressed, plain, length=1 << 20)
        except (EOFError, OSError, zlib.error) as exc:
            raise RejectedInput(name, f"is a truncated or corrupt gzip file: {exc}") from exc
        plain.flush()
        yield Path(plain.name)


def check_utf8_text(path: Path, name: str, *, layout: str = "UTF-8 CSV") -> bytes:
    """Reject a UTF-16 (spreadsheet "Unicode text") or binary file from its first 4 KiB; returns them."""
    with path.open("rb") as handle:
        head = handle.read(4096)
    if head.startswith(_UTF16_BOMS) or b"\x00" in head:
        raise RejectedInput(name, f"is not UTF-8 text (UTF-16 or binary); export the file again as {layout}")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:
            raise RejectedInput(name, f"is not UTF-8 text; export the file again as {layout}") from exc
    return head


def read_csv(path: Path, name: str) -> pl.DataFrame:
    head = check_utf8_text(path, name)
    first_line = head.split(b"\n", 1)[0]
    if b"," not in first_line and any(sep in first_line for sep in (b";", b"\t", b"|")):
        raise RejectedInput(name, "the header has no commas: the file is delimited by something other than commas")
    try:
        return pl.read_csv(
            path,
            infer_schema=False,
            null_values=NULL_LITERALS,
            raise_if_empty=True,
            encoding="utf8",
        )
    except pl.exceptions.NoDataError as exc:
        raise RejectedInput(name, "is empty") from exc
    except Exception as exc:
        raise _csv_shape_error(path, name) or RejectedInput(
            name, f"is not a readable CSV file: {first_line(exc)}"
        ) from exc


def _csv_shape_error(path: Path, name: str) -> RejectedInput | None:
    """Find the first row whose field count differs from the header (only run once reading failed)."""
    with path.open(encoding="utf-8-sig", errors="replace", newline="") as handle:
        rows = csv.reader(handle)
        header = next(rows, [])
        for number, row in enumerate(rows, start=1):
            if len(row) != len(header):
                return RejectedInput(
                    name, f"has {len(row)} fields where the header has {len(header)} (unquoted comma?)", row=number
                )
    return None


def _canonical_column_names(raw: pl.DataFrame, name: str) -> pl.DataFrame:
    """Map header names to FOCUS spelling (case-insensitive, BOM and spaces stripped)."""
    renames: dict[str, str] = {}
    seen: dict[str, str] = {}
    for column in raw.columns:
        cleaned = column.lstrip("\ufeff").strip()
        canonical = _CANONICAL_BY_LOWER.get(cleaned.lower(), cleaned)
        if canonical in seen:
            raise RejectedInput(name, f"has the column twice (as {seen[canonical]!r} and {column!r})", column=canonical)
        seen[canonical] = column
        renames[column] = canonical
    return raw.rename(renames)


def _check_mandatory_columns(raw: pl.DataFrame, name: str) -> None:
    present = set(raw.columns)
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
            columns.append(pl.lit(None, dtype=_polars_type(kind)).alias(column))
            continue
        columns.append(typed_column(raw, column, kind, name))
    extensions = (
        pl.struct([_as_text(raw, column) for column in extras]).struct.json_encode()
        if extras
        else pl.lit(None, dtype=pl.String)
    )
    typed = raw.select(*columns, extensions.alias(EXTENSIONS_COLUMN))
    for column, kind in FOCUS_COLUMNS.items():
        if column in raw.columns:
            report_unparsed(raw, typed, column, kind, name)
    return typed


def typed_column(raw: pl.DataFrame, column: str, kind: Kind, name: str) -> pl.Expr:
    dtype = raw.schema[column]
    source = pl.col(column)
    if kind is Kind.DECIMAL:
        if dtype.is_float():
            # Through the shortest decimal text of the double: 0.1 stays 0.1, not 0.1000000000000000055.
            return source.cast(pl.String).str.to_decimal(scale=DECIMAL_SCALE).cast(DECIMAL).alias(column)
        if dtype == pl.String:
            return source.str.strip_chars().cast(DECIMAL, strict=False).alias(column)
        return source.cast(DECIMAL, strict=False).alias(column)
    if kind is Kind.DATETIME:
        if isinstance(dtype, pl.Datetime):
            if dtype.time_zone is not None:
                source = source.dt.convert_time_zone("UTC").dt.replace_time_zone(None)
            return source.cast(TIMESTAMP).alias(column)
        if dtype == pl.Date:
            return source.cast(TIMESTAMP).alias(column)
        text = source.cast(pl.String).str.strip_chars()
        parsed = [text.str.to_datetime(fmt, strict=False, time_zone="UTC", time_unit="us") for fmt in DATETIME_FORMATS]
        return pl.coalesce(parsed).dt.replace_time_zone(None).alias(column)
    text = _as_text(raw, column)
    # FOCUS null handling: an empty string is no value (Oracle's rows in FOCUS-Sample-Data write `""`).
    return pl.when(text.str.strip_chars() == "").then(None).otherwise(text).alias(column)


def _as_text(raw: pl.DataFrame, column: str) -> pl.Expr:
    """Any column as text; nested Parquet values (structs, lists, maps) as JSON."""
    dtype = raw.schema[column]
    if dtype.is_nested():
        # The encoded wrapper minus its own key: a JSON path match would parse every value back (5x slower).
        encoded = pl.struct(pl.col(column).alias("v")).struct.json_encode()
        value = encoded.str.strip_prefix('{"v":').str.strip_suffix("}")
        return pl.when(pl.col(column).is_null()).then(None).otherwise(value).alias(column)
    return pl.col(column).cast(pl.String)


def report_unparsed(raw: pl.DataFrame, typed: pl.DataFrame, column: str, kind: Kind, name: str) -> None:
    """Reject the file at the first value present in the file that did not parse."""
    if kind is Kind.STRING:
        return
    failed = raw[column].is_not_null() & typed[column].is_null()
    if kind is Kind.JSON:
        text = typed[column].str.strip_chars()
        failed = typed[column].is_not_null() & (text.str.json_path_match("$").is_null() | ~text.str.starts_with("{"))
    expected = {
        Kind.DECIMAL: f"a decimal number (at most {DECIMAL_PRECISION - DECIMAL_SCALE} integer digits)",
        Kind.DATETIME: "an ISO 8601 UTC date-time such as 2026-09-01T00:00:00Z",
        Kind.JSON: "a JSON object",
    }[kind]
    reject_first(failed, raw[column], name, column, lambda value: f"{shorten(value)!r} is not {expected}")


def _check_rows(typed: pl.DataFrame, name: str, *, require_mandatory: bool) -> None:
    checks: list[tuple[str, pl.Expr, str]] = []
    if require_mandatory:
        checks += [(column, pl.col(column).is_null(), "must not be empty") for column in NOT_NULL_COLUMNS]
        # FOCUS: neither may be null, and nothing on the line says what they would be (1.3 names the provider
        # ServiceProviderName), so the line cannot be represented faithfully
        checks += [
            (
                "ProviderName",
                pl.col("ProviderName").is_null() & pl.col("ServiceProviderName").is_null(),
                "must not be empty (nor ServiceProviderName, its FOCUS 1.3 name)",
            ),
            ("ServiceName", pl.col("ServiceName").is_null(), "must not be empty"),
        ]
    checks += [
        (
            "ChargeCategory",
            pl.col("ChargeCategory").is_not_null() & ~pl.col("ChargeCategory").is_in(CHARGE_CATEGORIES),
            f"must be one of {', '.join(sorted(CHARGE_CATEGORIES))}",
        ),
        (
            "ChargeClass",
            pl.col("ChargeClass").is_not_null() & ~pl.col("ChargeClass").is_in(CHARGE_CLASSES),
            "must be empty or Correction",
        ),
        (
            "BillingPeriodEnd",
            pl.col("BillingPeriodEnd") <= pl.col("BillingPeriodStart"),
            "must be after BillingPeriodStart (End is exclusive)",
        ),
        (
            "ChargePeriodEnd",
            pl.col("ChargePeriodEnd") < pl.col("ChargePeriodStart"),
            "must not be before ChargePeriodStart",
        ),
    ]
    for column, expr, reason in checks:
        failed = typed.select(expr.fill_null(False)).to_series()
        reject_first(
            failed,
            typed[column],
            name,
            column,
            lambda value, reason=reason, column=column: (
                f"{column} {reason}" + ("" if value is None else f" (found {value!r})")
            ),
        )


def reject_first(
    failed: pl.Series, values: pl.Series, name: str, column: str, describe: Callable[[object], str]
) -> None:
    """Reject the file at the first failing row, saying how many more rows fail the same way."""
    if not failed.any():
        return
    row = int(failed.arg_true()[0])
    count = int(failed.sum())
    more = f" ({count - 1} more row(s) like it)" if count > 1 else ""
    raise RejectedInput(name, describe(values[row]) + more, row=row + 1, column=column)


def shorten(value: object) -> str:
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def read_focus_files(files: list[tuple[Path, str]], *, require_mandatory: bool = True) -> FocusFile:
    """Parse the files of one delivery (path, name for lineage) into one frame."""
    if not files:
        raise ValueError("read_focus_files needs at least one file")
    parsed = [read_focus_file(path, source_file=name, require_mandatory=require_mandatory) for path, name in files]
    return FocusFile(
        frame=pl.concat([part.frame for part in parsed], how="vertical"),
        focus_version=",".join(sorted({part.focus_version for part in parsed})),
    )


def parse_focus_delivery(delivery: Delivery) -> ParsedDelivery:
    """The connector entry point: a FOCUS delivery's data files as one frame.

    When the delivery carries an export manifest (AWS Data Exports `FOCUS_1_2_AWS`, Azure
    FocusCost), exactly the files it lists are read; otherwise every data file of the delivery.
    """
    listed = listed_data_files(delivery)
    files = delivery.files() if listed is None else listed
    if not files:
        raise RejectedInput(delivery.name, "holds no CSV, CSV.gz or Parquet files")
    parsed = read_focus_files([(file, delivery.display_name(file)) for file in files])
    check_rows(parsed.frame, ROW_RULES)
    return ParsedDelivery(frame=parsed.frame, format_version=f"FOCUS {parsed.focus_version}")
