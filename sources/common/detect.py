"""Recognise a billing delivery's format from its manifest or its first file's header.

Only names are read (a CSV header line, a Parquet schema, the first JSON record's keys), never the
data, so detection is instant on files of any size. The answer is a billing source name as used
for the landing folder; `gpu-finops ingest --source` overrides it.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import zlib
from pathlib import Path

import pyarrow.parquet as pq

from sources.common.delivery import DATA_SUFFIXES, is_manifest

FOCUS = "focus"
AWS_CUR = "aws_cur"
AZURE_ACTUAL = "azure_actual"
AZURE_AMORTIZED = "azure_amortized"
GCP_BILLING = "gcp_billing"
OCI_COST = "oci_cost"
GPU_CLOUD_USAGE = "gpu_cloud_usage"
ONPREM_GPU_ASSETS = "onprem_gpu_assets"

_FILES_TO_TRY = 20
_LOCALIZED_HEADER = re.compile(r"\(([A-Za-z0-9_]+)\)\s*$")


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
        columns = header_columns(file)
        source = source_from_columns(columns, file_name=file.name)
        if source is not None:
            return source
    first = header_columns(data_files[0])
    raise ValueError(
        f"cannot tell which export {data_files[0].name} is from its columns "
        f"({', '.join(sorted(first)[:8])}{', …' if len(first) > 8 else ''}); pass --source"
    )


def source_from_columns(columns: set[str], *, file_name: str = "") -> str | None:
    """Match a header against each format's signature columns (case-insensitive)."""
    names = {_english_name(column).lower() for column in columns}
    if {"billedcost", "effectivecost", "chargecategory"} <= names:
        return FOCUS
    if names & {"bill_payer_account_id", "identity_line_item_id", "lineitem/usagetype", "line_item_usage_type"}:
        return AWS_CUR
    if names & {"lineitem/referenceno", "cost/mycost"}:
        return OCI_COST
    # EA and MCA exports name ChargeType and Quantity; older pay-as-you-go ones UsageQuantity and PreTaxCost.
    if "metercategory" in names and names & {"chargetype", "quantity", "usagequantity", "pretaxcost"}:
        return AZURE_AMORTIZED if "amortized" in file_name.lower() else AZURE_ACTUAL
    if "billing_account_id" in names and names & {"sku", "sku.description", "invoice", "invoice.month"}:
        return GCP_BILLING
    if {"gpu_model", "gpu_count", "pricing_model", "usage_hours"} <= names:
        return GPU_CLOUD_USAGE
    if {"asset_id", "purchase_price", "depreciation_years"} <= names:
        return ONPREM_GPU_ASSETS
    return None


def header_columns(file: Path) -> set[str]:
    """Column names of a CSV (optionally gzipped, with or without BOM), Parquet or NDJSON file."""
    name = file.name.lower()
    if name.endswith(".parquet"):
        return set(pq.read_schema(file).names)
    opener = gzip.open if name.endswith(".gz") else open
    try:
        with opener(file, "rb") as handle:
            head = handle.read(1 << 16)
    except (EOFError, OSError, zlib.error) as error:
        raise ValueError(f"cannot read the header of {file.name}: {error}") from error
    text = head.decode("utf-8-sig", errors="replace")
    if name.endswith((".json", ".jsonl", ".ndjson", ".json.gz")):
        first = text.splitlines()[0] if text else ""
        try:
            record = json.loads(first)
        except json.JSONDecodeError:
            return set()
        return set(record) if isinstance(record, dict) else set()
    first_line = text.splitlines()[0] if text else ""
    return set(next(csv.reader(io.StringIO(first_line)), []))


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
