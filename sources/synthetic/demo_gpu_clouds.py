"""Acme AI's GPU clouds and owned servers, in the project's own CSV contracts.

GPU clouds (Lambda, RunPod) have no billing export; their usage is written in the usage CSV
contract: one row per instance session and UTC day, `unit_price` per instance-hour, `cost` equal
to `unit_price × usage_hours` exactly to the cent (sessions are billed in quarter hours and prices
are multiples of 4 cents), `tags` a JSON object. Lambda runs 8×H100 nodes on demand; RunPod runs
community-cloud 2×A100 80GB pods on spot and one on-demand pod.

The owned servers are an inventory CSV: two 8×H100 servers bought in August 2026, in EUR. Their
daily cost is computed downstream (dbt); the prices here are chosen so every daily component is an
exact decimal: straight-line depreciation, energy, colocation and maintenance.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

from sources.synthetic.demo_common import (
    Charge,
    Delivered,
    Ledger,
    Owner,
    Pattern,
    canonical_json,
    hours_of,
    instance_schedules,
    iso_z,
    pieces,
    rng_for,
    text,
)
from sources.synthetic.focus_samples import BillingMonth

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
)
PRICING_CATEGORY = {"on_demand": "Standard", "spot": "Dynamic", "reserved": "Committed"}


def write_gpu_cloud_usage(out_dir: Path, seed: int, months: Sequence[BillingMonth], ledger: Ledger) -> list[Delivered]:
    rows: dict[tuple[str, str], list[dict[str, str]]] = {}
    month_of = {month.label: month for month in months}
    for fleet in FLEET:
        id_rng = rng_for(seed, USAGE_SOURCE, fleet.name, "ids")
        schedules = instance_schedules(
            seed, USAGE_SOURCE, fleet.name, fleet.count, fleet.pattern, months, step_seconds=QUARTER_HOUR
        )
        for number, intervals in enumerate(schedules, start=1):
            resource_id = f"{id_rng.getrandbits(128):032x}" if fleet.cloud is LAMBDA else _pod_id(id_rng)
            for start, end in pieces(intervals, DAY):
                month = month_of[start.strftime("%Y-%m")]
                usage_hours = hours_of(int((end - start).total_seconds()))
                cost = usage_hours * fleet.unit_price
                if cost != cost.quantize(Decimal("0.01")):
                    raise ValueError(f"{fleet.name}: {usage_hours} h × {fleet.unit_price} is not whole cents")
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
                        "pricing_model": fleet.pricing_model,
                        "usage_start": iso_z(start),
                        "usage_end": iso_z(end),
                        "usage_hours": text(usage_hours),
                        "unit_price": format(fleet.unit_price, "f"),
                        "cost": format(cost.quantize(Decimal("0.01")), "f"),
                        "currency": "USD",
                        "description": fleet.description,
                        "tags": canonical_json({"project": fleet.owner.project, "team": fleet.owner.team}),
                        "list_unit_price": format(fleet.list_unit_price, "f"),
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
                        PRICING_CATEGORY[fleet.pricing_model],
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
