"""Azure ActualCost / AmortizedCost exports: parsing quirks, bad input, loading, and the path to the GPU marts.

Fixtures in tests/fixtures/azure/ are written by hand in the exact export layouts (EA actual, EA amortized,
MCA camelCase, German pay-as-you-go); every expected number below is worked out by hand from them.
The real public EA sample (tests/fixtures/focus-converters, from shared/samples) is checked against totals computed
here with the csv module and Decimal.
"""

from __future__ import annotations

import csv
import gzip
import json
import logging
import shutil
from collections import defaultdict
from datetime import datetime
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import polars as pl
import pytest

from pipelines.lib.catalog.billing import AZURE_ACTUAL, AZURE_AMORTIZED, BILLING_SOURCES
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.ingest.landing import register
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.loads import audit_mismatches
from pipelines.lib.warehouse.tables import recover_and_ensure_tables
from sources.azure import parse_actual_cost_delivery, parse_amortized_cost_delivery, read_cost_details_file
from sources.common.delivery import Delivery
from sources.common.detect import detect_source
from sources.common.errors import RejectedInput
from tests.support import FIXTURES_ROOT
from tests.support.warehouse_helpers import query, table_fingerprint

FIXTURES = FIXTURES_ROOT / "azure"
EA_RUN = next((FIXTURES / "ea-actual-run").rglob("manifest.json")).parent
EA_AMORTIZED = FIXTURES / "ea_amortizedcost_2026-09.csv"
MCA_ACTUAL = FIXTURES / "mca_actualcost_2026-10.csv"
GERMAN = FIXTURES / "payg_german_2026-08.csv"
SAMPLE = FIXTURES.parent / "focus-converters" / "azure_ea_actual_sample.csv"  # real, anonymized (MIT)

log = logging.getLogger("test")


def deliver(tmp_path: Path, source: str, path: Path, name: str | None = None) -> Delivery:
    """A copy of `path` in a landing folder, as the loader hands it to a connector."""
    landing = tmp_path / "landing" / source
    landing.mkdir(parents=True, exist_ok=True)
    target = landing / (name or path.name)
    if path.is_dir():
        shutil.copytree(path, target)
    else:
        shutil.copy2(path, target)
    return Delivery(source=source, path=target, landing_root=landing)


def money(value: str) -> Decimal:
    """What DECIMAL(38, 12) holds for a cost as written: polars rounds extra digits half to even."""
    return Decimal(value).quantize(Decimal("1e-12"), rounding=ROUND_HALF_EVEN)


# --- parsing ------------------------------------------------------------------------------------------


def test_ea_actual_run_folder_loads_the_manifest_blobs_with_bom_us_dates_and_braceless_tags(tmp_path: Path):
    delivery = deliver(tmp_path, "azure_actual", EA_RUN, name="run-2026-09")
    parsed = parse_actual_cost_delivery(delivery)
    frame = parsed.frame

    assert parsed.format_version == "Azure ActualCost 2021-10-01 (EA)"
    assert frame.height == 5
    assert frame["_source_file"].unique().to_list() == ["run-2026-09/part_1_0001.csv"]
    assert frame["_source_row"].to_list() == [1, 2, 3, 4, 5]
    # The BOM did not end up in the first header: InvoiceSectionName was recognised.
    assert frame["InvoiceSectionName"].to_list() == ["Research"] * 5
    assert frame["Date"].to_list() == [datetime(2026, 9, d) for d in (5, 5, 6, 1, 10)]
    assert frame["CostInBillingCurrency"].to_list() == [
        Decimal("294.96"),
        Decimal("88.152"),
        Decimal(0),
        Decimal(29200),
        Decimal("12.34"),
    ]
    assert frame["BillingPeriodEndDate"].unique().to_list() == [datetime(2026, 9, 30)]
    assert json.loads(frame["Tags"][0]) == {"team": "research", "project": "llm"}
    assert frame["Tags"][3] is None
    assert json.loads(frame["AdditionalInfo"][1])["ServiceType"] == "Standard_NC24ads_A100_v4"
    assert frame["_billing_account_id"].unique().to_list() == ["8611537"]
    assert frame["_billing_period_start"].unique().to_list() == [datetime(2026, 9, 1)]
    assert frame["_extra"].null_count() == 5  # every EA column is pinned
    assert frame.schema["CostInBillingCurrency"] == pl.Decimal(38, 12)


def test_ea_amortized_layout_resolves_cost_currency_and_product_aliases(tmp_path: Path):
    frame = parse_amortized_cost_delivery(deliver(tmp_path, "azure_amortized", EA_AMORTIZED)).frame

    # `Cost`, `BillingCurrency`, `Product`, `InvoiceSection` are the older EA names of the pinned columns.
    assert frame["CostInBillingCurrency"].sum() == Decimal("2315.452")  # 294.96 + 88.152 + 960 + 960 + 12.34
    assert frame["BillingCurrencyCode"].unique().to_list() == ["USD"]
    assert frame["ProductName"][2] == "Virtual Machines NDsv5 Series - ND96isr H100 v5 - US East"
    assert frame["InvoiceSectionName"][0] == "Research"
    assert frame["ChargeType"].to_list() == ["Usage", "Usage", "Usage", "UnusedReservation", "Usage"]
    assert frame["_extra"].null_count() == 5


def test_mca_camel_case_headers_and_iso_datetimes(tmp_path: Path):
    parsed = parse_actual_cost_delivery(deliver(tmp_path, "azure_actual", MCA_ACTUAL))
    frame = parsed.frame

    assert parsed.format_version == "Azure ActualCost (MCA)"
    assert frame["Date"].to_list() == [datetime(2026, 10, d) for d in (3, 1, 4, 31)]
    assert frame["BillingProfileId"].unique().to_list() == ["BP7Q-2X4K-BG7-PGB"]
    assert frame["_billing_account_id"].unique().to_list() == [
        "a1b2c3d4-0000-4e5f-8a9b-0c1d2e3f4a5b:f6e5d4c3-1111-4b2a-9c8d-7e6f5a4b3c2d_2019-05-31"
    ]
    assert frame["_billing_period_start"].unique().to_list() == [datetime(2026, 10, 1)]
    assert frame["CostInBillingCurrency"].sum() == Decimal("602.3")  # 0 + 500 + 2.30 + 100
    assert frame["PayGCostInBillingCurrency"].to_list() == [Decimal("64.216"), None, Decimal("2.3"), None]
    assert frame["ExchangeRatePricingToBilling"][0] == Decimal("0.92")
    assert frame["benefitId"][0].startswith("/providers/Microsoft.BillingBenefits/")
    assert frame["Quantity"][3] is None  # the tax row has no quantity


def test_german_headers_pre_tax_cost_and_no_billing_account(tmp_path: Path):
    frame = parse_actual_cost_delivery(deliver(tmp_path, "azure_actual", GERMAN)).frame

    # `PreTaxCost (PreTaxCost)` → cost, `Currency` → currency, `UsageDateTime` → Date, `UsageQuantity` → Quantity.
    assert frame["CostInBillingCurrency"].to_list() == [Decimal("3.616"), Decimal("1.2")]
    assert frame["BillingCurrencyCode"].to_list() == ["EUR", "EUR"]
    assert frame["Quantity"].to_list() == [Decimal("0.8"), Decimal("0.5")]
    assert frame["UnitOfMeasure"][0] == "10 Hours"
    assert frame["SubscriptionId"][0] == "11111111-12ab-34dc-56ef-123456abcdef"
    # No billing account column: the subscription is the restatement account; no billing period: the month of Date.
    assert frame["_billing_account_id"].to_list() == ["11111111-12ab-34dc-56ef-123456abcdef"] * 2
    assert frame["_billing_period_start"].to_list() == [datetime(2026, 8, 1)] * 2
    assert frame["BillingPeriodStartDate"].null_count() == 2
    assert json.loads(frame["_extra"][0]) == {
        "ResourceRate": "4.52",
        "ResourceType": "Microsoft.Compute/virtualMachines",
        "ServiceName": "Virtual Machines",
        "ServiceTier": "NCasT4 v3 Series",
    }


def test_real_ea_sample_totals_match_an_independent_decimal_sum(tmp_path: Path):
    expected: dict[tuple[datetime, str], Decimal] = defaultdict(Decimal)
    with SAMPLE.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        month, _, year = row["BillingPeriodStartDate"].split("/")[0], None, row["BillingPeriodStartDate"][-4:]
        expected[(datetime(int(year), int(month), 1), row["BillingCurrencyCode"])] += money(
            row["CostInBillingCurrency"]
        )

    frame = parse_actual_cost_delivery(deliver(tmp_path, "azure_actual", SAMPLE)).frame
    found = {
        (period, currency): total
        for period, currency, total in frame.group_by("_billing_period_start", "BillingCurrencyCode")
        .agg(pl.col("CostInBillingCurrency").sum())
        .iter_rows()
    }
    assert frame.height == len(rows) == 27
    assert found == dict(expected)
    # Scientific notation is read exactly: 5.64902E-05 is 0.0000564902.
    assert frame["CostInBillingCurrency"][1] == Decimal("0.0000564902")
    assert json.loads(frame["Tags"][0]) == {"tagA": "valueA", "tagB": "valueB", "tagC": "valueC"}


def test_gzip_csv_and_parquet_with_doubles_read_like_the_csv(tmp_path: Path):
    plain = read_cost_details_file(EA_AMORTIZED)
    gz = tmp_path / "amortized.csv.gz"
    gz.write_bytes(gzip.compress(EA_AMORTIZED.read_bytes()))
    parquet = tmp_path / "amortized.snappy.parquet"
    raw = pl.read_csv(EA_AMORTIZED, infer_schema=False)
    raw.with_columns(pl.col("Cost", "Quantity").cast(pl.Float64)).write_parquet(parquet)

    for other in (read_cost_details_file(gz), read_cost_details_file(parquet)):
        assert other["CostInBillingCurrency"].to_list() == plain["CostInBillingCurrency"].to_list()
        assert other["Quantity"].to_list() == plain["Quantity"].to_list()
        assert other["Date"].to_list() == plain["Date"].to_list()


def test_detection_recognises_the_azure_fixtures():
    assert detect_source(EA_RUN) == "azure_actual"  # from manifest.json exportConfig.type
    assert detect_source(EA_AMORTIZED) == "azure_amortized"  # header + "amortized" in the file name
    assert detect_source(MCA_ACTUAL) == "azure_actual"
    assert detect_source(SAMPLE) == "azure_actual"


# --- bad input ----------------------------------------------------------------------------------------


def _ea_rows() -> tuple[list[str], list[list[str]]]:
    part = next(EA_RUN.glob("*.csv"))
    with part.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


def _write(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows([header, *rows])
    return path


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("Date", "2026-09-05", "not a date in MM/DD/YYYY"),  # the column's first value is MM/DD/YYYY
        ("Date", "13/09/2026", "not a date in MM/DD/YYYY"),  # day-first is never guessed
        ("Date", "9/5/26", "not a date in MM/DD/YYYY"),  # a two-digit year is not read as year 26
        ("Tags", '"team": research', "JSON object of tags"),
        ("AdditionalInfo", '{"ServiceType": ', "not a JSON object"),
        ("CostInBillingCurrency", "12,50", "not a decimal"),
        ("BillingCurrencyCode", "", "billing currency must not be empty"),
    ],
)
def test_bad_values_are_rejected_naming_file_row_and_column(tmp_path: Path, column: str, value: str, message: str):
    header, rows = _ea_rows()
    rows[2][header.index(column)] = value
    path = _write(tmp_path / "bad.csv", header, rows)
    with pytest.raises(RejectedInput, match=message) as error:
        read_cost_details_file(path, source_file="azure_actual/bad.csv")
    assert (error.value.file, error.value.row, error.value.column) == ("azure_actual/bad.csv", 3, column)


def test_a_row_naming_no_service_is_rejected(tmp_path: Path):
    """FOCUS ServiceName must not be null, and the cost lines read it from these three columns."""
    header, rows = _ea_rows()
    for column in ("MeterCategory", "ConsumedService", "ProductName"):
        rows[2][header.index(column)] = ""
    path = _write(tmp_path / "bad.csv", header, rows)
    with pytest.raises(RejectedInput, match="names no service") as error:
        read_cost_details_file(path, source_file="azure_actual/bad.csv")
    assert (error.value.file, error.value.row, error.value.column) == ("azure_actual/bad.csv", 3, "MeterCategory")


def test_a_date_column_in_no_known_format_is_rejected_at_its_first_value(tmp_path: Path):
    header, rows = _ea_rows()
    for row in rows:
        row[header.index("Date")] = "5.9.2026"
    with pytest.raises(RejectedInput, match="is not a date as YYYY-MM-DD, MM/DD/YYYY") as error:
        read_cost_details_file(_write(tmp_path / "dotted.csv", header, rows))
    assert (error.value.row, error.value.column) == (1, "Date")


@pytest.mark.parametrize(
    ("dropped", "column"),
    [
        (("CostInBillingCurrency",), "CostInBillingCurrency"),
        (("BillingCurrencyCode",), "BillingCurrencyCode"),
        (("Date",), "Date"),
        (("BillingAccountId", "SubscriptionId"), "BillingAccountId"),
        (("MeterCategory", "ProductName"), "MeterCategory"),
    ],
)
def test_missing_required_column_is_named(tmp_path: Path, dropped: tuple[str, ...], column: str):
    header, rows = _ea_rows()
    keep = [i for i, name in enumerate(header) if name not in dropped]
    path = _write(tmp_path / "partial.csv", [header[i] for i in keep], [[row[i] for i in keep] for row in rows])
    with pytest.raises(RejectedInput, match="missing a required column") as error:
        read_cost_details_file(path)
    assert error.value.column == column


def test_optional_columns_may_be_missing(tmp_path: Path):
    header, rows = _ea_rows()
    keep = [i for i, name in enumerate(header) if name not in ("Tags", "AdditionalInfo", "BillingAccountId")]
    path = _write(tmp_path / "lean.csv", [header[i] for i in keep], [[row[i] for i in keep] for row in rows])
    frame = read_cost_details_file(path)
    assert frame["Tags"].null_count() == frame["AdditionalInfo"].null_count() == 5
    assert frame["_billing_account_id"].unique().to_list() == ["5f1b6c8e-2d4a-4b7e-9c3f-0a1b2c3d4e5f"]


def test_the_same_column_twice_is_rejected(tmp_path: Path):
    header, rows = _ea_rows()
    header = [*header, "costInBillingCurrency"]
    rows = [[*row, "1"] for row in rows]
    with pytest.raises(RejectedInput, match="has the column twice") as error:
        read_cost_details_file(_write(tmp_path / "twice.csv", header, rows))
    assert error.value.column == "CostInBillingCurrency"


def test_a_less_preferred_cost_alias_is_kept_in_extra(tmp_path: Path):
    header, rows = _ea_rows()
    header = [*header, "PreTaxCost"]
    rows = [[*row, "999"] for row in rows]
    frame = read_cost_details_file(_write(tmp_path / "both.csv", header, rows))
    assert frame["CostInBillingCurrency"][0] == Decimal("294.96")
    assert json.loads(frame["_extra"][0]) == {"PreTaxCost": "999"}


def _run_with_manifest(tmp_path: Path, edit) -> Delivery:
    delivery = deliver(tmp_path, "azure_actual", EA_RUN, name="run")
    manifest_path = delivery.path / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    edit(manifest)
    manifest_path.write_text(json.dumps(manifest))
    return delivery


def test_manifest_listing_a_path_outside_the_delivery_is_rejected(tmp_path: Path):
    (tmp_path / "landing" / "azure_actual").mkdir(parents=True)
    (tmp_path / "landing" / "azure_actual" / "secret.csv").write_text("x\n")
    delivery = _run_with_manifest(tmp_path, lambda m: m["blobs"][0].update(blobName="../secret.csv"))
    with pytest.raises(RejectedInput, match="climbs out of the delivery") as error:
        parse_actual_cost_delivery(delivery)
    assert error.value.file == "run/manifest.json"


@pytest.mark.parametrize(
    ("export_type", "message"),
    [
        ("AmortizedCost", "describes a AmortizedCost export, not ActualCost"),
        ("FocusCost", "FocusCost exports load as source focus"),
    ],
)
def test_manifest_of_another_dataset_is_rejected(tmp_path: Path, export_type: str, message: str):
    delivery = _run_with_manifest(tmp_path, lambda m: m["exportConfig"].update(type=export_type))
    with pytest.raises(RejectedInput, match=message) as error:
        parse_actual_cost_delivery(delivery)
    assert (error.value.file, error.value.column) == ("run/manifest.json", "type")


def test_manifest_byte_count_must_match_the_copy(tmp_path: Path):
    delivery = _run_with_manifest(tmp_path, lambda m: m["blobs"][0].update(byteCount=12))
    with pytest.raises(RejectedInput, match="the manifest lists 12"):
        parse_actual_cost_delivery(delivery)


def test_amortized_source_rejects_an_actual_cost_manifest(tmp_path: Path):
    delivery = deliver(tmp_path, "azure_amortized", EA_RUN, name="run")
    with pytest.raises(RejectedInput, match="not AmortizedCost"):
        parse_amortized_cost_delivery(delivery)


def test_header_only_delivery_is_rejected(tmp_path: Path):
    header, _ = _ea_rows()
    path = _write(tmp_path / "empty.csv", header, [])
    with pytest.raises(RejectedInput, match="no data rows"):
        parse_actual_cost_delivery(deliver(tmp_path, "azure_actual", path))


# --- loading into the warehouse -----------------------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path) -> FinopsHome:
    home = FinopsHome(tmp_path / "home").create_folders()
    with connect(home.warehouse) as con:
        for source in BILLING_SOURCES:
            recover_and_ensure_tables(con, source.raw_table)
    return home


def run_ingest(home: FinopsHome, source=AZURE_ACTUAL):
    with connect(home.warehouse) as con:
        return ingest_landing_zone(home, con, source, log=log)


def test_loads_restate_per_account_and_period_and_bad_input_changes_nothing(home: FinopsHome, tmp_path: Path):
    register(home, "azure_actual", EA_RUN)
    register(home, "azure_actual", MCA_ACTUAL)
    first = run_ingest(home)
    assert [(r.status, r.rows, r.billing_periods) for r in first] == [
        ("loaded", 5, ["2026-09-01"]),
        ("loaded", 4, ["2026-10-01"]),
    ]
    assert first[0].totals == {"USD": {"billed": "29595.452", "effective": "29595.452"}}
    assert first[1].totals == {"EUR": {"billed": "602.3", "effective": "602.3"}}
    before = table_fingerprint(home.warehouse)

    header, rows = _ea_rows()
    rows[1][header.index("Tags")] = '"team": "inference'  # unterminated string
    register(home, "azure_actual", _write(tmp_path / "broken.csv", header, rows))
    rejected = run_ingest(home)[-1]
    assert rejected.status == "rejected"
    assert "row 2, column Tags" in rejected.reason
    assert table_fingerprint(home.warehouse) == before
    reason = next((home.quarantine / "azure_actual").glob("*.reason.txt")).read_text()
    assert "column: Tags" in reason and "row: 2" in reason

    # A restated September (the spot row corrected) replaces September only.
    header, rows = _ea_rows()
    rows[0][header.index("CostInBillingCurrency")] = "300"
    register(home, "azure_actual", _write(tmp_path / "sep-v2.csv", header, rows))
    restated = run_ingest(home)[-1]
    assert (restated.status, restated.replaced_rows) == ("loaded", 5)
    totals = query(
        home.warehouse,
        "select BillingCurrencyCode, sum(CostInBillingCurrency) from raw.azure_actual_cost group by 1 order by 1",
    )
    assert totals == [("EUR", Decimal("602.3")), ("USD", Decimal("29600.492"))]
    with connect(home.warehouse) as con:
        assert audit_mismatches(con, AZURE_ACTUAL.raw_table)[1] == []


def test_amortized_export_loads_into_its_own_table(home: FinopsHome):
    register(home, "azure_amortized", EA_AMORTIZED)
    (result,) = run_ingest(home, AZURE_AMORTIZED)
    assert (result.status, result.rows, result.totals) == (
        "loaded",
        5,
        {"USD": {"billed": "2315.452", "effective": "2315.452"}},
    )
    assert query(home.warehouse, "select count(*) from raw.azure_actual_cost") == [(0,)]


# --- end to end: ingest → dbt → marts -----------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.slow
def test_azure_exports_to_gpu_marts_through_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    from pipelines.cli import main

    home = tmp_path / "finops"
    monkeypatch.setenv("FINOPS_HOME", str(home))
    warehouse = home / "warehouse.duckdb"
    totals_sql = """
        select strftime(billing_period_start, '%Y-%m'), billing_currency, sum(billed_cost), sum(effective_cost)
        from marts.fct_cost_daily where provider_name = 'Microsoft' group by all order by all
    """

    # 1. The actual export alone (a run folder; recognised from its manifest). Billed = effective = cost,
    #    except the reservation purchase: effective 29595.452 - 29200 = 395.452.
    assert main(["ingest", str(EA_RUN)]) == 0
    assert "Recognised" in capsys.readouterr().out
    assert query(warehouse, totals_sql) == [("2026-09", "USD", Decimal("29595.452"), Decimal("395.452"))]

    # 2. The amortized export arrives (recognised from header + file name): its rows replace the actual ones,
    #    except the purchase. Billed still equals the actual total; effective equals the amortized total.
    #    The real public EA sample, recognised from its header, arrives in the same run.
    assert main(["ingest", str(EA_AMORTIZED), str(SAMPLE)]) == 0
    assert ("2026-09", "USD", Decimal("29595.452"), Decimal("2315.452")) in query(warehouse, totals_sql)
    gpu = query(
        warehouse,
        """
        select charge_date, gpu_model, instance_type, pricing_category, charge_category, team, project,
               gpu_hours, billed_cost, effective_cost, effective_cost_per_gpu_hour
        from marts.fct_gpu_spend_daily
        where provider_name = 'Microsoft' and billing_period_start = '2026-09-01' order by all
        """,
    )
    d = datetime(2026, 9, 1).date()
    h100, a100 = "Standard_ND96isr_H100_v5", "Standard_NC24ads_A100_v4"
    assert gpu == [
        # reservation purchase: billed, not effective, no GPU time
        (d, "H100", h100, "Standard", "Purchase", None, None, Decimal(0), Decimal(29200), Decimal(0), None),
        # NC24ads A100 v4 on demand, 24 h × 1 GPU
        (d.replace(day=5), "A100 80GB", a100, "Standard", "Usage", "inference", None, Decimal(24),
         Decimal("88.152"), Decimal("88.152"), Decimal("3.673")),
        # ND96isr H100 v5 Spot, 10 h × 8 GPUs
        (d.replace(day=5), "H100", h100, "Dynamic", "Usage", "research", "llm", Decimal(80),
         Decimal("294.96"), Decimal("294.96"), Decimal("3.687")),
        # reservation-covered usage: 24 h × 8 GPUs at 40/h amortized, not billed
        (d.replace(day=6), "H100", h100, "Committed", "Usage", "research", "llm", Decimal(192),
         Decimal(0), Decimal(960), Decimal(5)),
        # unused reservation hours: paid for, no GPU time
        (d.replace(day=7), "H100", h100, "Committed", "Usage", None, None, Decimal(0), Decimal(0), Decimal(960), None),
    ]  # fmt: skip

    # The utilization funnel: the UnusedReservation row names no VM, so it is kept under its reservation, and its
    # whole cost is the unused commitment part; on every row active + idle + unobserved + unused = the spend, and
    # the spend is every VM row of the amortized export (the purchase's effective cost is 0).
    with EA_AMORTIZED.open(encoding="utf-8-sig", newline="") as handle:
        amortized = list(csv.DictReader(handle))
    unused = {
        (datetime.strptime(row["Date"], "%m/%d/%Y").date(), row["benefitId"]): money(row["Cost"])
        for row in amortized
        if row["ChargeType"] == "UnusedReservation"
    }
    vm_spend = sum(money(row["Cost"]) for row in amortized if row["MeterCategory"] == "Virtual Machines")
    funnel = query(
        warehouse,
        """
        select usage_date, resource_id, provisioned_gpu_hours, effective_cost, active_cost, idle_cost,
               unobserved_cost, unused_commitment_cost
        from marts.fct_gpu_utilization_daily
        where provider_name = 'Microsoft' and usage_date between '2026-09-01' and '2026-09-30'
        """,
    )
    assert len(unused) == 1 and vm_spend == Decimal("2303.112")  # 294.96 + 88.152 + 960 used + 960 unused
    assert {(day, resource): part for day, resource, *_, part in funnel if part} == unused
    for day, resource, hours, spend, active, idle, unobserved, part in funnel:
        assert active + idle + unobserved + part == spend, (day, resource)
        if (day, resource) in unused:
            assert hours == active == idle == unobserved == 0
    assert sum(row[3] for row in funnel) == vm_spend

    # 3. The real public EA sample reconciles to an independent Decimal sum.
    expected: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    with SAMPLE.open(encoding="utf-8-sig", newline="") as handle:
        for row in csv.DictReader(handle):
            month, _, year = row["BillingPeriodStartDate"].split("/")
            expected[(f"{year}-{int(month):02d}", row["BillingCurrencyCode"])] += money(row["CostInBillingCurrency"])
    found = {
        (period, currency): (billed, effective) for period, currency, billed, effective in query(warehouse, totals_sql)
    }
    assert found[("2023-09", "CAD")] == (expected[("2023-09", "CAD")], expected[("2023-09", "CAD")])
    assert set(found) == {("2023-09", "CAD"), ("2026-09", "USD")}
