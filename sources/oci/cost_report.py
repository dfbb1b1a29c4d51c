"""Read Oracle Cloud Infrastructure cost reports (CSV, csv.gz) into typed polars frames.

OCI writes cost reports as `reports/cost-csv/<n>.csv.gz` into the tenancy's Object Storage
bucket: one row per resource, SKU and hour, slash-separated headers (`cost/myCost`), one
column per tag key (`tags/<namespace>.<key>`). What this reader handles:

- headers matched without regard to case (Oracle's documentation writes `lineItem/TenantId`,
  real files `lineItem/tenantId`), mapped to a pinned list of snake_case columns; a column OCI
  adds later is kept verbatim in the JSON column `extra_columns` instead of being dropped;
- the `tags/*` columns folded into one flat JSON object `tags`, keyed `namespace.key`, holding
  only the tags a row has;
- amounts written in scientific notation (`2.323760000E-9`), read straight to DECIMAL(38, 12)
  and rounded half-to-even at the 12th decimal, never through a binary float;
- timestamps with or without seconds (`2023-11-13T10:00Z`), read as UTC;
- zero-cost lines with an empty `cost/currencyCode` (real reports have them): a tenancy is billed in one
  currency, so they take the one its other lines in the delivery have (or the delivery's only one), with
  a warning. A line that costs something still needs its own currency;
- the yes/no columns `cost/overageFlag` and `lineItem/isCorrection` written `Y`/`N` (real reports) or
  `true`/`false` (the public sample), stored `true`/`false`; any other value loads as no value, with a warning.

The billing period is the calendar month (UTC) of the usage interval's start; a delivery restates
whole (tenancy, billing period) keys, so it must hold every report file of the months it covers.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from sources.common.currencies import CODE_SHAPE
from sources.common.delivery import LINEAGE_SCHEMA, Delivery, DeliveryWarning, ParsedDelivery
from sources.common.errors import RejectedInput
from sources.common.files import GZIP_MAGIC, PARQUET_MAGIC, decompressed, magic_bytes, read_csv
from sources.common.rejects import reject_first, shorten
from sources.common.row_checks import WARNING, NonNegative, OneOf, RowRules, check_rows, flag_rows
from sources.common.typed import flag, parse_timestamp, unreadable_flags
from sources.common.types import DECIMAL, DECIMAL_EXPECTED, TIMESTAMP

FORMAT_VERSION = "OCI cost report"
TAG_PREFIX = "tags/"

# Report header -> (raw column, type), in the order OCI writes them.
REPORT_COLUMNS: dict[str, tuple[str, pl.DataType]] = {
    "lineItem/referenceNo": ("line_item_reference_no", pl.String()),
    "lineItem/tenantId": ("line_item_tenant_id", pl.String()),
    "lineItem/intervalUsageStart": ("line_item_interval_usage_start", TIMESTAMP),
    "lineItem/intervalUsageEnd": ("line_item_interval_usage_end", TIMESTAMP),
    "product/service": ("product_service", pl.String()),
    "product/compartmentId": ("product_compartment_id", pl.String()),
    "product/compartmentName": ("product_compartment_name", pl.String()),
    "product/region": ("product_region", pl.String()),
    "product/availabilityDomain": ("product_availability_domain", pl.String()),
    "product/resourceId": ("product_resource_id", pl.String()),
    "usage/billedQuantity": ("usage_billed_quantity", DECIMAL),
    "usage/billedQuantityOverage": ("usage_billed_quantity_overage", DECIMAL),
    "cost/subscriptionId": ("cost_subscription_id", pl.String()),
    "cost/productSku": ("cost_product_sku", pl.String()),
    "product/Description": ("product_description", pl.String()),
    "cost/unitPrice": ("cost_unit_price", DECIMAL),
    "cost/unitPriceOverage": ("cost_unit_price_overage", DECIMAL),
    "cost/myCost": ("cost_my_cost", DECIMAL),
    "cost/myCostOverage": ("cost_my_cost_overage", DECIMAL),
    "cost/currencyCode": ("cost_currency_code", pl.String()),
    "cost/billingUnitReadable": ("cost_billing_unit_readable", pl.String()),
    "cost/skuUnitDescription": ("cost_sku_unit_description", pl.String()),
    "cost/overageFlag": ("cost_overage_flag", pl.String()),
    "lineItem/isCorrection": ("line_item_is_correction", pl.String()),
    "lineItem/backreferenceNo": ("line_item_backreference_no", pl.String()),
}

REQUIRED_COLUMNS = (
    "lineItem/tenantId",
    "lineItem/intervalUsageStart",
    "lineItem/intervalUsageEnd",
    "product/service",
    "cost/myCost",
    "cost/currencyCode",
)
"""Present in every file and filled on every row: the restatement key, the charge period, the service and the money."""

FLAG_COLUMNS = ("cost/overageFlag", "lineItem/isCorrection")
"""Yes/no columns, stored as `true`/`false` text (`sources.common.typed.flag`); neither is required."""

_HEADER_BY_LOWER = {header.lower(): header for header in REPORT_COLUMNS}


def output_schema() -> dict[str, pl.DataType]:
    """The raw table's columns and types, in order (the loader adds `_load_id` and `_ingested_at`)."""
    schema: dict[str, pl.DataType] = dict(REPORT_COLUMNS.values())
    schema["tags"] = pl.String()
    schema["extra_columns"] = pl.String()
    schema["billing_period_start"] = TIMESTAMP
    schema["billing_period_end"] = TIMESTAMP
    return schema | LINEAGE_SCHEMA


ROW_RULES = RowRules(
    non_negative=(
        NonNegative(
            "usage_billed_quantity",
            OneOf("line_item_is_correction", ("true",), ignore_case=True, negate=True),
            "on lines that are not corrections",
            severity=WARNING,
        ),
    ),
    line_item_key=("line_item_reference_no",),
)


def parse_cost_report_delivery(delivery: Delivery) -> ParsedDelivery:
    """The connector entry point: every cost report file of the delivery, as one frame."""
    files = delivery.files()
    if not files:
        raise RejectedInput(delivery.name, "holds no CSV or CSV.gz cost report files")
    read = [read_cost_report(file, source_file=delivery.display_name(file)) for file in files]
    frame = pl.concat([frame for frame, _ in read], how="vertical")
    check_rows(frame, ROW_RULES)
    frame, currency_warnings = fill_missing_currency(frame, delivery.name)
    warnings = tuple(warning for _, file_warnings in read for warning in file_warnings) + currency_warnings
    return ParsedDelivery(frame=frame, format_version=FORMAT_VERSION, warnings=warnings)


def fill_missing_currency(frame: pl.DataFrame, delivery_name: str) -> tuple[pl.DataFrame, tuple[DeliveryWarning, ...]]:
    """Give zero-cost lines without a currency their tenancy's currency, from the delivery's other lines.

    Nothing in the delivery to take it from (every line of the tenancy, and of the delivery, lacks one, or
    the lines disagree) rejects it: BillingCurrency must not be null and guessing one would be wrong.
    """
    missing = pl.col("cost_currency_code").is_null()
    if not frame.select(missing.any()).item():
        return frame, ()
    currencies = pl.col("cost_currency_code").drop_nulls().unique()
    by_tenancy = frame.group_by("line_item_tenant_id").agg(currencies.alias("_tenancy_currencies"))
    delivery_currencies = frame.select(currencies).to_series().to_list()
    filled = frame.join(by_tenancy, on="line_item_tenant_id", how="left", nulls_equal=True, maintain_order="left")
    single = pl.col("_tenancy_currencies").list.len() == 1
    fallback = pl.lit(delivery_currencies[0] if len(delivery_currencies) == 1 else None, dtype=pl.String)
    filled = filled.with_columns(
        pl.when(missing)
        .then(pl.when(single).then(pl.col("_tenancy_currencies").list.first()).otherwise(fallback))
        .otherwise(pl.col("cost_currency_code"))
        .alias("cost_currency_code")
    ).drop("_tenancy_currencies")
    unresolved = filled["cost_currency_code"].is_null()
    if unresolved.any():
        first = int(unresolved.arg_true()[0])
        found = ", ".join(sorted(delivery_currencies)) or "none"
        raise RejectedInput(
            str(frame["_source_file"][first]),
            f"cost/currencyCode is empty on a zero-cost line, and the delivery {delivery_name} names no single"
            f" currency for its tenancy to take (currencies found: {found})",
            row=int(frame["_source_row"][first]),
            column="cost/currencyCode",
        )
    warning = flag_rows(
        frame,
        "cost/currencyCode",
        missing,
        "Currency taken from the tenancy",
        "zero-cost line without cost/currencyCode: given the currency of its tenancy's other lines",
    )
    return filled, (warning,) if warning else ()


def read_cost_report(path: Path, *, source_file: str | None = None) -> tuple[pl.DataFrame, tuple[DeliveryWarning, ...]]:
    """Parse and validate one cost report file; raises RejectedInput naming the file, row and column.

    Returns the rows and what was accepted with a warning (a yes/no value that is neither).
    """
    name = source_file or str(path)
    raw = read_raw(path, name)
    if raw.height == 0:
        raise RejectedInput(name, "the file has a header but no data rows")
    report_columns, tag_columns, extra_columns = _classify_headers(raw.columns, name)
    missing = [header for header in REQUIRED_COLUMNS if header not in report_columns]
    if missing:
        raise RejectedInput(name, f"is missing cost report column(s) {', '.join(missing)}", column=missing[0])

    raw = raw.with_columns(pl.col(pl.String).str.strip_chars().replace("", None))
    typed = raw.select(
        *(_typed(header, report_columns.get(header)) for header in REPORT_COLUMNS),
        _json_object(tag_columns).alias("tags"),
        _json_object(extra_columns).alias("extra_columns"),
    )
    _check_values(raw, typed, report_columns, name)
    start = pl.col("line_item_interval_usage_start").dt.truncate("1mo")
    typed = typed.with_columns(
        start.alias("billing_period_start"),
        start.dt.offset_by("1mo").alias("billing_period_end"),
        pl.lit(name).alias("_source_file"),
        pl.int_range(1, typed.height + 1, dtype=pl.Int64).alias("_source_row"),
    )
    warnings = (
        unreadable_flags(typed, REPORT_COLUMNS[header][0], raw[report_columns[header]], named=header)
        for header in FLAG_COLUMNS
        if header in report_columns
    )
    return typed.select(output_schema().keys()), tuple(warning for warning in warnings if warning)


def read_raw(path: Path, name: str) -> pl.DataFrame:
    magic = magic_bytes(path, name)
    if magic.startswith(PARQUET_MAGIC):
        raise RejectedInput(name, "is a Parquet file; OCI cost reports are CSV or CSV.gz")
    with decompressed(path, name, gzipped=magic.startswith(GZIP_MAGIC)) as csv_path:
        return read_csv(csv_path, name)


def _classify_headers(headers: list[str], name: str) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """Split the header into report columns, tags and unknown columns.

    Returns three maps from the canonical name (pinned header, tag key, unknown header as written)
    to the file's own header. Two headers that mean the same column reject the file.
    """
    report: dict[str, str] = {}
    tags: dict[str, str] = {}
    extras: dict[str, str] = {}
    for header in headers:
        cleaned = header.lstrip("\ufeff").strip()
        if cleaned.lower().startswith(TAG_PREFIX):
            target, key = tags, cleaned[len(TAG_PREFIX) :]
        elif cleaned.lower() in _HEADER_BY_LOWER:
            target, key = report, _HEADER_BY_LOWER[cleaned.lower()]
        else:
            target, key = extras, cleaned
        if not key:
            raise RejectedInput(name, "has a column with an empty name", column=header)
        if key in target:
            raise RejectedInput(name, f"has the column twice (as {target[key]!r} and {header!r})", column=key)
        target[key] = header
    return report, tags, extras


def _typed(header: str, file_header: str | None) -> pl.Expr:
    """One report column typed from its text (all nulls when the file lacks this optional column)."""
    column, dtype = REPORT_COLUMNS[header]
    if file_header is None:
        return pl.lit(None, dtype=dtype).alias(column)
    text = pl.col(file_header)
    if isinstance(dtype, pl.Decimal):
        return text.cast(DECIMAL, strict=False).alias(column)
    if isinstance(dtype, pl.Datetime):
        return parse_timestamp(text).alias(column)
    if header in FLAG_COLUMNS:
        return flag(text).alias(column)
    return text.alias(column)


def _json_object(columns: dict[str, str]) -> pl.Expr:
    """One flat JSON object per row of the named text columns, leaving out the empty ones (null if none)."""
    if not columns:
        return pl.lit(None, dtype=pl.String)
    members = [
        pl.when(pl.col(header).is_not_null()).then(
            pl.concat_str(
                pl.lit(json.dumps(key) + ":"),
                # The struct's JSON is {"v":"…"}: its value part is the escaped JSON string.
                pl.struct(pl.col(header).alias("v")).struct.json_encode().str.slice(5).str.head(-1),
            )
        )
        for key, header in columns.items()
    ]
    body = pl.concat_str(members, separator=",", ignore_nulls=True)
    return pl.when(body != "").then(pl.concat_str(pl.lit("{"), body, pl.lit("}")))


def _check_values(raw: pl.DataFrame, typed: pl.DataFrame, report_columns: dict[str, str], name: str) -> None:
    """Reject the file at the first value that is missing where required or that did not parse."""
    for header in REQUIRED_COLUMNS:
        column = REPORT_COLUMNS[header][0]
        empty = typed[column].is_null() & raw[report_columns[header]].is_null()
        if header == "cost/currencyCode":
            # a zero-cost line may leave it empty: the delivery fills it in (fill_missing_currency)
            empty = empty & (typed["cost_my_cost"] != 0).fill_null(True)
        reject_first(
            empty,
            raw[report_columns[header]],
            name,
            header,
            lambda _value: "must not be empty",
        )
    for header, file_header in report_columns.items():
        column, dtype = REPORT_COLUMNS[header]
        values = raw[file_header]
        if isinstance(dtype, pl.Decimal):
            expected = DECIMAL_EXPECTED
        elif isinstance(dtype, pl.Datetime):
            expected = "an ISO 8601 UTC date-time such as 2023-11-13T10:00Z"
        else:
            continue
        reject_first(
            values.is_not_null() & typed[column].is_null(),
            values,
            name,
            header,
            lambda value, expected=expected: f"{shorten(value)!r} is not {expected}",
        )
    reject_first(
        ~typed["cost_currency_code"].str.contains(CODE_SHAPE).fill_null(True),
        typed["cost_currency_code"],
        name,
        "cost/currencyCode",
        lambda value: f"{shorten(value)!r} is not an ISO 4217 currency code such as USD",
    )
    reject_first(
        (typed["line_item_interval_usage_end"] < typed["line_item_interval_usage_start"]).fill_null(False),
        typed["line_item_interval_usage_end"],
        name,
        "lineItem/intervalUsageEnd",
        lambda value: f"{value} is before lineItem/intervalUsageStart",
    )
