"""GPU cloud usage CSV and owned-server inventory: parsing, rejection, loading, and the marts they feed.

Fixtures in tests/fixtures/gpu_clouds/ and tests/fixtures/onprem/ are written by hand in the layouts of
docs/gpu-cloud-usage-contract.md. Every expected number below is worked out by hand in its comment.
"""

from __future__ import annotations

import logging
import shutil
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest

from pipelines.cli import main
from pipelines.lib.catalog.billing import GPU_CLOUD_USAGE, ONPREM_GPU_ASSETS, BillingSource
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.ingest.landing import register
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.loads import audit_mismatches
from sources.common.delivery import Delivery
from sources.common.detect import detect_source
from sources.common.errors import RejectedInput
from sources.gpu_clouds import parse_gpu_cloud_usage
from sources.onprem import parse_onprem_gpu_assets
from tests.support import FIXTURES_ROOT
from tests.support.warehouse_helpers import query, table_fingerprint

FIXTURES = FIXTURES_ROOT
USAGE = FIXTURES / "gpu_clouds" / "usage-2026-09"
INVENTORY = FIXTURES / "onprem" / "inventory.csv"
log = logging.getLogger("test")


def delivery_of(path: Path, source: str) -> Delivery:
    return Delivery(source=source, path=path, landing_root=path.parent)


def parse_usage(path: Path):
    return parse_gpu_cloud_usage(delivery_of(path, "gpu_cloud_usage")).frame


def parse_inventory(path: Path):
    return parse_onprem_gpu_assets(delivery_of(path, "onprem_gpu_assets")).frame


def edited(source: Path, target: Path, old: str, new: str) -> Path:
    """A copy of a fixture with one piece of text changed, for a bad-input case."""
    text = source.read_text()
    assert old in text
    target.write_text(text.replace(old, new, 1))
    return target


# --- parsing -------------------------------------------------------------------------------------


def test_lambda_runpod_and_vastai_usage_rows_are_typed_exactly():
    frame = parse_usage(USAGE)
    assert frame.height == 6
    by_resource = {row["resource_id"]: row for row in frame.iter_rows(named=True)}

    lambda_day = frame.row(0, named=True)
    assert lambda_day["_source_file"] == "usage-2026-09/lambda.csv" and lambda_day["_source_row"] == 1
    assert lambda_day["provider"] == "Lambda" and lambda_day["gpu_model"] == "H100 SXM 80GB"
    assert lambda_day["gpu_count"] == Decimal(8) and lambda_day["pricing_model"] == "on_demand"
    assert (lambda_day["usage_hours"], lambda_day["unit_price"], lambda_day["cost"]) == (
        Decimal(24),
        Decimal("23.92"),
        Decimal("574.08"),
    )
    assert lambda_day["billing_account_key"] == "Lambda/lambda-acct-42"
    assert lambda_day["billing_period_start"] == datetime(2026, 9, 1)
    assert lambda_day["tags"] == '{"team":"research","project":"llm-pretrain"}'
    assert lambda_day["_extra"] is None  # the Lambda file has no columns beyond the layout

    # RunPod's local times (+02:00) become UTC; SPOT and On_Demand are read case-insensitively.
    spot = by_resource["pod-7xq2m"]
    assert (spot["usage_start"], spot["usage_end"]) == (datetime(2026, 9, 3, 6), datetime(2026, 9, 3, 16))
    assert spot["pricing_model"] == "spot" and spot["list_unit_price"] == Decimal("5.38")
    on_demand = by_resource["pod-k81fd"]
    assert on_demand["pricing_model"] == "on_demand"
    assert on_demand["unit_price"] is None and on_demand["list_unit_price"] is None  # optional, left empty
    assert on_demand["account_name"] is None  # optional column absent from the RunPod file

    # Vast.ai: 0.31 × 7.75 = 2.4025, billed 2.40 (within a cent); its own column kept in _extra.
    bid = by_resource["inst-5550002"]
    assert (bid["cost"], bid["region"], bid["tags"]) == (Decimal("2.40"), "Texas, US", None)
    assert bid["_extra"] == '{"machine_id":"9031"}'


def test_inventory_rows_are_typed_with_tags_and_purchase_month():
    frame = parse_inventory(INVENTORY)
    dgx, hgx = frame.iter_rows(named=True)
    assert dgx["asset_id"] == "dgx-fra-01" and dgx["gpu_count"] == 8
    assert dgx["purchase_date"] == datetime(2026, 1, 1) and dgx["retired_date"] is None
    assert (dgx["purchase_price"], dgx["residual_value"], dgx["pue"]) == (
        Decimal(300000),
        Decimal(30000),
        Decimal("1.4"),
    )
    assert dgx["tags"] == '{"team":"research","project":"llm-pretrain"}'
    assert hgx["tags"] == '{"team":"inference","project":null}'
    assert hgx["pue"] is None and hgx["colocation_price_per_kw_month"] is None
    assert (hgx["billing_period_start"], hgx["retired_date"]) == (datetime(2025, 6, 1), datetime(2026, 7, 1))


def test_fixture_files_are_recognised_by_their_header():
    for name in ("lambda.csv", "runpod.csv", "vastai.csv"):
        assert detect_source(USAGE / name) == "gpu_cloud_usage"
    assert detect_source(INVENTORY) == "onprem_gpu_assets"


BAD_FIXTURES = [
    # 23.92 × 24 = 574.08, but 57.41 was billed
    (
        "gpu_clouds/bad_cost.csv",
        parse_usage,
        "bad_cost.csv, row 2, column cost: cost 57.41 is not unit_price 23.92 × usage_hours 24 = 574.08",
    ),
    ("gpu_clouds/bad_period.csv", parse_usage, "bad_period.csv, row 2, column usage_end: usage_end must be after"),
    (
        "onprem/bad_residual.csv",
        parse_inventory,
        "bad_residual.csv, row 2, column residual_value: residual_value must not exceed purchase_price",
    ),
    (
        "onprem/duplicate_asset.csv",
        parse_inventory,
        "duplicate_asset.csv, row 3, column asset_id: asset_id appears on an earlier row too",
    ),
]


@pytest.mark.parametrize(("fixture", "parse", "message"), BAD_FIXTURES)
def test_bad_fixtures_are_rejected_naming_file_row_and_column(fixture, parse, message):
    with pytest.raises(RejectedInput) as error:
        parse(FIXTURES / fixture)
    assert message in error.value.describe()


LAMBDA = USAGE / "lambda.csv"


@pytest.mark.parametrize(
    ("old", "new", "row", "column", "reason"),
    [
        (",usage_hours,", ",hours,", None, "usage_hours", "missing required column(s) usage_hours"),
        ("574.08,USD", "574.095,USD", 1, "cost", "= 574.08 (to within 0.01)"),  # off by 1.5 cents
        (",24,23.92", ",24.5,23.92", 1, "usage_hours", "exceeds the hours from usage_start to usage_end"),
        ("on_demand,2026-09-01", "preemptible,2026-09-01", 1, "pricing_model", "on_demand | spot | reserved"),
        ("H100 SXM 80GB,8,", "H100 SXM 80GB,0,", 1, "gpu_count", "must be more than 0"),
        ("H100 SXM 80GB,8,", "H100 SXM 80GB,eight,", 1, "gpu_count", "'eight' is not a decimal number"),
        ("2026-09-01T00:00:00Z,2026-09-02", "01/09/2026,2026-09-02", 1, "usage_start", "'01/09/2026' is not an ISO"),
        ('"{""team"":""research"",', '"team=research,', 1, "tags", "is not a JSON object"),
        ("574.08,USD", "574.08,US Dollar", 1, "currency", "ISO 4217"),
        ("Research Lab,0920f1c3a1b54e0f", "Research Lab,", 1, "resource_id", "must not be empty"),
    ],
)
def test_bad_usage_values_are_rejected(tmp_path: Path, old, new, row, column, reason):
    with pytest.raises(RejectedInput) as error:
        parse_usage(edited(LAMBDA, tmp_path / "lambda.csv", old, new))
    assert (error.value.file, error.value.row, error.value.column) == ("lambda.csv", row, column)
    assert reason in error.value.describe()


def test_a_cost_within_a_cent_of_price_times_hours_is_accepted(tmp_path: Path):
    frame = parse_usage(edited(LAMBDA, tmp_path / "lambda.csv", "574.08,USD", "574.09,USD"))
    assert frame["cost"][0] == Decimal("574.09")


@pytest.mark.parametrize(
    ("old", "new", "row", "column", "reason"),
    [
        ("EUR,4,30000,10.2,1.4", "EUR,4,30000,10.2,0.9", 1, "pue", "must be at least 1"),
        ("EUR,4,30000", "EUR,0,30000", 1, "depreciation_years", "must be more than 0"),
        ("0.25,150,12000", "-0.25,150,12000", 1, "electricity_price_per_kwh", "must not be negative"),
        ("8,2026-01-01,300000", "8.5,2026-01-01,300000", 1, "gpu_count", "'8.5' is not a whole number"),
        ("8,2026-01-01,300000", "8,01.01.2026,300000", 1, "purchase_date", "is not a date such as"),
        ("inference,,2026-07-01", "inference,,2025-05-31", 2, "retired_date", "must not be before purchase_date"),
        (",depreciation_years,", ",life_years,", None, "depreciation_years", "missing required column(s)"),
    ],
)
def test_bad_inventory_values_are_rejected(tmp_path: Path, old, new, row, column, reason):
    with pytest.raises(RejectedInput) as error:
        parse_inventory(edited(INVENTORY, tmp_path / "inventory.csv", old, new))
    assert (error.value.file, error.value.row, error.value.column) == ("inventory.csv", row, column)
    assert reason in error.value.describe()


def test_asset_ids_must_be_unique_across_the_files_of_one_delivery(tmp_path: Path):
    folder = tmp_path / "inventory-2026-09"
    folder.mkdir()
    shutil.copy(INVENTORY, folder / "a.csv")
    shutil.copy(INVENTORY, folder / "b.csv")
    with pytest.raises(RejectedInput) as error:
        parse_inventory(folder)
    assert (error.value.file, error.value.row, error.value.column) == ("inventory-2026-09/b.csv", 1, "asset_id")


# --- loading into a real warehouse ---------------------------------------------------------------


@pytest.fixture
def finops(tmp_path: Path) -> FinopsHome:
    return FinopsHome(tmp_path / "home").create_folders()


def run_ingest(home: FinopsHome, source: BillingSource):
    """Process the landing zone; the outcome of each new delivery (loaded ones stay, as duplicates)."""
    with connect(home.warehouse) as con:
        results = ingest_landing_zone(home, con, source, log=log)
    return [result for result in results if result.status != "duplicate"]


@pytest.mark.parametrize(
    ("source", "good", "bad", "where"),
    [
        (GPU_CLOUD_USAGE, USAGE, FIXTURES / "gpu_clouds" / "bad_cost.csv", "row 2, column cost"),
        (GPU_CLOUD_USAGE, USAGE, FIXTURES / "gpu_clouds" / "bad_period.csv", "row 2, column usage_end"),
        (ONPREM_GPU_ASSETS, INVENTORY, FIXTURES / "onprem" / "bad_residual.csv", "row 2, column residual_value"),
        (ONPREM_GPU_ASSETS, INVENTORY, FIXTURES / "onprem" / "duplicate_asset.csv", "row 3, column asset_id"),
    ],
)
def test_rejected_delivery_is_quarantined_and_changes_nothing(finops: FinopsHome, source, good, bad, where):
    register(finops, source.name, good)
    assert [r.status for r in run_ingest(finops, source)] == ["loaded"]
    before = table_fingerprint(finops.warehouse)

    register(finops, source.name, bad)
    results = run_ingest(finops, source)
    assert [r.status for r in results] == ["rejected"]
    assert f"{bad.name}, {where}" in results[0].reason
    assert table_fingerprint(finops.warehouse) == before
    reasons = list((finops.quarantine / source.name).glob("*.reason.txt"))
    assert len(reasons) == 1 and f"file: {results[0].reason.split(',')[0]}" in reasons[0].read_text()


def test_usage_delivery_restates_only_the_accounts_and_months_it_carries(finops: FinopsHome, tmp_path: Path):
    register(finops, "gpu_cloud_usage", USAGE)
    first = run_ingest(finops, GPU_CLOUD_USAGE)
    # 574.08 + 299.00 + 39.80 + 9.02 + 89.10 + 2.40
    assert first[0].totals == {"USD": {"billed": "1013.4", "effective": "1013.4"}}
    assert first[0].billing_periods == ["2026-09-01"]

    # Lambda re-sends September with only the first day: its key is replaced, RunPod and Vast.ai stay.
    corrected = tmp_path / "lambda-corrected.csv"
    corrected.write_text("\n".join(LAMBDA.read_text().splitlines()[:2]) + "\n")
    register(finops, "gpu_cloud_usage", corrected)
    second = run_ingest(finops, GPU_CLOUD_USAGE)
    assert [(r.status, r.rows, r.replaced_rows) for r in second] == [("loaded", 1, 2)]
    totals = query(
        finops.warehouse,
        "select billing_account_key, count(*), sum(cost) from raw.gpu_cloud_usage group by 1 order by 1",
    )
    assert totals == [
        ("Lambda/lambda-acct-42", 1, Decimal("574.08")),
        ("RunPod/rp-team-7", 2, Decimal("48.82")),  # 39.80 + 9.02
        ("Vast.ai/vast-998877", 2, Decimal("91.50")),  # 89.10 + 2.40
    ]
    with connect(finops.warehouse) as con:
        assert audit_mismatches(con, GPU_CLOUD_USAGE.raw_table)[1] == []


def test_each_inventory_delivery_replaces_the_whole_inventory(finops: FinopsHome, tmp_path: Path):
    register(finops, "onprem_gpu_assets", INVENTORY)
    first = run_ingest(finops, ONPREM_GPU_ASSETS)
    assert first[0].billing_periods == ["2025-06-01", "2026-01-01"]  # purchase months
    assert first[0].totals == {"EUR": {"billed": "336500.5", "effective": "336500.5"}}  # 300000 + 36500.50

    # The next inventory no longer lists the Berlin server (it was sold): it leaves the table.
    smaller = tmp_path / "inventory-2026-10.csv"
    smaller.write_text("\n".join(INVENTORY.read_text().splitlines()[:2]) + "\n")
    register(finops, "onprem_gpu_assets", smaller)
    second = run_ingest(finops, ONPREM_GPU_ASSETS)
    assert [(r.status, r.rows, r.replaced_rows) for r in second] == [("loaded", 1, 2)]
    assert query(finops.warehouse, "select asset_id from raw.onprem_gpu_assets") == [("dgx-fra-01",)]
    statuses = query(finops.warehouse, "select status from audit.loads order by loaded_at")
    assert statuses == [("superseded",), ("loaded",)]
    with connect(finops.warehouse) as con:
        assert audit_mismatches(con, ONPREM_GPU_ASSETS.raw_table)[1] == []


# --- the whole pipeline through the CLI ----------------------------------------------------------

# dgx-fra-01, 8×H100 bought 2026-01-01 for €300,000, 4 years to €30,000, per day:
DEPRECIATION = Decimal("184.931507")  # 270,000 / (4 × 365) = 184.9315068… rounded to 6 decimals
ENERGY = Decimal("85.68")  # 10.2 kW × PUE 1.4 × 24 h × €0.25
COLOCATION = Decimal("50.301370")  # 10.2 kW × €150 × 12 / 365 = 50.3013698…
MAINTENANCE = Decimal("32.876712")  # €12,000 / 365 = 32.8767123…
DGX_DAY = Decimal("353.789589")  # 184.931507 + 85.68 + 50.301370 + 32.876712
# hgx-ber-07, 4×A100 80GB bought 2025-06-01 for €36,500.50, 1 year to €500.50, retired 2026-07-01:
HGX_DEPRECIATION = Decimal("98.630137")  # 36,000 / 365 = 98.6301369…
HGX_LAST_DAY = Decimal("98.630132")  # 36,000 − 364 × 98.630137 = 36,000 − 35,901.369868
HGX_ENERGY = Decimal("15.60")  # 3.25 kW × PUE 1 (empty) × 24 h × €0.20
HGX_MAINTENANCE = Decimal("2.739726")  # €1,000 / 365 = 2.7397260…


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh FINOPS_HOME with the on-prem window pinned to 2026-09-30 (dbt_project.yml reads the env var)."""
    root = tmp_path / "finops"
    monkeypatch.setenv("FINOPS_HOME", str(root))
    monkeypatch.setenv("FINOPS_ONPREM_COSTS_THROUGH", "2026-09-30")
    return root


def mart(home: Path, sql: str) -> list[tuple]:
    return query(home / "warehouse.duckdb", sql)


@pytest.mark.e2e
@pytest.mark.slow
def test_gpu_clouds_and_owned_servers_reach_the_marts(home: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["ingest", str(USAGE), str(INVENTORY)]) == 0
    out = capsys.readouterr().out
    assert "as GPU cloud usage" in out and "6 rows, billing periods 2026-09-01" in out
    assert "as On-premises GPU assets" in out and "2 rows, billing periods 2025-06-01, 2026-01-01" in out

    gpu_clouds = mart(
        home,
        """
        select provider_name, gpu_model, pricing_category, team, project,
               sum(gpu_hours), sum(effective_cost), sum(list_cost)
        from marts.fct_gpu_spend_daily where billing_currency = 'USD'
        group by all order by all
        """,
    )
    assert gpu_clouds == [
        # 24 h + 12.5 h of 8 GPUs = 292 GPU-hours; 574.08 + 299.00
        ("Lambda", "H100", "Standard", "research", "llm-pretrain", Decimal(292), Decimal("873.08"), Decimal("873.08")),
        # NVIDIA A100 80GB PCIe, 5.5 h × 1 GPU; no list price given: list = billed
        ("RunPod", "A100 80GB", "Standard", "inference", None, Decimal("5.5"), Decimal("9.02"), Decimal("9.02")),
        # NVIDIA H100 80GB HBM3 spot, 10 h × 2 GPUs; list 5.38 × 10 h
        ("RunPod", "H100", "Dynamic", "inference", None, Decimal(20), Decimal("39.80"), Decimal("53.80")),
        # A100-80GB, 20.25 h × 4 GPUs
        ("Vast.ai", "A100 80GB", "Standard", "research", "eval", Decimal(81), Decimal("89.10"), Decimal("89.10")),
        # RTX 4090, a vocabulary name as written; list 0.45 × 7.75 h
        ("Vast.ai", "RTX 4090", "Dynamic", None, None, Decimal("7.75"), Decimal("2.40"), Decimal("3.4875")),
    ]
    assert mart(
        home,
        "select charge_date, billing_account_id, region_id from marts.fct_gpu_spend_daily "
        "where provider_name = 'RunPod' and pricing_category = 'Dynamic'",
    ) == [(datetime(2026, 9, 3).date(), "rp-team-7", "EU-RO-1")]

    # One day of the 8×H100 server: four components, 24 h × 8 GPUs.
    assert mart(
        home,
        """
        select provider_name, billing_account_id, gpu_model, pricing_category, team, project,
               gpu_hours, effective_cost, billed_cost, list_cost, cost_line_count
        from marts.fct_gpu_spend_daily where charge_date = date '2026-09-15' and billing_currency = 'EUR'
        """,
    ) == [("On-premises", "fra-1", "H100", "Standard", "research", "llm-pretrain", 192, DGX_DAY, DGX_DAY, DGX_DAY, 4)]
    components = mart(
        home,
        """
        select SkuMeter, EffectiveCost, PricingQuantity, PricingUnit, x_gpu_hours
        from intermediate.int_billing__cost_lines
        where ResourceId = 'dgx-fra-01' and ChargePeriodStart = timestamp '2026-09-15 00:00:00'
        order by SkuMeter
        """,
    )
    assert components == [
        ("Colocation", COLOCATION, Decimal("10.2"), "kW-Days", 0),
        ("Depreciation", DEPRECIATION, 24, "Hours", 192),
        ("Energy", ENERGY, Decimal("342.72"), "kWh", 0),  # 10.2 × 1.4 × 24 kWh
        ("Maintenance", MAINTENANCE, 1, "Days", 0),
    ]

    # The Berlin server: a whole 365-day life inside the window, its last day takes the rounding
    # remainder, then 30 fully depreciated days (0, still 4 GPUs × 24 h) until retirement on 2026-07-01.
    hgx = dict(
        mart(
            home,
            """
            select cast(ChargePeriodStart as date), EffectiveCost from intermediate.int_onprem__daily_cost_lines
            where ResourceId = 'hgx-ber-07' and SkuMeter = 'Depreciation'
            """,
        )
    )
    assert len(hgx) == 395  # 2025-06-01 … 2026-06-30
    assert hgx[datetime(2025, 6, 1).date()] == HGX_DEPRECIATION
    assert hgx[datetime(2026, 5, 31).date()] == HGX_LAST_DAY
    assert hgx[datetime(2026, 6, 1).date()] == 0 and hgx[datetime(2026, 6, 30).date()] == 0
    assert sum(hgx.values()) == Decimal(36000)  # purchase − residual, exactly

    # Owned servers over the pinned window (through 2026-09-30), from the GPU mart:
    owned = mart(
        home,
        """
        select gpu_model, count(distinct charge_date), sum(gpu_hours), sum(effective_cost)
        from marts.fct_gpu_spend_daily where provider_name = 'On-premises' group by all order by all
        """,
    )
    assert owned == [
        # 395 days × 4 GPUs × 24 h; 36,000 + 395 × 15.60 + 395 × 2.739726
        ("A100 80GB", 395, Decimal(37920), Decimal(36000) + 395 * HGX_ENERGY + 395 * HGX_MAINTENANCE),
        # 2026-01-01 … 2026-09-30 = 273 days × 192 GPU-hours; 273 × 353.789589 = 96,584.557797
        ("H100", 273, Decimal(52416), Decimal("96584.557797")),
    ]
    september = mart(
        home,
        """
        select sum(gpu_hours), sum(effective_cost) from marts.fct_gpu_spend_daily
        where provider_name = 'On-premises' and billing_period_start = timestamp '2026-09-01 00:00:00'
        """,
    )
    assert september == [(Decimal(5760), 30 * DGX_DAY)]  # only the Frankfurt server: 30 × 192, 30 × 353.789589

    # All spend per currency equals the GPU spend: every line here is a GPU line.
    assert mart(
        home,
        "select billing_currency, sum(effective_cost), sum(gpu_effective_cost) from marts.fct_cost_daily "
        "group by 1 order by 1",
    ) == [
        ("EUR", Decimal("139828.749567"), Decimal("139828.749567")),  # 43,244.19177 + 96,584.557797
        ("USD", Decimal("1013.40"), Decimal("1013.40")),  # 873.08 + 9.02 + 39.80 + 89.10 + 2.40
    ]
