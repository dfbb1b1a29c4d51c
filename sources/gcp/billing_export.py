"""Read Google Cloud billing export files (BigQuery standard or detailed usage cost schema).

Google writes the billing export only to BigQuery; it reaches us as files extracted from there,
either by `EXPORT DATA … format='PARQUET'` (nested Parquet) or by a query job written as
newline-delimited JSON (optionally gzipped). Both keep the export's nested shape: `service`,
`sku`, `project`, `location`, `usage`, `invoice`, … are structs, `labels`, `system_labels`,
`project.labels` and `credits` are arrays. This module flattens that shape into one typed row per
export row for `raw.gcp_billing_export`:

- structs become columns named after their path (`service.description` → `service_description`,
  `usage.amount_in_pricing_units` → `usage_amount_in_pricing_units`);
- key/value arrays become flat JSON objects (`labels`, `project_labels`, `system_labels`) and
  `focus_tags`, the FOCUS `Tags` object: resource labels over project labels, a valueless label
  as `true`;
- `credits` stays a JSON array, and its amounts are summed exactly per row (see below);
- money and quantities become DECIMAL(38, 12). The export holds most of them as FLOAT64: a double
  is read through its shortest decimal text (0.1 stays 0.1), a JSON number or numeric string the
  same way, so no binary-float noise enters the warehouse;
- `invoice.month` (YYYYMM) becomes the billing period: Google's invoice months run from midnight
  America/Los_Angeles, so 202405 starts 2024-05-01 07:00 UTC (PDT) and 202412 at 08:00 UTC (PST);
  `billing_period_end` is the next month's start (exclusive).

Fields Google adds later are ignored (kept, top level, in `_extra` as JSON); optional fields that
are missing are null. A missing required field (billing_account_id, invoice.month, cost, currency,
usage_start_time, sku.description), a value that does not parse, a malformed JSON line or a
truncated gzip rejects the whole delivery, naming file, row and column.

A delivery replaces whole (billing account, invoice month) keys in the warehouse, so extract every
row of the invoice months it carries (Google restates a month until it closes: re-extract the
month whenever its `max(export_time)` moves).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl

from sources.common.delivery import LINEAGE_SCHEMA, Delivery, ParsedDelivery
from sources.common.detect import inspect_file, retired_gcp_file_export
from sources.common.errors import RejectedInput
from sources.common.files import GZIP_MAGIC, PARQUET_MAGIC, check_utf8_text, decompressed, first_line, magic_bytes
from sources.common.rejects import reject_first
from sources.common.row_checks import WARNING, NonNegative, OneOf, RowRules, check_rows
from sources.common.types import DECIMAL, DECIMAL_PRECISION, DECIMAL_SCALE, TIMESTAMP, Kind, polars_type

BILLING_TIME_ZONE = "America/Los_Angeles"
"""Google invoices by calendar month in US Pacific time."""

COMMITTED_USAGE_DISCOUNT = "COMMITTED_USAGE_DISCOUNT"
"""Credit type of resource-based committed use discounts (vCPU, memory, GPU commitments)."""
COMMITTED_SPEND_DISCOUNT = "COMMITTED_USAGE_DISCOUNT_DOLLAR_BASE"
"""Credit type of spend-based committed use discounts."""
COST_TYPES = ("regular", "tax", "adjustment", "rounding error")

_ROW = "__row"
_LINE_SEPARATOR = "\x1f"
"""A byte valid JSON never holds unescaped: reading lines as one CSV column split on it keeps each line whole."""


# (raw column, export field path, kind), in raw-table order.
_FIELDS: tuple[tuple[str, str, Kind], ...] = (
    ("billing_account_id", "billing_account_id", Kind.STRING),
    ("invoice_month", "invoice.month", Kind.STRING),
    ("service_id", "service.id", Kind.STRING),
    ("service_description", "service.description", Kind.STRING),
    ("sku_id", "sku.id", Kind.STRING),
    ("sku_description", "sku.description", Kind.STRING),
    ("usage_start_time", "usage_start_time", Kind.DATETIME),
    ("usage_end_time", "usage_end_time", Kind.DATETIME),
    ("project_id", "project.id", Kind.STRING),
    ("project_number", "project.number", Kind.STRING),
    ("project_name", "project.name", Kind.STRING),
    ("location_location", "location.location", Kind.STRING),
    ("location_country", "location.country", Kind.STRING),
    ("location_region", "location.region", Kind.STRING),
    ("location_zone", "location.zone", Kind.STRING),
    ("resource_name", "resource.name", Kind.STRING),
    ("resource_global_name", "resource.global_name", Kind.STRING),
    ("export_time", "export_time", Kind.DATETIME),
    ("cost", "cost", Kind.DECIMAL),
    ("currency", "currency", Kind.STRING),
    ("currency_conversion_rate", "currency_conversion_rate", Kind.DECIMAL),
    ("cost_at_list", "cost_at_list", Kind.DECIMAL),
    ("usage_amount", "usage.amount", Kind.DECIMAL),
    ("usage_unit", "usage.unit", Kind.STRING),
    ("usage_amount_in_pricing_units", "usage.amount_in_pricing_units", Kind.DECIMAL),
    ("usage_pricing_unit", "usage.pricing_unit", Kind.STRING),
    ("cost_type", "cost_type", Kind.STRING),
    ("adjustment_info_id", "adjustment_info.id", Kind.STRING),
    ("adjustment_info_description", "adjustment_info.description", Kind.STRING),
    ("adjustment_info_mode", "adjustment_info.mode", Kind.STRING),
    ("adjustment_info_type", "adjustment_info.type", Kind.STRING),
    ("transaction_type", "transaction_type", Kind.STRING),
    ("seller_name", "seller_name", Kind.STRING),
    ("price_effective_price", "price.effective_price", Kind.DECIMAL),
    ("price_tier_start_amount", "price.tier_start_amount", Kind.DECIMAL),
    ("price_unit", "price.unit", Kind.STRING),
    ("price_pricing_unit_quantity", "price.pricing_unit_quantity", Kind.DECIMAL),
    ("consumption_model_id", "consumption_model.id", Kind.STRING),
    ("consumption_model_description", "consumption_model.description", Kind.STRING),
    ("subscription_instance_id", "subscription.instance_id", Kind.STRING),
)
_PATHS = {column: path for column, path, _ in _FIELDS}
REQUIRED_FIELDS = ("billing_account_id", "invoice.month", "cost", "currency", "usage_start_time", "sku.description")
_ARRAY_FIELDS = ("labels", "system_labels", "project.labels", "credits")
_KNOWN_TOP_LEVEL = {path.split(".")[0] for _, path, _ in _FIELDS} | {path.split(".")[0] for path in _ARRAY_FIELDS}
_DETAILED_ONLY = ("resource.name", "resource.global_name", "price.effective_price")

_DERIVED_SCHEMA: dict[str, pl.DataType] = {
    "billing_period_start": TIMESTAMP,
    "billing_period_end": TIMESTAMP,
    "labels": pl.String(),
    "project_labels": pl.String(),
    "system_labels": pl.String(),
    "focus_tags": pl.String(),
    "credits": pl.String(),
    "credits_amount": DECIMAL,
    "credits_committed_usage_amount": DECIMAL,
    "credits_committed_spend_amount": DECIMAL,
    "commitment_credit_id": pl.String(),
    "commitment_credit_name": pl.String(),
    "net_cost": DECIMAL,
    "x_extensions": pl.String(),
    "_extra": pl.String(),
    **LINEAGE_SCHEMA,
}

DATETIME_FORMATS = (
    "%Y-%m-%dT%H:%M:%S%.fZ",
    "%Y-%m-%dT%H:%M:%SZ",
    "%Y-%m-%dT%H:%M:%S%.f%:z",
    "%Y-%m-%dT%H:%M:%S%:z",
    "%Y-%m-%dT%H:%M:%S%.f",
    "%Y-%m-%dT%H:%M:%S",
)
_NUMBER = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"
_NUMBER_EXPECTED = f"a number (at most {DECIMAL_PRECISION - DECIMAL_SCALE} digits before the decimal point)"


def output_schema() -> dict[str, pl.DataType]:
    """Columns and types of `raw.gcp_billing_export`, in order (the loader adds `_load_id`, `_ingested_at`)."""
    schema: dict[str, pl.DataType] = {}
    for column, _, kind in _FIELDS:
        schema[column] = polars_type(kind)
        if column == "invoice_month":
            schema["billing_period_start"] = _DERIVED_SCHEMA["billing_period_start"]
            schema["billing_period_end"] = _DERIVED_SCHEMA["billing_period_end"]
    schema.update({column: dtype for column, dtype in _DERIVED_SCHEMA.items() if column not in schema})
    return schema


ROW_RULES = RowRules(
    non_negative=(
        NonNegative(
            "usage_amount",
            OneOf("cost_type", ("regular",)),
            "on regular usage rows (an adjustment may be negative)",
            severity=WARNING,
        ),
    )
)
"""The export has no line item id, so no key is checked for uniqueness."""


def parse_billing_export_delivery(delivery: Delivery) -> ParsedDelivery:
    """The connector entry point: every Parquet or NDJSON file of a billing export delivery, as one frame."""
    files = delivery.files()
    if not files:
        raise RejectedInput(delivery.name, "holds no Parquet or newline-delimited JSON files")
    frames, formats, detailed = [], set(), False
    for file in files:
        frame, file_format, file_detailed = _read_file(file, delivery.display_name(file))
        frames.append(frame)
        formats.add(file_format)
        detailed = detailed or file_detailed
    combined = pl.concat(frames, how="vertical")
    if combined.height == 0:
        raise RejectedInput(delivery.name, "holds no billing rows")
    check_rows(combined, ROW_RULES)
    table = "detailed" if detailed else "standard"
    return ParsedDelivery(
        frame=combined, format_version=f"BigQuery billing export, {table} ({', '.join(sorted(formats))})"
    )


def read_billing_export_file(path: Path, *, source_file: str | None = None) -> pl.DataFrame:
    """Parse and validate one export file into `output_schema()` columns."""
    return _read_file(path, source_file or str(path))[0]


def _read_file(path: Path, name: str) -> tuple[pl.DataFrame, str, bool]:
    nested, file_format = _read_nested(path, name)
    detailed = any(_locate(nested, field) is not None for field in _DETAILED_ONLY)
    return _flatten(nested, name), file_format, detailed


# --- Reading files into nested frames ---------------------------------------------------------


def _read_nested(path: Path, name: str) -> tuple[pl.DataFrame, str]:
    magic = magic_bytes(path, name)
    if magic.startswith(PARQUET_MAGIC):
        try:
            return pl.read_parquet(path), "Parquet"
        except Exception as exc:
            raise RejectedInput(name, f"is not a readable Parquet file: {first_line(exc)}") from exc
    if path.name.lower().endswith(".csv") or path.name.lower().endswith(".csv.gz"):
        raise RejectedInput(
            name,
            "is CSV, which cannot hold the export's nested fields (credits, labels): "
            "extract it as Parquet or newline-delimited JSON",
        )
    gzipped = magic.startswith(GZIP_MAGIC)
    with decompressed(path, name, gzipped=gzipped, count_lines=True) as plain:
        return _read_ndjson(plain, name), "NDJSON gzip" if gzipped else "NDJSON"


def _read_ndjson(path: Path, name: str) -> pl.DataFrame:
    """One JSON object per line; line numbers are the rows named in messages."""
    check_utf8_text(path, name, layout="UTF-8 newline-delimited JSON")
    try:
        lines = pl.read_csv(
            path,
            has_header=False,
            separator=_LINE_SEPARATOR,
            quote_char=None,
            schema={"line": pl.String},
            truncate_ragged_lines=True,
            encoding="utf8",
        )["line"]
    except pl.exceptions.NoDataError:
        return pl.DataFrame()
    except Exception as exc:
        raise RejectedInput(name, f"is not UTF-8 newline-delimited JSON: {first_line(exc)}") from exc
    text = lines.str.strip_chars_start("\ufeff").str.strip_chars()
    present = text.is_not_null() & (text != "")
    valid = text.str.starts_with("{") & text.str.json_path_match("$").is_not_null()
    bad = present & ~valid
    if bad.any():
        row = int(bad.arg_true()[0])
        if text[row].startswith("["):
            retired = retired_gcp_file_export(inspect_file(path))
            raise RejectedInput(
                name,
                retired or "is a JSON array; extract the export as newline-delimited JSON (one object per line)",
                row=row + 1,
            )
        reason, column = _json_error(text[row])
        raise RejectedInput(name, f"is not a JSON object on this line: {reason}", row=row + 1, column=column)
    numbered = pl.DataFrame({"line": text, _ROW: pl.int_range(0, len(text), dtype=pl.Int64, eager=True)}).filter(
        present
    )
    if numbered.height == 0:
        return pl.DataFrame()
    try:
        decoded = numbered["line"].str.json_decode(infer_schema_length=None)
    except pl.exceptions.PolarsError as exc:
        row = int(numbered[_ROW][_first_failing_prefix(numbered["line"])])
        raise RejectedInput(
            name,
            f"has a field whose JSON type differs from the rows before it ({first_line(exc)})",
            row=row + 1,
        ) from exc
    return pl.DataFrame({"decoded": decoded, _ROW: numbered[_ROW]}).unnest("decoded")


def _first_failing_prefix(lines: pl.Series) -> int:
    """Index of the line that makes JSON decoding fail: bisect on prefixes (only on the error path)."""
    low, high = 1, len(lines)
    while low < high:
        middle = (low + high) // 2
        try:
            lines.head(middle).str.json_decode(infer_schema_length=None)
        except pl.exceptions.PolarsError:
            high = middle
        else:
            low = middle + 1
    return low - 1


def _json_error(line: str) -> tuple[str, str | None]:
    """Describe one bad line (the first one only) and name the field where it breaks, when there is one."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        keys = re.findall(r'"((?:[^"\\]|\\.)*)"\s*:', line[: exc.pos])
        return f"{exc.msg} at character {exc.pos + 1}", (keys[-1] if keys else None)
    if isinstance(value, dict):
        return "a value strict JSON does not allow (NaN, Infinity or a lone surrogate)", None
    return "a JSON value that is not an object", None


# --- Flattening and typing --------------------------------------------------------------------


def _locate(nested: pl.DataFrame, path: str) -> tuple[pl.Expr, pl.DataType] | None:
    """The expression and type of a field path, or None when the file does not have it.

    A struct that is null in every row of an NDJSON file has no known fields: its members are
    present, and null.
    """
    head, *rest = path.split(".")
    if head not in nested.columns:
        return None
    expr, dtype = pl.col(head), nested.schema[head]
    for part in rest:
        if dtype == pl.Null:
            return pl.lit(None), pl.Null()
        if not isinstance(dtype, pl.Struct):
            return None
        fields = {field.name: field.dtype for field in dtype.fields}
        if part not in fields:
            return None
        expr, dtype = expr.struct.field(part), fields[part]
    return expr, dtype


def _flatten(nested: pl.DataFrame, name: str) -> pl.DataFrame:
    if nested.height == 0:
        return pl.DataFrame(schema=output_schema())
    if _ROW not in nested.columns:
        nested = nested.with_row_index(_ROW).with_columns(pl.col(_ROW).cast(pl.Int64))
    missing = [path for path in REQUIRED_FIELDS if _locate(nested, path) is None]
    if missing:
        raise RejectedInput(
            name, f"has no {', '.join(missing)} field (required in a billing export)", column=missing[0]
        )

    selected: list[pl.Expr] = [pl.col(_ROW)]
    checks: list[tuple[str, str, Kind]] = []
    for column, path, kind in _FIELDS:
        located = _locate(nested, path)
        if located is None:
            selected.append(pl.lit(None, dtype=polars_type(kind)).alias(column))
            continue
        expr, dtype = located
        text = _text(expr, dtype)
        selected.append(_typed(expr, dtype, text, kind).alias(column))
        if kind is not Kind.STRING:
            selected.append(text.alias(f"__text_{column}"))
            checks.append((column, path, kind))
    frame = nested.select(selected).with_columns(
        # Spelled `rounding error` in the export, `rounding_error` by some tools: one spelling here.
        pl.col("cost_type").str.to_lowercase().str.replace_all("_", " ", literal=True)
    )

    for column, path, kind in checks:
        failed = frame[f"__text_{column}"].is_not_null() & frame[column].is_null()
        expected = _NUMBER_EXPECTED if kind is Kind.DECIMAL else "a timestamp such as 2024-05-01 07:00:00 UTC"
        reject_first(
            failed, frame[f"__text_{column}"], name, path, lambda v, e=expected: f"{v!r} is not {e}", rows=_rows(frame)
        )
    frame = frame.drop([f"__text_{column}" for column, _, _ in checks])
    _check_required_and_codes(frame, name)

    frame = frame.with_columns(_billing_period(pl.col("invoice_month")))
    arrays = _arrays(nested, name)
    frame = frame.join(arrays, on=_ROW, how="left").with_columns(
        pl.col("credits").fill_null("[]"),
        *(pl.col(column).fill_null(0) for column in _CREDIT_SUMS),
    )
    frame = frame.with_columns((pl.col("cost") + pl.col("credits_amount")).cast(DECIMAL).alias("net_cost"))
    frame = frame.join(nested.select(_ROW, _extra(nested).alias("_extra")), on=_ROW, how="left")
    frame = frame.with_columns(
        _x_extensions().alias("x_extensions"),
        pl.lit(name).alias("_source_file"),
        (pl.col(_ROW) + 1).alias("_source_row"),
    )
    return frame.sort(_ROW).select(output_schema().keys()).cast(output_schema())


def _text(expr: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """Any value as text, blanks as null; nested values as JSON; doubles as their shortest decimal text."""
    if dtype == pl.Null:
        return pl.lit(None, dtype=pl.String)
    if dtype.is_nested():
        return pl.struct(expr.alias("v")).struct.json_encode().str.json_path_match("$.v")
    if isinstance(dtype, pl.Datetime):
        return expr.dt.to_string("%Y-%m-%dT%H:%M:%S%.f")
    text = expr.cast(pl.String).str.strip_chars()
    return pl.when(text == "").then(None).otherwise(text)


def _typed(expr: pl.Expr, dtype: pl.DataType, text: pl.Expr, kind: Kind) -> pl.Expr:
    if kind is Kind.STRING:
        return text
    if kind is Kind.DECIMAL:
        if dtype.is_integer() or isinstance(dtype, pl.Decimal):
            return expr.cast(DECIMAL, strict=False)
        return _decimal(text)
    if isinstance(dtype, pl.Datetime):
        if dtype.time_zone is not None:
            expr = expr.dt.convert_time_zone("UTC").dt.replace_time_zone(None)
        return expr.cast(TIMESTAMP)
    if dtype == pl.Date:
        return expr.cast(TIMESTAMP)
    return _timestamp(text)


def _decimal(text: pl.Expr) -> pl.Expr:
    """Decimal text (plain or scientific) to DECIMAL(38, 12); anything else to null."""
    return pl.when(text.str.contains(_NUMBER)).then(text.str.to_decimal(scale=DECIMAL_SCALE)).cast(DECIMAL)


def _timestamp(text: pl.Expr) -> pl.Expr:
    """BigQuery's spellings of a TIMESTAMP as UTC: `2024-05-01 07:00:00 UTC`, ISO 8601 with `Z`,
    an offset or a fraction, and epoch seconds (the REST API's `1.7145468E9`)."""
    iso = (
        text.str.replace(r" UTC$", "Z")
        .str.replace(r"^(\d{4}-\d{2}-\d{2}) ", "${1}T")
        .str.replace(r"([+-]\d{2})$", "${1}:00")
    )
    parsed = pl.coalesce(
        [iso.str.to_datetime(fmt, strict=False, time_zone="UTC", time_unit="us") for fmt in DATETIME_FORMATS]
    ).dt.replace_time_zone(None)
    epoch_micros = (_decimal(text) * 1_000_000).cast(pl.Int64, strict=False)
    return pl.coalesce(parsed, pl.from_epoch(epoch_micros, time_unit="us"))


def _billing_period(month: pl.Expr) -> list[pl.Expr]:
    start = pl.datetime(
        month.str.slice(0, 4).cast(pl.Int32), month.str.slice(4, 2).cast(pl.Int8), 1, time_zone=BILLING_TIME_ZONE
    )
    return [
        start.dt.convert_time_zone("UTC").dt.replace_time_zone(None).alias("billing_period_start"),
        start.dt.offset_by("1mo").dt.convert_time_zone("UTC").dt.replace_time_zone(None).alias("billing_period_end"),
    ]


def _check_required_and_codes(frame: pl.DataFrame, name: str) -> None:
    for path in REQUIRED_FIELDS:
        column = _column_of(path)
        reject_first(
            frame[column].is_null(), frame[column], name, path, lambda _: "is required and empty", rows=_rows(frame)
        )
    month = frame["invoice_month"]
    reject_first(
        ~month.str.contains(r"^\d{4}(0[1-9]|1[0-2])$"),
        month,
        name,
        "invoice.month",
        lambda value: f"{value!r} is not a month as YYYYMM",
        rows=_rows(frame),
    )
    reject_first(
        frame["cost_type"].is_not_null() & ~frame["cost_type"].is_in(COST_TYPES),
        frame["cost_type"],
        name,
        "cost_type",
        lambda value: f"{value!r} is not one of {', '.join(COST_TYPES)}",
        rows=_rows(frame),
    )
    reject_first(
        (frame["usage_end_time"] < frame["usage_start_time"]).fill_null(False),
        frame["usage_end_time"],
        name,
        "usage_end_time",
        lambda value: f"{value} is before usage_start_time",
        rows=_rows(frame),
    )


def _column_of(path: str) -> str:
    return next(column for column, field_path in _PATHS.items() if field_path == path)


def _rows(frame: pl.DataFrame) -> pl.Series:
    """Each row's number in the file: the frame is reordered by joins, `_ROW` keeps where it came from."""
    return frame[_ROW] + 1


# --- Arrays: labels and credits ---------------------------------------------------------------

_CREDIT_SUMS = ("credits_amount", "credits_committed_usage_amount", "credits_committed_spend_amount")


def _arrays(nested: pl.DataFrame, name: str) -> pl.DataFrame:
    """Per row: the label objects, the FOCUS tags, the credits array and its exact sums."""
    rows = nested.select(_ROW)
    labels = _entries(nested, "labels", name)
    project_labels = _entries(nested, "project.labels", name)
    system_labels = _entries(nested, "system_labels", name)
    tags = pl.concat(
        [project_labels.with_columns(priority=pl.lit(0)), labels.with_columns(priority=pl.lit(1))], how="vertical"
    )
    tags = (
        tags.sort([_ROW, "key", "priority"])
        .unique(subset=[_ROW, "key"], keep="last", maintain_order=True)
        .with_columns(
            value=pl.when(pl.col("value").is_null() | (pl.col("value") == ""))
            .then(pl.lit("true"))
            .otherwise(_json_string(pl.col("value")))
        )
    )
    machine_spec = system_labels.filter(pl.col("key") == "compute.googleapis.com/machine_spec").select(
        _ROW, pl.col("value").alias("machine_spec")
    )
    parts = [
        _json_object(labels.with_columns(value=_json_string(pl.col("value"))), "labels"),
        _json_object(project_labels.with_columns(value=_json_string(pl.col("value"))), "project_labels"),
        _json_object(system_labels.with_columns(value=_json_string(pl.col("value"))), "system_labels"),
        _json_object(tags, "focus_tags"),
        machine_spec.unique(subset=[_ROW], keep="last"),
        _credits(nested, name),
    ]
    for part in parts:
        rows = rows.join(part, on=_ROW, how="left")
    return rows


def _entries(nested: pl.DataFrame, path: str, name: str) -> pl.DataFrame:
    """A key/value array as (row, key, value) text, one row per entry; the last of a repeated key wins."""
    empty = pl.DataFrame(schema={_ROW: pl.Int64, "key": pl.String, "value": pl.String})
    exploded = _exploded(nested, path, name, ("key", "value"))
    if exploded is None:
        return empty
    return (
        exploded.select(
            _ROW,
            _text(pl.col("key"), exploded.schema["key"]).alias("key"),
            _text(pl.col("value"), exploded.schema["value"]).alias("value"),
        )
        .filter(pl.col("key").is_not_null())
        .unique(subset=[_ROW, "key"], keep="last", maintain_order=True)
    )


def _exploded(nested: pl.DataFrame, path: str, name: str, fields: tuple[str, ...]) -> pl.DataFrame | None:
    """An array of structs as one row per element with the given fields (missing ones null), or None if empty."""
    located = _locate(nested, path)
    if located is None or located[1] == pl.Null:
        return None
    expr, dtype = located
    if not isinstance(dtype, pl.List):
        raise RejectedInput(name, f"{path} is not an array (found {dtype})", column=path)
    inner = dtype.inner
    if inner == pl.Null:
        return None
    if not isinstance(inner, pl.Struct):
        raise RejectedInput(name, f"{path} is not an array of records (found {dtype})", column=path)
    present = {field.name for field in inner.fields}
    exploded = nested.select(_ROW, expr.alias("element")).explode("element").filter(pl.col("element").is_not_null())
    return exploded.select(
        _ROW,
        *(pl.col("element").struct.field(field) if field in present else pl.lit(None).alias(field) for field in fields),
    )


def _credits(nested: pl.DataFrame, name: str) -> pl.DataFrame:
    """The credits array as JSON with exact amounts, and per-row sums.

    `credits_amount` (all credits) gives the invoice's net cost, `cost + credits_amount`: that is
    how Google's invoice and the FOCUS BilledCost count. Two sums by kind are kept because the
    FOCUS columns need them downstream: `credits_committed_usage_amount` (resource-based committed
    use discounts, type COMMITTED_USAGE_DISCOUNT) marks usage covered by a commitment (pricing
    category Committed) and, against `cost`, tells how much of the row's quantity the commitment
    covered, which is how the commitment fee is amortized onto that usage for EffectiveCost;
    `credits_committed_spend_amount` (spend-based, COMMITTED_USAGE_DISCOUNT_DOLLAR_BASE) marks
    spend-commitment usage. Older exports have no credit `type`: those are classified by name.
    """
    columns = {
        _ROW: pl.Int64,
        "credits": pl.String,
        **{column: DECIMAL for column in _CREDIT_SUMS},
        "commitment_credit_id": pl.String,
        "commitment_credit_name": pl.String,
    }
    exploded = _exploded(nested, "credits", name, ("name", "amount", "full_name", "id", "type"))
    if exploded is None or exploded.height == 0:
        return pl.DataFrame(schema=columns)
    texts = {field: _text(pl.col(field), exploded.schema[field]) for field in ("name", "full_name", "id", "type")}
    amount_text = _text(pl.col("amount"), exploded.schema["amount"])
    credits = exploded.select(
        _ROW,
        *(expr.alias(field) for field, expr in texts.items()),
        amount_text.alias("amount_text"),
        _typed(pl.col("amount"), exploded.schema["amount"], amount_text, Kind.DECIMAL).alias("amount"),
    )
    reject_first(
        credits["amount_text"].is_not_null() & credits["amount"].is_null(),
        credits["amount_text"],
        name,
        "credits.amount",
        lambda value: f"{value!r} is not {_NUMBER_EXPECTED}",
        rows=_rows(credits),
    )
    kind_name = pl.col("name").str.to_lowercase()
    kind = (
        pl.when(pl.col("type").str.to_uppercase() == COMMITTED_USAGE_DISCOUNT)
        .then(pl.lit("usage"))
        .when(pl.col("type").str.to_uppercase() == COMMITTED_SPEND_DISCOUNT)
        .then(pl.lit("spend"))
        .when(pl.col("type").is_null() & kind_name.str.contains("commit") & kind_name.str.contains("dollar"))
        .then(pl.lit("spend"))
        .when(pl.col("type").is_null() & kind_name.str.contains("commit"))
        .then(pl.lit("usage"))
    )
    element = pl.concat_str(
        [
            pl.lit('{"name":'),
            _json_string(pl.col("name")),
            pl.lit(',"amount":'),
            pl.coalesce(_decimal_text(pl.col("amount")), pl.lit("null")),
            pl.lit(',"full_name":'),
            _json_string(pl.col("full_name")),
            pl.lit(',"id":'),
            _json_string(pl.col("id")),
            pl.lit(',"type":'),
            _json_string(pl.col("type")),
            pl.lit("}"),
        ]
    )
    zero = pl.lit(0, dtype=DECIMAL)
    return (
        credits.with_columns(kind.alias("kind"), element.alias("element"))
        .group_by(_ROW, maintain_order=True)
        .agg(
            pl.concat_str([pl.lit("["), pl.col("element").str.join(","), pl.lit("]")]).alias("credits"),
            pl.col("amount").sum().alias("credits_amount"),
            pl.col("amount").filter(pl.col("kind") == "usage").sum().alias("credits_committed_usage_amount"),
            pl.col("amount").filter(pl.col("kind") == "spend").sum().alias("credits_committed_spend_amount"),
            pl.coalesce("id", "full_name", "name")
            .filter(pl.col("kind").is_not_null())
            .first()
            .alias("commitment_credit_id"),
            pl.coalesce("full_name", "name")
            .filter(pl.col("kind").is_not_null())
            .first()
            .alias("commitment_credit_name"),
        )
        .with_columns(pl.col(column).fill_null(zero).cast(DECIMAL) for column in _CREDIT_SUMS)
        .select(columns.keys())
    )


def _json_string(expr: pl.Expr) -> pl.Expr:
    """A text value as a JSON string literal (escaped), or `null`."""
    return pl.struct(expr.alias("v")).struct.json_encode().str.slice(5).str.head(-1)


def _json_object(entries: pl.DataFrame, column: str) -> pl.DataFrame:
    """(row, key, JSON value) entries as one flat JSON object per row, keys sorted."""
    member = pl.concat_str([_json_string(pl.col("key")), pl.lit(":"), pl.col("value")])
    return (
        entries.sort([_ROW, "key"])
        .group_by(_ROW, maintain_order=True)
        .agg(pl.concat_str([pl.lit("{"), member.str.join(","), pl.lit("}")]).alias(column))
    )


def _decimal_text(expr: pl.Expr) -> pl.Expr:
    """A decimal as plain text without trailing zeros: 1.500000000000 → 1.5."""
    return expr.cast(pl.String).str.replace(r"\.?0+$", "")


def _x_extensions() -> pl.Expr:
    """Export fields worth keeping beside the FOCUS columns, as one JSON object."""
    scalars = pl.struct(
        pl.col("sku_id").alias("x_SkuId"),
        pl.col("service_id").alias("x_ServiceId"),
        pl.col("cost_type").alias("x_CostType"),
        pl.col("invoice_month").alias("x_InvoiceMonth"),
        pl.col("export_time").dt.to_string("%Y-%m-%dT%H:%M:%SZ").alias("x_ExportTime"),
        _decimal_text(pl.col("currency_conversion_rate")).alias("x_CurrencyConversionRate"),
        pl.col("location_location").alias("x_Location"),
        pl.col("project_number").alias("x_ProjectNumber"),
        pl.col("resource_global_name").alias("x_ResourceGlobalName"),
        pl.col("machine_spec").alias("x_MachineSpec"),
        pl.col("transaction_type").alias("x_TransactionType"),
        pl.col("seller_name").alias("x_SellerName"),
        pl.col("adjustment_info_type").alias("x_AdjustmentType"),
        pl.col("consumption_model_id").alias("x_ConsumptionModel"),
    ).struct.json_encode()
    return pl.concat_str(
        [
            scalars.str.head(-1),
            pl.lit(',"x_Credits":'),
            pl.col("credits"),
            pl.lit(',"x_SystemLabels":'),
            pl.col("system_labels").fill_null("null"),
            pl.lit("}"),
        ]
    )


def _extra(nested: pl.DataFrame) -> pl.Expr:
    """Top-level fields this reader does not know (Google adds fields), as JSON; null when there are none."""
    unknown = [column for column in nested.columns if column not in _KNOWN_TOP_LEVEL and column != _ROW]
    if not unknown:
        return pl.lit(None, dtype=pl.String)
    return pl.struct(pl.col(unknown)).struct.json_encode()
