"""Spend anomalies, forecast and alerts on a real dbt build over a hand-made GPU cloud usage delivery.

One Lambda account bills whole days from 1 September to 20 October 2026. Every resource runs the same way each day until
its event, so the quiet weeks must raise nothing and each event must be flagged on its days with its cause:

- serve-1 (1×A100 40GB, team inference) costs 1.68 instead of 1.28 an hour from 14 October: unit_price_change;
- spot-pod (2×A100 80GB, data) runs on demand at 2.38 instead of spot at 0.92 on 15 October: pricing_category_shift;
- reserved-node (8×H100, research) loses its reservation (15.92 an hour) on 16 October and runs on demand (23.92):
  commitment_expired;
- forgotten (8×H100, platform) appears on 17 and 18 October: new_resource;
- batch (1×A100 80GB, platform) runs 12 hours a day, 24 on 19 October: usage_jump;
- worker (1×A10G, inference) runs every day but 20 October: resource_stopped.

Each event is flagged on its first day only: from the next day on, the series' normal range includes it.

Expected deviations are recomputed here from the CSV rows with Decimal (median of the same weekday of the 4 weeks
before).
The webhook goes to a real HTTP server on localhost.
"""

from __future__ import annotations

import csv
import json
import logging
import statistics
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

from pipelines.lib.catalog.billing import GPU_CLOUD_USAGE
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.ingest.landing import register
from pipelines.lib.quality.spend_alerts import WEBHOOK_ENV, new_anomalies, notify, projected_overruns
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from tests.support.dbt_helpers import dbt_environment, run_dbt
from tests.support.local_http import Reply, local_server
from tests.support.warehouse_helpers import query

FIRST, LAST = date(2026, 9, 1), date(2026, 10, 20)
COLUMNS = [
    *("provider", "account_id", "account_name", "resource_id", "resource_name", "region", "gpu_model", "gpu_count"),
    *("pricing_model", "usage_start", "usage_end", "usage_hours", "unit_price", "cost", "currency", "description"),
    *("tags", "list_unit_price"),
]
# name -> (GPU model, GPUs, team)
RESOURCES = {
    "serve-1": ("A100 40GB", 1, "inference"),
    "spot-pod": ("A100 80GB", 2, "data"),
    "reserved-node": ("H100", 8, "research"),
    "forgotten": ("H100", 8, "platform"),
    "batch": ("A100 80GB", 1, "platform"),
    "worker": ("A10G", 1, "inference"),
}
VARS = {
    "anomaly_baseline_weeks": 4,
    "anomaly_min_deviation": 2,
    "anomaly_relative_floor": 0.05,
    "anomaly_score_threshold": 3.5,
    "anomaly_incomplete_days": 0,
    "gpu_budget_overrides": [
        {"month": "2026-10-01", "scope": "team", "name": "platform", "currency": "USD", "amount": 1000}
    ],
}


def usage(name: str, day: date) -> tuple[str, Decimal, Decimal, Decimal] | None:
    """(pricing model, hours, unit price, list price) of a resource on a day, or None when it does not run."""
    if name == "serve-1":
        price = Decimal("1.68") if day >= date(2026, 10, 14) else Decimal("1.28")
        return "on_demand", Decimal(24), price, price
    if name == "spot-pod":
        if day == date(2026, 10, 15):
            return "on_demand", Decimal(24), Decimal("2.38"), Decimal("2.38")
        return "spot", Decimal(24), Decimal("0.92"), Decimal("2.38")
    if name == "reserved-node":
        if day >= date(2026, 10, 16):
            return "on_demand", Decimal(24), Decimal("23.92"), Decimal("23.92")
        return "reserved", Decimal(24), Decimal("15.92"), Decimal("23.92")
    if name == "forgotten":
        running = day in (date(2026, 10, 17), date(2026, 10, 18))
        return ("on_demand", Decimal(24), Decimal("23.92"), Decimal("23.92")) if running else None
    if name == "worker":
        return None if day == date(2026, 10, 20) else ("on_demand", Decimal(24), Decimal("1.00"), Decimal("1.00"))
    return "on_demand", Decimal(24 if day == date(2026, 10, 19) else 12), Decimal("1.64"), Decimal("1.64")


def days() -> list[date]:
    return [FIRST + timedelta(days=offset) for offset in range((LAST - FIRST).days + 1)]


def write_usage(path: Path) -> dict[tuple[str, date], Decimal]:
    """The delivery in the GPU cloud usage CSV contract (docs/gpu-cloud-usage-contract.md); returns cost per resource
    and day."""
    costs: dict[tuple[str, date], Decimal] = {}
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(COLUMNS)
        for day in days():
            for name, (model, gpus, team) in RESOURCES.items():
                billed = usage(name, day)
                if billed is None:
                    continue
                pricing, hours, price, list_price = billed
                cost = hours * price
                costs[(name, day)] = cost
                end = (
                    f"{day.isoformat()}T{int(hours):02d}:00:00Z"
                    if hours < 24
                    else f"{day + timedelta(days=1)}T00:00:00Z"
                )
                writer.writerow(
                    ["Lambda", "org_fixture", "Fixture", f"id-{name}", name, "us-east-1", model, gpus, pricing,
                     f"{day.isoformat()}T00:00:00Z", end, hours, price, f"{cost:.2f}", "USD", f"{name} fixture",
                     json.dumps({"team": team, "project": "p"}), list_price]
                )  # fmt: skip
    return costs


def series_cost(costs: dict[tuple[str, date], Decimal], names: list[str], day: date) -> Decimal:
    return sum((costs.get((name, day), Decimal(0)) for name in names), Decimal(0))


def expected_deviation(costs: dict[tuple[str, date], Decimal], names: list[str], day: date) -> Decimal:
    """Actual minus the median of the same weekday over the 4 weeks before, days without cost counted as 0."""
    past = [series_cost(costs, names, day - timedelta(days=7 * week)) for week in range(1, 5)]
    return series_cost(costs, names, day) - statistics.median(past)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[FinopsHome, dict]:
    tmp_path = tmp_path_factory.mktemp("anomalies")
    home = FinopsHome(tmp_path / "home").create_folders()
    costs = write_usage(tmp_path / "lambda-usage.csv")
    register(home, "gpu_cloud_usage", tmp_path / "lambda-usage.csv")
    with connect(home.warehouse) as con:
        recover_and_ensure_raw_tables(con)
        loaded = ingest_landing_zone(home, con, GPU_CLOUD_USAGE, log=logging.getLogger("test"))
    assert [result.status for result in loaded] == ["loaded"]
    env = dbt_environment(home.root) | {"FINOPS_ONPREM_COSTS_THROUGH": LAST.isoformat()}
    models = (
        "+fct_gpu_spend_anomalies +fct_gpu_spend_anomaly_drivers"
        " +fct_gpu_spend_forecast +fct_gpu_spend_forecast_backtest"
    )
    options = ["--exclude", "test_type:unit", "--indirect-selection", "cautious", "--vars", json.dumps(VARS)]
    build = run_dbt(
        home.root, tmp_path / "target",
        "build", "--select", *models.split(), *options, "--log-path", str(tmp_path / "logs"),
        environment=env,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout[-4000:]
    return home, costs


def test_each_event_is_flagged_on_its_days_with_its_cause_and_the_quiet_weeks_raise_nothing(built):
    home, costs = built
    flagged = query(
        home.warehouse,
        "select charge_date, grain, gpu_model, team, cost_deviation, direction, cause_class, drivers "
        "from marts.fct_gpu_spend_anomalies where is_anomaly order by charge_date, grain, gpu_model, team",
    )
    october = {day: date(2026, 10, day) for day in range(14, 21)}
    series = {
        ("A100 40GB", "inference"): ["serve-1"],
        ("A100 80GB", "data"): ["spot-pod"],
        ("H100", "research"): ["reserved-node"],
        ("H100", "platform"): ["forgotten"],
        ("A100 80GB", "platform"): ["batch"],
        ("A10G", "inference"): ["worker"],
    }
    expected = [
        (october[14], "A100 40GB", "inference", "serve-1", "unit_price_change"),
        (october[15], "A100 80GB", "data", "spot-pod", "pricing_category_shift"),
        (october[16], "H100", "research", "reserved-node", "commitment_expired"),
        (october[17], "H100", "platform", "forgotten", "new_resource"),
        (october[19], "A100 80GB", "platform", "batch", "usage_jump"),
        (october[20], "A10G", "inference", "worker", "resource_stopped"),
    ]
    per_series = [row for row in flagged if row[1] == "provider_gpu_team"]
    assert sorted((row[0], row[2], row[3], row[7].split(" (")[0], row[6]) for row in per_series) == sorted(expected)
    assert not [row for row in flagged if row[0] < october[14]]  # no false positive in the quiet weeks
    for day, model, team, _, _ in expected:
        (deviation,) = [row[4] for row in per_series if (row[0], row[2], row[3]) == (day, model, team)]
        assert deviation == expected_deviation(costs, series[(model, team)], day)
    # The account's total (about 479 a day): the commitment (+201.6 with the price change, against a range of 44.64 from
    # the two days before) and the forgotten node (+775.68 against 201.6); later days lie within the range they set.
    everything = list(RESOURCES)
    totals = [(row[0], row[4], row[6]) for row in flagged if row[1] == "total"]
    assert totals == [
        (october[16], expected_deviation(costs, everything, october[16]), "commitment_expired"),
        (october[17], expected_deviation(costs, everything, october[17]), "new_resource"),
    ]


def test_drivers_carry_prices_categories_and_the_change(built):
    home, costs = built
    drivers = query(
        home.warehouse,
        "select charge_date, resource_name, pricing_category, previous_pricing_category, cost_change, "
        "cost_per_gpu_hour, share_of_deviation from marts.fct_gpu_spend_anomaly_drivers "
        "where grain = 'provider_gpu_team' and charge_date in ('2026-10-15', '2026-10-16') order by 1, 2",
    )
    assert drivers == [
        # The spot pod at 2.38 / 2 GPUs = 1.19 per GPU-hour; the node at 23.92 / 8 = 2.99.
        (date(2026, 10, 15), "spot-pod", "Standard", "Dynamic", Decimal("35.04"), Decimal("1.19"), Decimal(1)),
        (date(2026, 10, 16), "reserved-node", "Standard", "Committed", Decimal(192), Decimal("2.99"), Decimal(1)),
    ]
    assert costs[("reserved-node", date(2026, 10, 16))] - costs[("reserved-node", date(2026, 10, 9))] == 192


def test_forecast_projects_the_platform_team_over_its_budget(built):
    home, costs = built
    platform = ["forgotten", "batch"]
    october = [date(2026, 10, day) for day in range(1, 21)]
    to_date = sum((series_cost(costs, platform, day) for day in october), Decimal(0))
    burn = (sum((series_cost(costs, platform, day) for day in october[-7:]), Decimal(0)) / 7).quantize(
        Decimal("1E-12"), rounding=ROUND_HALF_UP
    )
    forecast = to_date + burn * 11
    row = query(
        home.warehouse,
        "select as_of_date, month_to_date_cost, burn_rate_per_day, forecast_cost, budget_amount, projected_overrun, "
        "is_projected_over_budget, budget_runout_date from marts.fct_gpu_spend_forecast "
        "where grain = 'team' and team = 'platform' and billing_month = '2026-10-01'",
    )
    reached = next(day for day in october if sum(series_cost(costs, platform, d) for d in october if d <= day) >= 1000)
    # 16 days of batch at 19.68 (314.88), + 593.76 on the 17th (908.64), + 593.76 on the 18th: 1,000 passed that day.
    assert reached == date(2026, 10, 18)
    assert row == [(LAST, to_date, burn, forecast, Decimal(1000), forecast - 1000, True, reached)]
    overruns = query(home.warehouse, "select team from marts.fct_gpu_spend_forecast where is_projected_over_budget")
    assert overruns == [("platform",)]
    backtest = query(
        home.warehouse,
        "select cutoff_day, actual_month_cost, forecast_cost from marts.fct_gpu_spend_forecast_backtest "
        "where grain = 'team' and team = 'research' order by cutoff_day",
    )
    # September, research: 382.08 every day; the run rate is exact, so is the forecast.
    assert backtest == [(10, Decimal("11462.4"), Decimal("11462.4")), (20, Decimal("11462.4"), Decimal("11462.4"))]


def test_the_webhook_gets_the_new_anomalies_with_drivers_and_never_the_url_in_logs(built, monkeypatch, caplog):
    home, _ = built
    with connect(home.warehouse, read_only=True) as con:
        anomalies = new_anomalies(con, days=7)
        overruns = projected_overruns(con)
    assert [(a["charge_date"], a["grain"], a["team"], a["cause_class"]) for a in anomalies] == [
        (date(2026, 10, 20), "provider_gpu_team", "inference", "resource_stopped"),
        (date(2026, 10, 19), "provider_gpu_team", "platform", "usage_jump"),
        (date(2026, 10, 17), "total", "(all)", "new_resource"),
        (date(2026, 10, 17), "provider_gpu_team", "platform", "new_resource"),
        (date(2026, 10, 16), "total", "(all)", "commitment_expired"),
        (date(2026, 10, 16), "provider_gpu_team", "research", "commitment_expired"),
        (date(2026, 10, 15), "provider_gpu_team", "data", "pricing_category_shift"),
        (date(2026, 10, 14), "provider_gpu_team", "inference", "unit_price_change"),
    ]
    with local_server() as server:
        token_path = "/hooks/T000/B000/secret-token-123"
        server.route(token_path, Reply(b"ok"))
        monkeypatch.setenv(WEBHOOK_ENV, server.url + token_path)
        outcome = notify("gpu_spend_anomalies", anomalies)
        assert outcome.sent, outcome.detail
        (request,) = server.requests
        body = json.loads(request.body)
        assert body["kind"] == "gpu_spend_anomalies" and body["count"] == len(anomalies) == 8
        research = next(item for item in body["items"] if item["team"] == "research")
        assert research["cost_deviation"] == "192.000000000000"
        assert [driver["resource_name"] for driver in research["drivers"]] == ["reserved-node"]
        assert notify("gpu_budget_overruns", overruns).sent

        # A failing endpoint: retried, then reported without the token anywhere.
        server.route(token_path, Reply(b"down", status=503))
        monkeypatch.setenv("FINOPS_HTTP_ATTEMPTS", "2")
        with caplog.at_level(logging.INFO):  # urllib3's own DEBUG lines name every request path
            failed = notify("gpu_spend_anomalies", anomalies)
    assert not failed.sent and "503" in failed.detail
    assert "secret-token-123" not in failed.detail + caplog.text
    monkeypatch.delenv(WEBHOOK_ENV)
    assert notify("gpu_spend_anomalies", anomalies).detail == f"no webhook ({WEBHOOK_ENV} not set)"
