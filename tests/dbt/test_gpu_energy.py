"""GPU energy and carbon on a real dbt build: recorded DCGM answers of one node and hand-made GPU cloud bills.

Node e1 (Lambda, us-east-1, 2 × H100, team platform) is billed 24 hours on 5 October 2026. Its DCGM exporter, scraped
every 15 minutes, records (written below in Prometheus' query_range layout):

- GPU 0: pod train-0 (namespace research) 00:00-12:00 at 600 W, then no pod at 100 W. Its energy counter counts from
  5e9 mJ with small deviations from power × time; the GPU reboots at 12:00, so the reading at 12:15 falls to what it
  used since (a reset: that reading is the increase). The first reading (00:15) has no increase: power × 900 s.
- GPU 1: power only (no counter), 300 W all day, no pod: power integrated.

Resource e2 (Lambda, us-south-1, 1 × A100 80GB, team research) is billed 10 hours and has no telemetry: estimated at
idle + 0.5 × (maximum − idle) from the seeds. The expected kWh are computed here from the recorded values and the
seeds with Decimal: GPU energy, × 1.8214 (server), × PUE 1.25 (Lambda is a specialized cloud), × the region's grid
intensity.
"""

from __future__ import annotations

import csv
import gzip
import json
import logging
import os
import subprocess
import sys
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

from pipelines.lib.catalog.billing import GPU_CLOUD_USAGE
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.ingest.landing import register
from pipelines.lib.ingest.telemetry import fetch_prometheus_days, payload_file_name, prometheus_payloads
from pipelines.lib.settings import DBT_PROJECT_DIR, FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from tests.support.warehouse_helpers import query

DBT = str(Path(sys.executable).parent / "dbt")
DAY = date(2026, 10, 5)
STEP = 900
SEEDS = DBT_PROJECT_DIR / "seeds"
COLUMNS = [
    *("provider", "account_id", "account_name", "resource_id", "resource_name", "region", "gpu_model", "gpu_count"),
    *("pricing_model", "usage_start", "usage_end", "usage_hours", "unit_price", "cost", "currency", "description"),
    *("tags", "list_unit_price"),
]
COMMON = {
    "provider": "Lambda", "account_id": "org_fixture", "account_name": "Fixture", "pricing_model": "on_demand",
    "usage_start": "2026-10-05T00:00:00Z", "currency": "USD", "description": "gpu node",
}  # fmt: skip
BILLS = [
    COMMON | {
        "resource_id": "node-e1", "resource_name": "e1", "region": "us-east-1", "gpu_model": "H100", "gpu_count": "2",
        "usage_end": "2026-10-06T00:00:00Z", "usage_hours": "24", "unit_price": "6.00", "cost": "144.00",
        "tags": json.dumps({"team": "platform"}), "list_unit_price": "6.00",
    },
    COMMON | {
        "resource_id": "node-e2", "resource_name": "e2", "region": "us-south-1", "gpu_model": "A100 80GB",
        "gpu_count": "1", "usage_end": "2026-10-05T10:00:00Z", "usage_hours": "10", "unit_price": "1.50",
        "cost": "15.00", "tags": json.dumps({"team": "research"}), "list_unit_price": "1.50",
    },
]  # fmt: skip
NODE = {"Hostname": "gpu-e1", "modelName": "NVIDIA H100 80GB HBM3", "resource_id": "node-e1"}
GPU0 = NODE | {"gpu": "0", "UUID": "GPU-00000000-0000-0000-0000-0000000000e0"}
GPU1 = NODE | {"gpu": "1", "UUID": "GPU-00000000-0000-0000-0000-0000000000e1"}
POD = {"namespace": "research", "pod": "train-0", "container": "trainer"}
SERVER_FACTOR = Decimal("1.8214")
KWH_MJ = Decimal(3_600_000_000)
TWELVE = Decimal("0.000000000001")


def instants() -> list[int]:
    start = int(datetime(2026, 10, 5, tzinfo=UTC).timestamp())
    return [start + STEP * n for n in range(1, 97)]  # 00:15 … 24:00: each reading closes the step before it


def recorded_series() -> dict[str, list[tuple[dict[str, str], list[tuple[int, str]]]]]:
    """metric -> [(labels, [(unix, value)])]: the exporter's series of the day."""
    at = instants()
    busy, idle = at[:48], at[48:]  # readings closing 00:00-12:00, then 12:00-24:00
    gpu0_power = {t: (600 if t in busy else 100) for t in at}
    counter, readings = 5_000_000_000, {}
    for t in at:
        if t == idle[0]:
            counter = 0  # the reboot at 12:00
        counter += gpu0_power[t] * STEP * 1000 + (t // STEP) % 7 * 1000  # power × time, give or take
        readings[t] = counter
    power = [
        (GPU0 | POD, [(t, str(gpu0_power[t])) for t in busy]),
        (GPU0, [(t, str(gpu0_power[t])) for t in idle]),
        (GPU1, [(t, "300") for t in at]),
    ]
    energy = [(GPU0 | POD, [(t, str(readings[t])) for t in busy]), (GPU0, [(t, str(readings[t])) for t in idle])]
    return {"DCGM_FI_DEV_POWER_USAGE": power, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": energy}


def seed_rows(name: str) -> list[dict[str, str]]:
    with (SEEDS / f"{name}.csv").open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> FinopsHome:
    tmp_path = tmp_path_factory.mktemp("energy")
    home = FinopsHome(tmp_path / "home").create_folders()
    with (tmp_path / "bill.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(BILLS)
    register(home, "gpu_cloud_usage", tmp_path / "bill.csv")
    folder = prometheus_payloads(home, DAY)
    folder.mkdir(parents=True)
    start = datetime(2026, 10, 5, tzinfo=UTC)
    for metric, series in recorded_series().items():
        body = {
            "status": "success",
            "data": {"resultType": "matrix", "result": [{"metric": m, "values": v} for m, v in series]},
        }
        name = payload_file_name(metric, STEP, start + timedelta(seconds=STEP), start + timedelta(days=1))
        (folder / name).write_bytes(gzip.compress(json.dumps(body).encode()))
    log = logging.getLogger("test")
    with connect(home.warehouse) as con:
        recover_and_ensure_raw_tables(con)
        assert [result.status for result in ingest_landing_zone(home, con, GPU_CLOUD_USAGE, log=log)] == ["loaded"]
        loaded = fetch_prometheus_days(home, con, [DAY], offline=True, log=log, step_seconds=STEP)
        assert loaded.outcome.status == "loaded"
    env = os.environ | {"FINOPS_HOME": str(home.root), "FINOPS_ONPREM_COSTS_THROUGH": DAY.isoformat()}
    build = subprocess.run(
        [DBT, "build", "--select", "+fct_gpu_energy_daily", "--exclude", "test_type:unit",
         "--indirect-selection", "cautious", "--target-path", str(tmp_path / "target"),
         "--log-path", str(tmp_path / "logs")],
        cwd=DBT_PROJECT_DIR, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout[-4000:]
    assert "fct_gpu_energy_daily_column_rules" in build.stdout
    return home


def expected_gpu_kwh() -> dict[tuple[str, str, str | None, str], Decimal]:
    """(GPU UUID, allocation type, pod, energy source) -> kWh, from the recorded series: counter increases in time
    order (a drop is a reset, the reading the increase), power × 900 s where a reading has no increase; each GPU-hour's
    counter and power parts in kWh rounded to 12 decimals, as the hourly roll-up keeps them."""
    series = recorded_series()
    power = {(m["UUID"], t): Decimal(v) for m, values in series["DCGM_FI_DEV_POWER_USAGE"] for t, v in values}
    pods = {(m["UUID"], t): m.get("pod") for m, values in series["DCGM_FI_DEV_POWER_USAGE"] for t, v in values}
    counters = {
        (m["UUID"], t): Decimal(v) for m, values in series["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"] for t, v in values
    }
    # (GPU, hour, pod, source, part) -> mJ
    mj: dict[tuple[str, int, str | None, str, str], Decimal] = defaultdict(Decimal)
    resets = 0
    for uuid in (GPU0["UUID"], GPU1["UUID"]):
        previous = None
        source = "measured_counter" if any((uuid, t) in counters for t in instants()) else "power_integrated"
        for t in instants():
            reading = counters.get((uuid, t))
            if reading is None or previous is None:
                part, used = "power", power[(uuid, t)] * STEP * 1000
            elif reading < previous:
                part, used, resets = "counter", reading, resets + 1
            else:
                part, used = "counter", reading - previous
            previous = reading if reading is not None else previous
            mj[(uuid, (t - STEP) // 3600, pods[(uuid, t)], source, part)] += used
    assert resets == 1
    kwh: dict[tuple[str, str, str | None, str], Decimal] = defaultdict(Decimal)
    for (uuid, _, pod, source, _), value in mj.items():
        kwh[(uuid, "pod" if pod else "unallocated", pod, source)] += (value / KWH_MJ).quantize(TWELVE, ROUND_HALF_UP)
    return dict(kwh)


def test_gpu_energy_counter_reset_power_and_estimate_add_up_per_pod_and_gpu(built: FinopsHome):
    rows = query(
        built.warehouse,
        "select gpu_uuid, allocation_type, pod, energy_source, team, gpu_hours, gpu_kwh, counter_kwh "
        "from marts.fct_gpu_energy_daily where resource_id = 'node-e1'",
    )
    measured = {(row[0], row[1], row[2], row[3]): row[6] for row in rows}
    assert measured == expected_gpu_kwh()
    teams = {(row[1], row[2]): row[4] for row in rows}
    assert teams == {("pod", "train-0"): "research", ("unallocated", None): "platform"}
    assert {(row[0], row[1]): row[5] for row in rows} == {
        (GPU0["UUID"], "pod"): Decimal(12),
        (GPU0["UUID"], "unallocated"): Decimal(12),
        (GPU1["UUID"], "unallocated"): Decimal(24),
    }
    # the counter measured all of GPU 0 but its first reading (00:15: 600 W × 900 s)
    first_reading = (Decimal(600 * STEP * 1000) / KWH_MJ).quantize(TWELVE, ROUND_HALF_UP)
    pod_row = next(row for row in rows if row[1] == "pod")
    assert pod_row[7] == pod_row[6] - first_reading
    gpu1 = next(row for row in rows if row[0] == GPU1["UUID"])
    assert gpu1[7] is None and gpu1[6] == Decimal(300 * 24) / 1000


def test_facility_energy_and_carbon_follow_server_factor_pue_and_grid(built: FinopsHome):
    pue = next(Decimal(row["pue"]) for row in seed_rows("datacenter_pue") if row["provider_class"] == "specialized")
    # each region's latest factor year up to the days' (2026)
    grid: dict[str, tuple[int, Decimal]] = {}
    for row in seed_rows("grid_carbon_intensity"):
        year = int(row["factor_year"])
        if row["provider_name"] == "Lambda" and year <= 2026 and year > grid.get(row["region"], (0, None))[0]:
            grid[row["region"]] = (year, Decimal(row["gco2e_per_kwh"]))
    idle = next(Decimal(row["idle_watts"]) for row in seed_rows("gpu_power") if row["gpu_model"] == "A100 80GB")
    tdp = next(Decimal(row["tdp_watts"]) for row in seed_rows("gpu_specs") if row["gpu_model"] == "A100 80GB")
    rows = query(
        built.warehouse,
        "select resource_id, energy_source, allocation_type, gpu_hours, gpu_kwh, it_kwh, pue, pue_from, "
        "facility_kwh, region, carbon_factor_year, gco2e_per_kwh, kgco2e, facility_kwh_per_gpu_hour "
        "from marts.fct_gpu_energy_daily",
    )
    for row in rows:
        resource, _, _, hours, gpu_kwh, it_kwh, row_pue, pue_from, facility, region, year, factor, kg, per_h = row
        assert it_kwh == (gpu_kwh * SERVER_FACTOR).quantize(TWELVE, ROUND_HALF_UP)
        assert (row_pue, pue_from) == (pue, "specialized")
        assert facility == (it_kwh * pue).quantize(TWELVE, ROUND_HALF_UP)
        assert region == {"node-e1": "us-east-1", "node-e2": "us-south-1"}[resource]
        assert (year, factor) == grid[region]
        assert kg == (facility * factor / 1000).quantize(TWELVE, ROUND_HALF_UP)
        assert per_h == (facility / hours).quantize(TWELVE, ROUND_HALF_UP)
    (estimate,) = [row for row in rows if row[0] == "node-e2"]
    # 10 hours billed, none observed: (idle + 0.5 × (max − idle)) W × 10 h
    assert estimate[1:5] == ("estimated", "unobserved", Decimal(10), (idle + (tdp - idle) / 2) * 10 / 1000)
    assert not [row for row in rows if row[0] == "node-e1" and row[1] == "estimated"]  # fully observed
