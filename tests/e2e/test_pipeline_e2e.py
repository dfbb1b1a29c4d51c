"""The whole pipeline through the CLI, in a temporary FINOPS_HOME, checked against hand-computed numbers."""

from __future__ import annotations

import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.cli import main
from pipelines.lib.catalog.billing import SOURCES_BY_NAME
from pipelines.lib.settings import PROJECT_ROOT
from synthetic_data.demo_common import group_of
from synthetic_data.demo_gpu_clouds import DEMO_EVENTS
from synthetic_data.demo_organisation import write_demo_organisation
from synthetic_data.demo_telemetry import MIG_SLICES, mig_share, write_demo_telemetry
from tests.support import FIXTURES_ROOT
from tests.support.browser import broken_images, open_page
from tests.support.focus_fixtures import BASE_ROW, focus_rows, write_csv
from tests.support.focus_validator import validate_focus_file
from tests.support.warehouse_helpers import query as warehouse_query
from tests.support.warehouse_helpers import table_fingerprint

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
FIXTURES = FIXTURES_ROOT

AWS_ROWS = focus_rows(
    {  # 10 hours of one 8×H100 spot instance: 80 GPU-hours
        "ChargeDescription": "p5.48xlarge Spot",
        "PricingCategory": "Dynamic",
        "PricingQuantity": "10",
        "BilledCost": "200.00",
        "EffectiveCost": "200.00",
        "ListCost": "983.20",
        "ContractedCost": "983.20",
        "SkuPriceDetails": "NULL",
        "x_UsageType": "USE2-SpotUsage:p5.48xlarge",
        "Tags": '{"team": "research", "project": "llm"}',
    },
    {  # 5 hours of one A10G, found through SkuPriceDetails: 5 GPU-hours
        "ChargeDescription": "g5.xlarge On Demand",
        "PricingQuantity": "5",
        "BilledCost": "5.03",
        "EffectiveCost": "5.03",
        "ListCost": "5.03",
        "ContractedCost": "5.03",
        "SkuPriceDetails": '{"InstanceType": "g5.xlarge", "GpuCount": 1}',
        "x_UsageType": "BoxUsage:g5.xlarge",
        "Tags": '{"team": "inference"}',
    },
    {  # not a GPU
        "ServiceCategory": "Storage",
        "ServiceName": "Amazon Simple Storage Service",
        "PricingQuantity": "100",
        "PricingUnit": "GB-Month",
        "BilledCost": "12.34",
        "EffectiveCost": "12.34",
        "ListCost": "12.34",
        "ContractedCost": "12.34",
        "SkuPriceDetails": "NULL",
        "x_UsageType": "TimedStorage-ByteHrs",
        "Tags": "NULL",
    },
    {
        "ChargeCategory": "Tax",
        "ServiceCategory": "Other",
        "ServiceName": "Tax",
        "PricingQuantity": "NULL",
        "PricingUnit": "NULL",
        "PricingCategory": "NULL",
        "BilledCost": "20.00",
        "EffectiveCost": "20.00",
        "ListCost": "20.00",
        "ContractedCost": "20.00",
        "SkuPriceDetails": "NULL",
        "x_UsageType": "NULL",
        "Tags": "NULL",
    },
)
_LAMBDA = {k: v for k, v in BASE_ROW.items() if k not in ("ProviderName", "PublisherName")}
LAMBDA_ROWS = [
    _LAMBDA
    | {  # 24 hours of an 8×H100 node at $23.92/h: 192 GPU-hours
        "ServiceProviderName": "Lambda",
        "HostProviderName": "Lambda",
        "BillingAccountId": "lambda-team",
        "InvoiceIssuerName": "Lambda, Inc.",
        "ServiceName": "Lambda Cloud",
        "PricingQuantity": "24",
        "BilledCost": "574.08",
        "EffectiveCost": "574.08",
        "ListCost": "574.08",
        "ContractedCost": "574.08",
        "SkuPriceDetails": '{"InstanceType": "gpu_8x_h100_sxm5"}',
        "Tags": '{"team": "research", "project": "llm"}',
    }
]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "finops"
    monkeypatch.setenv("FINOPS_HOME", str(root))
    return root


def query(home: Path, sql: str) -> list[tuple]:
    return warehouse_query(home / "warehouse.duckdb", sql)


def assert_docs_site_renders(index: Path) -> None:
    """Open the static docs page in headless Chromium: the model tree must be rendered by its scripts."""
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("headless Chromium is not installed (.ci/run installs the Debian package)")
    with tempfile.TemporaryDirectory() as profile:
        dom = subprocess.run(
            [
                chromium,
                *["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic"],
                "--no-first-run",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--virtual-time-budget=10000",
                "--dump-dom",
                index.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout
    # Model links exist only once the page's JavaScript has built its lists from the manifest (which ones the
    # first page of the model list shows depends on how many models there are, so they are counted).
    model_link = 'href="#!/model/model.gpu_finops.'
    assert model_link not in index.read_text()
    assert dom.count(model_link) >= 10, dom[-2000:]


def test_ingest_to_marts_docs_sql_export_and_a_rejected_file(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    aws = write_csv(tmp_path / "aws-2026-09.csv", AWS_ROWS)
    lambda_file = write_csv(tmp_path / "lambda-2026-09.csv", LAMBDA_ROWS)

    assert main(["ingest", str(aws), str(lambda_file)]) == 0
    out = capsys.readouterr().out
    assert "4 rows, billing periods 2026-09-01" in out and "USD billed 237.37" in out  # 200 + 5.03 + 12.34 + 20
    assert "1 rows, billing periods 2026-09-01" in out and "USD billed 574.08" in out

    # All spend, per currency: 200 + 5.03 + 12.34 + 20 + 574.08.
    assert query(home, "select billing_currency, sum(effective_cost) from marts.fct_cost_daily group by 1") == [
        ("USD", Decimal("811.45"))
    ]
    gpu = query(
        home,
        """
        select provider_name, gpu_model, sum(gpu_hours), sum(effective_cost)
        from marts.fct_gpu_spend_daily group by all order by all
        """,
    )
    assert gpu == [
        ("AWS", "A10G", Decimal(5), Decimal("5.03")),
        ("AWS", "H100", Decimal(80), Decimal("200.00")),
        ("Lambda", "H100", Decimal(192), Decimal("574.08")),
    ]
    per_hour = query(
        home,
        "select team, effective_cost_per_gpu_hour from marts.fct_gpu_spend_daily where provider_name = 'Lambda'",
    )
    assert per_hour == [("research", Decimal("2.99"))]  # 574.08 / 192

    # Ad-hoc SQL from the CLI, read-only.
    assert main(["sql", "select * from marts.fct_cost_daily limit 5", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert 1 <= len(rows) <= 5 and "effective_cost" in rows[0]
    assert main(["sql", "create table marts.nope as select 1"]) == 1

    # The docs site is one self-contained page describing the marts.
    assert main(["docs"]) == 0
    assert_docs_site_renders(home / "docs" / "index.html")

    # A FOCUS export holds the same money as the warehouse.
    assert main(["export", "focus", str(tmp_path / "export")]) == 0
    exported = pq.read_table(tmp_path / "export" / "focus_cost_and_usage.parquet")
    assert sum(exported.column("EffectiveCost").to_pylist()) == Decimal("811.45")
    assert {"BilledCost", "ProviderName", "x_GpuHours", "x_GpuModel"} <= set(exported.column_names)

    # A broken delivery is quarantined with its reason and changes no data; the models are not rebuilt.
    before = table_fingerprint(home / "warehouse.duckdb")
    broken = [AWS_ROWS[0], AWS_ROWS[1] | {"BilledCost": "five"}]
    assert main(["ingest", str(write_csv(tmp_path / "broken.csv", broken))]) == 1
    out = capsys.readouterr().out
    assert "REJECTED" in out and "row 2, column BilledCost" in out
    assert "Nothing new was loaded, so the models were not rebuilt" in out
    assert table_fingerprint(home / "warehouse.duckdb") == before
    reasons = list((home / "quarantine" / "focus").glob("*.reason.txt"))
    assert len(reasons) == 1 and "'five' is not a decimal number" in reasons[0].read_text()

    # One delivery failing its quality suite freezes nothing: it is rejected before its load commits, and
    # another source's delivery in the same run loads and reaches the marts.
    focus_before = query(home, "select count(*), sum(BilledCost) from raw.focus_cost_and_usage")
    unknown_currency = [
        AWS_ROWS[0]
        | {
            "BillingPeriodStart": "2026-10-01T00:00:00Z",
            "BillingPeriodEnd": "2026-11-01T00:00:00Z",
            "ChargePeriodStart": "2026-10-01T00:00:00Z",
            "ChargePeriodEnd": "2026-10-02T00:00:00Z",
            "BillingCurrency": "XYZ",
        }
    ]
    azure_run = FIXTURES / "azure" / "ea-actual-run"
    (azure_part,) = azure_run.rglob("part_*.csv")
    with azure_part.open(encoding="utf-8-sig", newline="") as handle:
        azure_billed = sum(Decimal(row["CostInBillingCurrency"]) for row in csv.DictReader(handle))
    bad = write_csv(tmp_path / "unknown-currency.csv", unknown_currency)
    assert main(["ingest", str(bad), str(azure_run)]) == 1
    out = capsys.readouterr().out
    assert "BillingCurrency is an ISO 4217 currency code" in out and "moved to quarantine" in out
    assert "loaded" in out and "ea-actual-run" in out
    assert query(home, "select count(*), sum(BilledCost) from raw.focus_cost_and_usage") == focus_before
    microsoft = query(home, "select sum(billed_cost) from marts.fct_cost_daily where provider_name = 'Microsoft'")
    assert microsoft == [(azure_billed,)]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """One `gpu-finops demo --seed 7` shared by the demo checks, and the generator's totals for seed 7.

    It runs as its own process with stdout a pipe, as under CI or cron; what it printed is kept beside the home.
    """
    root = tmp_path_factory.mktemp("demo")
    env = {key: value for key, value in os.environ.items() if key not in ("DAGSTER_HOME", "FINOPS_WAREHOUSE")}
    env["FINOPS_HOME"] = str(root / "finops")
    demo_run = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "demo", "--seed", "7"],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=3600,
    )
    (root / "demo-output.txt").write_text(demo_run.stdout)
    assert demo_run.returncode == 0, demo_run.stdout[-5000:]
    write_demo_organisation(root / "expected", seed=7)
    return root / "finops", json.loads((root / "expected" / "expected_totals.json").read_text())


def test_demo_output_fits_on_a_screen_and_ends_with_the_summary(demo: tuple[Path, dict]):
    """Not a terminal: one line per phase, none twice (no line per partition or per dbt test), no Dagster or dbt
    log line; the summary and the report come last, then the log file, which holds Dagster's and dbt's logs."""
    home, _ = demo
    lines = (home.parent / "demo-output.txt").read_text().splitlines()
    assert len(lines) <= 40, "\n".join(lines)
    assert [line for line in lines if line.strip() and lines.count(line) > 1] == []
    assert not [line for line in lines if " - dagster - " in line or "Running with dbt" in line or "\r" in line]
    assert any(line.startswith("GPU FinOps summary") for line in lines)
    assert lines[-2].startswith("Report: ")
    (log,) = (home / "logs").glob("*-demo.log")
    assert lines[-1] == f"Details (Dagster's and dbt's logs): {log}"
    text = log.read_text()
    assert " - dagster - INFO - " in text and "Running with dbt" in text
    assert text.count("This test was not included in Dagster's asset check selection") <= 5  # audit.loads' tests


def test_demo_loads_every_billing_source_of_the_organisation(demo: tuple[Path, dict]):
    """Every source the demo writes has a connector, and each delivery loaded without rejection."""
    home, expected = demo
    sources = {delivery["source"] for delivery in expected["deliveries"]}
    assert sources - SOURCES_BY_NAME.keys() == set(), "billing sources without a connector"
    loaded = query(home, "select source, count(*) from audit.loads where status = 'loaded' group by all")
    billing_loads = {source: count for source, count in loaded if source in SOURCES_BY_NAME}
    assert billing_loads == dict(Counter(delivery["source"] for delivery in expected["deliveries"]))
    assert dict(loaded).get("ecb") == 1, "the demo loads exchange rates from the bundled snapshot once"
    assert not list((home / "quarantine").rglob("*.reason.txt"))


def test_demo_cost_lines_match_the_expected_totals_per_source_period_and_currency(demo: tuple[Path, dict]):
    """Billed and effective cost per billing source, period and currency; on-prem has effective cost only.

    Azure's actual and amortized datasets are one group: their FOCUS lines split between the two
    sources however the connector chooses, but together they hold the invoice (billed) and the
    amortized cost (effective).
    """
    home, expected = demo
    wanted: dict[tuple, list] = defaultdict(lambda: [Decimal(0), Decimal(0)])
    for entry in expected["billing"]:
        key = (group_of(entry["sources"][0]), entry["billing_period_start"], entry["billing_currency"])
        wanted[key][0] += Decimal(entry["billed_cost"])
        wanted[key][1] += Decimal(entry["effective_cost"])
    found: dict[tuple, list] = defaultdict(lambda: [Decimal(0), Decimal(0)])
    for source, period, currency, billed, effective in query(
        home,
        """
        select x_source, cast(BillingPeriodStart as date), BillingCurrency, sum(BilledCost), sum(EffectiveCost)
        from intermediate.int_billing__cost_lines group by all
        """,
    ):
        key = (group_of(source), period.isoformat(), currency)
        found[key][0] += billed
        found[key][1] += effective
    for totals in (wanted, found):
        for key, value in totals.items():
            if key[0] == "onprem_gpu_assets":
                value[0] = None
    assert dict(found) == dict(wanted)


def test_demo_gpu_hours_match_per_provider_gpu_model_and_pricing_category(demo: tuple[Path, dict]):
    home, expected = demo
    wanted: dict[tuple, Decimal] = defaultdict(Decimal)
    for entry in expected["gpu_hours"]:
        key = (entry["provider"], entry["billing_period_start"], entry["gpu_model"], entry["pricing_category"])
        wanted[key] += Decimal(entry["gpu_hours"])
    providers = {key[0] for key in wanted}
    found = {
        (provider, period.isoformat(), model, category): hours
        for provider, period, model, category, hours in query(
            home,
            """
            select provider_name, cast(billing_period_start as date), gpu_model, pricing_category, sum(gpu_hours)
            from marts.fct_gpu_spend_daily group by all having sum(gpu_hours) <> 0
            """,
        )
        if provider in providers
    }
    assert found == dict(wanted)


def test_demo_gpu_effective_cost_per_team_matches(demo: tuple[Path, dict]):
    """GPU lines' effective cost per team (None: untagged, such as unused reservation hours)."""
    home, expected = demo
    wanted: dict[tuple, Decimal] = defaultdict(Decimal)
    for entry in expected["team_gpu_effective_cost"]:
        key = (group_of(entry["sources"][0]), entry["billing_period_start"], entry["billing_currency"], entry["team"])
        wanted[key] += Decimal(entry["effective_cost"])
    found: dict[tuple, Decimal] = defaultdict(Decimal)
    for source, period, currency, team, cost in query(
        home,
        """
        select x_source, cast(BillingPeriodStart as date), BillingCurrency, x_team, sum(EffectiveCost)
        from intermediate.int_billing__cost_lines where x_gpu_model is not null group by all
        """,
    ):
        found[(group_of(source), period.isoformat(), currency, team)] += cost
    assert {key: cost for key, cost in found.items() if cost} == {key: cost for key, cost in wanted.items() if cost}

    # The demo events (docs/spend-anomalies-and-forecast.md): each event is flagged on its first day with its cause
    # and its fleet as first driver, and nothing else is flagged; the platform team alone is projected over its
    # October budget (the forgotten node).
    event_month = date.fromisoformat(expected["onprem_costs_through"]).replace(day=1)
    flagged = query(
        home,
        "select charge_date, cause_class, drivers from marts.fct_gpu_spend_anomalies where is_anomaly order by 1",
    )
    assert [(day, cause, drivers.split(" (")[0].rsplit("-", 1)[0]) for day, cause, drivers in flagged] == [
        (event_month + timedelta(days=first), cause, fleet) for _, fleet, first, _, cause in DEMO_EVENTS
    ]
    over_budget = "select billing_month, team from marts.fct_gpu_spend_forecast where is_projected_over_budget"
    assert query(home, over_budget) == [(event_month, "platform")]


def test_demo_focus_export_of_every_source_passes_the_focus_validator(demo: tuple[Path, dict], tmp_path, monkeypatch):
    """All seven sources, exported as FOCUS 1.2, pass the FinOps Foundation's validator with no failed rule."""
    home, _ = demo
    monkeypatch.setenv("FINOPS_HOME", str(home))
    assert main(["export", "focus", str(tmp_path / "focus")]) == 0
    report = validate_focus_file(tmp_path / "focus" / "focus_cost_and_usage.parquet")
    assert report.failed == {}, report.summary()
    assert report.checked > 100


def test_demo_price_index_answers_what_an_h100_hour_costs_today_and_30_days_ago(demo: tuple[Path, dict]):
    """Every price feed loads offline, and the index reads the bundled captures the way a person would.

    By hand from sources/prices/snapshots: on 31 October the specialized clouds list H100 on-demand at
    Lambda 21.52 / 8 = 2.69 and 2.99 (1×), RunPod secure 2.69 and CoreWeave HGX 47.84 / 8 = 5.98, so the
    cheapest is 2.69 and the median (2.69 + 2.99) / 2 = 2.84. On 1 October the 1 September captures are in
    effect: Lambda 23.92 / 8 = 2.99 and 3.29, RunPod 2.99, CoreWeave above them: 2.99 and (2.99 + 3.29) / 2.
    The cheapest hyperscaler H100-hour on-demand is AWS p5.48xlarge at 55.04 / 8 = 6.88 on both days.
    """
    home, _ = demo
    loaded_feeds = {row[0] for row in query(home, "select distinct feed from raw.price_observations")}
    assert loaded_feeds == {
        "aws_price_list",
        "aws_spot",
        "azure_retail",
        "gcp_catalog",
        "lambda",
        "runpod",
        "vast",
        "oci",
        "coreweave",
    }
    index = {
        (str(day), klass): (low, mid)
        for day, klass, low, mid in query(
            home,
            "select price_date, provider_class, min_price_per_gpu_hour_usd, median_price_per_gpu_hour_usd "
            "from marts.fct_gpu_price_index where gpu_model = 'H100' and pricing_model = 'on_demand' "
            "and price_date in ('2026-10-01', '2026-10-31')",
        )
    }
    assert index[("2026-10-31", "specialized")] == (Decimal("2.69"), Decimal("2.84"))
    assert index[("2026-10-01", "specialized")] == (Decimal("2.99"), Decimal("3.14"))
    assert index[("2026-10-31", "hyperscaler")][0] == index[("2026-10-01", "hyperscaler")][0] == Decimal("6.88")
    cheapest_aws = query(
        home,
        "select instance_type, price_per_instance_hour, price_per_gpu_hour from marts.fct_gpu_market_prices "
        "where provider = 'AWS' and region = 'us-east-1' and gpu_model = 'H100' and pricing_model = 'on_demand'",
    )
    assert cheapest_aws == [("p5.48xlarge", Decimal("55.04"), Decimal("6.88"))]


def test_demo_gpu_energy_matches_the_telemetry_generators_ledger(demo: tuple[Path, dict], tmp_path: Path):
    """Per day and instance, the measured GPU energy is the generator's own (power × seconds, which its counters'
    increases, resets included, add up to); DCGM GPUs are measured by the counter, nvidia-smi hosts by power; what
    is billed without telemetry is estimated. The owned server gpu-ams1-01's energy cost is its measured kWh × the
    chip-to-server factor × its inventory PUE × its electricity price, every day, and training runs have energy."""
    home, _ = demo
    ledger = json.loads(write_demo_telemetry(tmp_path / "energy", seed=7)["expected"].read_text())["days"]
    mart = {
        (str(day), resource): (kwh, sources.split(","))
        for day, resource, kwh, sources in query(
            home,
            """
            select usage_date, resource_id, sum(gpu_kwh), string_agg(distinct energy_source, ',')
            from marts.fct_gpu_energy_daily
            where energy_source <> 'estimated'
            group by usage_date, resource_id
            """,
        )
    }
    assert set(mart) == {(row["day"], row["resource_id"]) for row in ledger}
    tolerance = Decimal("0.000001")  # each GPU-hour's kWh is rounded at 12 decimals
    for row in ledger:
        kwh, sources = mart[(row["day"], row["resource_id"])]
        assert abs(kwh - Decimal(row["energy_kwh"])) < tolerance, row
        if row["via"] == "nvidia_smi":
            assert sources == ["power_integrated"], row
        else:
            assert "measured_counter" in sources, row
    assert query(home, "select count(*) from marts.fct_gpu_energy_daily where energy_source = 'estimated'")[0][0] > 0
    (server,) = [row for row in ledger if row["fleet"] == "owned-gpu-ams1"][:1]
    owned = query(
        home,
        f"""
        select usage_date, energy_basis, energy_cost, assumed_energy_cost
        from marts.fct_owned_server_energy_daily where resource_id = '{server["resource_id"]}'
        """,
    )
    by_day = {row["day"]: Decimal(row["energy_kwh"]) for row in ledger if row["resource_id"] == server["resource_id"]}
    assert {str(day) for day, *_ in owned} >= set(by_day)
    for day, basis, cost, assumed in owned:
        if str(day) in by_day:
            expected = by_day[str(day)] * Decimal("1.8214") * Decimal("1.25") * Decimal("0.1890")
            assert basis == "measured" and abs(cost - expected) < tolerance, (day, cost, expected)
            assert cost < assumed  # the inventory assumes 10.2 kW drawn all day
    rules = dict(query(home, "select energy_rule, count(*) from marts.fct_training_run_energy group by energy_rule"))
    assert {"pods", "host_gpus", "estimated"} <= set(rules)


def test_demo_gpu_utilization_matches_the_telemetry_generators_ledger(demo: tuple[Path, dict], tmp_path: Path):
    """Per day and instance, the mart's observed, active, effective and idle GPU-hours are the generator's own.

    The ledger sums each generated sample's ratio × seconds exactly; the mart gets there through hourly
    ratios rounded at 12 decimals, hence the 1e-6 GPU-hour tolerance. Every instance with telemetry is one
    the demo bills that day (match_status `matched`), and idle is observed minus active.
    """
    home, _ = demo
    ledger = json.loads(write_demo_telemetry(tmp_path / "telemetry", seed=7)["expected"].read_text())["days"]
    # 5 CUR 2.0 instances via DCGM (p5 pretrain and chat, p4d eval, two p4d spot), 6 legacy ones via nvidia-smi, and
    # the owned server gpu-ams1-01 via DCGM, which the host map names
    assert len({row["resource_id"] for row in ledger}) == 12
    mart = {
        (str(day), resource): row
        for day, resource, *row in query(
            home,
            """
            select usage_date, resource_id, match_status, telemetry_gpu_hours, active_gpu_hours,
                   effective_gpu_hours, idle_gpu_hours, util_is_fallback, provisioned_gpu_hours
            from marts.fct_gpu_utilization_daily
            where match_status <> 'billed_without_telemetry'
            """,
        )
    }
    assert set(mart) == {(row["day"], row["resource_id"]) for row in ledger}
    tolerance = Decimal("0.000001")
    for row in ledger:
        status, observed, active, effective, idle, fallback, provisioned = mart[(row["day"], row["resource_id"])]
        assert status == "matched", row
        assert abs(observed - Decimal(row["telemetry_gpu_hours"])) < tolerance, row
        assert abs(active - Decimal(row["active_gpu_hours"])) < tolerance, row
        assert abs(effective - Decimal(row["effective_gpu_hours"])) < tolerance, row
        assert abs(idle - (Decimal(row["telemetry_gpu_hours"]) - Decimal(row["active_gpu_hours"]))) < tolerance, row
        # samples stand for whole steps inside the billed running time (the legacy CUR rounds hours to 10 decimals)
        assert observed <= provisioned + tolerance, row
        assert fallback == (row["gpu_model"] == "H100" or row["via"] == "nvidia_smi"), row
    # The demo cluster (docs/kubernetes-chargeback.md), and the owned server whose GPUs 4-7 serve a model: each pod's
    # GPU-hours are the ledger's, and the node's rows add up to its GPU cost on the bill (its GPU cost lines summed
    # here) to the cent; GPU 7 of the cluster is split into MIG slices: its pods pay their slices' share (g/7), the
    # slices no pod holds and the unpartitioned 2/7 are idle_mig_slice rows (a full day: 192 billed, 137.5 held by
    # pods on whole GPUs, 24 on GPU 7 between slice pods and idle slices, 30.5 unallocated); the owned server's Slurm
    # GPUs 0-3 are unallocated (96 of 192)
    pods = json.loads(write_demo_telemetry(tmp_path / "pods", seed=7)["expected"].read_text())["pods"]
    (cluster_node,) = {row["resource_id"] for row in pods if row["namespace"] == "eval-llm"}
    (owned_node,) = {row["resource_id"] for row in pods if row["pod"] == "vllm-llama-3-1-70b-0"}
    shares = {profile: mig_share(profile) for _, profile in MIG_SLICES}
    for node, full_day_unallocated in ((cluster_node, Decimal("30.5")), (owned_node, Decimal(96))):
        cluster = {
            (row["day"], row["namespace"], row["pod"]): Decimal(row["held_gpu_hours"])
            for row in pods
            if row["resource_id"] == node
        }
        held: dict[str, Decimal] = defaultdict(Decimal)
        for (day, _, _), hours in cluster.items():
            held[day] += hours
        allocation = query(
            home,
            "select usage_date, allocation_type, namespace, pod, gpu_hours, allocated_cost, mig_profile "
            f"from marts.fct_gpu_cost_allocation_daily where resource_id = '{node}'",
        )
        idle: dict[str, Decimal] = defaultdict(Decimal)
        for day, kind, _, _, hours, _, _ in allocation:
            if kind == "idle_mig_slice":
                idle[str(day)] += hours
        assert {(str(day), ns, pod): hours for day, kind, ns, pod, hours, *_ in allocation if kind == "pod"} == cluster
        bill = query(
            home,
            "select cast(ChargePeriodStart as date), sum(EffectiveCost), sum(x_gpu_hours) "
            "from intermediate.int_billing__cost_lines "
            f"where x_gpu_model is not null and ResourceId = '{node}' group by all",
        )
        assert bill and {str(day) for day, _, _ in bill} >= set(held)
        for day, cost, gpu_hours in bill:
            rows = [row for row in allocation if row[0] == day]
            assert sum(row[5] for row in rows) == cost, day
            assert all(row[5] == row[5].quantize(Decimal("0.01")) for row in rows if row[1] == "pod"), day
            (unallocated,) = [row[4] for row in rows if row[1] == "unallocated"]
            assert unallocated == gpu_hours - held[str(day)] - idle[str(day)], day
            assert all(row[5] == row[5].quantize(Decimal("0.01")) for row in rows if row[1] == "idle_mig_slice"), day
        assert full_day_unallocated in {row[4] for row in allocation if row[1] == "unallocated"}
        if node == cluster_node:
            # a full day of GPU 7: the 1g.5gb slices idle 24 + 17 hours, the 2/7 no slice covers 24 hours
            full_day_idle = {
                (row[6], row[4]) for row in allocation if row[1] == "idle_mig_slice" and row[0] == date(2026, 10, 15)
            }
            unpartitioned = 1 - shares["3g.20gb"] - 2 * shares["1g.5gb"]
            assert full_day_idle == {("1g.5gb", 41 * shares["1g.5gb"]), (None, 24 * unpartitioned)}
    # the owned server's model: a cost per million tokens every demo day on provider On-premises, its cost the pod's
    # chargeback to the cent, and performance per euro of provider class owned
    days = {row["day"] for row in ledger if row["resource_id"] == owned_node}
    per_day = query(
        home,
        "select cast(usage_date as varchar), provider_name, allocation_cost, cost_per_million_tokens "
        "from marts.fct_inference_cost_per_million_tokens where model_name = 'Llama-3.1-70B-Instruct'",
    )
    assert {day for day, *_ in per_day} == days and len(per_day) == len(days)
    assert {provider for _, provider, *_ in per_day} == {"On-premises"}
    pod_cost = dict(
        query(
            home,
            "select cast(usage_date as varchar), allocated_cost from marts.fct_gpu_cost_allocation_daily "
            "where pod = 'vllm-llama-3-1-70b-0'",
        )
    )
    assert all(cost == pod_cost[day] and per_million > 0 for day, _, cost, per_million in per_day)
    classes = query(
        home,
        "select distinct provider_class from marts.fct_inference_performance_per_euro "
        "where model_name = 'Llama-3.1-70B-Instruct'",
    )
    assert classes == [("owned",)]


# --- the report and the docs site in a real browser, and marts checked against each other --------------------

REPORT_CHART_SECTIONS = (
    *("gpu-spend", "utilization", "spot-savings", "market", "buy-vs-rent", "ai-workloads", "energy-carbon"),
    *("commitments", "anomalies", "forecast"),
)


def test_demo_report_renders_every_chart_offline_with_the_generators_totals(demo: tuple[Path, dict], tmp_path: Path):
    """`gpu-finops demo` writes the report; in Chromium, offline, every chart section draws one SVG with marks,
    nothing errs, and the GPU spend per billing currency is the generator's own total (summed here from its
    ledger of GPU lines per team), exact to the last decimal and shown rounded to the cent."""
    home, expected = demo
    report = home / "report" / "gpu-finops-report.html"
    wanted: dict[str, Decimal] = defaultdict(Decimal)
    for entry in expected["team_gpu_effective_cost"]:
        wanted[entry["billing_currency"]] += Decimal(entry["effective_cost"])
    with open_page(report) as (page, log):
        assert page.evaluate("window.chartsRendered.then((views) => views.length)") == len(REPORT_CHART_SECTIONS)
        assert page.locator(".chart").count() == len(REPORT_CHART_SECTIONS)
        for key in REPORT_CHART_SECTIONS:
            svg = page.locator(f"#chart-{key} svg")
            assert svg.count() == 1, key
            box = svg.bounding_box()
            assert box is not None and box["width"] > 200 and box["height"] > 100, key
            marks = page.locator(f"#chart-{key} svg g[class*='mark-'] path").count()
            assert marks > 0, key
        assert page.locator("p.empty").count() == 0
        spend = dict(
            page.evaluate(
                "Array.from(document.querySelectorAll('#gpu-spend tbody tr'))"
                ".map((row) => [row.cells[0].textContent, row.cells[1].dataset.exact])"
            )
        )
        assert {currency: Decimal(exact) for currency, exact in spend.items()} == dict(wanted)
        shown = page.locator("#gpu-spend tbody").inner_text()
        for currency, total in wanted.items():
            assert f"{currency} {total.quantize(Decimal('0.01')):,}" in shown
        screenshot = tmp_path / "gpu-finops-report.png"
        page.screenshot(path=str(screenshot), full_page=True)
        log.assert_clean()
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and screenshot.stat().st_size > 50_000
    print(f"report screenshot: {screenshot}")
    # Commitment recommendations for the demo's steady usage: the p5-chat fleet runs one p5.48xlarge (8 × H100) in
    # us-east-1 every hour on its Reserved Instance at (18.00 recurring + 18.00 upfront) ÷ 8 = 4.50 a GPU-hour, so
    # its baseline is 8 GPUs at 8 × 8,760 × 4.50 = 315,360 a year now; one option is recommended, saving money, and
    # AWS's 1-year reservation breaks even within its year.
    rows = {
        row[0]: row[1:]
        for row in query(
            home,
            "select option_name, baseline_gpus, current_cost_per_year, cost_per_year, savings_per_year, "
            "break_even_utilization, break_even_month, is_recommended from marts.fct_gpu_commitment_recommendations "
            "where provider_name = 'AWS' and gpu_model = 'H100' and region_id = 'us-east-1'",
        )
    }
    assert {row[0] for row in rows.values()} == {8} and {row[1] for row in rows.values()} == {Decimal(315360)}
    (recommended,) = [row for row in rows.values() if row[6]]
    assert recommended[3] == recommended[1] - recommended[2] > 0
    _, _, cost, _, utilization, month, _ = rows["commitment_1y"]
    assert utilization == (cost / rows["on_demand"][2]).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)
    assert 1 <= month == math.ceil(12 * utilization) <= 12


def test_demo_docs_site_loads_clean_and_its_search_finds_fct_buy_vs_rent(demo: tuple[Path, dict], tmp_path: Path):
    home, _ = demo
    with open_page(home / "docs" / "index.html") as (page, log):
        page.locator("#search").type("fct_buy_vs_rent")
        page.wait_for_function("document.body.innerText.includes('search results')")
        # each result's title is an h4 (name, then its kind); the search box's text is echoed in an h1
        results = page.locator("h4.a")
        titles = [text.split() for text in results.all_inner_texts()]
        assert ["fct_buy_vs_rent", "model"] in titles, titles
        results.nth(titles.index(["fct_buy_vs_rent", "model"])).click()
        page.wait_for_function("location.hash.includes('model.gpu_finops.fct_buy_vs_rent')")
        screenshot = tmp_path / "docs-fct_buy_vs_rent.png"
        page.screenshot(path=str(screenshot))
        log.assert_clean()
        assert broken_images(page) == []  # the dbt logo in the header among them
    assert screenshot.stat().st_size > 10_000
    print(f"docs screenshot: {screenshot}")


def test_demo_gpu_spend_equals_the_gpu_rows_of_all_spend(demo: tuple[Path, dict]):
    """fct_gpu_spend_daily against fct_cost_daily's GPU columns, per billing period and currency, exactly."""
    home, _ = demo
    gpu = query(
        home,
        """
        select billing_period_start, billing_currency, sum(effective_cost), sum(billed_cost), sum(gpu_hours)
        from marts.fct_gpu_spend_daily group by all order by all
        """,
    )
    all_spend = query(
        home,
        """
        select billing_period_start, billing_currency, sum(gpu_effective_cost), sum(gpu_billed_cost), sum(gpu_hours)
        from marts.fct_cost_daily group by all having sum(gpu_hours) <> 0 or sum(gpu_effective_cost) <> 0
        order by all
        """,
    )
    assert len(gpu) >= 6  # three months, two currencies at least
    assert gpu == all_spend


def test_demo_reporting_models_match_the_ledger_and_ratios_recomputed_here(demo: tuple[Path, dict]):
    """rpt_gpu_share_of_bill: GPU spend per currency is the generator's ledger total; the bill its whole effective
    cost; share and cost per GPU-hour are those totals divided here with Decimal, rounded half up to 12 places.
    rpt_gpu_cost_per_hour_by_provider: the same ratio per provider from fct_gpu_spend_daily's rows."""
    home, expected = demo
    twelve = Decimal("1E-12")
    gpu: dict[str, Decimal] = defaultdict(Decimal)
    for entry in expected["team_gpu_effective_cost"]:
        gpu[entry["billing_currency"]] += Decimal(entry["effective_cost"])
    bill: dict[str, Decimal] = defaultdict(Decimal)
    for entry in expected["billing"]:
        bill[entry["billing_currency"]] += Decimal(entry["effective_cost"])
    hours = dict(query(home, "select billing_currency, sum(gpu_hours) from marts.fct_gpu_spend_daily group by all"))
    found = {
        row[0]: row[1:]
        for row in query(
            home,
            "select billing_currency, bill_effective_cost, gpu_effective_cost, gpu_hours, cost_per_gpu_hour, "
            "gpu_share_of_bill from marts.rpt_gpu_share_of_bill",
        )
    }
    assert set(found) == set(bill) and set(gpu) <= set(bill)
    for currency, (bill_cost, gpu_cost, gpu_hours, per_hour, share) in found.items():
        assert bill_cost == bill[currency]
        assert gpu_cost == gpu[currency]
        assert gpu_hours == hours[currency]
        assert per_hour == (gpu[currency] / hours[currency]).quantize(twelve, ROUND_HALF_UP)
        assert share == (gpu[currency] / bill[currency]).quantize(twelve, ROUND_HALF_UP)
        assert Decimal(0) < share < Decimal(1)
    spend: dict[tuple, list[Decimal]] = defaultdict(lambda: [Decimal(0), Decimal(0)])
    for provider, currency, cost, gpu_hours in query(
        home, "select provider_name, billing_currency, effective_cost, gpu_hours from marts.fct_gpu_spend_daily"
    ):
        spend[(provider, currency)][0] += cost
        spend[(provider, currency)][1] += gpu_hours
    per_provider = {
        (provider, currency): (cost, per_hour)
        for provider, currency, cost, per_hour in query(
            home,
            "select provider_name, billing_currency, effective_cost, cost_per_gpu_hour "
            "from marts.rpt_gpu_cost_per_hour_by_provider",
        )
    }
    assert per_provider == {
        key: (cost, (cost / gpu_hours).quantize(twelve, ROUND_HALF_UP) if gpu_hours else None)
        for key, (cost, gpu_hours) in spend.items()
    }


def test_demo_savings_opportunities_are_ranked_as_recomputed_here(demo: tuple[Path, dict]):
    """rpt_savings_opportunities against the four marts' rows summed and ranked here: per currency by amount
    (largest first), then opportunity, then scope; only amounts above zero."""
    home, _ = demo
    sources = {
        "Market overpay (vs median price)": (
            "fct_market_benchmark",
            "provider_name || ' · ' || gpu_model || ' · ' || pricing_category, reporting_currency, "
            "savings_moving_to_median",
        ),
        "Forgone spot savings": (
            "fct_spot_savings_monthly",
            "provider_name || ' · ' || gpu_model, reporting_currency, forgone_savings_interruption_adjusted",
        ),
        "Idle GPU-hours": (
            "fct_gpu_utilization_daily",
            "provider_name || ' · ' || gpu_model || ' · team ' || coalesce(team, '(untagged)'), billing_currency, "
            "idle_cost",
        ),
        "Unused commitment": (
            "fct_commitment_coverage_monthly",
            "provider_name || ' · ' || coalesce(commitment_discount_name, commitment_discount_id), billing_currency, "
            "unused_commitment_cost",
        ),
    }
    amounts: dict[tuple, Decimal] = defaultdict(Decimal)
    for opportunity, (mart, columns) in sources.items():
        where = " where commitment_discount_id is not null" if mart == "fct_commitment_coverage_monthly" else ""
        for scope, currency, amount in query(home, f"select {columns} from marts.{mart}{where}"):
            if amount is not None:
                amounts[(currency, opportunity, scope, mart)] += amount
    ranked: dict[str, list[tuple]] = defaultdict(list)
    for (currency, opportunity, scope, mart), amount in sorted(
        amounts.items(), key=lambda item: (-item[1], item[0][1], item[0][2] is None, item[0][2] or "")
    ):
        if amount > 0 and currency is not None:
            ranked[currency].append((len(ranked[currency]) + 1, opportunity, scope, amount, mart))
    found: dict[str, list[tuple]] = defaultdict(list)
    for currency, *row in query(
        home,
        "select currency, opportunity_rank, opportunity, scope, amount, source_mart "
        "from marts.rpt_savings_opportunities order by currency, opportunity_rank",
    ):
        found[currency].append(tuple(row))
    assert {"EUR", "USD"} <= set(found)
    assert len({row[1] for rows in found.values() for row in rows}) == 4, "every kind of opportunity appears"
    assert dict(found) == dict(ranked)


def test_demo_funnel_parts_add_up_to_the_gpu_spend(demo: tuple[Path, dict]):
    """Per billed row of fct_gpu_utilization_daily: active (utilized) + idle + unobserved + unused commitment cost
    = effective cost, exactly, each part non-negative. The demo's reservations leave hours unused (Azure EA
    UnusedReservation rows that name no VM, the European entity's FOCUS Unused rows): rows without GPU-hours whose
    cost is all unused commitment. So the funnel's spend per currency is the generator's whole GPU spend."""
    home, expected = demo
    rows = query(
        home,
        """
        select billing_currency, effective_cost, active_cost, idle_cost, unobserved_cost, unused_commitment_cost,
               provisioned_gpu_hours
        from marts.fct_gpu_utilization_daily where effective_cost is not null
        """,
    )
    assert len(rows) > 100 and any(row[3] > 0 for row in rows)
    for _, cost, active, idle, unobserved, unused, _ in rows:
        assert active + idle + unobserved + unused == cost
        assert active >= 0 and idle >= 0 and unobserved >= 0 and unused >= 0
    without_hours = [row for row in rows if row[6] == 0 and row[1] != 0]
    assert {row[0] for row in without_hours} == {"EUR", "USD"}
    assert all(row[5] == row[1] and row[2] == row[3] == row[4] == 0 for row in without_hours)
    wanted: dict[str, Decimal] = defaultdict(Decimal)
    for entry in expected["team_gpu_effective_cost"]:
        wanted[entry["billing_currency"]] += Decimal(entry["effective_cost"])
    funnel: dict[str, Decimal] = defaultdict(Decimal)
    for currency, _, active, idle, unobserved, unused, _ in rows:
        funnel[currency] += active + idle + unobserved + unused
    assert dict(funnel) == dict(wanted)
