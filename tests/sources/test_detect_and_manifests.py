"""Format auto-detection from headers and manifests, and manifest entries confined to their delivery."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sources.common.delivery import Delivery
from sources.common.detect import detect_source
from sources.common.errors import RejectedInput


def _csv(path: Path, header: str, *, bom: bool = False, gz: bool = False) -> Path:
    data = (("\ufeff" if bom else "") + header + "\n").encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def _parquet(path: Path, columns: list[str]) -> Path:
    pq.write_table(pa.table({name: pa.array([], pa.string()) for name in columns}), path)
    return path


@pytest.mark.parametrize(
    ("name", "header", "expected"),
    [
        ("focus.csv", "BilledCost,EffectiveCost,ChargeCategory,BillingAccountId", "focus"),
        (
            "legacy.csv.gz",
            "identity/LineItemId,lineItem/UsageType,lineItem/UnblendedCost,resourceTags/user:team",
            "aws_cur",
        ),
        ("oci.csv", "lineItem/referenceNo,lineItem/tenantId,cost/myCost,cost/currencyCode", "oci_cost"),
        (
            "ea.csv",
            "InvoiceSectionName,AccountName,Date,MeterCategory,Quantity,CostInBillingCurrency,ChargeType",
            "azure_actual",
        ),
        ("amortizedcost_2026.csv", "date,meterCategory,quantity,costInBillingCurrency,chargeType", "azure_amortized"),
        (
            "german.csv",
            "Abonnement-GUID (SubscriptionGuid),Verbrauchskategorie (MeterCategory),Menge (Quantity),Kosten (Cost)",
            "azure_actual",
        ),
        (
            "lambda.csv",
            "provider,account_id,resource_id,gpu_model,gpu_count,pricing_model,usage_start,usage_end,usage_hours,"
            "unit_price,cost,currency",
            "gpu_cloud_usage",
        ),
        (
            "payg.csv",
            "Abonnement-GUID (SubscriptionGuid),Kategorie der Verbrauchseinheit (MeterCategory),"
            "UsageQuantity (UsageQuantity),PreTaxCost (PreTaxCost)",
            "azure_actual",
        ),
        (
            "servers.csv",
            "asset_id,site,gpu_model,gpu_count,purchase_date,purchase_price,depreciation_years",
            "onprem_gpu_assets",
        ),
    ],
)
def test_csv_headers_are_recognised(tmp_path, name, header, expected):
    path = _csv(tmp_path / name, header, bom=name == "ea.csv", gz=name.endswith(".gz"))
    assert detect_source(path) == expected


def test_parquet_schemas_are_recognised(tmp_path):
    cur2 = _parquet(tmp_path / "cur2.parquet", ["bill_payer_account_id", "line_item_usage_type", "product"])
    athena = _parquet(tmp_path / "athena.parquet", ["identity_line_item_id", "line_item_usage_type"])
    gcp = _parquet(tmp_path / "gcp.parquet", ["billing_account_id", "service", "sku", "invoice", "cost"])
    assert [detect_source(p) for p in (cur2, athena, gcp)] == ["aws_cur", "aws_cur", "gcp_billing"]


def test_ndjson_gcp_export_is_recognised(tmp_path):
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"billing_account_id": "0A-1", "sku": {"description": "x"}, "cost": 1}) + "\n")
    assert detect_source(path) == "gcp_billing"


@pytest.mark.parametrize(
    ("manifest_name", "content", "expected"),
    [
        ("cur-Manifest.json", {"executionId": "e1", "dataFiles": ["s3://b/p/x.parquet"]}, "aws_cur"),
        ("report-Manifest.json", {"assemblyId": "a1", "reportKeys": ["p/x.csv.gz"]}, "aws_cur"),
        (
            "focus-Manifest.json",
            {"exportArn": "arn:aws:bcm-data-exports:us-east-1:1:export/FOCUS_1_2_AWS", "dataFiles": []},
            "focus",
        ),
        ("manifest.json", {"exportConfig": {"type": "AmortizedCost"}, "blobs": []}, "azure_amortized"),
        ("manifest.json", {"exportConfig": {"type": "ActualCost"}, "blobs": []}, "azure_actual"),
        ("manifest.json", {"exportConfig": {"type": "FocusCost"}, "blobs": []}, "focus"),
    ],
)
def test_manifests_decide_before_headers(tmp_path, manifest_name, content, expected):
    folder = tmp_path / "delivery"
    (folder / "metadata").mkdir(parents=True)
    (folder / "metadata" / manifest_name).write_text(json.dumps(content))
    _csv(folder / "part-1.csv", "something,else")
    assert detect_source(folder) == expected


def test_unknown_header_names_the_file_and_asks_for_source(tmp_path):
    path = _csv(tmp_path / "mystery.csv", "alpha,beta")
    with pytest.raises(ValueError, match=r"mystery\.csv.*pass --source"):
        detect_source(path)


def _delivery(tmp_path: Path) -> Delivery:
    root = tmp_path / "landing" / "aws_cur"
    folder = root / "20261101__export"
    (folder / "data" / "BILLING_PERIOD=2026-10").mkdir(parents=True)
    (folder / "data" / "BILLING_PERIOD=2026-10" / "export-00001.snappy.parquet").write_bytes(b"PAR1")
    (folder / "metadata").mkdir()
    (folder / "metadata" / "export-Manifest.json").write_text("{}")
    return Delivery(source="aws_cur", path=folder, landing_root=root)


def test_manifest_entries_resolve_to_the_delivery_copy(tmp_path):
    delivery = _delivery(tmp_path)
    manifest = delivery.manifests()[0]
    listed = "s3://bucket/prefix/export/data/BILLING_PERIOD=2026-10/export-00001.snappy.parquet"
    resolved = delivery.resolve_listed(listed, manifest=manifest)
    assert resolved == delivery.path / "data" / "BILLING_PERIOD=2026-10" / "export-00001.snappy.parquet"
    assert delivery.files() == [resolved]


@pytest.mark.parametrize(
    ("listed", "reason"),
    [
        ("../../etc/passwd", "climbs out"),
        ("data/../../../secret.csv", "climbs out"),
        ("/etc/passwd", "absolute local path"),
        ("C:\\Windows\\win.ini", "absolute local path"),
        ("file:///etc/passwd", "unsupported location scheme"),
        ("s3://bucket/prefix/export/data/BILLING_PERIOD=2026-10/export-00002.snappy.parquet", "does not hold"),
    ],
)
def test_manifest_entries_outside_the_delivery_are_rejected(tmp_path, listed, reason):
    delivery = _delivery(tmp_path)
    manifest = delivery.manifests()[0]
    with pytest.raises(RejectedInput, match=reason) as error:
        delivery.resolve_listed(listed, manifest=manifest)
    assert error.value.file == "20261101__export/metadata/export-Manifest.json"


def test_manifest_entry_that_links_out_of_the_delivery_is_rejected(tmp_path):
    delivery = _delivery(tmp_path)
    outside = tmp_path / "outside.csv"
    outside.write_text("secret\n")
    (delivery.path / "data" / "BILLING_PERIOD=2026-10" / "export-00002.csv").symlink_to(outside)
    with pytest.raises(RejectedInput, match="links outside the delivery"):
        delivery.resolve_listed("data/BILLING_PERIOD=2026-10/export-00002.csv", manifest=delivery.manifests()[0])


def test_a_side_table_does_not_hide_the_export_it_sits_beside(tmp_path):
    report = tmp_path / "report"
    (report / "cost_and_usage_data_status").mkdir(parents=True)
    _parquet(report / "cost_and_usage_data_status" / "status.parquet", ["status"])
    (report / "year=2026" / "month=10").mkdir(parents=True)
    _parquet(report / "year=2026" / "month=10" / "part-0.parquet", ["identity_line_item_id", "line_item_usage_type"])
    assert detect_source(report) == "aws_cur"


def test_a_truncated_gzip_is_a_clear_error_not_a_traceback(tmp_path):
    whole = gzip.compress(b'{"billing_account_id": "0A-1", "sku": {"description": "x"}}\n' * 50)
    path = tmp_path / "export.json.gz"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ValueError, match=r"cannot read the header of export\.json\.gz"):
        detect_source(path)
