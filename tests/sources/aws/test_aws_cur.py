"""AWS Cost and Usage Reports: every flavour into one raw shape, the staging rules, and the whole path to the marts."""

from __future__ import annotations

import csv
import json
import logging
import shutil
import subprocess
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.cli import main
from pipelines.lib.catalog.billing import AWS_CUR
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.ingest.landing import register
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from sources.aws import output_schema, parse_cur_delivery, read_cur_file
from sources.aws.columns import athena_name
from sources.common.delivery import Delivery
from sources.common.detect import detect_source
from sources.common.errors import RejectedInput
from tests.support import aws_fixtures
from tests.support.dbt_helpers import passed_unit_tests, unit_tests_in_yaml
from tests.support.warehouse_helpers import query, table_fingerprint

FIXTURES = aws_fixtures.FIXTURES
SAMPLE = FIXTURES / "focus-converters" / "aws_legacy_cur_sample.csv"
log = logging.getLogger("test")


def delivery_of(path: Path) -> Delivery:
    return Delivery(source="aws_cur", path=path, landing_root=path.parent)


def parse(path: Path):
    return parse_cur_delivery(delivery_of(path))


def rows_by_id(frame) -> dict[str, dict]:
    return {row["identity_line_item_id"]: row for row in frame.iter_rows(named=True)}


# --- the committed fixtures are what aws_fixtures.py writes -----------------------------------


def test_committed_fixtures_match_their_source(tmp_path: Path):
    built = aws_fixtures.build(tmp_path)
    names = ("cur2-parquet", "cur2-csv", "legacy-csv", "legacy-athena")
    committed = sorted(p.relative_to(FIXTURES) for name in names for p in (FIXTURES / name).rglob("*") if p.is_file())
    written = sorted(p.relative_to(built) for name in names for p in (built / name).rglob("*") if p.is_file())
    assert committed == written
    for relative in committed:
        if relative.suffix == ".parquet":
            assert pq.read_table(FIXTURES / relative).equals(pq.read_table(built / relative)), relative
        else:
            assert (FIXTURES / relative).read_bytes() == (built / relative).read_bytes(), relative


# --- recognising and reading each flavour ------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "athena"),
    [
        ("lineItem/UsageType", "line_item_usage_type"),
        ("lineItem/LineItemType", "line_item_line_item_type"),
        ("reservation/ReservationARN", "reservation_reservation_a_r_n"),
        ("savingsPlan/SavingsPlanARN", "savings_plan_savings_plan_a_r_n"),
        ("pricing/publicOnDemandCost", "pricing_public_on_demand_cost"),
        ("bill/PayerAccountId", "bill_payer_account_id"),
        ("product/ProductName", "product_product_name"),
        ("resourceTags/user:Team", "resource_tags_user_team"),
        ("resourceTags/user:Cost Center", "resource_tags_user_cost_center"),
        ("resourceTags/aws:createdBy", "resource_tags_aws_created_by"),
        ("line_item_usage_type", "line_item_usage_type"),
    ],
)
def test_legacy_headers_get_their_athena_names(header: str, athena: str):
    assert athena_name(header) == athena


@pytest.mark.parametrize(
    "name",
    # The Athena flavour's report folder also holds its status table, which sorts first and which
    # detection (reading only the first data file) cannot place: its data folder is recognised.
    ["cur2-parquet", "cur2-csv", "legacy-csv", "legacy-athena/cur/gpu-report/gpu-report"],
)
def test_every_fixture_delivery_is_recognised_as_cur(name: str):
    assert detect_source(FIXTURES / name) == "aws_cur"


def test_sample_file_is_recognised_as_cur():
    assert detect_source(SAMPLE) == "aws_cur"


def test_cur2_parquet_loads_exactly_the_manifest_files_with_maps_as_json():
    parsed = parse(FIXTURES / "cur2-parquet")
    frame = parsed.to_polars()
    assert parsed.format_version == "CUR 2.0"
    assert list(frame.schema.items()) == list(output_schema().items())
    # The manifest lists the two files of the latest run; the older run's 9-hour line is not read.
    assert frame.height == 11
    assert sorted({Path(name).parent.name for name in frame["_source_file"]}) == [aws_fixtures.CUR2_RUN]
    assert frame["_source_row"].to_list() == [1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5]

    lines = rows_by_id(frame)
    p5 = lines["cur2-p5-ondemand"]
    assert p5["line_item_unblended_cost"] == Decimal("983.2")
    assert p5["line_item_usage_amount"] == Decimal(10)
    assert p5["bill_billing_period_start_date"] == datetime(2026, 9, 1)
    assert p5["line_item_usage_end_date"] == datetime(2026, 9, 1, 10)
    assert json.loads(p5["resource_tags"]) == {"user_team": "research", "user_project": "llm"}
    assert json.loads(p5["cost_category"]) == {"business_unit": "AI"}
    assert json.loads(p5["product"])["gpu"] == "8"
    assert p5["discount"] is None  # an empty map is null, not "{}"
    assert p5["_cur_format"] == "cur2"
    # Parquet doubles are read as the decimal they print as, not their binary expansion.
    assert lines["cur2-p4d-ondemand"]["line_item_unblended_cost"] == Decimal("163.863")
    assert lines["cur2-p4d-ri-covered"]["pricing_public_on_demand_cost"] == Decimal("786.5424")
    spot = lines["cur2-p5-spot"]
    assert (spot["product_instance_type"], spot["product"]) == (None, None)
    assert lines["cur2-sp-recurring-fee"]["line_item_operation"] is None  # empty string → null
    assert lines["cur2-p4d-ri-fee"]["reservation_unused_recurring_fee"] == Decimal("13377.12")
    assert lines["cur2-p5-sp-negation"]["savings_plan_savings_plan_a_r_n"] == aws_fixtures.SP_ARN


def test_cur2_csv_gz_map_columns_are_json_text():
    parsed = parse(FIXTURES / "cur2-csv")
    lines = rows_by_id(parsed.to_polars())
    spot = lines["csv-p5-spot"]
    assert json.loads(spot["resource_tags"]) == {"user_team": "research", "user_project": 'llm "v2"'}
    assert spot["product"] is None  # "{}" in the file
    assert spot["line_item_usage_start_date"] == datetime(2026, 10, 1)
    assert lines["csv-credit"]["line_item_unblended_cost"] == Decimal(-50)
    assert lines["csv-credit"]["resource_tags"] is None
    assert lines["csv-credit"]["pricing_public_on_demand_cost"] is None
    assert set(parsed.to_polars()["_cur_format"]) == {"cur2"}


def test_legacy_csv_months_with_different_columns_and_a_stale_assembly():
    parsed = parse(FIXTURES / "legacy-csv")
    assert parsed.format_version == "legacy CUR CSV"
    lines = rows_by_id(parsed.to_polars())
    # The period manifest names the latest assembly; the stale one (999.99) is not read.
    assert sorted(lines) == [
        "legacy-nov-p4d",
        "legacy-nov-tax",
        "legacy-oct-p4d-spot",
        "legacy-oct-p5",
        "legacy-oct-tax",
    ]
    oct_p5 = lines["legacy-oct-p5"]
    assert oct_p5["line_item_unblended_cost"] == Decimal("196.64")
    assert oct_p5["product_instance_type"] == "p5.48xlarge"
    assert oct_p5["product_servicecode"] == "AmazonEC2"
    assert oct_p5["pricing_public_on_demand_cost"] == Decimal("196.64")
    # Tags and unpinned product columns are keyed like CUR 2.0's maps.
    assert json.loads(oct_p5["resource_tags"]) == {"user_team": "research"}
    assert json.loads(oct_p5["product"]) == {
        "product_name": "Amazon Elastic Compute Cloud",
        "gpu": "8",
        "region": "us-east-1",
        "vcpu": "192",
    }
    assert oct_p5["line_item_net_unblended_cost"] is None  # October has no net cost column
    nov = lines["legacy-nov-p4d"]
    assert nov["line_item_net_unblended_cost"] == Decimal("29.49534")
    assert nov["savings_plan_savings_plan_a_r_n"] is None  # November has no Savings Plan columns
    # `user:Team` (empty here) and `user:team` are one key; the value present wins.
    assert json.loads(nov["resource_tags"]) == {"user_project": "cv", "user_team": "vision"}
    assert nov["bill_billing_period_end_date"] == datetime(2026, 12, 1)


def test_legacy_athena_parquet_flat_tag_columns_become_json_and_the_status_table_is_skipped():
    parsed = parse(FIXTURES / "legacy-athena")
    assert parsed.format_version == "legacy CUR Athena/Parquet"
    lines = rows_by_id(parsed.to_polars())
    assert sorted(lines) == ["athena-g5", "athena-s3"]
    g5 = lines["athena-g5"]
    assert json.loads(g5["resource_tags"]) == {"user_team": "inference"}
    assert json.loads(g5["cost_category"]) == {"business_unit": "AI"}
    assert json.loads(g5["product"]) == {"product_name": "Amazon Elastic Compute Cloud", "region": "eu-central-1"}
    assert g5["line_item_unblended_cost"] == Decimal("8.496")
    assert lines["athena-s3"]["resource_tags"] is None


def test_sample_file_totals_match_a_plain_csv_sum():
    frame = read_cur_file(SAMPLE, source_file="sample.csv")
    expected = _sample_totals()
    found: dict[tuple[str, str], Decimal] = {}
    for row in frame.iter_rows(named=True):
        key = (row["bill_billing_period_start_date"].strftime("%Y-%m-%d"), row["line_item_currency_code"])
        found[key] = found.get(key, Decimal(0)) + row["line_item_unblended_cost"]
    assert found == expected
    assert frame.height == 1281


def _sample_totals() -> dict[tuple[str, str], Decimal]:
    """Billed cost per billing period and currency, summed straight from the file with csv and Decimal."""
    totals: dict[tuple[str, str], Decimal] = {}
    with SAMPLE.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            key = (row["bill/BillingPeriodStartDate"][:10], row["lineItem/CurrencyCode"])
            cost = row.get("lineItem/NetUnblendedCost") or row["lineItem/UnblendedCost"]
            totals[key] = totals.get(key, Decimal(0)) + Decimal(cost)
    return totals


# --- bad input ---------------------------------------------------------------------------------


def _copy(name: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURES / name, tmp_path / name))


def _cur2_csv_with(tmp_path: Path, change: dict[str, str] | None = None, drop: str | None = None) -> Path:
    delivery = _copy("cur2-csv", tmp_path)
    data = next(delivery.rglob("*.csv.gz"))
    header = [column for column in aws_fixtures.CUR2_CSV_HEADER if column != drop]
    rows = [aws_fixtures.CUR2_CSV_COMMON | row for row in aws_fixtures.CUR2_CSV_ROWS]
    rows[-1] = rows[-1] | (change or {})
    aws_fixtures.write_gzip(data, aws_fixtures.csv_text(header, rows))
    return delivery


@pytest.mark.parametrize("listed", ["../../etc/passwd", "/etc/passwd", "s3://finops-exports/../../etc/passwd"])
def test_manifest_listing_a_file_outside_the_delivery_is_rejected(tmp_path: Path, listed: str):
    delivery = _copy("cur2-csv", tmp_path)
    manifest = next(delivery.rglob("*-Manifest.json"))
    content = json.loads(manifest.read_text())
    manifest.write_text(json.dumps(content | {"dataFiles": [listed]}))
    with pytest.raises(RejectedInput) as error:
        parse(delivery)
    assert error.value.file.endswith("csv-export-Manifest.json")
    assert "outside the delivery" in error.value.reason or "climbs out" in error.value.reason


def test_missing_required_column_is_named_as_the_file_spells_it(tmp_path: Path):
    delivery = _copy("legacy-csv", tmp_path)
    data = next(delivery.rglob(f"{aws_fixtures.LEGACY_NOV_ASSEMBLY}/*.csv.gz"))
    header = [column for column in aws_fixtures.LEGACY_NOV_HEADER if column != "lineItem/UnblendedCost"]
    aws_fixtures.write_gzip(data, aws_fixtures.csv_text(header, aws_fixtures.LEGACY_NOV_ROWS))
    with pytest.raises(RejectedInput) as error:
        parse(delivery)
    assert error.value.file.endswith(f"{aws_fixtures.LEGACY_NOV_ASSEMBLY}/gpu-report-1.csv.gz")
    assert error.value.column == "lineItem/UnblendedCost"
    assert "missing required CUR column" in error.value.reason


def test_unparsable_cost_names_file_row_and_column(tmp_path: Path):
    delivery = _cur2_csv_with(tmp_path, {"line_item_unblended_cost": "-50,00"})
    with pytest.raises(RejectedInput) as error:
        parse(delivery)
    assert error.value.file.endswith("csv-export-00001.csv.gz")
    assert (error.value.row, error.value.column) == (2, "line_item_unblended_cost")
    assert "'-50,00' is not a decimal number" in error.value.reason


@pytest.mark.parametrize(
    ("change", "row", "column", "message"),
    [
        ({"line_item_usage_start_date": "01/10/2026"}, 2, "line_item_usage_start_date", "not an ISO 8601"),
        ({"bill_payer_account_id": ""}, 2, "bill_payer_account_id", "must not be empty"),
        ({"resource_tags": "user_team=research"}, 2, "resource_tags", "not a JSON object"),
        ({"bill_billing_period_end_date": "2026-10-01T00:00:00Z"}, 2, "bill_billing_period_end_date", "must be after"),
    ],
)
def test_bad_values_are_rejected_at_their_row_and_column(tmp_path: Path, change, row, column, message):
    with pytest.raises(RejectedInput) as error:
        parse(_cur2_csv_with(tmp_path, change))
    assert (error.value.row, error.value.column) == (row, column)
    assert message in error.value.reason


def test_two_export_runs_for_one_billing_period_are_rejected(tmp_path: Path):
    delivery = _copy("cur2-parquet", tmp_path)
    manifest = next(delivery.rglob("*-Manifest.json"))
    other = manifest.parent / "older" / manifest.name
    other.parent.mkdir()
    content = json.loads(manifest.read_text())
    other.write_text(json.dumps(content | {"executionId": "another-run"}))
    with pytest.raises(RejectedInput, match="2 different export runs"):
        parse(delivery)


def test_truncated_gzip_is_rejected_not_partly_read(tmp_path: Path):
    delivery = _copy("cur2-csv", tmp_path)
    data = next(delivery.rglob("*.csv.gz"))
    data.write_bytes(data.read_bytes()[:-20])
    with pytest.raises(RejectedInput, match="truncated or corrupt gzip"):
        parse(delivery)


def test_zip_compressed_report_gets_a_hint(tmp_path: Path):
    report = tmp_path / "report-1.csv.zip"
    report.write_bytes(b"PK\x03\x04" + b"\x00" * 40)
    with pytest.raises(RejectedInput, match="ZIP archive"):
        read_cur_file(report)


def test_bad_deliveries_are_quarantined_and_leave_the_warehouse_unchanged(tmp_path: Path):
    home = FinopsHome(tmp_path / "home").create_folders()
    register(home, "aws_cur", FIXTURES / "cur2-parquet")
    assert [r.status for r in _ingest(home)] == ["loaded"]
    before = table_fingerprint(home.warehouse)

    outside = _copy("cur2-csv", tmp_path / "outside")
    manifest = next(outside.rglob("*-Manifest.json"))
    manifest.write_text(json.dumps(json.loads(manifest.read_text()) | {"dataFiles": ["../../etc/passwd"]}))
    missing = _cur2_csv_with(tmp_path / "missing", drop="line_item_currency_code")
    unparsable = _cur2_csv_with(tmp_path / "unparsable", {"line_item_unblended_cost": "fifty"})
    for delivery in (outside, missing, unparsable):
        register(home, "aws_cur", delivery)
    results = _ingest(home)
    assert [r.status for r in results] == ["duplicate", "rejected", "rejected", "rejected"]
    assert "climbs out" in results[1].reason
    assert "column line_item_currency_code" in results[2].reason
    assert "row 2, column line_item_unblended_cost" in results[3].reason
    assert table_fingerprint(home.warehouse) == before
    assert len(list((home.quarantine / "aws_cur").glob("*.reason.txt"))) == 3


def test_a_new_delivery_restates_its_payer_and_billing_period(tmp_path: Path):
    home = FinopsHome(tmp_path / "home").create_folders()
    register(home, "aws_cur", FIXTURES / "cur2-csv")
    register(home, "aws_cur", FIXTURES / "legacy-csv")
    _ingest(home)
    restated = _cur2_csv_with(tmp_path, {"line_item_unblended_cost": "-60.0"})
    register(home, "aws_cur", restated)
    outcome = _ingest(home)[-1]
    assert (outcome.status, outcome.rows, outcome.replaced_rows) == ("loaded", 2, 2)
    totals = query(
        home.warehouse,
        """
        select bill_payer_account_id, strftime(bill_billing_period_start_date, '%Y-%m'), sum(line_item_unblended_cost)
        from raw.aws_cur_line_items group by all order by all
        """,
    )
    assert totals == [
        ("111122223333", "2026-10", Decimal("-35")),  # 25 spot - 60 credit
        ("210987654321", "2026-10", Decimal("248.7454")),  # 196.64 + 29.4954 + 22.61
        ("210987654321", "2026-11", Decimal("36.0426")),  # unblended 32.7726 + 3.27
    ]


def _ingest(home: FinopsHome):
    with connect(home.warehouse) as con:
        return ingest_landing_zone(home, con, AWS_CUR, log=log)


# --- dbt: the cost line model's golden cases -----------------------------------------------------


def test_cost_line_unit_tests_pass(dbt_unit_test_build: subprocess.CompletedProcess[str]):
    """The YAML unit tests of int_aws__cur_cost_lines (amortization, GPU resolution) on a real DuckDB (the
    session's one dbt build)."""
    assert dbt_unit_test_build.returncode == 0, dbt_unit_test_build.stdout[-3000:]
    declared = unit_tests_in_yaml("int_aws__cur_cost_lines")
    assert len(declared) == 2
    assert declared <= passed_unit_tests(dbt_unit_test_build.stdout)


# --- the whole path, through the CLI ------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.slow
def test_cur_deliveries_reach_the_gpu_marts_with_hand_computed_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    home = tmp_path / "finops"
    monkeypatch.setenv("FINOPS_HOME", str(home))
    assert main(["ingest", str(FIXTURES / "cur2-parquet"), str(SAMPLE)]) == 0
    out = capsys.readouterr().out
    assert "as AWS Cost and Usage Report" in out and "11 rows, billing periods 2026-09-01" in out
    assert "1281 rows, billing periods 2023-11-01" in out

    def sql(text: str) -> list[tuple]:
        return query(home / "warehouse.duckdb", text)

    # GPU lines per model (pricing and charge category), worked out by hand from the fixture:
    #  H100 (p5.48xlarge, 8 GPUs): 10 h on demand 983.20; 4 h Spot 50.00; 6 h under the Savings Plan,
    #   billed 589.92 and negated, effective 6 × 55.04 = 330.24; the negation's 6 h do not count again.
    #  A100 40GB (p4d.24xlarge, 8 GPUs): 5 h on demand 163.863; 24 h under the RI, billed 0, effective
    #   24 × 19.345 = 464.28; the RI fee billed 13838.40, effective the unused 87 + 13377.12 = 13464.12;
    #   the RI upfront payment billed 1080, effective 0.
    assert sql(
        """
        select gpu_model, pricing_category, charge_category, sum(gpu_hours), sum(billed_cost), sum(effective_cost),
               sum(list_cost)
        from marts.fct_gpu_spend_daily
        where billing_period_start = '2026-09-01'
        group by all order by all
        """
    ) == [
        ("A100 40GB", "Committed", "Usage", Decimal(192), Decimal(0), Decimal("464.28"), Decimal("786.5424")),
        ("A100 40GB", "Standard", "Purchase", Decimal(0), Decimal("14918.4"), Decimal("13464.12"), Decimal(0)),
        ("A100 40GB", "Standard", "Usage", Decimal(40), Decimal("163.863"), Decimal("163.863"), Decimal("163.863")),
        ("H100", "Committed", "Usage", Decimal(48), Decimal(0), Decimal("330.24"), Decimal("589.92")),
        ("H100", "Dynamic", "Usage", Decimal(32), Decimal(50), Decimal(50), Decimal("393.28")),
        ("H100", "Standard", "Usage", Decimal(80), Decimal("983.2"), Decimal("983.2"), Decimal("983.2")),
    ]
    # Per team (from resource_tags user_team): research ran the H100s, vision the A100 usage; the RI fee
    # and upfront payment carry no tags.
    assert sql(
        """
        select team, gpu_model, sum(gpu_hours), sum(effective_cost) from marts.fct_gpu_spend_daily
        where billing_period_start = '2026-09-01' group by all order by all
        """
    ) == [
        ("research", "H100", Decimal(160), Decimal("1363.44")),
        ("vision", "A100 40GB", Decimal(232), Decimal("628.143")),
        (None, "A100 40GB", Decimal(0), Decimal("13464.12")),
    ]
    # On-demand H100: 983.20 / 80 GPU-hours.
    assert sql(
        """
        select effective_cost_per_gpu_hour from marts.fct_gpu_spend_daily
        where gpu_model = 'H100' and pricing_category = 'Standard'
        """
    ) == [(Decimal("12.29"),)]
    # All September spend: billed 983.20 + 163.863 + 50 + 589.92 − 589.92 + 400 + 0 + 13838.40 + 1080
    # + 2.304 (m5) + 100 (tax) = 16617.767; effective 983.20 + 163.863 + 50 + 330.24 + 0 + 69.76
    # (unused Savings Plan) + 464.28 + 13464.12 + 0 + 2.304 + 100 = 15627.767.
    assert sql(
        """
        select sum(billed_cost), sum(effective_cost), sum(cost_line_count) from marts.fct_cost_daily
        where billing_period_start = '2026-09-01'
        """
    ) == [(Decimal("16617.767"), Decimal("15627.767"), 11)]

    # The public sample (Usage and Tax lines only, so effective = billed) reconciles to its own csv sums.
    expected = _sample_totals()
    found = sql(
        """
        select strftime(billing_period_start, '%Y-%m-%d'), billing_currency, sum(billed_cost), sum(effective_cost)
        from marts.fct_cost_daily where billing_period_start < '2026-01-01' group by all
        """
    )
    assert {(period, currency): billed for period, currency, billed, _ in found} == expected
    assert {(period, currency): effective for period, currency, _, effective in found} == expected
