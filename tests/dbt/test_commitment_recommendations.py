"""Commitment recommendations on a real dbt build over a hand-written Google Cloud FOCUS bill and two price captures.

The bill (FOCUS 1.2 CSV, as Google Cloud exports it), September 2026 and the first half of 1 October, USD:

- a3-highgpu-8g `steady` (8 × H100, us-east4): whole days at $88 an instance-hour ($11 a GPU-hour), every day but
  10 September, and 1 October 00:00-12:00 (an incomplete day: the window ends at midnight before it);
- a3-highgpu-8g `burst` (8 × H100, us-east4): hourly lines at $88 from 20 to 24 September;
- a2-highgpu-1g (1 × A100 40GB, us-central1) from 26 September: 5 days of history, fewer than the 14 needed;
- g2-standard-4 (1 × L4, us-central1) on 1 and 2 September only: no GPU in most hours, nothing steady.

Prices on 1 October, served over real HTTP in the providers' layouts: the Cloud Billing Catalog with H100 in us-east4 at
$11.06 on demand, $7.30 (1 year) and $4.311 (3 years) committed, $5.00 Spot, and a cheaper 1-year commitment in
us-central1 ($7.00) that must not be taken for a us-east4 bill; Lambda's instance types (8 × H100 at $23.92 an hour).

The hourly series, its percentiles and every option's cost per year are recomputed here from the rows written, with
Decimal, and the seed buy_vs_rent_assumptions for owning.
"""

from __future__ import annotations

import csv
import json
import logging
import math
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal

import pytest

from pipelines.lib.ingest.landing import register
from pipelines.lib.prices.market_prices import refresh_price_feed
from pipelines.lib.reporting.report import write_report
from pipelines.lib.settings import DBT_PROJECT_DIR, FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from sources.prices import gcp_catalog, lambda_cloud
from tests.support import FIXTURES_ROOT
from tests.support.browser import open_page
from tests.support.dbt_helpers import dbt_environment, run_dbt
from tests.support.focus_fixtures import focus_rows, write_csv
from tests.support.focus_ingest import ingest_focus
from tests.support.local_http import Reply, local_server
from tests.support.warehouse_helpers import query

PRICE_DAY = date(2026, 10, 1)
WINDOW_START, WINDOW_END = datetime(2026, 9, 1), datetime(2026, 10, 1)
HOURS_PER_YEAR = Decimal(8760)
INSTANCE_PRICE = Decimal(88)
# GPU model -> (instance type, GPUs, region)
INSTANCES = {"H100": ("a3-highgpu-8g", 8, "us-east4"), "A100 40GB": ("a2-highgpu-1g", 1, "us-central1")}
INSTANCES["L4"] = ("g2-standard-4", 1, "us-central1")
# Cloud Billing Catalog SKUs: (description, usageType, region, units, nanos)
SKUS = [
    ("Nvidia H100 80GB GPU running in Americas", "OnDemand", "us-east4", "11", 60000000),
    ("Commitment v1: Nvidia H100 80GB GPU running in Americas for 1 Year", "Commit1Yr", "us-east4", "7", 300000000),
    ("Commitment v1: Nvidia H100 80GB GPU running in Americas for 1 Year", "Commit1Yr", "us-central1", "7", 0),
    ("Commitment v1: Nvidia H100 80GB GPU running in Americas for 3 Years", "Commit3Yr", "us-east4", "4", 311000000),
    ("Nvidia H100 80GB GPU attached to Spot Preemptible VMs running in Americas", "Preemptible", "us-east4", "5", 0),
]
SEED = DBT_PROJECT_DIR / "seeds" / "buy_vs_rent_assumptions.csv"


def _line(model: str, resource: str, start: datetime, hours: int, quantity: int) -> dict[str, str]:
    instance_type, gpus, region = INSTANCES[model]
    month = start.replace(day=1, hour=0)
    cost = f"{INSTANCE_PRICE * quantity:.2f}"
    return {
        "BillingAccountId": "0153A1-B2C3D4-E5F6A7",
        "BillingAccountName": "research",
        "BillingPeriodStart": f"{month:%Y-%m-%dT%H:%M:%SZ}",
        "BillingPeriodEnd": f"{(month + timedelta(days=32)).replace(day=1):%Y-%m-%dT%H:%M:%SZ}",
        "ChargePeriodStart": f"{start:%Y-%m-%dT%H:%M:%SZ}",
        "ChargePeriodEnd": f"{start + timedelta(hours=hours):%Y-%m-%dT%H:%M:%SZ}",
        "ChargeDescription": f"{instance_type} running in {region}",
        "InvoiceIssuerName": "Google Cloud",
        "ProviderName": "Google Cloud",
        "PublisherName": "Google Cloud",
        "ServiceName": "Compute Engine",
        "RegionId": region,
        "ResourceId": resource,
        "PricingQuantity": str(quantity),
        "BilledCost": cost,
        "EffectiveCost": cost,
        "ListCost": cost,
        "ContractedCost": cost,
        "SkuPriceDetails": json.dumps({"InstanceType": instance_type, "GpuCount": gpus}),
    }


def bill() -> list[dict[str, str]]:
    """The FOCUS lines described in the module docstring."""
    lines = []
    for day in range(30):
        start = WINDOW_START + timedelta(days=day)
        if start.day != 10:
            lines.append(_line("H100", "steady", start, 24, 24))
        if 20 <= start.day <= 24:
            lines += [_line("H100", "burst", start + timedelta(hours=hour), 1, 1) for hour in range(24)]
        if start.day >= 26:
            lines.append(_line("A100 40GB", "a100", start, 24, 24))
        if start.day <= 2:
            lines.append(_line("L4", "l4", start, 24, 24))
    lines.append(_line("H100", "steady", WINDOW_END, 12, 12))
    return focus_rows(*lines)


def catalog_page() -> bytes:
    skus = [
        {
            "name": f"services/6F81-5844-456A/skus/FIX-{index}",
            "skuId": f"FIX-{index}",
            "description": description,
            "category": {
                "serviceDisplayName": "Compute Engine",
                "resourceFamily": "Compute",
                "resourceGroup": "GPU",
                "usageType": usage_type,
            },
            "serviceRegions": [region],
            "pricingInfo": [
                {
                    "summary": "",
                    "pricingExpression": {
                        "usageUnit": "h",
                        "displayQuantity": 1,
                        "tieredRates": [
                            {
                                "startUsageAmount": 0,
                                "unitPrice": {"currencyCode": "USD", "units": units, "nanos": nanos},
                            }
                        ],
                        "usageUnitDescription": "hour",
                        "baseUnit": "s",
                        "baseUnitDescription": "second",
                        "baseUnitConversionFactor": 3600,
                    },
                    "currencyConversionRate": 1,
                    "effectiveTime": "2026-09-20T09:41:07.126Z",
                }
            ],
            "serviceProviderName": "Google",
        }
        for index, (description, usage_type, region, units, nanos) in enumerate(SKUS)
    ]
    return json.dumps({"skus": skus, "nextPageToken": ""}).encode()


def hourly_h100() -> list[int]:
    """GPUs in each hour of the window, from the lines written (a line's GPU-hours spread over its hours)."""
    counts = {WINDOW_START + timedelta(hours=hour): 0 for hour in range(720)}
    for line in bill():
        if line["RegionId"] != "us-east4":
            continue
        start = datetime.strptime(line["ChargePeriodStart"], "%Y-%m-%dT%H:%M:%SZ")
        end = datetime.strptime(line["ChargePeriodEnd"], "%Y-%m-%dT%H:%M:%SZ")
        hours = int((end - start).total_seconds() // 3600)
        for hour in range(hours):
            if start + timedelta(hours=hour) in counts:
                counts[start + timedelta(hours=hour)] += 8 * int(line["PricingQuantity"]) // hours
    return list(counts.values())


def nearest_rank(values: list[int], percent: int) -> int:
    return sorted(values)[math.ceil(len(values) * percent / 100) - 1]


def owned_server_per_month() -> tuple[Decimal, Decimal, Decimal]:
    """(capex, running cost, depreciation) a month of one H100 server from the seed, gpu-metrics reference 8.2."""
    with SEED.open(newline="") as handle:
        seed = next(row for row in csv.DictReader(handle) if row["gpu_model"] == "H100")
    value = {
        key: Decimal(text) for key, text in seed.items() if key not in ("gpu_model", "server_description", "currency")
    }
    capex = value["server_price"] / (1 - value["interconnect_fraction"])
    depreciation = capex * (1 - value["residual_value_fraction"]) / (value["life_years"] * 12)
    energy = value["power_kw"] * value["power_draw_fraction"] * value["pue"] * 730 * value["electricity_price_per_kwh"]
    colocation = value["colocation_per_kw_month"] * value["power_kw"]
    maintenance = value["server_price"] * value["maintenance_fraction_per_year"] / 12
    return capex, energy + colocation + maintenance, depreciation


def cents(amount: Decimal) -> Decimal:
    return amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> FinopsHome:
    tmp_path = tmp_path_factory.mktemp("commitments")
    home = FinopsHome(tmp_path / "home").create_folders()
    register(home, "focus", write_csv(tmp_path / "gcp-focus-2026-09.csv", bill()))
    with connect(home.warehouse) as con:
        recover_and_ensure_raw_tables(con)
    assert [result.status for result in ingest_focus(home)] == ["loaded"]
    log = logging.getLogger("test")
    with local_server() as server, pytest.MonkeyPatch.context() as patch:
        for feed_module, key in ((gcp_catalog, "AIzaSyTEST-key"), (lambda_cloud, "secret_lambda_key")):
            patch.setenv(feed_module.BASE_URL_ENV, server.url)
            patch.setenv(feed_module.API_KEY_ENV, key)
        server.route(gcp_catalog.PATH, Reply(catalog_page()))
        server.route(
            lambda_cloud.PATH, Reply((FIXTURES_ROOT / "prices" / "lambda" / "instance-types.json").read_bytes())
        )
        with connect(home.warehouse) as con:
            for feed in (gcp_catalog.FEED, lambda_cloud.FEED):
                refresh_price_feed(home, con, feed, [PRICE_DAY], offline=False, log=log, today=PRICE_DAY)
    build = run_dbt(
        home.root, tmp_path / "target",
        "build", "--select", "+fct_gpu_commitment_recommendations", "+fct_gpu_usage_profile",
        "--exclude", "test_type:unit",
        "--indirect-selection", "cautious",
        "--log-path", str(tmp_path / "logs"),
        environment=dbt_environment(home.root) | {"FINOPS_ONPREM_COSTS_THROUGH": "2026-09-30"},
    )  # fmt: skip
    assert build.returncode == 0, build.stdout[-4000:]
    return home


def test_usage_profile_percentiles_and_baseline_by_hand(built):
    counts = hourly_h100()
    (row,) = query(
        built.warehouse,
        "select window_start, window_end, hours_observed, p10_gpus, p50_gpus, p90_gpus, max_gpus, baseline_gpus, "
        "baseline_busy_share, effective_rate_per_gpu_hour from marts.fct_gpu_usage_profile where gpu_model = 'H100'",
    )
    # 24 hours at 0 (10 September), 576 at 8, 120 at 16 (the burst): p10 is position 72 of 720, p90 position 648.
    assert sorted(set(counts)) == [0, 8, 16] and counts.count(16) == 120 and counts.count(0) == 24
    assert row[:3] == (WINDOW_START, WINDOW_END, 720)
    assert row[3:8] == (nearest_rank(counts, 10), nearest_rank(counts, 50), nearest_rank(counts, 90), 16, 8)
    assert row[3:7] == (8, 8, 16, 16)
    busy = Decimal(sum(min(count, 8) for count in counts)) / (8 * 720)  # 696 of 720 hours
    assert row[8] == busy.quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP) == Decimal("0.966667")
    # lines starting in the window: 29 steady days and 120 burst hours, all at $11 a GPU-hour
    assert row[9] == Decimal(11)


def test_every_option_priced_for_the_baseline_and_owning_recommended(built):
    rows = {
        row[0]: row[1:]
        for row in query(
            built.warehouse,
            "select option_name, offer_provider, offer_region, cost_per_year, current_cost_per_year, savings_per_year, "
            "break_even_utilization, break_even_month, is_recommended, risk, servers, upfront_cost "
            "from marts.fct_gpu_commitment_recommendations where gpu_model = 'H100'",
        )
    }
    assert set(rows) == {"current", "on_demand", "commitment_1y", "commitment_3y", "gpu_cloud", "spot", "own"}
    baseline_hours = 8 * HOURS_PER_YEAR
    current = baseline_hours * 11  # $770,880
    on_demand = baseline_hours * 11
    for option in rows.values():
        assert option[3] == current == Decimal(770880)
    expected_cost = {
        "current": current,
        "on_demand": on_demand,
        "commitment_1y": baseline_hours * Decimal("7.30"),  # us-east4, not the cheaper us-central1 offer
        "commitment_3y": baseline_hours * Decimal("4.311"),
        "gpu_cloud": baseline_hours * Decimal("23.92") / 8,  # Lambda 8 × H100 at $23.92 an hour
    }
    for option, cost in expected_cost.items():
        assert rows[option][2] == cost, option
        assert rows[option][4] == current - cost, option
    assert rows["commitment_1y"][:2] == ("Google Cloud", "us-east4")
    assert rows["gpu_cloud"][0] == "Lambda"
    # 1 year: 511,584 / 770,880 = 0.6636 of the hours; the on-demand cost avoided pays the year's commitment in month
    # ceil(12 × 0.6636) = 8. 3 years: 302,114.88 / 770,880 = 0.3919, month ceil(36 × 0.3919) = 15.
    for option, term in (("commitment_1y", 12), ("commitment_3y", 36)):
        utilization = (expected_cost[option] / on_demand).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)
        assert rows[option][5:7] == (utilization, math.ceil(term * utilization)), option
    assert rows["commitment_1y"][5:7] == (Decimal("0.6636"), 8)
    assert rows["commitment_3y"][5:7] == (Decimal("0.3919"), 15)
    assert rows["commitment_1y"][8] == (
        "needs the 8 GPUs busy 66% of hours for 1 year(s) to beat on-demand (last 30 days: 97%)"
    )
    # Spot: $5.00 stretched by the checkpoint overhead at 15% of nodes reclaimed a month (gpu-metrics reference 7.3)
    rate = -math.log(1 - 0.15) / 730
    interval = math.sqrt(2 * 0.1 / rate)
    overhead = 0.1 / interval + rate * (interval / 2 + 0.5)
    assert float(rows["spot"][2]) == pytest.approx(float(baseline_hours) * 5 * (1 + overhead), rel=1e-9)
    # Owning: one 8-GPU server from the seed, a year of depreciation and running cost; capex repaid by the on-demand
    # cost avoided less running cost a month: capex ÷ (8 × 730 × 11 − running cost).
    capex, running, depreciation = owned_server_per_month()
    own_cost = (depreciation + running) * 12
    assert (rows["own"][9], cents(rows["own"][10])) == (1, cents(capex))
    assert cents(rows["own"][2]) == cents(own_cost)
    assert cents(rows["own"][4]) == cents(current - own_cost)
    assert rows["own"][6] == math.ceil(capex / (8 * 730 * 11 - running)) == 8
    assert rows["own"][5] == (own_cost / on_demand).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)
    assert [name for name, option in rows.items() if option[7]] == ["own"]
    assert rows["own"][8] == (
        "buys 1 server(s) for 5 years: needs the 8 GPUs busy 17% of hours to beat on-demand (last 30 days: 97%); "
        "pays back in month 8"
    )


def test_too_little_history_and_no_steady_usage_get_a_reason_not_a_recommendation(built):
    rows = query(
        built.warehouse,
        "select gpu_model, option_name, hours_observed, baseline_gpus, cost_per_year, is_recommended, risk "
        "from marts.fct_gpu_commitment_recommendations where gpu_model <> 'H100' order by gpu_model",
    )
    assert rows == [
        ("A100 40GB", "insufficient_history", 120, 1, None, False,
         "insufficient history: 5 day(s) billed in the window, 14 needed to recommend a commitment"),
        ("L4", "no_steady_usage", 720, 0, None, False,
         "fewer than one GPU ran in 90% of the hours: nothing steady to commit to"),
    ]  # fmt: skip


def test_the_report_shows_the_recommendation_and_the_usage_profile_behind_it(built, tmp_path):
    report = write_report(built.warehouse, tmp_path / "report.html")
    (section,) = [section for section in report.sections if section.key == "commitments"]
    recommendations, profile = section.tables
    by_scope = {row[0].text: [cell.text for cell in row[1:]] for row in recommendations.rows}
    _, running, depreciation = owned_server_per_month()
    own_cost = (depreciation + running) * 12
    assert by_scope["Google Cloud · H100 · us-east4 (USD)"][:6] == [
        "8", "own", f"USD {cents(own_cost):,}", "USD 770,880.00", f"USD {cents(770880 - own_cost):,}", "8",
    ]  # fmt: skip
    assert by_scope["Google Cloud · A100 40GB · us-central1 (USD)"][1] == "insufficient history"
    assert [cell.text for cell in profile.rows[1][:8]] == [
        "Google Cloud · H100 · us-east4 (USD)", "2026-09-01 – 2026-09-30", "720", "8.0", "8.0", "16.0", "16.0", "8",
    ]  # fmt: skip
    with open_page(report.path) as (page, log):
        page.evaluate("window.chartsRendered.then((views) => views.length)")
        assert page.locator("#chart-commitments svg g[class*='mark-'] path").count() > 0
        log.assert_clean()
