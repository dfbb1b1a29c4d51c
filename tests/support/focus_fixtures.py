"""Hand-written FOCUS rows for tests: a valid mandatory-column row, and writers for each file flavour."""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path

BASE_ROW: dict[str, str] = {
    "BilledCost": "98.32",
    "BillingAccountId": "111122223333",
    "BillingAccountName": "research-payer",
    "BillingCurrency": "USD",
    "BillingPeriodEnd": "2026-10-01T00:00:00Z",
    "BillingPeriodStart": "2026-09-01T00:00:00Z",
    "ChargeCategory": "Usage",
    "ChargeClass": "NULL",
    "ChargeDescription": "p5.48xlarge On Demand Linux",
    "ChargePeriodEnd": "2026-09-02T00:00:00Z",
    "ChargePeriodStart": "2026-09-01T00:00:00Z",
    "ContractedCost": "98.32",
    "EffectiveCost": "98.32",
    "InvoiceIssuerName": "Amazon Web Services, Inc.",
    "ListCost": "98.32",
    "PricingQuantity": "1",
    "PricingUnit": "Hours",
    "ProviderName": "AWS",
    "PublisherName": "AWS",
    "ServiceCategory": "Compute",
    "ServiceName": "Amazon Elastic Compute Cloud",
    "PricingCategory": "Standard",
    "SkuPriceDetails": '{"InstanceType": "p5.48xlarge", "GpuCount": 8}',
    "Tags": '{"team": "research"}',
}


def focus_rows(*overrides: dict[str, str]) -> list[dict[str, str]]:
    return [{**BASE_ROW, **override} for override in overrides]


def csv_bytes(rows: list[dict[str, str]], *, delimiter: str = ",", bom: bool = False) -> bytes:
    header = list(dict.fromkeys(key for row in rows for key in row))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, delimiter=delimiter, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return ("\ufeff" if bom else "").encode() + buffer.getvalue().encode()


def write_csv(path: Path, rows: list[dict[str, str]], **options) -> Path:
    path.write_bytes(csv_bytes(rows, **options))
    return path


def write_csv_gz(path: Path, rows: list[dict[str, str]], **options) -> Path:
    path.write_bytes(gzip.compress(csv_bytes(rows, **options), mtime=0))
    return path
