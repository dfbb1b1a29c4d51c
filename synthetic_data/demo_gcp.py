"""Acme AI's Google Cloud billing account as the detailed BigQuery export, extracted to Parquet.

BigQuery is the export's only sink; a team gets files with `EXPORT DATA … FORMAT='PARQUET'`, one
folder per invoice month with numbered shards. The Parquet keeps the export's nested schema:
`service`, `sku`, `project` (with `labels` and `ancestors`), `labels` and `system_labels` as arrays of
key/value structs, `location`, `resource`, `usage`, `credits[]`, `invoice.month`, `cost_type`,
`price`, `export_time`; FLOAT64 money becomes doubles.

Rows are hourly. Invoice months follow US Pacific time, so the September invoice holds usage from
2026-09-01T07:00Z to 2026-10-01T07:00Z. The fleet is three a3-highgpu-8g VMs: one on demand, one
fully covered by a 1-year resource commitment for its 8 H100 GPUs (each GPU row carries a
COMMITTED_USAGE_DISCOUNT credit equal to its cost; the commitment fee is its own hourly SKU,
`Commitment v1: Nvidia H100 GPU in Americas for 1 Year`), one Spot. GPUs, vCPUs and RAM are
separate SKUs. BigQuery analysis and Cloud Storage add non-GPU spend. Net cost is
`cost + SUM(credits.amount)`, both billed and effective: commitments here are paid as they accrue.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

import pyarrow as pa

from synthetic_data.demo_common import (
    MICRO,
    ZERO,
    Charge,
    Delivered,
    Ledger,
    Owner,
    Pattern,
    as_double,
    code,
    hours_of,
    quantize,
    rng_for,
    split,
    usage_intervals,
    write_parquet,
)
from synthetic_data.focus_samples import BillingMonth

SOURCE = "gcp_billing"
PROVIDER = "Google Cloud"
BILLING_ACCOUNT = "0165A4-7B2C9D-E3F810"
PACIFIC = ZoneInfo("America/Los_Angeles")
HOUR = timedelta(hours=1)
ROWS_PER_SHARD = 4000
ORGANIZATION = ("organizations/703919385566", "acme.example")
COMPUTE = ("6F81-5844-456A", "Compute Engine")
BIGQUERY = ("24E6-581D-38E5", "BigQuery")
STORAGE = ("95FF-2EF5-5EA1", "Cloud Storage")


@dataclass(frozen=True)
class Sku:
    description: str
    price: Decimal  # per pricing unit
    usage_unit: str
    pricing_unit: str

    @property
    def id(self) -> str:
        digits = code(f"demo/gcp/{self.description}", 12, "0123456789ABCDEF")
        return f"{digits[:4]}-{digits[4:8]}-{digits[8:]}"


@dataclass(frozen=True)
class Project:
    id: str
    number: str
    owner: Owner


# Chosen so that a3-highgpu-8g costs about 11.06 USD per GPU-hour all in (Epoch, March 2025).
GPU = Sku("Nvidia H100 80GB GPU running in Americas", Decimal("9.141"), "seconds", "hour")
CORE = Sku("A3 Instance Core running in Americas", Decimal("0.033982"), "seconds", "hour")
RAM = Sku("A3 Instance Ram running in Americas", Decimal("0.004555"), "byte-seconds", "gibibyte hour")
SPOT_GPU = Sku("Spot Preemptible Nvidia H100 80GB GPU running in Americas", Decimal("2.7423"), "seconds", "hour")
SPOT_CORE = Sku("Spot Preemptible A3 Instance Core running in Americas", Decimal("0.010195"), "seconds", "hour")
SPOT_RAM = Sku(
    "Spot Preemptible A3 Instance Ram running in Americas", Decimal("0.0013665"), "byte-seconds", "gibibyte hour"
)
COMMITMENT = Sku("Commitment v1: Nvidia H100 GPU in Americas for 1 Year", Decimal("5.9417"), "seconds", "hour")
ANALYSIS = Sku("Analysis (US)", Decimal("6.25"), "bytes", "tebibyte")
GCS = Sku("Standard Storage US Multi-region", Decimal("0.026"), "byte-seconds", "gibibyte month")

A3_GPUS, A3_CORES, A3_RAM_GIB = 8, 208, 1872
PRETRAIN = Project("acme-llm-pretrain", "412345678901", Owner("research", "llm-pretrain"))
SWEEP = Project("acme-hparam-sweep", "412345678902", Owner("research", "hparam-sweep"))
ANALYTICS = Project("acme-analytics", "412345678903", Owner("data", "analytics"))
COMMITMENT_NAME = "h100-1y-pretrain"


@dataclass(frozen=True)
class Vm:
    name: str
    project: Project
    zone: str
    pattern: Pattern
    purchase: str  # on-demand | committed | spot


FLEET = (
    Vm("a3-pretrain-01", PRETRAIN, "us-central1-a", Pattern.TRAINING, "on-demand"),
    Vm("a3-pretrain-cud-01", PRETRAIN, "us-central1-b", Pattern.ALWAYS_ON, "committed"),
    Vm("a3-sweep-01", SWEEP, "us-central1-c", Pattern.SPOT, "spot"),
)

_KV = pa.list_(pa.struct([("key", pa.string()), ("value", pa.string())]))
_TS = pa.timestamp("us", tz="UTC")
_NUMERIC = pa.decimal128(38, 9)
SCHEMA = pa.schema(
    [
        ("billing_account_id", pa.string()),
        ("service", pa.struct([("id", pa.string()), ("description", pa.string())])),
        ("sku", pa.struct([("id", pa.string()), ("description", pa.string())])),
        ("usage_start_time", _TS),
        ("usage_end_time", _TS),
        (
            "project",
            pa.struct(
                [
                    ("id", pa.string()),
                    ("number", pa.string()),
                    ("name", pa.string()),
                    ("labels", _KV),
                    ("ancestry_numbers", pa.string()),
                    (
                        "ancestors",
                        pa.list_(pa.struct([("resource_name", pa.string()), ("display_name", pa.string())])),
                    ),
                ]
            ),
        ),
        ("labels", _KV),
        ("system_labels", _KV),
        (
            "location",
            pa.struct(
                [("location", pa.string()), ("country", pa.string()), ("region", pa.string()), ("zone", pa.string())]
            ),
        ),
        (
            "tags",
            pa.list_(
                pa.struct(
                    [
                        ("key", pa.string()),
                        ("value", pa.string()),
                        ("inherited", pa.bool_()),
                        ("namespace", pa.string()),
                    ]
                )
            ),
        ),
        ("resource", pa.struct([("name", pa.string()), ("global_name", pa.string())])),
        ("transaction_type", pa.string()),
        ("seller_name", pa.string()),
        ("export_time", _TS),
        ("cost", pa.float64()),
        ("currency", pa.string()),
        ("currency_conversion_rate", pa.float64()),
        (
            "usage",
            pa.struct(
                [
                    ("amount", pa.float64()),
                    ("unit", pa.string()),
                    ("amount_in_pricing_units", pa.float64()),
                    ("pricing_unit", pa.string()),
                ]
            ),
        ),
        (
            "credits",
            pa.list_(
                pa.struct(
                    [
                        ("name", pa.string()),
                        ("amount", pa.float64()),
                        ("full_name", pa.string()),
                        ("id", pa.string()),
                        ("type", pa.string()),
                    ]
                )
            ),
        ),
        ("invoice", pa.struct([("month", pa.string()), ("publisher_type", pa.string())])),
        ("cost_type", pa.string()),
        (
            "adjustment_info",
            pa.struct(
                [("id", pa.string()), ("description", pa.string()), ("mode", pa.string()), ("type", pa.string())]
            ),
        ),
        (
            "price",
            pa.struct(
                [
                    ("effective_price", _NUMERIC),
                    ("tier_start_amount", _NUMERIC),
                    ("unit", pa.string()),
                    ("pricing_unit_quantity", _NUMERIC),
                ]
            ),
        ),
        ("cost_at_list", pa.float64()),
        ("subscription", pa.struct([("instance_id", pa.string())])),
        ("consumption_model", pa.struct([("id", pa.string()), ("description", pa.string())])),
    ]
)


def invoice_window(month: BillingMonth) -> tuple[datetime, datetime]:
    """The invoice month in UTC: from local midnight on the 1st in US Pacific time to the next."""

    def pacific_midnight(moment: datetime) -> datetime:
        return datetime(moment.year, moment.month, 1, tzinfo=PACIFIC).astimezone(UTC)

    return pacific_midnight(month.start), pacific_midnight(month.end)


def _labels(owner: Owner) -> list[dict[str, str]]:
    return [{"key": "project", "value": owner.project}, {"key": "team", "value": owner.team}]


class _Rows:
    def __init__(self, seed: int, months: Sequence[BillingMonth], ledger: Ledger) -> None:
        self.ledger = ledger
        self.rng = rng_for(seed, SOURCE, "rows")
        self.windows = {month.label: invoice_window(month) for month in months}
        self.months = {month.label: month for month in months}
        self.rows: dict[str, list[dict[str, object]]] = {month.label: [] for month in months}

    def invoice_month(self, moment: datetime) -> str:
        for label, (start, end) in self.windows.items():
            if start <= moment < end:
                return label
        raise ValueError(f"{moment} is outside the demo's invoice months")

    def add(
        self,
        service: tuple[str, str],
        sku: Sku,
        project: Project,
        start: datetime,
        end: datetime,
        amount: Decimal,
        pricing_units: Decimal,
        *,
        labels: bool = True,
        zone: str | None = None,
        resource: tuple[str, str] | None = None,
        system_labels: list[dict[str, str]] | None = None,
        credit: tuple[str, str, str] | None = None,
        gpu_category: str | None = None,
        gpu_line: bool = False,
    ) -> None:
        label = self.invoice_month(start)
        cost = quantize(pricing_units * sku.price, MICRO)
        credits = []
        if credit is not None:
            name, credit_id, credit_type = credit
            credits.append(
                {"name": name, "amount": as_double(-cost), "full_name": None, "id": credit_id, "type": credit_type}
            )
        net = cost - (cost if credit is not None else ZERO)
        self.rows[label].append(
            {
                "billing_account_id": BILLING_ACCOUNT,
                "service": {"id": service[0], "description": service[1]},
                "sku": {"id": sku.id, "description": sku.description},
                "usage_start_time": start,
                "usage_end_time": end,
                "project": {
                    "id": project.id,
                    "number": project.number,
                    "name": project.id,
                    "labels": _labels(project.owner),
                    "ancestry_numbers": f"/{ORGANIZATION[0].split('/')[1]}/",
                    "ancestors": [
                        {"resource_name": f"projects/{project.number}", "display_name": project.id},
                        {"resource_name": ORGANIZATION[0], "display_name": ORGANIZATION[1]},
                    ],
                },
                "labels": _labels(project.owner) if labels else [],
                "system_labels": system_labels or [],
                "location": {
                    "location": zone or "us-central1",
                    "country": "US",
                    "region": "us-central1",
                    "zone": zone,
                },
                "tags": [],
                "resource": {"name": resource[0], "global_name": resource[1]} if resource else None,
                "transaction_type": "GOOGLE",
                "seller_name": "Google",
                "export_time": end + timedelta(hours=self.rng.randint(2, 8), minutes=self.rng.randint(0, 59)),
                "cost": as_double(cost),
                "currency": "USD",
                "currency_conversion_rate": 1.0,
                "usage": {
                    "amount": as_double(amount),
                    "unit": sku.usage_unit,
                    "amount_in_pricing_units": as_double(pricing_units),
                    "pricing_unit": sku.pricing_unit,
                },
                "credits": credits,
                "invoice": {"month": label.replace("-", ""), "publisher_type": "Google"},
                "cost_type": "regular",
                "adjustment_info": None,
                "price": {
                    "effective_price": sku.price,
                    "tier_start_amount": Decimal(0),
                    "unit": sku.pricing_unit,
                    "pricing_unit_quantity": Decimal(1),
                },
                "cost_at_list": as_double(cost),
                "subscription": None,
                "consumption_model": {"id": "default", "description": "Default"},
            }
        )
        owner = project.owner
        self.ledger.add(
            Charge(
                SOURCE,
                PROVIDER,
                BILLING_ACCOUNT,
                self.months[label].start.date(),
                "USD",
                net,
                net,
                owner.team,
                "H100" if gpu_line else None,
                pricing_units if gpu_category else ZERO,
                gpu_category,
            )
        )

    def vm_hour(self, vm: Vm, hour: datetime, seconds: int) -> None:
        hours = hours_of(seconds)
        skus = (SPOT_GPU, SPOT_CORE, SPOT_RAM) if vm.purchase == "spot" else (GPU, CORE, RAM)
        instance_id = code(f"demo/gcp/{vm.name}", 19, "0123456789")
        resource = (
            vm.name,
            f"//compute.googleapis.com/projects/{vm.project.id}/zones/{vm.zone}/instances/{instance_id}",
        )
        system = [
            {"key": "compute.googleapis.com/cores", "value": str(A3_CORES)},
            {"key": "compute.googleapis.com/machine_spec", "value": "a3-highgpu-8g"},
            {"key": "compute.googleapis.com/memory", "value": str(A3_RAM_GIB * 1024)},
        ]
        category = {"on-demand": "Standard", "spot": "Dynamic", "committed": "Committed"}[vm.purchase]
        gpu, core, ram = skus
        self.add(
            COMPUTE,
            gpu,
            vm.project,
            hour,
            hour + HOUR,
            Decimal(seconds * A3_GPUS),
            hours * A3_GPUS,
            zone=vm.zone,
            resource=resource,
            system_labels=system,
            credit=(
                (
                    "Committed use discount: GPU",
                    f"{vm.project.id}/us-central1/{COMMITMENT_NAME}",
                    "COMMITTED_USAGE_DISCOUNT",
                )
                if vm.purchase == "committed"
                else None
            ),
            gpu_category=category,
            gpu_line=True,
        )
        self.add(
            COMPUTE,
            core,
            vm.project,
            hour,
            hour + HOUR,
            Decimal(seconds * A3_CORES),
            hours * A3_CORES,
            zone=vm.zone,
            resource=resource,
            system_labels=system,
        )
        self.add(
            COMPUTE,
            ram,
            vm.project,
            hour,
            hour + HOUR,
            Decimal(seconds) * A3_RAM_GIB * 2**30,
            hours * A3_RAM_GIB,
            zone=vm.zone,
            resource=resource,
            system_labels=system,
        )

    def commitment_fee(self, hour: datetime) -> None:
        """The commitment's hourly fee for its 8 GPUs: no resource, no resource labels."""
        self.add(
            COMPUTE,
            COMMITMENT,
            PRETRAIN,
            hour,
            hour + HOUR,
            Decimal(3600 * A3_GPUS),
            Decimal(A3_GPUS),
            labels=False,
            gpu_line=True,
        )

    def bigquery(self, hour: datetime, gibibytes: int) -> None:
        """Bytes scanned by the hour's queries, billed per tebibyte."""
        self.add(
            BIGQUERY, ANALYSIS, ANALYTICS, hour, hour + HOUR, Decimal(gibibytes * 2**30), Decimal(gibibytes) / 1024
        )

    def storage(self, hour: datetime, gibibytes: Decimal) -> None:
        months = quantize(gibibytes / 730)
        self.add(STORAGE, GCS, ANALYTICS, hour, hour + HOUR, gibibytes * 2**30 * 3600, months)


def write_gcp_billing(out_dir: Path, seed: int, months: Sequence[BillingMonth], ledger: Ledger) -> list[Delivered]:
    builder = _Rows(seed, months, ledger)
    start = invoice_window(months[0])[0]
    end = invoice_window(months[-1])[1]
    for vm in FLEET:
        intervals = usage_intervals(rng_for(seed, SOURCE, vm.name, "schedule"), vm.pattern, start, end)
        for hour, seconds in split(intervals, HOUR):
            builder.vm_hour(vm, hour, seconds)
    rng = rng_for(seed, SOURCE, "other-services")
    hour = start
    while hour < end:
        builder.commitment_fee(hour)
        if hour.hour in (2, 9, 14) and rng.random() < 0.8:
            builder.bigquery(hour, rng.randint(200, 4000))
        builder.storage(hour, Decimal(88_000 + 40 * int((hour - start).total_seconds() // 86400)))
        hour += HOUR
    delivered = []
    for month in months:
        rows = sorted(builder.rows[month.label], key=lambda row: (row["usage_start_time"], row["sku"]["id"]))
        folder = out_dir / f"billing-export-{month.label.replace('-', '')}"
        for shard, first in enumerate(range(0, len(rows), ROWS_PER_SHARD)):
            write_parquet(folder / f"{shard:012d}.parquet", SCHEMA, rows[first : first + ROWS_PER_SHARD])
        delivered.append(Delivered(SOURCE, folder, "GCP BigQuery billing export (Parquet), one invoice month"))
    return delivered
