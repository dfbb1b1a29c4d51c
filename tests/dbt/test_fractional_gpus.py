"""Fractional GPUs in the Kubernetes chargeback on a real dbt build: MIG slices and time-sliced pods on one node.

Node k8s-mig-a (2×A100 80GB, team platform) is billed 24 hours on 5 October 2026 at 3.47 an hour: 83.28 for 48
GPU-hours, 1.735 a GPU-hour. Its recorded DCGM answers (15-minute samples) are hand-written from dcgm-exporter's label
set (tests/fixtures/telemetry/query_range_mig_*.json):

- GPU 0 is split into MIG slices, each its own series under the parent's UUID with GPU_I_ID and GPU_I_PROFILE:
  slice 1 `3g.40gb` held by inference/llm-serve-0 all day (GR_ENGINE_ACTIVE 0.6); slice 2 `1g.10gb` held by
  notebooks/nb-carol 00:00-12:00 (0.3), no pod after; slice 3 `1g.10gb` no pod all day. 3 + 1 + 1 of 7 compute slices
  leave 2/7 unpartitioned. Its DCGM_FI_DEV_GPU_UTIL is the sentinel 9223372036854775794 on the parent and 100 on
  slice 1: neither is a reading under MIG.
- GPU 1 is shared by time-slicing: inference/tts-a 00:00-20:00, research/tts-b 06:00-18:00 (labels renamed
  exported_*), each pod's series carrying the device's 0.5; no pod 20:00-24:00.

By the g/7 rule: llm-serve-0 24 × 3/7 = 72/7 GPU-hours → 1.735 × 72/7 = 17.8457… → 17.85; nb-carol 12 × 1/7 → 2.97
(2.9742…); the idle 1g.10gb slices (slice 2 12 h, slice 3 24 h) 36/7 → 8.92 (8.9228…); the unpartitioned 2/7 48/7 →
11.90 (11.8971…); tts-a 6 + 12/2 + 2 = 14 h → 24.29, tts-b 12/2 = 6 h → 10.41; the unallocated row 4 GPU-hours and
83.28 − 76.34 = 6.94. Every figure is recomputed here from the recordings' JSON and the bill's CSV row, with Decimal.
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
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from sources.common.http import HttpClient
from sources.telemetry import prometheus
from tests.support import FIXTURES_ROOT
from tests.support.dbt_helpers import dbt_environment, run_dbt
from tests.support.local_http import Reply, local_server
from tests.support.warehouse_helpers import query

DAY = date(2026, 10, 5)
STEP = 900
GR_ENGINE_ACTIVE = FIXTURES_ROOT / "telemetry" / "query_range_mig_gr_engine_active.json"
GPU_UTIL = FIXTURES_ROOT / "telemetry" / "query_range_mig_gpu_util.json"
COLUMNS = [
    *("provider", "account_id", "account_name", "resource_id", "resource_name", "region", "gpu_model", "gpu_count"),
    *("pricing_model", "usage_start", "usage_end", "usage_hours", "unit_price", "cost", "currency", "description"),
    *("tags", "list_unit_price"),
]
BILL = {
    "provider": "Lambda", "account_id": "org_fixture", "account_name": "Fixture", "resource_id": "k8s-mig-a",
    "resource_name": "mig-node-a", "region": "us-east-1", "gpu_model": "A100 80GB", "gpu_count": "2",
    "pricing_model": "on_demand", "usage_start": "2026-10-05T00:00:00Z", "usage_end": "2026-10-06T00:00:00Z",
    "usage_hours": "24", "unit_price": "3.47", "cost": "83.28", "currency": "USD", "description": "k8s MIG node",
    "tags": json.dumps({"team": "platform", "project": "k8s"}), "list_unit_price": "3.47",
}  # fmt: skip
CENT = Decimal("0.01")
# a slice's share is 12 decimals (3/7 has no exact decimal): GPU-hours agree to this, cents exactly
HOURS_TOLERANCE = Decimal("1e-9")


def slice_share(labels: dict[str, str]) -> Decimal:
    """g/7 from `GPU_I_PROFILE` (`3g.40gb` → 3/7); 1 for a whole GPU."""
    profile = labels.get("GPU_I_PROFILE")
    return Decimal(1) if profile is None else Decimal(profile.split("g.")[0]) / 7


def expected_hours(recording: dict) -> tuple[dict, dict, Decimal, dict]:
    """From the GR_ENGINE_ACTIVE series: (pod -> GPU-hours held, idle profile -> GPU-hours, unpartitioned GPU-hours,
    pod -> active GPU-hours). A sample's 900 s × the slice's share, split evenly between the pods holding it."""
    pods_at: dict[tuple, list[tuple[str, str]]] = defaultdict(list)
    value_at: dict[tuple, Decimal] = {}
    share_at: dict[tuple, Decimal] = {}
    profile_at: dict[tuple, str | None] = {}
    for series in recording["data"]["result"]:
        labels = series["metric"]
        pod = labels.get("exported_pod", labels.get("pod"))
        namespace = labels.get("exported_namespace", labels.get("namespace"))
        for at, value in series["values"]:
            key = (labels["UUID"], labels.get("GPU_I_ID"), at)
            share_at[key], value_at[key] = slice_share(labels), Decimal(value)
            profile_at[key] = labels.get("GPU_I_PROFILE")
            if pod is not None:
                pods_at[key].append((namespace, pod))
    held: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    active: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    idle: dict[str, Decimal] = defaultdict(Decimal)
    sliced: dict[tuple[str, float], Decimal] = defaultdict(Decimal)
    for key, share in share_at.items():
        hours = Decimal(STEP) * share / 3600
        if key[1] is not None:
            sliced[(key[0], key[2])] += share
        if not pods_at[key]:
            if key[1] is not None:
                idle[profile_at[key]] += hours
            continue
        for pod in pods_at[key]:
            held[pod] += hours / len(pods_at[key])
            active[pod] += hours / len(pods_at[key]) * value_at[key]
    unpartitioned = sum((Decimal(STEP) * (1 - share) / 3600 for share in sliced.values()), Decimal(0))
    return held, idle, unpartitioned, active


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> FinopsHome:
    tmp_path = tmp_path_factory.mktemp("fractional")
    home = FinopsHome(tmp_path / "home").create_folders()
    with (tmp_path / "mig-bill.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerow(BILL)
    register(home, "gpu_cloud_usage", tmp_path / "mig-bill.csv")
    log = logging.getLogger("test")
    with local_server() as server, connect(home.warehouse) as con:
        # one answer per query, in the order of `metrics`
        server.route("/api/v1/query_range", Reply(GR_ENGINE_ACTIVE.read_bytes()), Reply(GPU_UTIL.read_bytes()))
        recover_and_ensure_raw_tables(con)
        assert [result.status for result in ingest_landing_zone(home, con, GPU_CLOUD_USAGE, log=log)] == ["loaded"]
        client = prometheus.PrometheusClient(server.url, http=HttpClient(provider=prometheus.PROVIDER))
        fetched = fetch_prometheus_days(
            home, con, [DAY], offline=False, log=log, client=client, step_seconds=STEP,
            metrics=("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_GPU_UTIL"),
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


def test_the_sentinel_and_mig_utilization_are_loaded_as_no_reading(built: FinopsHome):
    util = json.loads(GPU_UTIL.read_text())["data"]["result"]
    mig_series = [s for s in util if s["metric"]["UUID"].endswith("e50")]
    rows = query(
        built.warehouse,
        "select gpu_instance_id, gpu_instance_profile, count(*), count(value), "
        "count(case when value_invalid then 1 end) "
        "from raw.prometheus_gpu_samples where metric = 'DCGM_FI_DEV_GPU_UTIL' and gpu_uuid like '%e50' "
        "group by all order by 1 nulls first",
    )
    assert rows == [
        (s["metric"].get("GPU_I_ID"), s["metric"].get("GPU_I_PROFILE"), len(s["values"]), 0, len(s["values"]))
        for s in sorted(mig_series, key=lambda s: s["metric"].get("GPU_I_ID") or "")
    ]
    # GPU 1 is no MIG GPU: its GPU_UTIL stays a reading
    ((valid,),) = query(
        built.warehouse,
        "select count(value) from raw.prometheus_gpu_samples where metric = 'DCGM_FI_DEV_GPU_UTIL' "
        "and gpu_uuid like '%e51' and not value_invalid",
    )
    assert valid == sum(len(s["values"]) for s in util if s["metric"]["UUID"].endswith("e51"))


def test_the_mig_gpus_activity_is_the_slice_weighted_sum_and_gpu_util_is_never_used(built: FinopsHome):
    recording = json.loads(GR_ENGINE_ACTIVE.read_text())
    expected: dict[str, Decimal] = defaultdict(Decimal)
    for series in recording["data"]["result"]:
        if series["metric"]["UUID"].endswith("e50"):
            for _, value in series["values"]:
                expected["mig"] += Decimal(STEP) / 3600 * slice_share(series["metric"]) * Decimal(value)
    rows = query(
        built.warehouse,
        "select sum(active_gpu_hours), sum(telemetry_gpu_hours), bool_or(util_is_fallback), sum(util_invalid_samples), "
        "max(mig_slices) from intermediate.int_telemetry__gpu_hourly where gpu_uuid like '%e50'",
    )
    active, observed, fallback, invalid, slices = rows[0]
    assert abs(active - expected["mig"]) < HOURS_TOLERANCE
    assert observed == 24 and fallback is False and slices == 3
    # the parent's sentinel and slice 1's GPU_UTIL, 96 samples each, set aside
    assert invalid == 2 * 96


def test_mig_slices_and_time_sliced_pods_are_charged_to_the_cent_with_idle_slices_shown(built: FinopsHome):
    held, idle, unpartitioned, active = expected_hours(json.loads(GR_ENGINE_ACTIVE.read_text()))
    node_cost = Decimal(BILL["cost"])
    provisioned = Decimal(BILL["gpu_count"]) * Decimal(BILL["usage_hours"])

    def cost(hours: Decimal) -> Decimal:
        return (node_cost * hours / provisioned).quantize(CENT, ROUND_HALF_UP)

    rows = query(
        built.warehouse,
        "select allocation_type, namespace, pod, allocation_rule, mig_profile, gpu_hours, active_gpu_hours, "
        "allocated_cost, node_team, is_time_sliced from marts.fct_gpu_cost_allocation_daily "
        "where usage_date = '2026-10-05' and resource_id = 'k8s-mig-a'",
    )
    pods = {(r[1], r[2]): r for r in rows if r[0] == "pod"}
    assert set(pods) == set(held)
    for key, hours in held.items():
        assert abs(pods[key][5] - hours) < HOURS_TOLERANCE, key
        assert abs(pods[key][6] - active[key]) < HOURS_TOLERANCE, key
        assert pods[key][7] == cost(hours), key
    assert {key: (r[3], r[4], r[9]) for key, r in pods.items()} == {
        ("inference", "llm-serve-0"): ("mig_compute_share", "3g.40gb", False),
        ("notebooks", "nb-carol"): ("mig_compute_share", "1g.10gb", False),
        ("inference", "tts-a"): ("time_sliced_equal", None, True),
        ("research", "tts-b"): ("time_sliced_equal", None, True),
    }
    idle_rows = {r[4]: r for r in rows if r[0] == "idle_mig_slice"}
    assert set(idle_rows) == {*idle, None}
    for profile, hours in idle.items():
        assert abs(idle_rows[profile][5] - hours) < HOURS_TOLERANCE
        assert idle_rows[profile][7] == cost(hours) and idle_rows[profile][3] == "mig_compute_share"
    assert abs(idle_rows[None][5] - unpartitioned) < HOURS_TOLERANCE and idle_rows[None][3] == "mig_unpartitioned"
    assert idle_rows[None][7] == cost(unpartitioned)
    assert {r[8] for r in idle_rows.values()} == {"platform"}  # the node's owner
    (unallocated,) = [r for r in rows if r[0] == "unallocated"]
    charged = [cost(h) for h in held.values()] + [cost(h) for h in idle.values()] + [cost(unpartitioned)]
    assert unallocated[7] == node_cost - sum(charged)
    expected_unallocated_hours = provisioned - sum(held.values()) - sum(idle.values()) - unpartitioned
    assert abs(unallocated[5] - expected_unallocated_hours) < HOURS_TOLERANCE
    assert sum(r[7] for r in rows) == node_cost
    # the hand-computed figures of the module docstring
    assert {key: r[7] for key, r in pods.items()} == {
        ("inference", "llm-serve-0"): Decimal("17.85"),
        ("notebooks", "nb-carol"): Decimal("2.97"),
        ("inference", "tts-a"): Decimal("24.29"),
        ("research", "tts-b"): Decimal("10.41"),
    }
    assert (idle_rows["1g.10gb"][7], idle_rows[None][7], unallocated[7]) == (
        Decimal("8.92"), Decimal("11.90"), Decimal("6.94"),
    )  # fmt: skip
    assert abs(expected_unallocated_hours - 4) < HOURS_TOLERANCE
