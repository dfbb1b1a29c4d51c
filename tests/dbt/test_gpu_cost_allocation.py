"""Kubernetes GPU chargeback on a real dbt build: the recorded DCGM answer of one node, fetched over real HTTP, and
a hand-made GPU cloud bill for that node.

Node k8s-node-a (4×A100 80GB, team platform) is billed 24 hours on 5 October 2026 at 6.34 an hour: 152.16 for 96
GPU-hours, 1.585 a GPU-hour. Its recorded GR_ENGINE_ACTIVE series (tests/fixtures/telemetry/query_range_k8s_pods.json,
15-minute samples) say which pod held which GPU:

- GPU 0: train-0 (research) 00:00-12:00 at 0.8; notebook-1 (sandbox, a namespace without a team) 12:00-12:45 and
  serve-7 (inference, labels renamed exported_* by honorLabels: false) from 12:15, both holding the GPU 12:15-12:45 by
  time-slicing, so those two samples are split: notebook-1 0.5 GPU-hour, serve-7 11.5; 0.2 in hour 12, 0.5 after;
- GPU 1: etl-3 (data) 06:00-10:30 at 0.6, no pod otherwise (a series without pod labels);
- GPU 2: no pod all day; GPU 3: no telemetry at all.

Each pod pays 1.585 × its GPU-hours rounded to the cent: train-0 12 h 19.02, notebook-1 0.79 (0.7925), serve-7 18.23
(18.2275), etl-3 7.13 (7.1325); the unallocated row holds 67.5 GPU-hours and 152.16 − 45.17 = 106.99 (the exact
share, 106.9875, plus the rounding remainder). The GPU-hours are recomputed here from the recording's JSON and the
costs from the bill's CSV row, with Decimal.
"""

from __future__ import annotations

import csv
import json
import logging
from collections import defaultdict
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

import pytest

from pipelines.lib.catalog.billing import GPU_CLOUD_USAGE
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.ingest.landing import register
from pipelines.lib.ingest.telemetry import fetch_prometheus_days
from pipelines.lib.settings import DBT_PROJECT_DIR, FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from sources.common.http import HttpClient
from sources.telemetry import prometheus
from tests.support import FIXTURES_ROOT
from tests.support.dbt_helpers import dbt_environment, run_dbt
from tests.support.local_http import Reply, local_server
from tests.support.warehouse_helpers import query

DAY = date(2026, 10, 5)
RECORDING = FIXTURES_ROOT / "telemetry" / "query_range_k8s_pods.json"
COLUMNS = [
    *("provider", "account_id", "account_name", "resource_id", "resource_name", "region", "gpu_model", "gpu_count"),
    *("pricing_model", "usage_start", "usage_end", "usage_hours", "unit_price", "cost", "currency", "description"),
    *("tags", "list_unit_price"),
]
BILL = {
    "provider": "Lambda", "account_id": "org_fixture", "account_name": "Fixture", "resource_id": "k8s-node-a",
    "resource_name": "gpu-node-a", "region": "us-east-1", "gpu_model": "A100 80GB", "gpu_count": "4",
    "pricing_model": "on_demand", "usage_start": "2026-10-05T00:00:00Z", "usage_end": "2026-10-06T00:00:00Z",
    "usage_hours": "24", "unit_price": "6.34", "cost": "152.16", "currency": "USD", "description": "k8s node",
    "tags": json.dumps({"team": "platform", "project": "k8s"}), "list_unit_price": "6.34",
}  # fmt: skip
SEED = DBT_PROJECT_DIR / "seeds" / "kubernetes_namespace_teams.csv"


def held_gpu_hours(recording: dict) -> dict[tuple[str, str], Decimal]:
    """(namespace, pod) -> GPU-hours held: each sample's 900 s split evenly between the pods on its GPU."""
    pods_at: dict[tuple[str, float], list[tuple[str, str]]] = defaultdict(list)
    for series in recording["data"]["result"]:
        labels = series["metric"]
        pod = labels.get("exported_pod", labels.get("pod"))
        if pod is None:
            continue
        namespace = labels.get("exported_namespace", labels.get("namespace"))
        for at, _ in series["values"]:
            pods_at[(labels["UUID"], at)].append((namespace, pod))
    held: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    for pods in pods_at.values():
        for key in pods:
            held[key] += Decimal(900) / len(pods) / 3600
    return held


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> FinopsHome:
    tmp_path = tmp_path_factory.mktemp("allocation")
    home = FinopsHome(tmp_path / "home").create_folders()
    with (tmp_path / "k8s-bill.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerow(BILL)
    register(home, "gpu_cloud_usage", tmp_path / "k8s-bill.csv")
    log = logging.getLogger("test")
    with local_server() as server, connect(home.warehouse) as con:
        server.route("/api/v1/query_range", Reply(RECORDING.read_bytes()))
        recover_and_ensure_raw_tables(con)
        assert [result.status for result in ingest_landing_zone(home, con, GPU_CLOUD_USAGE, log=log)] == ["loaded"]
        client = prometheus.PrometheusClient(server.url, http=HttpClient(provider=prometheus.PROVIDER))
        fetched = fetch_prometheus_days(
            home, con, [DAY], offline=False, log=log, client=client, step_seconds=900,
            metrics=("DCGM_FI_PROF_GR_ENGINE_ACTIVE",),
        )  # fmt: skip
        assert fetched.outcome.status == "loaded"
    env = dbt_environment(home.root) | {"FINOPS_ONPREM_COSTS_THROUGH": DAY.isoformat()}
    build = run_dbt(
        home.root, tmp_path / "target",
        "build", "--select", "+fct_gpu_cost_allocation_daily", "--exclude", "test_type:unit",
        "--indirect-selection", "cautious",
        "--log-path", str(tmp_path / "logs"), environment=env,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout[-4000:]
    assert "assert_gpu_cost_allocation_reconciles_to_node_cost" in build.stdout
    return home


def test_pods_pay_their_gpu_hours_at_the_bills_rate_and_the_rest_is_unallocated_to_the_cent(built: FinopsHome):
    held = held_gpu_hours(json.loads(RECORDING.read_text()))
    node_cost = Decimal(BILL["cost"])
    provisioned = Decimal(BILL["gpu_count"]) * Decimal(BILL["usage_hours"])
    cent = Decimal("0.01")
    with SEED.open(encoding="utf-8") as handle:
        teams = {row["namespace"]: row["team"] for row in csv.DictReader(handle)}
    expected = {
        key: (teams.get(key[0]), hours, (node_cost * hours / provisioned).quantize(cent, ROUND_HALF_UP))
        for key, hours in held.items()
    }
    rows = query(
        built.warehouse,
        "select allocation_type, namespace, pod, team, node_team, gpu_hours, allocated_cost, node_effective_cost "
        "from marts.fct_gpu_cost_allocation_daily where usage_date = '2026-10-05' and resource_id = 'k8s-node-a'",
    )
    pods = {(row[1], row[2]): (row[3], row[5], row[6]) for row in rows if row[0] == "pod"}
    assert pods == expected
    # the hand-computed figures of the module docstring
    assert {key: value[2] for key, value in pods.items()} == {
        ("research", "train-0"): Decimal("19.02"),
        ("sandbox", "notebook-1"): Decimal("0.79"),
        ("inference", "serve-7"): Decimal("18.23"),
        ("data", "etl-3"): Decimal("7.13"),
    }
    assert pods[("sandbox", "notebook-1")][0] is None and "sandbox" not in teams  # a namespace without a team
    assert pods[("research", "train-0")][0] == "research"
    (unallocated,) = [row for row in rows if row[0] == "unallocated"]
    assert unallocated[5] == provisioned - sum(held.values()) == Decimal("67.5")  # GPU 2 all day, GPU 3, GPU 1 19.5 h
    assert unallocated[6] == node_cost - sum(cost for _, _, cost in expected.values()) == Decimal("106.99")
    assert sum(row[6] for row in rows) == node_cost
    assert {row[7] for row in rows} == {node_cost} and {row[4] for row in rows} == {"platform"}


def test_time_sliced_pods_split_the_shared_samples_and_active_share_is_the_devices(built: FinopsHome):
    rows = query(
        built.warehouse,
        "select pod, is_time_sliced, gpu_hours, active_gpu_hours, active_share "
        "from marts.fct_gpu_cost_allocation_daily where allocation_type = 'pod' order by pod",
    )
    serve_share = (Decimal("5.6") / Decimal("11.5")).quantize(Decimal("0.000001"), ROUND_HALF_UP)
    # serve-7: hour 12 at 0.2 for 0.5 h, then 11 h at 0.5 -> 5.6 active GPU-hours of 11.5; notebook-1 0.5 h at 0.2
    assert rows == [
        ("etl-3", False, Decimal("4.5"), Decimal("2.7"), Decimal("0.6")),
        ("notebook-1", True, Decimal("0.5"), Decimal("0.1"), Decimal("0.2")),
        ("serve-7", True, Decimal("11.5"), Decimal("5.6"), serve_share),
        ("train-0", False, Decimal("12"), Decimal("9.6"), Decimal("0.8")),
    ]  # fmt: skip
