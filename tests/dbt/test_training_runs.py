"""Training runs priced at the bill's effective rate on a real dbt build: the Slurm and SkyPilot fixtures through the
landing zone, the recorded DCGM answer of one Kubernetes node over real HTTP, an owned H100 server and two GPU cloud
bills, then `dbt build --select +fct_training_runs`.

- Slurm (tests/fixtures/training_jobs/sacct-h100-cluster.txt, partition h100 = our owned H100 servers by seed
  slurm_partitions): the owned server below costs (292,000 − 0) ÷ (4 × 365) = 200.000000 a day in depreciation for
  8 × 24 GPU-hours, so 1.041667 a GPU-hour. Job 4101 dense_8b_2t held 16 GPUs for 216,000 s = 960 GPU-hours, a
  planned run: FLOPs 6 × 8e9 × 2e12 = 9.6e22 over 960 H100-hours at 989 TFLOPS is a realized MFU of 28.0865 (the
  fixture's job is short of the plan: the formula is what is checked). The failed, cancelled and timed-out jobs
  count their GPU-hours too; the CPU job and the pending one are no runs.
- SkyPilot (sky-cost-report__1792497600.txt, printed 2026-10-20 12:00 UTC): ft-llama-8b, 2 × 8 A100 for 7h 30m =
  120 GPU-hours launched "3 days ago"; AWS billed A100 40GB only on 5 October (786.528 for 192 GPU-hours, 4.0965 a
  GPU-hour), so the month's rate prices it: 491.58 (SkyPilot said 491.59). The
  L4 cluster has no GCP bill: unpriced. The CPU cluster is no run.
- Kubernetes (query_range_k8s_pods.json, node k8s-node-a, 4 × A100 80GB billed 152.16 for 96 GPU-hours): pod
  train-0 of namespace research (seed kubernetes_training_pods) held 12 GPU-hours: 19.02 at 1.585 a GPU-hour.

Every figure is recomputed below from the fixture files with csv, re and Decimal.
"""

from __future__ import annotations

import csv
import json
import logging
import re
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal

import pytest

from pipelines.lib.catalog.billing import GPU_CLOUD_USAGE, ONPREM_GPU_ASSETS
from pipelines.lib.catalog.training_jobs import SKYPILOT_SOURCE, SLURM_SOURCE
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.ingest.landing import register
from pipelines.lib.ingest.telemetry import fetch_prometheus_days
from pipelines.lib.ingest.training_jobs import ingest_skypilot_reports, ingest_slurm_exports
from pipelines.lib.settings import DBT_PROJECT_DIR, FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from sources.common.http import HttpClient
from sources.telemetry import prometheus
from tests.support import FIXTURES_ROOT
from tests.support.dbt_helpers import dbt_environment, run_dbt
from tests.support.local_http import Reply, local_server
from tests.support.warehouse_helpers import query

FIXTURES = FIXTURES_ROOT / "training_jobs"
SACCT = FIXTURES / "sacct-h100-cluster.txt"
SKY = FIXTURES / "sky-cost-report__1792497600.txt"
RECORDING = FIXTURES_ROOT / "telemetry" / "query_range_k8s_pods.json"
PLANS = DBT_PROJECT_DIR / "seeds" / "planned_training_runs.csv"
SPECS = DBT_PROJECT_DIR / "seeds" / "gpu_specs.csv"
SIX = Decimal("0.000001")
TWELVE = Decimal("0.000000000001")
INVENTORY = {
    "asset_id": "owned-h100-01", "site": "lab", "hostname": "gpu-01.cluster.example", "gpu_model": "H100 SXM 80GB",
    "gpu_count": "8", "purchase_date": "2026-01-01", "purchase_price": "292000", "currency": "USD",
    "depreciation_years": "4", "residual_value": "0", "power_draw_kw": "", "pue": "", "electricity_price_per_kwh": "",
    "colocation_price_per_kw_month": "", "maintenance_per_year": "", "team": "research", "project": "pretrain",
    "retired_date": "",
}  # fmt: skip
USAGE_COLUMNS = [
    *("provider", "account_id", "account_name", "resource_id", "resource_name", "region", "gpu_model", "gpu_count"),
    *("pricing_model", "usage_start", "usage_end", "usage_hours", "unit_price", "cost", "currency", "description"),
    *("tags", "list_unit_price"),
]
BILLS = [
    {
        "provider": "Lambda", "account_id": "org_fixture", "account_name": "Fixture", "resource_id": "k8s-node-a",
        "resource_name": "gpu-node-a", "region": "us-east-1", "gpu_model": "A100 80GB", "gpu_count": "4",
        "pricing_model": "on_demand", "usage_start": "2026-10-05T00:00:00Z", "usage_end": "2026-10-06T00:00:00Z",
        "usage_hours": "24", "unit_price": "6.34", "cost": "152.16", "currency": "USD", "description": "k8s node",
        "tags": json.dumps({"team": "platform"}), "list_unit_price": "6.34",
    },
    {
        "provider": "AWS", "account_id": "111122223333", "account_name": "Fixture AWS", "resource_id": "i-0abc",
        "resource_name": "p4d", "region": "us-east-1", "gpu_model": "A100 40GB", "gpu_count": "8",
        "pricing_model": "on_demand", "usage_start": "2026-10-05T00:00:00Z", "usage_end": "2026-10-06T00:00:00Z",
        "usage_hours": "24", "unit_price": "32.772", "cost": "786.528", "currency": "USD", "description": "p4d",
        "tags": json.dumps({"team": "research"}), "list_unit_price": "32.772",
    },
]  # fmt: skip


def owned_rate() -> Decimal:
    """The owned server's depreciation a day ÷ its GPU-hours a day (its only cost: no energy, colocation, upkeep)."""
    per_day = (Decimal(INVENTORY["purchase_price"]) - Decimal(INVENTORY["residual_value"])) / (
        Decimal(INVENTORY["depreciation_years"]) * 365
    )
    return (per_day.quantize(SIX, ROUND_HALF_UP) / (Decimal(INVENTORY["gpu_count"]) * 24)).quantize(SIX, ROUND_HALF_UP)


def bill_rate(bill: dict) -> Decimal:
    return (Decimal(bill["cost"]) / (Decimal(bill["gpu_count"]) * Decimal(bill["usage_hours"]))).quantize(
        SIX, ROUND_HALF_UP
    )


def slurm_runs() -> dict[str, tuple[str, Decimal, Decimal]]:
    """job id -> (job name, GPUs, GPU-hours) for the allocations that held GPUs."""
    runs = {}
    with SACCT.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="|"):
            untyped = re.search(r"(?:^|,)gres/gpu=(\d+)", row["AllocTRES"])
            typed = re.findall(r"(?:^|,)gres/gpu:[^=,]+=(\d+)", row["AllocTRES"])
            gpus = Decimal(untyped[1]) if untyped else sum(Decimal(count) for count in typed)
            if gpus > 0 and int(row["ElapsedRaw"]) > 0:
                runs[row["JobID"]] = (row["JobName"], gpus, gpus * int(row["ElapsedRaw"]) / 3600)
    return runs


def plan(run_name: str) -> dict[str, str]:
    with PLANS.open(encoding="utf-8") as handle:
        return next(row for row in csv.DictReader(handle) if row["run_name"] == run_name)


def peak_tflops(gpu_model: str) -> Decimal:
    with SPECS.open(encoding="utf-8") as handle:
        return Decimal(
            next(row for row in csv.DictReader(handle) if row["gpu_model"] == gpu_model)["bf16_dense_tflops"]
        )


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> FinopsHome:
    tmp_path = tmp_path_factory.mktemp("training")
    home = FinopsHome(tmp_path / "home").create_folders()
    with (tmp_path / "bills.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, USAGE_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(BILLS)
    with (tmp_path / "servers.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, list(INVENTORY), lineterminator="\n")
        writer.writeheader()
        writer.writerow(INVENTORY)
    register(home, "gpu_cloud_usage", tmp_path / "bills.csv")
    register(home, "onprem_gpu_assets", tmp_path / "servers.csv")
    register(home, SLURM_SOURCE, SACCT)
    register(home, SKYPILOT_SOURCE, SKY)
    log = logging.getLogger("test")
    with local_server() as server, connect(home.warehouse) as con:
        server.route("/api/v1/query_range", Reply(RECORDING.read_bytes()))
        recover_and_ensure_raw_tables(con)
        for source in (GPU_CLOUD_USAGE, ONPREM_GPU_ASSETS):
            assert [result.status for result in ingest_landing_zone(home, con, source, log=log)] == ["loaded"]
        assert [r.status for r in ingest_slurm_exports(home, con, timezone="UTC", log=log)] == ["loaded"]
        assert [r.status for r in ingest_skypilot_reports(home, con, log=log)] == ["loaded"]
        client = prometheus.PrometheusClient(server.url, http=HttpClient(provider=prometheus.PROVIDER))
        fetched = fetch_prometheus_days(
            home, con, [date(2026, 10, 5)], offline=False, log=log, client=client, step_seconds=900,
            metrics=("DCGM_FI_PROF_GR_ENGINE_ACTIVE",),
        )  # fmt: skip
        assert fetched.outcome.status == "loaded"
    env = dbt_environment(home.root) | {"FINOPS_ONPREM_COSTS_THROUGH": "2026-10-31"}
    build = run_dbt(
        home.root, tmp_path / "target",
        "build", "--select", "+fct_training_runs", "--exclude", "test_type:unit", "--indirect-selection", "cautious",
        "--log-path", str(tmp_path / "logs"), environment=env,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout[-4000:]
    assert "fct_training_runs_column_rules" in build.stdout
    return home


def mart(home: FinopsHome, source: str) -> dict[str, tuple]:
    rows = query(
        home.warehouse,
        "select run_key, run_name, gpus, gpu_hours, gpu_model, provider_name, effective_rate_per_gpu_hour, "
        "pricing_rule, actual_cost, reported_cost, rate_period_start, rate_period_end "
        f"from marts.fct_training_runs where run_source = '{source}'",
    )
    return {row[0]: row[1:] for row in rows}


def test_slurm_jobs_are_priced_at_the_owned_servers_cost_per_gpu_hour(built: FinopsHome):
    rate = owned_rate()
    assert rate == Decimal("1.041667")
    expected = {
        job: (name, gpus, hours, "H100", "On-premises", rate, "owned_cost_run_days", hours * rate)
        for job, (name, gpus, hours) in slurm_runs().items()
    }
    rows = {job: row[:8] for job, row in mart(built, "slurm").items()}
    assert rows == expected
    assert set(rows) == {"4101", "4102", "4104", "4106_3"}  # failed, cancelled, timed out; not the CPU or pending job
    assert rows["4102"][1] == 4 and rows["4104"][1] == 8  # typed gres only; typed and untyped counted once
    assert rows["4101"][2] == Decimal(960) and rows["4101"][7] == Decimal("1000.00032")


def test_skypilot_clusters_take_the_months_rate_when_their_days_have_no_bill(built: FinopsHome):
    rows = mart(built, "skypilot")
    launched = datetime(2026, 10, 20, 12) - timedelta(days=3)
    (key,) = [key for key in rows if key.startswith("ft-llama-8b@")]
    name, gpus, hours, gpu_model, provider, rate, rule, cost, reported, start, end = rows[key]
    assert (name, gpus, hours, gpu_model, provider) == ("ft-llama-8b", 16, Decimal("7.5") * 16, "A100 40GB", "AWS")
    assert (rate, rule, start, end) == (
        bill_rate(BILLS[1]),
        "bill_rate_run_months",
        date(2026, 10, 1),
        date(2026, 10, 31),
    )
    assert cost == (hours * rate).quantize(TWELVE) == Decimal("491.58")
    assert reported == Decimal("491.59")  # SkyPilot's own estimate, kept beside
    assert key == f"ft-llama-8b@{launched}"
    (l4,) = [row for key, row in rows.items() if key.startswith("serve-test@")]
    assert l4[5:8] == (None, "unpriced", None)
    assert not [key for key in rows if key.startswith("cpu-dev@")]


def test_kubernetes_training_pods_are_priced_from_the_chargeback_hours(built: FinopsHome):
    rows = mart(built, "kubernetes")
    rate = bill_rate(BILLS[0])
    assert rows == {
        "research/train-0": (
            "train-0", 1, Decimal(12), "A100 80GB", "Lambda", rate, "bill_rate_run_days", Decimal(12) * rate, None,
            date(2026, 10, 5), date(2026, 10, 5),
        )
    }  # fmt: skip
    assert rows["research/train-0"][7] == Decimal("19.02")  # what the chargeback charged the pod


def test_a_planned_run_shows_its_estimate_against_the_actual_and_its_realized_mfu(built: FinopsHome):
    planned = plan("dense_8b_2t")
    flops = 6 * Decimal(planned["parameters"]) * Decimal(planned["tokens"])
    peak = peak_tflops("H100") * Decimal(10) ** 12
    compute_hours = (flops / (peak * Decimal(planned["mfu"]) * 3600)).quantize(SIX, ROUND_HALF_UP)
    estimated = (compute_hours * (1 + Decimal(planned["overhead_fraction"]))).quantize(SIX, ROUND_HALF_UP)
    _, _, hours = slurm_runs()["4101"]
    ((is_planned, estimated_hours, difference, ratio, realized, estimated_cost),) = query(
        built.warehouse,
        "select is_planned_run, estimated_gpu_hours, gpu_hours_difference, gpu_hours_ratio, realized_mfu, "
        "estimated_cost from marts.fct_training_runs where run_source = 'slurm' and run_key = '4101'",
    )
    assert is_planned and estimated_hours == estimated
    assert difference == hours - estimated
    assert ratio == (hours / estimated).quantize(Decimal("0.0001"), ROUND_HALF_UP)
    assert realized == (flops / (hours * peak * 3600)).quantize(Decimal("0.0001"), ROUND_HALF_UP)
    assert estimated_cost is None  # no rented H100 in this warehouse: the estimate has no rate
    others = query(
        built.warehouse,
        "select count(*) from marts.fct_training_runs where not is_planned_run and realized_mfu is null",
    )
    assert others == [(6,)]
