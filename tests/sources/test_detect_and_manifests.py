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
from sources.gcp.billing_export import parse_billing_export_delivery


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
    with pytest.raises(ValueError, match=r"mystery\.csv.*pass --source") as error:
        detect_source(path)
    assert "a CSV file with columns alpha, beta, and shares no column with any layout" in str(error.value)


# Google's retired billing file export: one JSON array of line items per day, written to a Cloud Storage bucket
# (fields as Google documented them: accountId, lineItemId, description, startTime, endTime, projectNumber,
# projectId, projectName, measurements [{measurementId, sum, unit}], credits, cost {amount, currency}).
GCP_FILE_EXPORT = [
    {
        "accountId": "012345-6789AB-CDEF01",
        "lineItemId": "com.google.cloud/services/compute-engine/NvidiaTeslaA100",
        "description": "Nvidia Tesla A100 GPU running in Americas",
        "startTime": "2024-09-01T00:00:00-07:00",
        "endTime": "2024-09-02T00:00:00-07:00",
        "projectNumber": "123456789012",
        "projectId": "ml-training",
        "projectName": "ML training",
        "measurements": [
            {
                "measurementId": "com.google.cloud/services/compute-engine/NvidiaTeslaA100",
                "sum": "86400",
                "unit": "seconds",
            }
        ],
        "credits": [],
        "cost": {"amount": "70.56", "currency": "USD"},
    }
]


@pytest.mark.parametrize("name", ["gcp-billing-2024-09-01.json", "gcp-billing-2024-09-01.json.gz"])
def test_googles_retired_json_file_export_is_named_with_what_to_use_instead(tmp_path, name):
    data = json.dumps(GCP_FILE_EXPORT, indent=2).encode()
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    with pytest.raises(ValueError) as error:
        detect_source(path)
    message = str(error.value)
    compressed = "gzip-compressed " if name.endswith(".gz") else ""
    keys = ", ".join(list(GCP_FILE_EXPORT[0])[:8])
    assert message.startswith(f"{name} is Google Cloud's retired billing file export (a {compressed}JSON array of ")
    assert f"objects with keys {keys}, … (11 in all))" in message
    assert "which gpu-finops does not read" in message
    assert "export billing data to bigquery" in message.lower() and "gcp_billing" in message

    # Read as the BigQuery export anyway (--source gcp_billing), the reader says the same.
    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / name).write_bytes(path.read_bytes())
    with pytest.raises(RejectedInput) as rejected:
        parse_billing_export_delivery(Delivery(source="gcp_billing", path=landing / name, landing_root=landing))
    assert "retired billing file export" in rejected.value.reason and rejected.value.row == 1


def test_a_csv_of_unknown_columns_is_answered_with_its_columns_and_the_closest_layouts(tmp_path):
    header = "BillingAccountId,BillingCurrency,ChargePeriodStart,ChargePeriodEnd,Cost,ServiceName,Region,Team,Owner"
    path = _csv(tmp_path / "finance-extract.csv", header)
    with pytest.raises(ValueError) as error:
        detect_source(path)
    message = str(error.value)
    first_eight = ", ".join(header.split(",")[:8])
    assert f"finance-extract.csv is from: it is a CSV file with columns {first_eight}, … (9 in all)." in message
    # FOCUS shares five of these columns: it comes first, with the three it needs and the file lacks.
    assert (
        "Closest known layouts: FOCUS (--source focus), which also needs BilledCost, EffectiveCost, ChargeCategory;"
        in (message)
    )
    assert message.endswith("Pass --source if it is one of them")


@pytest.mark.parametrize(
    ("name", "kind"), [("costs.jsonl", "a JSON lines file"), ("costs.json", "a JSON array of objects")]
)
def test_json_of_unknown_keys_is_answered_with_its_keys_and_the_closest_layouts(tmp_path, name, kind):
    path = tmp_path / name
    record = {"account": "0A-1", "cost": 1.5, "currency": "USD", "usage_start_time": "2024-09-01T00:00:00Z"}
    if kind == "a JSON lines file":
        path.write_text(json.dumps(record) + "\n" + json.dumps(record) + "\n")
    else:
        path.write_text(json.dumps([record, record], indent=2))
    with pytest.raises(ValueError) as error:
        detect_source(path)
    message = str(error.value)
    assert f"{name} is from: it is {kind} with keys account, cost, currency, usage_start_time." in message
    assert (
        "Closest known layouts: Google Cloud billing export to BigQuery (--source gcp_billing), which also needs "
        "billing_account_id, one of sku / sku.description / invoice / invoice.month; GPU cloud usage" in message
    )


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
