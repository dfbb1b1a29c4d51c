"""AWS Data Exports `FOCUS_1_2_AWS`, delivered as AWS writes it, through the FOCUS source.

The layout follows AWS's table dictionary ("FOCUS 1.2 with AWS columns": the 57 FOCUS 1.2 columns plus
x_Discounts, x_Operation and x_ServiceCode; money as doubles, timestamps in milliseconds, Tags,
SkuPriceDetails and x_Discounts as maps). AWS moved the usage type of FOCUS 1.0's x_UsageType into
SkuMeter (`USE2-SpotUsage:p5.48xlarge`), which is where the instance type, and so the GPU-hours,
come from. Parquet part files sit under `data/BILLING_PERIOD=YYYY-MM/<refresh>/`, the manifest under
`metadata/BILLING_PERIOD=YYYY-MM/`, listing the refresh's files in `dataFiles`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.cli import main
from sources.common.delivery import Delivery
from sources.common.detect import detect_source
from sources.focus import parse_focus_delivery
from sources.focus.columns import FOCUS_1_3_ONLY, FOCUS_COLUMNS, Kind
from tests.support.warehouse_helpers import query as warehouse_query

EXPORT = "gpu-focus"
BUCKET_PREFIX = f"s3://finops-billing-111122223333/exports/{EXPORT}"
PERIOD = "2026-05"
CURRENT_RUN = "2026-05-03T06:12:44.117Z-3c1f9a5e"
STALE_RUN = "2026-05-02T06:10:02.904Z-8e21b0d4"

FOCUS_1_2 = [column for column in FOCUS_COLUMNS if column not in FOCUS_1_3_ONLY]
AWS_COLUMNS = ["x_Discounts", "x_Operation", "x_ServiceCode"]
MAPS = {"Tags": pa.string(), "SkuPriceDetails": pa.string(), "x_Discounts": pa.float64()}


def _arrow_type(column: str) -> pa.DataType:
    if column in MAPS:
        return pa.map_(pa.string(), MAPS[column])
    kind = FOCUS_COLUMNS.get(column, Kind.STRING)
    return {Kind.DECIMAL: pa.float64(), Kind.DATETIME: pa.timestamp("ms", tz="UTC")}.get(kind, pa.string())


SCHEMA = pa.schema([(column, _arrow_type(column)) for column in FOCUS_1_2 + AWS_COLUMNS])

MAY = datetime(2026, 5, 1, tzinfo=UTC)
JUNE = datetime(2026, 6, 1, tzinfo=UTC)
BASE = {
    "BillingAccountId": "111122223333",
    "BillingAccountName": "research-payer",
    "BillingAccountType": "Payer Account",
    "BillingCurrency": "USD",
    "BillingPeriodStart": MAY,
    "BillingPeriodEnd": JUNE,
    "ChargeCategory": "Usage",
    "ChargeFrequency": "Usage-Based",
    "ChargePeriodStart": datetime(2026, 5, 2, tzinfo=UTC),
    "ChargePeriodEnd": datetime(2026, 5, 3, tzinfo=UTC),
    "InvoiceIssuerName": "Amazon Web Services, Inc.",
    "ProviderName": "AWS",
    "PublisherName": "Amazon Web Services, Inc.",
    "ServiceCategory": "Compute",
    "ServiceName": "Amazon Elastic Compute Cloud",
    "ServiceSubcategory": "Virtual Machines",
    "SubAccountId": "444455556666",
    "SubAccountName": "ml-research",
    "SubAccountType": "Linked Account",
    "x_ServiceCode": "AmazonEC2",
}


def p5_spot(billed: float) -> dict:
    """Ten hours of one p5.48xlarge (8×H100) on Spot in us-east-2: 80 GPU-hours."""
    return BASE | {
        "AvailabilityZone": "us-east-2b",
        "RegionId": "us-east-2",
        "RegionName": "US East (Ohio)",
        "ChargeDescription": "$25.4 per Spot Linux p5.48xlarge Instance Hour",
        "PricingCategory": "Dynamic",
        "PricingQuantity": 10.0,
        "PricingUnit": "Hrs",
        "ConsumedQuantity": 10.0,
        "ConsumedUnit": "Hrs",
        "BilledCost": billed,
        "EffectiveCost": billed,
        "ContractedCost": billed,
        "ListCost": 983.2,
        "ListUnitPrice": 98.32,
        "ContractedUnitPrice": 25.4,
        "ResourceId": "i-0p5spot0000000001",
        "SkuId": "9Q8GZPBPQJ7U4MEF",
        "SkuMeter": "USE2-SpotUsage:p5.48xlarge",
        "Tags": [("user:team", "research"), ("aws:createdBy", "AssumedRole:trainer")],
        "x_Operation": "RunInstances:SV002",
        "x_Discounts": None,
    }


CURRENT_ROWS = [
    p5_spot(254.0),
    {  # Three on-demand hours of one p4d.24xlarge (8×A100 40GB) in us-east-1 (no region prefix): 24 GPU-hours.
        **BASE,
        "AvailabilityZone": "us-east-1a",
        "RegionId": "us-east-1",
        "RegionName": "US East (N. Virginia)",
        "ChargeDescription": "$21.957642 per On Demand Linux p4d.24xlarge Instance Hour",
        "PricingCategory": "Standard",
        "PricingQuantity": 3.0,
        "PricingUnit": "Hrs",
        "ConsumedQuantity": 3.0,
        "ConsumedUnit": "Hrs",
        "BilledCost": 65.872926,
        "EffectiveCost": 65.872926,
        "ContractedCost": 65.872926,
        "ListCost": 65.872926,
        "ListUnitPrice": 21.957642,
        "ContractedUnitPrice": 21.957642,
        "ResourceId": "i-0p4dondemand00001",
        "SkuId": "H7NGEAC6UEHNTKSJ",
        "SkuMeter": "BoxUsage:p4d.24xlarge",
        "SkuPriceDetails": [("x_OperatingSystem", "Linux")],
        "Tags": [("user:team", "vision")],
        "x_Operation": "RunInstances",
        "x_Discounts": [("bundled_discount", 0.0)],
    },
    {  # Not a GPU: a month of S3 storage.
        **BASE,
        "RegionId": "us-east-2",
        "ServiceCategory": "Storage",
        "ServiceName": "Amazon Simple Storage Service",
        "ServiceSubcategory": "Object Storage",
        "ChargeDescription": "$0.023 per GB - first 50 TB / month of storage used",
        "PricingCategory": "Standard",
        "PricingQuantity": 536.521739,
        "PricingUnit": "GB-Mo",
        "BilledCost": 12.34,
        "EffectiveCost": 12.34,
        "ContractedCost": 12.34,
        "ListCost": 12.34,
        "SkuMeter": "USE2-TimedStorage-ByteHrs",
        "x_Operation": "StandardStorage",
        "x_ServiceCode": "AmazonS3",
    },
    {  # Sales tax on the month.
        **BASE,
        "ChargeCategory": "Tax",
        "ChargeFrequency": "Recurring",
        "ServiceCategory": "Other",
        "ServiceName": "Tax",
        "ServiceSubcategory": None,
        "ChargeDescription": "Tax for product code AmazonEC2",
        "BilledCost": 20.0,
        "EffectiveCost": 20.0,
        "ContractedCost": 20.0,
        "ListCost": 20.0,
        "x_Operation": None,
    },
]


def write_export(root: Path) -> Path:
    """The export as AWS lays it out in S3: a current and a stale refresh, one manifest naming the current."""
    export = root / EXPORT
    data = export / "data" / f"BILLING_PERIOD={PERIOD}"
    _write_parquet(data / CURRENT_RUN / f"{EXPORT}-00001.snappy.parquet", CURRENT_ROWS[:2])
    _write_parquet(data / CURRENT_RUN / f"{EXPORT}-00002.snappy.parquet", CURRENT_ROWS[2:])
    # An earlier refresh of the same month that the manifest no longer lists: loading it would double count.
    _write_parquet(data / STALE_RUN / f"{EXPORT}-00001.snappy.parquet", [p5_spot(300.0)])
    manifest = {
        "executionId": CURRENT_RUN.split("Z-")[1],
        "exportArn": f"arn:aws:bcm-data-exports:us-east-1:111122223333:export/{EXPORT}-7d1e3f60",
        "columns": [{"name": field.name, "type": str(field.type)} for field in SCHEMA],
        "dataFiles": [
            f"{BUCKET_PREFIX}/data/BILLING_PERIOD={PERIOD}/{CURRENT_RUN}/{EXPORT}-0000{n}.snappy.parquet"
            for n in (1, 2)
        ],
        "additionalOutputFiles": [],
    }
    metadata = export / "metadata" / f"BILLING_PERIOD={PERIOD}"
    metadata.mkdir(parents=True)
    (metadata / f"{EXPORT}-Manifest.json").write_text(json.dumps(manifest, indent=2))
    return export


def _write_parquet(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist([{column: row.get(column) for column in SCHEMA.names} for row in rows], SCHEMA)
    pq.write_table(table, path, compression="snappy")


def test_export_is_detected_as_focus_and_only_the_manifests_files_are_read(tmp_path: Path):
    export = write_export(tmp_path)
    assert detect_source(export) == "focus"

    parsed = parse_focus_delivery(Delivery(source="focus", path=export, landing_root=tmp_path))
    frame = parsed.to_polars()
    assert parsed.format_version == "FOCUS 1.2"
    assert sorted(set(frame["_source_file"])) == [
        f"{EXPORT}/data/BILLING_PERIOD={PERIOD}/{CURRENT_RUN}/{EXPORT}-00001.snappy.parquet",
        f"{EXPORT}/data/BILLING_PERIOD={PERIOD}/{CURRENT_RUN}/{EXPORT}-00002.snappy.parquet",
    ]
    # 254 + 65.872926 + 12.34 + 20, exactly, although the file stores doubles; the stale 300 is not read.
    assert frame["BilledCost"].sum() == Decimal("352.212926")
    p5 = frame.row(0, named=True)
    assert p5["SkuMeter"] == "USE2-SpotUsage:p5.48xlarge"
    assert json.loads(p5["Tags"]) == {"user:team": "research", "aws:createdBy": "AssumedRole:trainer"}
    assert json.loads(p5["x_extensions"]) == {
        "x_Discounts": None,
        "x_Operation": "RunInstances:SV002",
        "x_ServiceCode": "AmazonEC2",
    }
    assert str(p5["ChargePeriodStart"]) == "2026-05-02 00:00:00"


@pytest.mark.e2e
@pytest.mark.slow
def test_gpu_hours_from_the_sku_meter_through_the_pipeline(tmp_path: Path, monkeypatch, capsys):
    home = tmp_path / "finops"
    monkeypatch.setenv("FINOPS_HOME", str(home))
    export = write_export(tmp_path / "s3")

    assert main(["ingest", str(export)]) == 0
    out = capsys.readouterr().out
    assert "as FOCUS" in out and "4 rows, billing periods 2026-05-01" in out

    def query(sql: str) -> list[tuple]:
        return warehouse_query(home / "warehouse.duckdb", sql)

    gpu = query(
        """
        select instance_type, gpu_model, pricing_category, sum(gpu_hours), sum(effective_cost)
        from marts.fct_gpu_spend_daily group by all order by all
        """
    )
    assert gpu == [
        ("p4d.24xlarge", "A100 40GB", "Standard", Decimal(24), Decimal("65.872926")),  # 3 h × 8 GPUs
        ("p5.48xlarge", "H100", "Dynamic", Decimal(80), Decimal("254.00")),  # 10 h × 8 GPUs
    ]
    assert query("select sum(billed_cost) from marts.fct_cost_daily") == [(Decimal("352.212926"),)]
