"""OCI cost reports: the reader on the real public sample and on hand-written GPU rows, and the whole path to the marts.

Expected numbers are computed here by hand or, for the real sample, independently of the reader
with the csv module and Decimal.
"""

from __future__ import annotations

import csv
import gzip
import json
from collections import defaultdict
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import polars as pl
import pytest

from pipelines.cli import main
from sources.common.delivery import Delivery
from sources.common.detect import detect_source
from sources.common.errors import RejectedInput
from sources.oci import output_schema, parse_cost_report_delivery, read_cost_report
from tests.support import FIXTURES_ROOT
from tests.support.warehouse_helpers import query as warehouse_query
from tests.support.warehouse_helpers import table_fingerprint

SAMPLE = FIXTURES_ROOT / "focus-converters" / "oci_cost_report_sample.csv"

HEADER = [
    "lineItem/referenceNo",
    "lineItem/tenantId",
    "lineItem/intervalUsageStart",
    "lineItem/intervalUsageEnd",
    "product/service",
    "product/compartmentId",
    "product/compartmentName",
    "product/region",
    "product/availabilityDomain",
    "product/resourceId",
    "usage/billedQuantity",
    "usage/billedQuantityOverage",
    "cost/subscriptionId",
    "cost/productSku",
    "product/Description",
    "cost/unitPrice",
    "cost/unitPriceOverage",
    "cost/myCost",
    "cost/myCostOverage",
    "cost/currencyCode",
    "cost/billingUnitReadable",
    "cost/skuUnitDescription",
    "cost/overageFlag",
    "lineItem/isCorrection",
    "lineItem/backreferenceNo",
    "tags/Oracle-Tags.CreatedBy",
    "tags/Finance.team",
]
TENANCY = "ocid1.tenancy.oc1..aaaaaaaagpufinopstest"
H100_NODE = "ocid1.instance.oc1.iad.anuwcljh100node"
A10_VM = "ocid1.instance.oc1.iad.anuwcljva10vm"

BASE = {
    "lineItem/tenantId": TENANCY,
    "product/service": "COMPUTE",
    "product/compartmentId": "ocid1.compartment.oc1..aaaaaaaaml",
    "product/compartmentName": "ml-training",
    "product/region": "us-ashburn-1",
    "product/availabilityDomain": "iad-ad-1",
    "usage/billedQuantityOverage": "",
    "cost/subscriptionId": "ocid1.organizationssubscription.oc1.iad.aaaaaaaasub",
    "cost/unitPriceOverage": "",
    "cost/myCostOverage": "",
    "cost/currencyCode": "USD",
    "cost/billingUnitReadable": "1 NONE HOURS GPUS",
    "cost/skuUnitDescription": "GPU Per Hour",
    "cost/overageFlag": "false",
    "lineItem/isCorrection": "false",
    "lineItem/backreferenceNo": "",
    "tags/Oracle-Tags.CreatedBy": "default/ml@example.com",
    "tags/Finance.team": "",
}


def h100(reference: str, start: str, end: str, gpu_hours: str, cost: str, **extra: str) -> dict[str, str]:
    """A BM.GPU.H100.8 line: OCI prices H100 per GPU-hour ($10), so the quantity is GPU-hours."""
    return (
        BASE
        | {
            "lineItem/referenceNo": reference,
            "lineItem/intervalUsageStart": start,
            "lineItem/intervalUsageEnd": end,
            "product/resourceId": H100_NODE,
            "usage/billedQuantity": gpu_hours,
            "cost/productSku": "B98415",
            "product/Description": "Compute - GPU - H100",
            "cost/unitPrice": "10.00",
            "cost/myCost": cost,
            "tags/Finance.team": "research",
        }
        | extra
    )


def a10(reference: str, start: str, end: str) -> dict[str, str]:
    """One hour of a VM.GPU.A10.1: one GPU-hour at $2.00 (the price list's double space kept)."""
    return BASE | {
        "lineItem/referenceNo": reference,
        "lineItem/intervalUsageStart": start,
        "lineItem/intervalUsageEnd": end,
        "product/resourceId": A10_VM,
        "usage/billedQuantity": "1",
        "cost/productSku": "B95909",
        "product/Description": "Compute  - GPU - A10",
        "cost/unitPrice": "2.00",
        "cost/myCost": "2.00",
    }


GPU_ROWS = [
    # Three hours of an 8×H100 bare-metal node, the last one half used: 8 + 8 + 4 = 20 GPU-hours, $200.
    h100("r1", "2026-03-02T00:00Z", "2026-03-02T01:00:00Z", "8", "80.00"),
    h100("r2", "2026-03-02T01:00Z", "2026-03-02T02:00:00Z", "8", "80.00"),
    h100("r3", "2026-03-02T02:00Z", "2026-03-02T03:00:00Z", "4", "40.00"),
    # Two hours of an A10 VM: 2 GPU-hours, $4.
    a10("r4", "2026-03-02T05:00Z", "2026-03-02T06:00:00Z"),
    a10("r5", "2026-03-02T06:00Z", "2026-03-02T07:00:00Z"),
    # Not a GPU: 2 OCPU-hours of an E4 VM.
    BASE
    | {
        "lineItem/referenceNo": "r6",
        "lineItem/intervalUsageStart": "2026-03-02T05:00Z",
        "lineItem/intervalUsageEnd": "2026-03-02T06:00:00Z",
        "product/resourceId": "ocid1.instance.oc1.iad.anuwcljcpuvm",
        "usage/billedQuantity": "2",
        "cost/productSku": "B93113",
        "product/Description": "Standard - E4",
        "cost/unitPrice": "0.025",
        "cost/myCost": "0.05",
        "cost/billingUnitReadable": "1 NONE HOURS OCPUS",
        "cost/skuUnitDescription": "OCPU Hours",
    },
    # Monitoring, cost in scientific notation as OCI writes it: 0.00000025.
    BASE
    | {
        "lineItem/referenceNo": "r7",
        "lineItem/intervalUsageStart": "2026-03-02T05:00Z",
        "lineItem/intervalUsageEnd": "2026-03-02T06:00:00Z",
        "product/service": "TELEMETRY",
        "product/availabilityDomain": "",
        "product/resourceId": "oci_compute_infrastructure_health",
        "usage/billedQuantity": "0.0002",
        "cost/productSku": "B90926",
        "product/Description": "Monitoring Service - Retrieval",
        "cost/unitPrice": "0.00125",
        "cost/myCost": "2.5E-7",
        "cost/billingUnitReadable": "1000000 NONE NONE DATAPOINTS",
        "cost/skuUnitDescription": "Million Datapoints",
        "tags/Oracle-Tags.CreatedBy": "",
    },
    # A correction of r1: one GPU-hour too many was billed. An adjustment, no GPU-hours of its own.
    h100(
        "r8",
        "2026-03-02T00:00Z",
        "2026-03-02T01:00:00Z",
        "-1",
        "-10.00",
        **{"lineItem/isCorrection": "true", "lineItem/backreferenceNo": "r1"},
    ),
    # The next billing period: one hour of the node on April 1st (UTC), 8 GPU-hours, $80.
    h100("r9", "2026-04-01T00:00Z", "2026-04-01T01:00:00Z", "8", "80.00"),
]


def write_report(path: Path, rows: list[dict[str, str]], header: list[str] = HEADER, *, gz: bool = False) -> Path:
    lines = [",".join(header)] + [",".join(_csv_field(row.get(column, "")) for column in header) for row in rows]
    data = ("\r\n".join(lines) + "\r\n").encode()
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return path


def _csv_field(value: str) -> str:
    return f'"{value}"' if "," in value or '"' in value else value


def delivery_of(path: Path) -> Delivery:
    return Delivery(source="oci_cost", path=path, landing_root=path.parent)


def reject(path: Path) -> RejectedInput:
    with pytest.raises(RejectedInput) as caught:
        parse_cost_report_delivery(delivery_of(path))
    return caught.value


# --- the reader ------------------------------------------------------------------------------


def test_real_sample_is_detected_and_read_with_exact_totals():
    assert detect_source(SAMPLE) == "oci_cost"
    frame, warnings = read_cost_report(SAMPLE, source_file="sample.csv")
    assert warnings == ()

    with SAMPLE.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert frame.height == len(rows) == 506
    # The warehouse keeps 12 decimals: each amount rounds half-to-even there, then the sum is exact.
    twelve = Decimal("1e-12")
    expected = sum(Decimal(row["cost/myCost"]).quantize(twelve, ROUND_HALF_EVEN) for row in rows)
    assert frame["cost_my_cost"].sum() == expected
    exact = sum(Decimal(row["cost/myCost"]) for row in rows)
    assert abs(expected - exact) <= Decimal(len(rows)) * Decimal("0.5e-12")
    assert set(frame["billing_period_start"].dt.strftime("%Y-%m-%d")) == {"2023-11-01"}
    first = frame.row(0, named=True)
    assert str(first["line_item_interval_usage_start"]) == "2023-11-13 10:00:00"  # `2023-11-13T10:00Z`
    assert first["usage_billed_quantity"] == Decimal("0.083333333333")
    assert json.loads(first["tags"]) == {
        "Oracle-Tags.CreatedBy": "default/phil.newman@oracle.com",
        "OracleInternalReserved.CostCenter": "607825",
        "OracleInternalReserved.OwnerEmail": "marek.czajka@oracle.com",
        "OracleInternalReserved.Phonebook": "accounts",
        "OracleInternalReserved.ServiceType": "Other",
        "OracleInternalReserved.UsageType": "development-pre-production",
        "Valtest.Cat": "boots",
    }
    assert frame.schema == pl.Schema(output_schema())


def test_gpu_fixture_columns_tags_and_lineage(tmp_path: Path):
    frame = parse_cost_report_delivery(delivery_of(write_report(tmp_path / "0001.csv.gz", GPU_ROWS, gz=True))).frame
    assert frame["_source_file"].unique().to_list() == ["0001.csv.gz"]
    assert frame["_source_row"].to_list() == list(range(1, 10))
    by_reference = {row["line_item_reference_no"]: row for row in frame.iter_rows(named=True)}
    assert by_reference["r7"]["cost_my_cost"] == Decimal("0.00000025")
    assert by_reference["r7"]["tags"] is None
    assert by_reference["r7"]["product_availability_domain"] is None
    assert json.loads(by_reference["r1"]["tags"]) == {
        "Oracle-Tags.CreatedBy": "default/ml@example.com",
        "Finance.team": "research",
    }
    assert by_reference["r8"]["line_item_is_correction"] == "true"
    assert str(by_reference["r9"]["billing_period_start"]) == "2026-04-01 00:00:00"
    assert str(by_reference["r9"]["billing_period_end"]) == "2026-05-01 00:00:00"
    assert str(by_reference["r1"]["billing_period_end"]) == "2026-04-01 00:00:00"


def test_headers_match_without_case_and_new_columns_are_kept(tmp_path: Path):
    header = [column.replace("lineItem/tenantId", "lineItem/TenantId") for column in HEADER] + ["product/resource"]
    row = GPU_ROWS[0] | {"lineItem/TenantId": TENANCY, "product/resource": "PIC_COMPUTE_GPU_H100"}
    frame, _ = read_cost_report(write_report(tmp_path / "r.csv", [row], header))
    assert frame["line_item_tenant_id"].to_list() == [TENANCY]
    assert json.loads(frame["extra_columns"][0]) == {"product/resource": "PIC_COMPUTE_GPU_H100"}


def test_optional_columns_may_be_missing(tmp_path: Path):
    header = [c for c in HEADER if c not in ("cost/unitPriceOverage", "lineItem/backreferenceNo") and "tags/" not in c]
    frame, _ = read_cost_report(write_report(tmp_path / "r.csv", GPU_ROWS[:1], header))
    assert frame["cost_unit_price_overage"].to_list() == [None]
    assert frame["tags"].to_list() == [None]


YES_NO_FIXTURE = FIXTURES_ROOT / "conformance" / "oci_cost_report_yes_no_flags.csv"
YES_OR_NO = {"y": "true", "yes": "true", "true": "true", "1": "true", "n": "false", "no": "false", "false": "false"}
YES_OR_NO["0"] = "false"


def _stored(amount: str) -> Decimal:
    """An amount as the warehouse's 12 decimals hold it (half to even)."""
    return Decimal(amount).quantize(Decimal("1e-12"), ROUND_HALF_EVEN)


def test_yes_no_flags_as_oracle_writes_them_load_and_another_value_is_a_warning(tmp_path: Path):
    """Real reports write `Y`/`N`: every line loads, flags stored `true`/`false`; `maybe` is no value and a warning."""
    path = tmp_path / YES_NO_FIXTURE.name
    path.write_bytes(YES_NO_FIXTURE.read_bytes())
    parsed = parse_cost_report_delivery(delivery_of(path))
    with YES_NO_FIXTURE.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    frame = parsed.frame

    for header in ("cost/overageFlag", "lineItem/isCorrection"):
        assert {"Y", "N"} <= {row[header] for row in rows}, "the fixture writes flags as Oracle does"
    assert frame.height == len(rows)
    assert frame["cost_my_cost"].sum() == sum(_stored(row["cost/myCost"]) for row in rows)
    for header, column in (
        ("cost/overageFlag", "cost_overage_flag"),
        ("lineItem/isCorrection", "line_item_is_correction"),
    ):
        assert frame[column].to_list() == [YES_OR_NO.get(row[header].strip().lower()) for row in rows], header
    corrections = [row for row in rows if row["lineItem/isCorrection"].strip().lower() in ("y", "yes", "true", "1")]
    assert frame.filter(pl.col("line_item_is_correction") == "true")["cost_my_cost"].sum() == sum(
        _stored(row["cost/myCost"]) for row in corrections
    )
    odd = [(number, row) for number, row in enumerate(rows, 1) if row["cost/overageFlag"].lower() not in YES_OR_NO]
    (warning,) = parsed.warnings
    assert (warning.file, warning.row, warning.column, warning.rows) == (
        path.name,
        odd[0][0],
        "cost/overageFlag",
        len(odd),
    )
    assert warning.rule == "cost/overageFlag not read as yes or no"
    assert f"{odd[0][1]['cost/overageFlag']!r}" in warning.message


@pytest.mark.parametrize(
    ("written", "stored"),
    [
        *[("Y", "true"), (" yes ", "true"), ("TRUE", "true"), ("1", "true")],
        *[("n", "false"), ("No", "false"), ("0", "false")],
        *[("", None), ("F", None), ("2", None), ("oui", None)],
    ],
)
def test_every_spelling_of_yes_and_no_is_read_and_nothing_else(tmp_path: Path, written: str, stored: str | None):
    rows = [dict(row) for row in GPU_ROWS]
    rows[2]["lineItem/isCorrection"] = written
    parsed = parse_cost_report_delivery(delivery_of(write_report(tmp_path / "flags.csv", rows)))
    assert parsed.frame["line_item_is_correction"][2] == stored
    warnings = [(w.rule, w.file, w.row, w.column, w.rows) for w in parsed.warnings]
    if stored is None and written:
        assert warnings == [("lineItem/isCorrection not read as yes or no", "flags.csv", 3, "lineItem/isCorrection", 1)]
    else:
        assert warnings == []


@pytest.mark.parametrize(
    ("row_number", "change", "column", "reason"),
    [
        (2, {"cost/myCost": "80,00"}, "cost/myCost", "'80,00' is not a decimal number"),
        (3, {"usage/billedQuantity": "eight"}, "usage/billedQuantity", "'eight' is not a decimal number"),
        (2, {"lineItem/intervalUsageStart": "13/11/2023 10:00"}, "lineItem/intervalUsageStart", "is not an ISO 8601"),
        (4, {"lineItem/tenantId": ""}, "lineItem/tenantId", "must not be empty"),
        (2, {"cost/myCost": ""}, "cost/myCost", "must not be empty"),
        (3, {"cost/currencyCode": "US$"}, "cost/currencyCode", "'US$' is not an ISO 4217 currency code"),
        (2, {"lineItem/intervalUsageEnd": "2026-03-01T00:00:00Z"}, "lineItem/intervalUsageEnd", "is before"),
    ],
)
def test_bad_values_are_rejected_naming_file_row_and_column(tmp_path: Path, row_number, change, column, reason):
    rows = [dict(row) for row in GPU_ROWS]
    rows[row_number - 1] |= change
    error = reject(write_report(tmp_path / "bad.csv", rows))
    assert (error.file, error.row, error.column) == ("bad.csv", row_number, column)
    assert reason in error.reason
    assert f"bad.csv, row {row_number}, column {column}: " in error.describe()


def test_missing_required_column_is_rejected(tmp_path: Path):
    header = [column for column in HEADER if column != "cost/currencyCode"]
    error = reject(write_report(tmp_path / "no-currency.csv", GPU_ROWS, header))
    assert (error.file, error.column) == ("no-currency.csv", "cost/currencyCode")
    assert "missing cost report column(s) cost/currencyCode" in error.reason


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "is empty"),
        (",".join(HEADER).encode() + b"\r\n", "no data rows"),
        (b"PAR1\x00\x00", "is a Parquet file"),
        (gzip.compress(",".join(HEADER).encode() * 50, mtime=0)[:40], "truncated or corrupt gzip"),
    ],
)
def test_unreadable_files_are_rejected(tmp_path: Path, content: bytes, reason: str):
    path = tmp_path / "report.csv"
    path.write_bytes(content)
    assert reason in reject(path).reason


def test_a_column_twice_is_rejected(tmp_path: Path):
    header = [*HEADER, "COST/MYCOST"]
    error = reject(write_report(tmp_path / "twice.csv", GPU_ROWS, header))
    assert error.column == "cost/myCost" and "twice" in error.reason


def test_every_file_of_a_delivery_is_read(tmp_path: Path):
    folder = tmp_path / "reports" / "cost-csv"
    folder.mkdir(parents=True)
    write_report(folder / "0000001.csv.gz", GPU_ROWS[:3], gz=True)
    write_report(folder / "0000002.csv", GPU_ROWS[3:], gz=False)
    delivery = Delivery(source="oci_cost", path=tmp_path / "reports", landing_root=tmp_path)
    parsed = parse_cost_report_delivery(delivery)
    assert parsed.format_version == "OCI cost report"
    assert parsed.frame.group_by("_source_file").len().sort("_source_file").rows() == [
        ("reports/cost-csv/0000001.csv.gz", 3),
        ("reports/cost-csv/0000002.csv", 6),
    ]


# --- through the CLI, dbt and the marts --------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.slow
def test_sample_and_gpu_fixture_through_the_pipeline(tmp_path: Path, monkeypatch, capsys):
    home = tmp_path / "finops"
    monkeypatch.setenv("FINOPS_HOME", str(home))

    def query(sql: str) -> list[tuple]:
        return warehouse_query(home / "warehouse.duckdb", sql)

    # The real sample and the GPU fixture, each recognised by its header, loaded in one run.
    fixture = write_report(tmp_path / "reports_cost-csv_0000000001.csv.gz", GPU_ROWS, gz=True)
    assert main(["ingest", str(SAMPLE), str(fixture)]) == 0
    out = capsys.readouterr().out
    assert out.count("Recognised") == 2 and "9 rows, billing periods 2026-03-01, 2026-04-01" in out

    # The sample's totals per period and currency, computed here.
    expected: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    with SAMPLE.open(encoding="utf-8-sig", newline="") as handle:
        for row in csv.DictReader(handle):
            period = row["lineItem/intervalUsageStart"][:7] + "-01"
            amount = Decimal(row["cost/myCost"]).quantize(Decimal("1e-12"), ROUND_HALF_EVEN)
            expected[(period, row["cost/currencyCode"])] += amount
    marts = """
        select strftime(billing_period_start, '%Y-%m-%d'), billing_currency, sum(billed_cost), sum(effective_cost)
        from marts.fct_cost_daily
        where provider_name = 'Oracle' and billing_account_id <> 'ocid1.tenancy.oc1..aaaaaaaagpufinopstest'
        group by all
    """
    assert {(p, c): (b, e) for p, c, b, e in query(marts)} == {key: (v, v) for key, v in expected.items()}
    audit = "select billed_cost from audit.load_totals where billing_period_start = '2023-11-01'"
    assert query(audit) == [(expected[("2023-11-01", "USD")],)]

    # The GPU fixture: GPU-hours and cost per GPU model and charge category, by hand.
    gpu = query(
        """
        select strftime(charge_date, '%Y-%m-%d'), gpu_model, charge_category, sum(gpu_hours), sum(billed_cost),
               sum(effective_cost)
        from marts.fct_gpu_spend_daily
        where provider_name = 'Oracle' and billing_account_id = 'ocid1.tenancy.oc1..aaaaaaaagpufinopstest'
        group by all order by all
        """
    )
    assert gpu == [
        ("2026-03-02", "A10", "Usage", Decimal(2), Decimal("4.00"), Decimal("4.00")),
        ("2026-03-02", "H100", "Adjustment", Decimal(0), Decimal("-10.00"), Decimal("-10.00")),
        ("2026-03-02", "H100", "Usage", Decimal(20), Decimal("200.00"), Decimal("200.00")),
        ("2026-04-01", "H100", "Usage", Decimal(8), Decimal("80.00"), Decimal("80.00")),
    ]
    # All OCI spend of the fixture: 200 + 4 + 0.05 + 0.00000025 - 10 in March, 80 in April.
    spend = query(
        """
        select strftime(billing_period_start, '%Y-%m-%d'), sum(effective_cost), sum(gpu_effective_cost)
        from marts.fct_cost_daily where billing_account_id = 'ocid1.tenancy.oc1..aaaaaaaagpufinopstest'
        group by all order by all
        """
    )
    assert spend == [
        ("2026-03-01", Decimal("194.05000025"), Decimal("194.00")),
        ("2026-04-01", Decimal("80.00"), Decimal("80.00")),
    ]
    lines = query(
        """
        select SubAccountName, RegionId, ResourceType, SkuId, PricingUnit, ChargeClass, ListCost,
               json_extract_string(x_extensions, '$."lineItem/backreferenceNo"')
        from intermediate.int_billing__cost_lines
        where x_source = 'oci_cost' and json_extract_string(x_extensions, '$."lineItem/referenceNo"') = 'r8'
        """
    )
    assert lines == [("ml-training", "us-ashburn-1", "instance", "B98415", "Hours", "Correction", Decimal(-10), "r1")]

    # A broken report is quarantined and changes nothing.
    before = table_fingerprint(home / "warehouse.duckdb")
    broken = [dict(row) for row in GPU_ROWS]
    broken[6]["cost/myCost"] = "2.5E-7x"
    assert main(["ingest", str(write_report(tmp_path / "broken.csv", broken)), "--source", "oci_cost"]) == 1
    assert "row 7, column cost/myCost: '2.5E-7x' is not a decimal number" in capsys.readouterr().out
    assert table_fingerprint(home / "warehouse.duckdb") == before
