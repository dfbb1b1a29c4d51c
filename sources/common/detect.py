"""Recognise a billing delivery's format from its manifest or its first file's header.

Only names are read (a CSV header line, a Parquet schema, the first JSON record's keys), never the
data, so detection is instant on files of any size. The answer is a billing source name as used
for the landing folder; `gpu-finops ingest --source` overrides it. A file no layout explains is
answered with what was seen (its type and first columns) and the known layouts it comes closest to,
with the columns they need that it lacks; Google's retired billing file export is named as such.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sources.common.delivery import DATA_SUFFIXES, is_manifest
from sources.common.files import GZIP_MAGIC, PARQUET_MAGIC

FOCUS = "focus"
AWS_CUR = "aws_cur"
AZURE_ACTUAL = "azure_actual"
AZURE_AMORTIZED = "azure_amortized"
GCP_BILLING = "gcp_billing"
OCI_COST = "oci_cost"
GPU_CLOUD_USAGE = "gpu_cloud_usage"
ONPREM_GPU_ASSETS = "onprem_gpu_assets"

_FILES_TO_TRY = 20
_HEAD_BYTES = 1 << 16
_COLUMNS_SHOWN = 8
_CLOSEST_SHOWN = 2
_LOCALIZED_HEADER = re.compile(r"\(([A-Za-z0-9_]+)\)\s*$")


@dataclass(frozen=True)
class Layout:
    """A layout a billing source reads, as detection knows it: the columns that recognise it (case-insensitive)
    and others it usually has, which tell how close an unrecognised file comes. Columns are space-separated."""

    source: str
    title: str
    needs: str = ""
    """Every one of these."""
    one_of: str = ""
    """And, when given, at least one of these."""
    usual: str = ""

    def matches(self, names: set[str]) -> bool:
        return not self.missing(names)

    def shared(self, names: set[str]) -> int:
        """How many of its columns `names` (lower-cased) has."""
        return len(set(f"{self.needs} {self.one_of} {self.usual}".lower().split()) & names)

    def missing(self, names: set[str]) -> list[str]:
        """What `names` (lower-cased) lacks to be recognised as this layout."""
        lacking = [column for column in self.needs.split() if column.lower() not in names]
        if self.one_of and not set(self.one_of.lower().split()) & names:
            lacking.append(f"one of {' / '.join(self.one_of.split())}")
        return lacking


LAYOUTS = (
    Layout(
        FOCUS,
        "FOCUS",
        needs="BilledCost EffectiveCost ChargeCategory",
        usual="BillingAccountId BillingCurrency BillingPeriodStart BillingPeriodEnd ChargePeriodStart ChargePeriodEnd "
        "ChargeDescription ServiceName ProviderName ListCost ContractedCost ConsumedQuantity PricingQuantity "
        "ResourceId SubAccountId Tags",
    ),
    Layout(
        AWS_CUR,
        "AWS CUR 2.0 or legacy CUR Parquet",
        one_of="bill_payer_account_id identity_line_item_id line_item_usage_type",
        usual="line_item_line_item_type line_item_usage_start_date line_item_unblended_cost line_item_currency_code "
        "bill_billing_period_start_date line_item_usage_account_id line_item_product_code line_item_usage_amount "
        "resource_tags",
    ),
    Layout(
        AWS_CUR,
        "AWS legacy CUR CSV",
        one_of="lineItem/UsageType",
        usual="identity/LineItemId identity/TimeInterval bill/PayerAccountId bill/BillingPeriodStartDate "
        "lineItem/LineItemType lineItem/UsageStartDate lineItem/UnblendedCost lineItem/CurrencyCode "
        "lineItem/ProductCode lineItem/UsageAmount",
    ),
    Layout(
        OCI_COST,
        "OCI cost report",
        one_of="lineItem/referenceNo cost/myCost",
        usual="lineItem/tenantId lineItem/intervalUsageStart lineItem/intervalUsageEnd product/service "
        "product/resourceId usage/billedQuantity cost/currencyCode",
    ),
    # EA and MCA exports name ChargeType and Quantity; older pay-as-you-go ones UsageQuantity and PreTaxCost.
    Layout(
        AZURE_ACTUAL,
        "Azure cost details",
        needs="MeterCategory",
        one_of="ChargeType Quantity UsageQuantity PreTaxCost",
        usual="Date UsageDateTime SubscriptionId SubscriptionGuid MeterName MeterSubCategory CostInBillingCurrency "
        "BillingCurrencyCode PricingModel ResourceId ReservationId",
    ),
    Layout(
        GCP_BILLING,
        "Google Cloud billing export to BigQuery",
        needs="billing_account_id",
        one_of="sku sku.description invoice invoice.month",
        usual="service usage_start_time usage_end_time project labels system_labels location cost currency "
        "currency_conversion_rate usage credits cost_type export_time",
    ),
    Layout(
        GPU_CLOUD_USAGE,
        "GPU cloud usage",
        needs="gpu_model gpu_count pricing_model usage_hours",
        usual="provider account_id resource_id usage_start usage_end unit_price cost currency",
    ),
    Layout(
        ONPREM_GPU_ASSETS,
        "on-premises GPU inventory",
        needs="asset_id purchase_price depreciation_years",
        usual="site gpu_model gpu_count purchase_date currency",
    ),
)
"""In the order they are tried: the first layout a header matches decides."""

_SOURCE_OPTIONS = {AZURE_ACTUAL: f"{AZURE_ACTUAL} or {AZURE_AMORTIZED}"}
"""How a message names the sources a layout loads as, where it is more than one."""

RETIRED_GCP_FILE_EXPORT = frozenset({"accountid", "lineitemid", "starttime", "endtime", "measurements", "cost"})
"""Keys of the line items of Google's billing file export (a JSON array per day in a Cloud Storage bucket), which
Google retired in favour of the export to BigQuery: named as such, never read."""


@dataclass(frozen=True)
class Seen:
    """What detection read of a file: its type in words and its column names (a JSON file's first record's keys)."""

    kind: str
    columns: tuple[str, ...]

    def describe(self) -> str:
        """`a CSV file with columns a, b, …`, at most `_COLUMNS_SHOWN` names, in the file's order."""
        if not self.columns:
            return f"{self.kind} with no column names detection could read"
        shown = ", ".join(self.columns[:_COLUMNS_SHOWN])
        more = f", … ({len(self.columns)} in all)" if len(self.columns) > _COLUMNS_SHOWN else ""
        return f"{self.kind} with {'keys' if 'JSON' in self.kind else 'columns'} {shown}{more}"


def detect_source(path: Path) -> str:
    """The billing source `path` (a file or a delivery folder) belongs to, or ValueError saying why not."""
    path = path.expanduser()
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    files = sorted(path.rglob("*")) if path.is_dir() else [path]
    files = [file for file in files if file.is_file() and not file.name.startswith((".", "_"))]
    for manifest in (file for file in files if is_manifest(file)):
        source = _source_from_manifest(manifest)
        if source:
            return source
    data_files = [file for file in files if file.name.lower().endswith(DATA_SUFFIXES) and not is_manifest(file)]
    if not data_files:
        raise ValueError(f"{path} holds no CSV, CSV.gz, Parquet or JSON files")
    # A delivery folder can hold side tables (the legacy CUR Athena flavour ships a
    # cost_and_usage_data_status table): the first file whose header is recognised decides.
    for file in data_files[:_FILES_TO_TRY]:
        source = source_from_columns(set(inspect_file(file).columns), file_name=file.name)
        if source is not None:
            return source
    raise ValueError(unrecognised(data_files[0].name, inspect_file(data_files[0])))


def source_from_columns(columns: set[str], *, file_name: str = "") -> str | None:
    """The first layout whose columns a header has (localized Azure headers by their English name)."""
    names = _names(columns)
    source = next((layout.source for layout in LAYOUTS if layout.matches(names)), None)
    if source == AZURE_ACTUAL and "amortized" in file_name.lower():
        return AZURE_AMORTIZED
    return source


def unrecognised(file_name: str, seen: Seen) -> str:
    """Why `file_name` was not recognised: what it is, and the known layouts it comes closest to."""
    retired = retired_gcp_file_export(seen)
    if retired:
        return f"{file_name} {retired}"
    names = _names(seen.columns)
    what = f"cannot tell which export {file_name} is from: it is {seen.describe()}"
    closest = sorted((layout for layout in LAYOUTS if layout.shared(names)), key=lambda layout: -layout.shared(names))
    if not closest:
        known = ", ".join(dict.fromkeys(layout.title for layout in LAYOUTS))
        return f"{what}, and shares no column with any layout gpu-finops reads ({known}); pass --source"
    near = "; ".join(
        f"{layout.title} (--source {_SOURCE_OPTIONS.get(layout.source, layout.source)}), which also needs "
        + ", ".join(layout.missing(names))
        for layout in closest[:_CLOSEST_SHOWN]
    )
    return f"{what}. Closest known layouts: {near}. Pass --source if it is one of them"


def retired_gcp_file_export(seen: Seen) -> str | None:
    """Why a file is not read when it is Google's retired billing file export (None when it is not)."""
    if not _names(seen.columns) >= RETIRED_GCP_FILE_EXPORT:
        return None
    return (
        f"is Google Cloud's retired billing file export ({seen.describe()}), which gpu-finops does not read: Google"
        " replaced it with the Cloud Billing export to BigQuery. Export billing data to BigQuery and extract the table"
        " as Parquet or newline-delimited JSON, which loads as gcp_billing"
    )


def inspect_file(file: Path) -> Seen:
    """A data file's type, told from its first bytes whatever its name says, and its column names."""
    try:
        with file.open("rb") as handle:
            magic = handle.read(len(PARQUET_MAGIC))
        if magic.startswith(PARQUET_MAGIC):
            return Seen("a Parquet file", tuple(pq.read_schema(file).names))
        gzipped = magic.startswith(GZIP_MAGIC)
        with (gzip.open if gzipped else open)(file, "rb") as handle:
            head = handle.read(_HEAD_BYTES)
    except (EOFError, OSError, zlib.error, pa.ArrowException) as error:
        raise ValueError(f"cannot read the header of {file.name}: {error}") from error
    text = head.decode("utf-8-sig", errors="replace")
    if not text.strip():
        kind, columns = "an empty file", ()
    elif text.lstrip()[0] in "[{":
        kind, columns = _json_head(text.lstrip())
    else:
        kind, columns = "a CSV file", tuple(next(csv.reader(io.StringIO(text.splitlines()[0])), []))
    return Seen(f"a gzip-compressed {kind.split(' ', 1)[1]}" if gzipped else kind, columns)


def _json_head(text: str) -> tuple[str, tuple[str, ...]]:
    """A JSON file's shape and its first record's keys, from the file's first bytes."""
    decoder = json.JSONDecoder()
    if text.startswith("["):
        try:
            first, _ = decoder.raw_decode(text[1:].lstrip())
        except json.JSONDecodeError:
            return "a JSON array", ()
        return ("a JSON array of objects", tuple(first)) if isinstance(first, dict) else ("a JSON array", ())
    try:
        record = json.loads(text.splitlines()[0])
        if isinstance(record, dict):
            return "a JSON lines file", tuple(record)
    except json.JSONDecodeError:
        pass
    try:
        record, _ = decoder.raw_decode(text)
    except json.JSONDecodeError:
        return "a JSON file", ()
    return "a JSON object", tuple(record) if isinstance(record, dict) else ()


def _names(columns: set[str] | tuple[str, ...]) -> set[str]:
    return {_english_name(column).lower() for column in columns}


def _english_name(column: str) -> str:
    """Localized Azure headers carry the English name in parentheses: `Abonnement-GUID (SubscriptionGuid)`."""
    column = column.strip().lstrip("\ufeff")
    match = _LOCALIZED_HEADER.search(column)
    return match.group(1) if match else column


def _source_from_manifest(manifest: Path) -> str | None:
    try:
        content = json.loads(manifest.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(content, dict):
        return None
    if "dataFiles" in content or "reportKeys" in content or "assemblyId" in content:
        export_arn = str(content.get("exportArn", ""))
        columns = {str(c.get("name", "")) if isinstance(c, dict) else str(c) for c in content.get("columns", [])}
        if "FOCUS" in export_arn.upper() or {"BilledCost", "EffectiveCost"} <= columns:
            return FOCUS
        return AWS_CUR
    export_type = str((content.get("exportConfig") or {}).get("type", "")).lower()
    if export_type.startswith("focus"):
        return FOCUS
    if export_type == "amortizedcost":
        return AZURE_AMORTIZED
    if export_type == "actualcost" or export_type == "usage":
        return AZURE_ACTUAL
    return None
