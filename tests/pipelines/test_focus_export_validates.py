"""The FOCUS export passes the FinOps Foundation's validator, and the CSV is safe to open in a spreadsheet.

The end-to-end tests load, through the CLI, the synthetic FOCUS sample data (four providers, FOCUS 1.0,
1.2 and 1.3 files) with one hand-written file, and the public OCI cost report sample; then export and
run focus-validator on both files, as the brief of the export asks (`--validate-version 1.2.0.1`) and
with the applicability criteria the export meets. A corrupted copy proves the harness reports failures.
"""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.cli import main
from pipelines.lib.reporting.focus_export import export_focus
from synthetic_data.focus_samples import EXPECTED_TOTALS_FILE, write_focus_samples
from tests.support import FIXTURES_ROOT
from tests.support.focus_fixtures import focus_rows, write_csv
from tests.support.focus_validator import SUPPORTED_CRITERIA, assert_passes, validate_focus_file

HYPERLINK = '=HYPERLINK("http://x")'

# A second AWS billing account: 2 hours of a p5.48xlarge whose tags are spreadsheet formulas, and a
# credit whose description starts with "-". The invoice issuer is AWS's legal entity.
HOSTILE_ROWS = focus_rows(
    {
        "BillingAccountId": "999988887777",
        "PricingQuantity": "2",
        "BilledCost": "196.64",
        "EffectiveCost": "196.64",
        "ListCost": "196.64",
        "ContractedCost": "196.64",
        "SkuId": "p5.48xlarge",
        "SkuPriceId": "p5.48xlarge/on-demand",
        "Tags": json.dumps({"team": HYPERLINK, "project": "@SUM(A1)"}),
    },
    {
        "BillingAccountId": "999988887777",
        "ChargeCategory": "Credit",
        "ChargeDescription": "-10% promotional credit",
        "PricingQuantity": "NULL",
        "PricingUnit": "NULL",
        "PricingCategory": "NULL",
        "BilledCost": "-5.00",
        "EffectiveCost": "-5.00",
        "ListCost": "-5.00",
        "ContractedCost": "-5.00",
        "SkuPriceDetails": "NULL",
        "Tags": "NULL",
    },
)
HOSTILE_FILE = "hostile-tags.csv"
OCI_SAMPLE = FIXTURES_ROOT / "focus-converters" / "oci_cost_report_sample.csv"

# Rules behind the export's requirements, which must have been evaluated and passed: without
# applicability criteria...
REQUIRED_PASSES = (
    "PricingUnit-C-005-C",  # PricingUnit null when PricingQuantity is null
    "PricingUnit-C-006-C",  # ... and not null when it is not
    "PricingQuantity-C-004-C",  # no quantity on Tax
    "ChargeClass-C-005-C",  # ChargeClass is only "Correction"
    "ChargeCategory-C-003-M",
    "ServiceCategory-C-003-M",
    "ServiceSubcategory-C-002-M",
    "ServiceSubcategory-C-003-M",
    "InvoiceIssuerName-C-003-M",
    "PublisherName-C-003-M",
    "ChargeFrequency-C-002-M",
    "EffectiveCost-C-005-C",  # commitment purchases amortized away
    "BilledCost-C-005-C",  # first-party lines are not billed as third-party ones
    "ServiceName-C-005-C",  # one category per service
    "ServiceName-C-008-C",  # one subcategory per service
    "PricingUnit-C-003-O",  # units in FOCUS Unit Format
)
# ... and with SUPPORTED_CRITERIA.
REQUIRED_CONDITIONAL_PASSES = (
    "PricingCategory-C-003-C",  # no pricing category on Tax
    "CommitmentDiscountStatus-C-003-C",  # no status without a commitment
    "SkuPriceDetails-C-001-M",
    "SkuPriceDetails-C-004-C",
    "Tags-C-001-M",
    "BillingAccountType-C-005-C",
    "SubAccountType-C-005-C",
    "PricingCurrency-C-004-M",
    "PricingCurrencyEffectiveCost-C-003-M",
)


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """FOCUS samples with the hostile file as one delivery, and the OCI sample, loaded through the CLI; exported."""
    root = tmp_path_factory.mktemp("focus-export")
    delivery = root / "delivery"
    write_focus_samples(delivery, seed=11)
    shutil.move(delivery / EXPECTED_TOTALS_FILE, root / EXPECTED_TOTALS_FILE)
    write_csv(delivery / HOSTILE_FILE, HOSTILE_ROWS)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FINOPS_HOME", str(root / "finops"))
        # Both recognised from their headers, loaded in one run.
        assert main(["ingest", str(delivery), str(OCI_SAMPLE)]) == 0
        assert main(["export", "focus", str(root / "export")]) == 0
    yield root / "export"


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.parametrize("file_name", ["focus_cost_and_usage.parquet", "focus_cost_and_usage.csv"])
def test_export_passes_the_focus_validator(export: Path, file_name: str):
    report = validate_focus_file(export / file_name)

    assert_passes(report, REQUIRED_PASSES)
    assert len(report.passed) > 100, report.summary()


@pytest.mark.e2e
@pytest.mark.slow
def test_export_passes_the_conditional_column_rules(export: Path):
    report = validate_focus_file(export / "focus_cost_and_usage.parquet", applicability_criteria=SUPPORTED_CRITERIA)

    assert_passes(report, REQUIRED_PASSES + REQUIRED_CONDITIONAL_PASSES)
    assert len(report.passed) > 300, report.summary()


@pytest.mark.e2e
@pytest.mark.slow
def test_validator_reports_one_corrupted_value(export: Path, tmp_path: Path):
    table = pq.read_table(export / "focus_cost_and_usage.parquet")
    # One empty-string PricingUnit on a line without PricingQuantity (the first Tax line).
    row = table["PricingQuantity"].to_pylist().index(None)
    units = table["PricingUnit"].to_pylist()
    units[row] = ""
    corrupted = tmp_path / "corrupted.parquet"
    index = table.schema.get_field_index("PricingUnit")
    pq.write_table(table.set_column(index, "PricingUnit", pa.array(units, pa.string())), corrupted)

    report = validate_focus_file(corrupted)

    assert "PricingUnit-C-005-C" in report.failed, report.summary()  # MUST be null when PricingQuantity is null
    assert report.passed  # and everything else was still checked


@pytest.mark.e2e
@pytest.mark.slow
def test_export_keeps_the_money_and_neutralises_formulas_in_csv(export: Path):
    expected: dict[str, dict[str, Decimal]] = {}
    for entry in json.loads((export.parent / EXPECTED_TOTALS_FILE).read_text())["files"]:
        totals = expected.setdefault(entry["billing_currency"], {"billed": Decimal(0), "effective": Decimal(0)})
        totals["billed"] += Decimal(entry["billed_cost"])
        totals["effective"] += Decimal(entry["effective_cost"])
    expected["USD"]["billed"] += Decimal("196.64") - Decimal("5.00")
    expected["USD"]["effective"] += Decimal("196.64") - Decimal("5.00")

    table = pq.read_table(export / "focus_cost_and_usage.parquet")
    found: dict[str, dict[str, Decimal]] = {}
    for row in table.select(["x_SourceFormat", "BillingCurrency", "BilledCost", "EffectiveCost"]).to_pylist():
        if row["x_SourceFormat"] != "focus":  # the OCI sample's totals are checked in test_oci_cost.py
            continue
        totals = found.setdefault(row["BillingCurrency"], {"billed": Decimal(0), "effective": Decimal(0)})
        totals["billed"] += row["BilledCost"]
        totals["effective"] += row["EffectiveCost"]
    assert found == expected
    assert str(table.schema.field("ChargePeriodStart").type) == "timestamp[us, tz=UTC]"
    assert table.column_names.index("Tags") < table.column_names.index("x_GpuModel")
    assert all(name.startswith("x_") for name in table.column_names[table.column_names.index("Tags") + 1 :])

    hostile = [row for row in table.to_pylist() if row["x_SourceFile"].endswith(HOSTILE_FILE)]
    gpu = next(row for row in hostile if row["ChargeCategory"] == "Usage")
    assert (gpu["x_Team"], gpu["x_Project"]) == (HYPERLINK, "@SUM(A1)")  # Parquet keeps values as they are
    assert (gpu["x_GpuModel"], gpu["x_GpuHours"]) == ("H100", Decimal(16))  # 2 hours × 8 GPUs
    assert (gpu["InvoiceIssuerName"], gpu["x_DeliveredInvoiceIssuerName"]) == ("AWS", "Amazon Web Services, Inc.")

    with (export / "focus_cost_and_usage.csv").open(newline="", encoding="utf-8") as handle:
        rows = [row for row in csv.DictReader(handle) if row["x_SourceFile"].endswith(HOSTILE_FILE)]
    gpu_csv = next(row for row in rows if row["ChargeCategory"] == "Usage")
    credit_csv = next(row for row in rows if row["ChargeCategory"] == "Credit")
    assert gpu_csv["x_Team"] == "'" + HYPERLINK
    assert gpu_csv["x_Project"] == "'@SUM(A1)"
    assert json.loads(gpu_csv["Tags"]) == {"team": HYPERLINK, "project": "@SUM(A1)"}  # starts with "{": safe
    assert credit_csv["ChargeDescription"] == "'-10% promotional credit"
    assert Decimal(credit_csv["BilledCost"]) == Decimal("-5.00")  # numbers are never prefixed
    assert gpu_csv["ChargePeriodStart"] == "2026-09-01T00:00:00Z"


def test_csv_prefixes_formula_text_but_not_numbers(tmp_path: Path):
    warehouse = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(warehouse)) as con:
        con.execute("create schema marts")
        con.execute(
            """
            create table marts.focus_cost_and_usage as
            select * from (values
                (timestamp '2026-09-01', timestamp '2026-09-01 05:00', -1.5::decimal(38, 12),
                 '=HYPERLINK("http://x")', '+1', 'a.csv', 1::bigint, 'Delivered'),
                (timestamp '2026-09-01', timestamp '2026-09-01 06:00', 2.0::decimal(38, 12),
                 '@me', e'\\tTab', 'a.csv', 2::bigint, 'Delivered'),
                (timestamp '2026-09-01', timestamp '2026-09-01 07:00', 3.0::decimal(38, 12),
                 '-', e'\\rCR', 'a.csv', 3::bigint, 'Delivered'),
                (timestamp '2026-09-01', timestamp '2026-09-01 08:00', 4.0::decimal(38, 12),
                 'research', null, 'a.csv', 4::bigint, 'Delivered')
            ) as t(BillingPeriodStart, ChargePeriodStart, BilledCost, x_Team, x_Project, x_SourceFile,
                   x_SourceRow, x_RowOrigin)
            """
        )

    written = export_focus(warehouse, tmp_path / "out")

    assert [rows for _, rows in written] == [4, 4]
    with (tmp_path / "out" / "focus_cost_and_usage.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(row["x_Team"], row["x_Project"]) for row in rows] == [
        ('\'=HYPERLINK("http://x")', "'+1"),
        ("'@me", "'\tTab"),
        ("'-", "'\rCR"),
        ("research", ""),
    ]
    assert [Decimal(row["BilledCost"]) for row in rows] == [Decimal("-1.5"), 2, 3, 4]
    assert rows[0]["BilledCost"].startswith("-1.5")  # a negative number stays a number, never "'-1.5"
    assert rows[0]["ChargePeriodStart"] == "2026-09-01T05:00:00Z"
    parquet = pq.read_table(tmp_path / "out" / "focus_cost_and_usage.parquet")
    assert parquet.column("x_Team").to_pylist()[0] == '=HYPERLINK("http://x")'


def test_report_waives_only_listed_rules_and_composites_failing_through_them(tmp_path: Path):
    from tests.support.focus_validator import _report, _statuses

    xml = tmp_path / "report.xml"
    xml.write_text(
        """<testsuites><testsuite name="rules">
          <testcase name="Defect-C-001-C :: Nullability"><failure message="x"/></testcase>
          <testcase name="Real-C-001-M :: Validation"><failure message="x"/></testcase>
          <testcase name="OnlyDefect-C-000-C :: Composite"><failure message="x"/></testcase>
          <testcase name="Mixed-C-000-M :: Composite"><failure message="x"/></testcase>
          <testcase name="Good-C-001-M :: Type"/>
          <testcase name="Broken-C-001-M :: Format"><error message="x"/></testcase>
          <testcase name="Off-C-001-C :: Type"><skipped message="x"/></testcase>
        </testsuite></testsuites>"""
    )

    def composite(*children: str) -> dict:
        items = [{"CheckFunction": "CheckModelRule", "ModelRuleId": child} for child in children]
        return {
            "ValidationCriteria": {"MustSatisfy": "adheres", "Requirement": {"CheckFunction": "AND", "Items": items}}
        }

    rules = {
        "OnlyDefect-C-000-C": composite("Defect-C-001-C"),
        "Mixed-C-000-M": composite("Defect-C-001-C", "Real-C-001-M"),
    }
    report = _report(xml, _statuses(xml), rules, {"Defect-C-001-C": "upstream bug"})

    assert set(report.waived) == {"Defect-C-001-C", "OnlyDefect-C-000-C"}
    assert set(report.failed) == {"Real-C-001-M", "Mixed-C-000-M", "Broken-C-001-M"}
    assert set(report.passed) == {"Good-C-001-M"} and set(report.skipped) == {"Off-C-001-C"}
    assert report.checked == 6


def test_csv_string_columns_read_as_numbers_are_waived_only_when_every_value_is_a_number(tmp_path: Path):
    from tests.support.focus_validator import _csv_inference_waivers

    data = tmp_path / "export.csv"
    data.write_text('"InvoiceId","BillingAccountId","SkuId"\n"6710398783","ab-1","12"\n,"811122233344","x"\n')
    statuses = {"InvoiceId-C-001-M": "failed", "BillingAccountId-C-001-M": "failed", "SkuId-C-001-M": "failed"}
    rules = {
        f"{column}-C-001-M": {
            "ValidationCriteria": {"Requirement": {"CheckFunction": "TypeString", "ColumnName": column}}
        }
        for column in ("InvoiceId", "BillingAccountId", "SkuId")
    }

    assert set(_csv_inference_waivers(data, statuses, rules)) == {"InvoiceId-C-001-M"}
