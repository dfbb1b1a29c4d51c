"""Acme AI's GPU clouds and owned servers, in the project's own CSV contracts.

GPU clouds (Lambda, RunPod) have no billing export; their usage is written in the usage CSV
contract: one row per instance session and UTC day, `unit_price` per instance-hour, `cost` equal
to `unit_price × usage_hours` exactly to the cent (sessions are billed in quarter hours and prices
are multiples of 4 cents), `tags` a JSON object. Lambda runs 8×H100 nodes on demand; RunPod runs
community-cloud 2×A100 80GB pods on spot and one on-demand pod.

The last billing month carries the events the anomaly mart must find (`DEMO_EVENTS`,
docs/spend-anomalies-and-forecast.md "Demo events"), each on a fixed day of that month: a forgotten
on-demand 8×H100 node, the spot fleet falling back to on-demand, a unit price change and a reservation
expiring.

The owned servers are an inventory CSV: two 8×H100 servers bought in August 2026, in EUR. Their
daily cost is computed downstream (dbt); the prices here are chosen so every daily component is an
exact decimal: straight-line depreciation, energy, colocation and maintenance.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from synthetic_data.demo_common import (
    Charge,
    Delivered,
    Ledger,
    Owner,
    Pattern,
    canonical_json,
    covering_window,
    hours_of,
    instance_schedules,
    iso_z,
    month_start,
    pieces,
    rng_for,
    text,
)
from synthetic_data.focus_samples import BillingMonth

USAGE_SOURCE = "gpu_cloud_usage"
ASSETS_SOURCE = "onprem_gpu_assets"
USAGE_COLUMNS = (
    "provider",
    "account_id",
    "account_name",
    "resource_id",
    "resource_name",
    "region",
    "gpu_model",
    "gpu_count",
    "pricing_model",
    "usage_start",
    "usage_end",
    "usage_hours",
    "unit_price",
    "cost",
    "currency",
    "description",
    "tags",
    "list_unit_price",
)
ASSET_COLUMNS = (
    "asset_id",
    "site",
    "hostname",
    "gpu_model",
    "gpu_count",
    "purchase_date",
    "purchase_price",
    "currency",
    "depreciation_years",
    "residual_value",
    "power_draw_kw",
    "pue",
    "electricity_price_per_kwh",
    "colocation_price_per_kw_month",
    "maintenance_per_year",
    "team",
    "project",
    "retired_date",
)
DAY = timedelta(days=1)
QUARTER_HOUR = 900


@dataclass(frozen=True)
class GpuCloud:
    provider: str
    account_id: str
    account_name: str
    file_prefix: str


@dataclass(frozen=True)
class BillingChange:
    """From `first` (days after the last month's first day) through `last` (inclusive, open if None), a
    fleet is billed under another pricing model and unit price; `all_day` makes it run every hour then."""

    first: int
    last: int | None
    pricing_model: str
    unit_price: Decimal
    list_unit_price: Decimal
    all_day: bool = False


@dataclass(frozen=True)
class GpuFleet:
    cloud: GpuCloud
    name: str
    region: str
    gpu_model: str
    gpu_count: int
    pricing_model: str  # on_demand | spot | reserved
    unit_price: Decimal  # per instance-hour
    list_unit_price: Decimal
    description: str
    owner: Owner
    pattern: Pattern
    count: int = 1
    # Runs only from day `first` through `last` of the last month (offsets from its first day), if set.
    window: tuple[int, int] | None = None
    changes: tuple[BillingChange, ...] = ()


LAMBDA = GpuCloud("Lambda", "org_4b1f0c9e7d2a", "Acme AI", "lambda")
RUNPOD = GpuCloud("RunPod", "user_2kQ9xLm4RvT8", "acme-data", "runpod")
FLEET = (
    GpuFleet(
        LAMBDA,
        "h100x8-pretrain",
        "us-south-1",
        "H100",
        8,
        "on_demand",
        Decimal("23.92"),
        Decimal("23.92"),
        "On-demand 8x H100 (80 GB SXM5) instance, gpu_8x_h100_sxm5",
        Owner("research", "llm-pretrain"),
        Pattern.TRAINING,
    ),
    GpuFleet(
        LAMBDA,
        "h100x8-eval",
        "us-east-1",
        "H100",
        8,
        "on_demand",
        Decimal("23.92"),
        Decimal("23.92"),
        "On-demand 8x H100 (80 GB SXM5) instance, gpu_8x_h100_sxm5",
        Owner("platform", "eval-harness"),
        Pattern.EXPERIMENTS,
    ),
    GpuFleet(
        RUNPOD,
        "recsys-train",
        "EU-RO-1",
        "A100 80GB",
        2,
        "spot",
        Decimal("0.92"),
        Decimal("2.38"),
        "Community Cloud spot pod, 2x A100 80GB PCIe",
        Owner("data", "recsys"),
        Pattern.SPOT,
        3,
    ),
    GpuFleet(
        RUNPOD,
        "embed-serve",
        "US-TX-3",
        "A100 80GB",
        1,
        "on_demand",
        Decimal("1.64"),
        Decimal("1.64"),
        "Secure Cloud on-demand pod, 1x A100 80GB SXM",
        Owner("inference", "embeddings"),
        Pattern.INFERENCE,
    ),
    # Event "forgotten node": an on-demand 8×H100 node started for notebooks and left running for a week.
    GpuFleet(
        LAMBDA,
        "h100x8-notebook",
        "us-east-1",
        "H100",
        8,
        "on_demand",
        Decimal("23.92"),
        Decimal("23.92"),
        "On-demand 8x H100 (80 GB SXM5) instance, gpu_8x_h100_sxm5",
        Owner("platform", "notebooks"),
        Pattern.ALWAYS_ON,
        window=(12, 18),
    ),
    # Event "unit price change": Lambda raises the 1×A100 on-demand price from 1.28 to 1.68 an hour.
    GpuFleet(
        LAMBDA,
        "a100-serve",
        "us-west-1",
        "A100 40GB",
        1,
        "on_demand",
        Decimal("1.28"),
        Decimal("1.28"),
        "On-demand 1x A100 (40 GB SXM4) instance, gpu_1x_a100_sxm4",
        Owner("inference", "doc-ocr"),
        Pattern.ALWAYS_ON,
        8,
        changes=(BillingChange(14, None, "on_demand", Decimal("1.68"), Decimal("1.68")),),
    ),
    # Event "commitment expiring": a reserved 8×H100 node whose reservation ends; it keeps running on demand.
    GpuFleet(
        LAMBDA,
        "h100x8-serve",
        "us-east-1",
        "H100",
        8,
        "reserved",
        Decimal("15.92"),
        Decimal("23.92"),
        "Reserved 8x H100 (80 GB SXM5) instance, gpu_8x_h100_sxm5",
        Owner("inference", "chat-serving"),
        Pattern.ALWAYS_ON,
        changes=(BillingChange(22, None, "on_demand", Decimal("23.92"), Decimal("23.92")),),
    ),
)
# Event "spot fallback": no spot capacity for three days, so the recsys pods run on demand around the clock.
SPOT_FALLBACK = BillingChange(19, 21, "on_demand", Decimal("2.38"), Decimal("2.38"), all_day=True)
FLEET = tuple(replace(fleet, changes=(SPOT_FALLBACK,)) if fleet.name == "recsys-train" else fleet for fleet in FLEET)
DEMO_EVENTS = (
    ("forgotten_node", "h100x8-notebook", 12, 18, "new_resource"),
    ("unit_price_change", "a100-serve", 14, None, "unit_price_change"),
    ("spot_fallback", "recsys-train", 19, 21, "pricing_category_shift"),
    ("commitment_expiring", "h100x8-serve", 22, None, "commitment_expired"),
)
"""(event, fleet, first and last day as offsets from the last month's first day, cause class the marts must name)."""
PRICING_CATEGORY = {"on_demand": "Standard", "spot": "Dynamic", "reserved": "Committed"}


def write_gpu_cloud_usage(out_dir: Path, seed: int, months: Sequence[BillingMonth], ledger: Ledger) -> list[Delivered]:
    rows: dict[tuple[str, str], list[dict[str, str]]] = {}
    month_of = {month.label: month for month in months}
    event_month = month_start(months[-1])
    window = covering_window(months)
    for fleet in FLEET:
        id_rng = rng_for(seed, USAGE_SOURCE, fleet.name, "ids")
        schedules = instance_schedules(
            seed, USAGE_SOURCE, fleet.name, fleet.count, fleet.pattern, months, step_seconds=QUARTER_HOUR
        )
        for number, intervals in enumerate(schedules, start=1):
            resource_id = f"{id_rng.getrandbits(128):032x}" if fleet.cloud is LAMBDA else _pod_id(id_rng)
            billed = _billed_pieces(fleet, intervals, window, event_month)
            for start, end, pricing_model, unit_price, list_unit_price in billed:
                month = month_of[start.strftime("%Y-%m")]
                usage_hours = hours_of(int((end - start).total_seconds()))
                cost = usage_hours * unit_price
                if cost != cost.quantize(Decimal("0.01")):
                    raise ValueError(f"{fleet.name}: {usage_hours} h × {unit_price} is not whole cents")
                rows.setdefault((fleet.cloud.file_prefix, month.label), []).append(
                    {
                        "provider": fleet.cloud.provider,
                        "account_id": fleet.cloud.account_id,
                        "account_name": fleet.cloud.account_name,
                        "resource_id": resource_id,
                        "resource_name": f"{fleet.name}-{number:02d}",
                        "region": fleet.region,
                        "gpu_model": fleet.gpu_model,
                        "gpu_count": str(fleet.gpu_count),
                        "pricing_model": pricing_model,
                        "usage_start": iso_z(start),
                        "usage_end": iso_z(end),
                        "usage_hours": text(usage_hours),
                        "unit_price": format(unit_price, "f"),
                        "cost": format(cost.quantize(Decimal("0.01")), "f"),
                        "currency": "USD",
                        "description": fleet.description,
                        "tags": canonical_json({"project": fleet.owner.project, "team": fleet.owner.team}),
                        "list_unit_price": format(list_unit_price, "f"),
                    }
                )
                ledger.add(
                    Charge(
                        USAGE_SOURCE,
                        fleet.cloud.provider,
                        fleet.cloud.account_id,
                        month.start.date(),
                        "USD",
                        cost,
                        cost,
                        fleet.owner.team,
                        fleet.gpu_model,
                        usage_hours * fleet.gpu_count,
                        PRICING_CATEGORY[pricing_model],
                    )
                )
    delivered = []
    for cloud in (LAMBDA, RUNPOD):
        for month in months:
            month_rows = sorted(
                rows.get((cloud.file_prefix, month.label), []),
                key=lambda row: (row["usage_start"], row["resource_name"]),
            )
            path = out_dir / f"{cloud.file_prefix}-usage-{month.label}.csv"
            _write_csv(path, USAGE_COLUMNS, month_rows)
            delivered.append(Delivered(USAGE_SOURCE, path, f"{cloud.provider} usage CSV, one month"))
    return delivered


def event_day(event_month: date, offset: int) -> date:
    """The calendar day of an event given as an offset from the last month's first day."""
    return event_month + timedelta(days=offset)


def _billed_pieces(
    fleet: GpuFleet,
    intervals: list[tuple[datetime, datetime]],
    window: tuple[datetime, datetime],
    event_month: date,
) -> list[tuple[datetime, datetime, str, Decimal, Decimal]]:
    """A fleet's usage cut per UTC day with the pricing model and prices of that day (events applied)."""

    def change_on(day: date) -> BillingChange | None:
        for change in fleet.changes:
            last = None if change.last is None else event_day(event_month, change.last)
            if event_day(event_month, change.first) <= day and (last is None or day <= last):
                return change
        return None

    all_day = {
        event_day(event_month, offset)
        for change in fleet.changes
        if change.all_day and change.last is not None
        for offset in range(change.first, change.last + 1)
    }
    runs = [piece for piece in pieces(intervals, DAY) if piece[0].date() not in all_day]
    for day in sorted(all_day):
        midnight = datetime(day.year, day.month, day.day, tzinfo=window[0].tzinfo or UTC)
        if window[0] <= midnight < window[1]:
            runs.append((midnight, midnight + DAY))
    if fleet.window is not None:
        first, last = (event_day(event_month, offset) for offset in fleet.window)
        runs = [piece for piece in runs if first <= piece[0].date() <= last]
    billed = []
    for start, end in sorted(runs):
        change = change_on(start.date())
        if change is None:
            billed.append((start, end, fleet.pricing_model, fleet.unit_price, fleet.list_unit_price))
        else:
            billed.append((start, end, change.pricing_model, change.unit_price, change.list_unit_price))
    return billed


def _pod_id(rng) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(14))


def _write_csv(path: Path, columns: Sequence[str], rows: list[dict[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([[row.get(name, "") for name in columns] for row in rows])
    path.write_bytes(buffer.getvalue().encode("utf-8"))


# --- Owned servers ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Server:
    asset_id: str
    site: str
    hostname: str
    gpu_model: str
    gpu_count: int
    purchase_date: date
    purchase_price: Decimal
    depreciation_years: int
    residual_value: Decimal
    power_draw_kw: Decimal
    pue: Decimal
    electricity_price_per_kwh: Decimal
    colocation_price_per_kw_month: Decimal
    maintenance_per_year: Decimal
    owner: Owner

    def daily_costs(self) -> dict[str, Decimal]:
        """One day's cost by component; the prices make each an exact decimal (checked here)."""
        costs = {
            "depreciation": (self.purchase_price - self.residual_value) / (self.depreciation_years * 365),
            "energy": self.power_draw_kw * self.pue * 24 * self.electricity_price_per_kwh,
            "colocation": self.power_draw_kw * self.colocation_price_per_kw_month * 12 / 365,
            "maintenance": self.maintenance_per_year / 365,
        }
        for component, value in costs.items():
            if value != value.quantize(Decimal("1E-8")):
                raise ValueError(f"{self.asset_id}: daily {component} {value} is not an exact decimal")
        return costs


SERVERS = (
    Server(
        "ACME-GPU-0001",
        "FRA1",
        "gpu-fra1-01.acme.internal",
        "H100",
        8,
        date(2026, 8, 17),
        Decimal("298750.00"),
        5,
        Decimal("25000.00"),
        Decimal("10.2"),
        Decimal("1.35"),
        Decimal("0.2150"),
        Decimal("146.00"),
        Decimal("21900.00"),
        Owner("research", "llm-pretrain"),
    ),
    Server(
        "ACME-GPU-0002",
        "AMS1",
        "gpu-ams1-01.acme.internal",
        "H100",
        8,
        date(2026, 8, 24),
        Decimal("309700.00"),
        4,
        Decimal("25000.00"),
        Decimal("10.2"),
        Decimal("1.25"),
        Decimal("0.1890"),
        Decimal("219.00"),
        Decimal("25550.00"),
        Owner("inference", "chat-serving"),
    ),
)


def write_onprem_assets(out_dir: Path) -> list[Delivered]:
    rows = [
        {
            "asset_id": server.asset_id,
            "site": server.site,
            "hostname": server.hostname,
            "gpu_model": server.gpu_model,
            "gpu_count": str(server.gpu_count),
            "purchase_date": server.purchase_date.isoformat(),
            "purchase_price": format(server.purchase_price, "f"),
            "currency": "EUR",
            "depreciation_years": str(server.depreciation_years),
            "residual_value": format(server.residual_value, "f"),
            "power_draw_kw": format(server.power_draw_kw, "f"),
            "pue": format(server.pue, "f"),
            "electricity_price_per_kwh": format(server.electricity_price_per_kwh, "f"),
            "colocation_price_per_kw_month": format(server.colocation_price_per_kw_month, "f"),
            "maintenance_per_year": format(server.maintenance_per_year, "f"),
            "team": server.owner.team,
            "project": server.owner.project,
            "retired_date": "",
        }
        for server in SERVERS
    ]
    path = out_dir / "gpu-servers.csv"
    _write_csv(path, ASSET_COLUMNS, rows)
    return [Delivered(ASSETS_SOURCE, path, "owned GPU server inventory CSV")]


def onprem_costs(through: date) -> list[dict[str, object]]:
    """Expected on-prem cost per server and calendar month, from purchase through `through` (inclusive)."""
    entries = []
    for server in SERVERS:
        daily = server.daily_costs()
        day = server.purchase_date
        per_month: dict[date, int] = {}
        while day <= through:
            per_month[day.replace(day=1)] = per_month.get(day.replace(day=1), 0) + 1
            day += DAY
        for period, days in sorted(per_month.items()):
            components = {name: value * days for name, value in daily.items()}
            entries.append(
                {
                    "asset_id": server.asset_id,
                    "team": server.owner.team,
                    "project": server.owner.project,
                    "billing_period_start": period.isoformat(),
                    "billing_currency": "EUR",
                    "days": days,
                    **{name: text(value) for name, value in components.items()},
                    "total": text(sum(components.values(), Decimal(0))),
                }
            )
    return entries


def record_onprem(ledger: Ledger, through: date) -> None:
    """On-prem cost in the ledger: effective (amortized) cost only, one charge per server and month."""
    for entry in onprem_costs(through):
        total = Decimal(str(entry["total"]))
        ledger.add(
            Charge(
                ASSETS_SOURCE,
                "On-premises",
                str(entry["asset_id"]),
                date.fromisoformat(str(entry["billing_period_start"])),
                "EUR",
                total,
                total,
                str(entry["team"]),
                "H100",
            )
        )
