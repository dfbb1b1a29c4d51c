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

The two days before, GPU 0's energy was read the old way, `increase(…[900s])`, each value one step's energy (about
600 W × 900 s, then 100 W): 3 October from a capture the old loader stored (unmarked, so re-parsed offline as that
query), 4 October as rows the old loader wrote before raw had a promql column. Both are the step's energy as it
stands, the first step included; the 5th's counter is differenced from its own first reading, not from them.
"""

from __future__ import annotations

import csv
import gzip
import json
import logging
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal

import polars as pl
import pytest

from pipelines.lib.catalog.billing import GPU_CLOUD_USAGE
from pipelines.lib.catalog.tables import ReferenceTable
from pipelines.lib.catalog.telemetry import PROMETHEUS, PROMETHEUS_SAMPLES
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.ingest.landing import register
from pipelines.lib.ingest.telemetry import fetch_prometheus_days, payload_file_name, prometheus_payloads
from pipelines.lib.settings import DBT_PROJECT_DIR, FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.loads import load_reference_rows
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from sources.telemetry import prometheus
from tests.support.dbt_helpers import dbt_environment, run_dbt
from tests.support.warehouse_helpers import query

DAY = date(2026, 10, 5)
CAPTURED_DAY, OLD_LOAD_DAY = date(2026, 10, 3), date(2026, 10, 4)
"""Days of GPU 0's energy as `increase()` answers: a stored capture re-parsed, rows loaded before promql existed."""
STEP = 900
ENERGY = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
INCREASE = f"increase({ENERGY}[{STEP}s])"
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


def instants(day: date = DAY) -> list[int]:
    start = int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp())
    return [start + STEP * n for n in range(1, 97)]  # 00:15 … 24:00: each reading closes the step before it


def legacy_series(day: date) -> dict[str, list[tuple[dict[str, str], list[tuple[int, str]]]]]:
    """GPU 0 on a day of the old feed: power, and the energy counter's `increase()` per step (mJ), which falls and
    rises like no counter does (a differencing would find resets and negative steps in it)."""
    at = instants(day)
    busy, idle = at[:48], at[48:]
    power = {t: (600 if t in busy else 100) for t in at}
    energy = {t: power[t] * STEP * 1000 + (t // STEP) % 5 * 1237 for t in at}
    return {
        "DCGM_FI_DEV_POWER_USAGE": [
            (GPU0 | POD, [(t, str(power[t])) for t in busy]),
            (GPU0, [(t, str(power[t])) for t in idle]),
        ],
        ENERGY: [(GPU0 | POD, [(t, str(energy[t])) for t in busy]), (GPU0, [(t, str(energy[t])) for t in idle])],
    }


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
    # today's captures: the counter's readings are marked as such, the gauge's name is as it always was
    for day, series, counter in ((DAY, recorded_series(), True), (CAPTURED_DAY, legacy_series(CAPTURED_DAY), False)):
        folder = prometheus_payloads(home, day)
        folder.mkdir(parents=True)
        start = datetime(day.year, day.month, day.day, tzinfo=UTC)
        for metric, metric_series in series.items():
            name = payload_file_name(
                metric,
                STEP,
                start + timedelta(seconds=STEP),
                start + timedelta(days=1),
                counter=counter and metric == ENERGY,
            )
            (folder / name).write_bytes(gzip.compress(prometheus.matrix_payload(metric_series)))
    log = logging.getLogger("test")
    with connect(home.warehouse) as con:
        load_before_promql(con, OLD_LOAD_DAY)
        recover_and_ensure_raw_tables(con)
        assert [result.status for result in ingest_landing_zone(home, con, GPU_CLOUD_USAGE, log=log)] == ["loaded"]
        loaded = fetch_prometheus_days(home, con, [CAPTURED_DAY, DAY], offline=True, log=log, step_seconds=STEP)
        assert loaded.outcome.status == "loaded"
        promql = con.execute(
            "select sample_date, metric, promql, count(*) from raw.prometheus_gpu_samples group by all order by all"
        ).fetchall()
    power_query = f"avg_over_time(DCGM_FI_DEV_POWER_USAGE[{STEP}s])"
    assert promql == [
        (CAPTURED_DAY, "DCGM_FI_DEV_POWER_USAGE", power_query, 96),
        (CAPTURED_DAY, ENERGY, INCREASE, 96),
        (OLD_LOAD_DAY, "DCGM_FI_DEV_POWER_USAGE", None, 96),
        (OLD_LOAD_DAY, ENERGY, None, 96),
        (DAY, "DCGM_FI_DEV_POWER_USAGE", power_query, 192),
        (DAY, ENERGY, ENERGY, 96),
    ]
    env = dbt_environment(home.root) | {"FINOPS_ONPREM_COSTS_THROUGH": DAY.isoformat()}
    build = run_dbt(
        home.root, tmp_path / "target",
        "build", "--select", "+fct_gpu_energy_daily", "--exclude", "test_type:unit", "--indirect-selection", "cautious",
        "--log-path", str(tmp_path / "logs"), environment=env,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout[-4000:]
    assert "fct_gpu_energy_daily_column_rules" in build.stdout
    return home


def load_before_promql(con, day: date) -> None:
    """A day loaded by the loader before raw had promql: its table declared without the column, so its Parquet part
    lacks it (the lake reads it as null beside today's parts), its energy values `increase()` answers."""
    columns = {name: dtype for name, dtype in PROMETHEUS_SAMPLES.columns.items() if name != "promql"}
    old_table = ReferenceTable(name=PROMETHEUS_SAMPLES.name, columns=columns, replace_key=("sample_date",))
    frames = [
        prometheus.parse_query_range(
            prometheus.matrix_payload(metric_series),
            metric=metric,
            query=prometheus.legacy_query_for(metric, STEP),
            step_seconds=STEP,
            source_ref="old loader",
        ).drop("promql")
        for metric, metric_series in legacy_series(day).items()
    ]
    outcome = load_reference_rows(
        con,
        old_table,
        source=PROMETHEUS.name,
        delivery=f"old loader@{day}",
        sha256=f"old loader {day}",
        frame=pl.concat(frames),
        format_version="Prometheus query_range v1",
        whole_partitions=[(day,)],
    )
    assert outcome.status == "loaded"


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
        f"from marts.fct_gpu_energy_daily where resource_id = 'node-e1' and usage_date = '{DAY}'",
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
        f"from marts.fct_gpu_energy_daily where usage_date = '{DAY}'",
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


@pytest.mark.parametrize("day", [CAPTURED_DAY, OLD_LOAD_DAY], ids=["stored_increase_capture", "loaded_before_promql"])
def test_increase_answers_from_before_are_each_steps_energy(built: FinopsHome, day: date):
    """Each hour's kWh is its four increase() values summed / 3.6e9, the first step's included, no reset found; the
    day's is those hours' sum, the pod's 00:00-12:00, the unallocated rest."""
    increases = {t: Decimal(v) for _, values in legacy_series(day)[ENERGY] for t, v in values}
    hourly: dict[int, Decimal] = defaultdict(Decimal)
    for t, used in increases.items():
        hourly[(t - STEP) // 3600] += used
    expected_hours = {
        datetime.fromtimestamp(hour * 3600, UTC).replace(tzinfo=None): (used / KWH_MJ).quantize(TWELVE, ROUND_HALF_UP)
        for hour, used in hourly.items()
    }
    rows = query(
        built.warehouse,
        "select hour_start, energy_kwh, counter_energy_kwh, energy_counter_resets "
        f"from intermediate.int_telemetry__gpu_hourly where gpu_uuid = '{GPU0['UUID']}' and usage_date = '{day}'",
    )
    assert {row[0]: row[1] for row in rows} == expected_hours
    assert all(row[2] == row[1] and row[3] == 0 for row in rows)
    daily = query(
        built.warehouse,
        "select allocation_type, pod, energy_source, gpu_kwh from marts.fct_gpu_energy_daily "
        f"where gpu_uuid = '{GPU0['UUID']}' and usage_date = '{day}'",
    )
    noon = datetime(day.year, day.month, day.day, 12)
    assert {(row[0], row[1], row[2]): row[3] for row in daily} == {
        ("pod", "train-0", "measured_counter"): sum(kwh for hour, kwh in expected_hours.items() if hour < noon),
        ("unallocated", None, "measured_counter"): sum(kwh for hour, kwh in expected_hours.items() if hour >= noon),
    }
    assert sum(row[3] for row in daily) == sum(expected_hours.values())
    samples = query(
        built.warehouse,
        "select distinct energy_promql, energy_counter_mj is null, energy_counter_reset "
        f"from intermediate.int_telemetry__gpu_samples where gpu_uuid = '{GPU0['UUID']}' "
        f"and cast(hour_start as date) = '{day}'",
    )
    assert samples == [(INCREASE if day == CAPTURED_DAY else None, True, False)]
