"""What every demo export shares: the organisation, its machines' schedules, and the ledger.

The demo is one fictional company, Acme AI, seen through seven billing sources. Every writer draws
its teams and projects from `TEAM_PROJECTS`, its running hours from `usage_intervals`, and records
the FOCUS meaning of each line it writes (billed and effective cost, GPU-hours, pricing category,
team) in a `Ledger`. `expected_totals.json` is built from the ledger alone, never by reading the
written files back, so a parser that misreads a file cannot agree with it by accident.
"""

from __future__ import annotations

import base64
import functools
import json
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from synthetic_data.focus_samples import BillingMonth, stable_code

ORGANISATION = "Acme AI"

TEAM_PROJECTS: dict[str, tuple[str, ...]] = {
    "research": ("llm-pretrain", "multimodal-pretrain", "hparam-sweep"),
    "inference": ("chat-serving", "embeddings", "doc-ocr"),
    "platform": ("eval-harness", "notebooks"),
    "data": ("recsys", "analytics"),
}
PROJECT_TEAM = {project: team for team, projects in TEAM_PROJECTS.items() for project in projects}

# Instance type -> (GPU model, GPUs per instance), in the vocabulary of dbt seed gpu_instance_types.
GPU_MODELS: dict[str, tuple[str, int]] = {
    "p5.48xlarge": ("H100", 8),
    "p4d.24xlarge": ("A100 40GB", 8),
    "g5.xlarge": ("A10G", 1),
    "g5.2xlarge": ("A10G", 1),
    "g6e.xlarge": ("L40S", 1),
    "g6e.2xlarge": ("L40S", 1),
    "Standard_NC24ads_A100_v4": ("A100 80GB", 1),
    "Standard_ND96isr_H100_v5": ("H100", 8),
    "a3-highgpu-8g": ("H100", 8),
    "gpu_8x_h100_sxm5": ("H100", 8),
    "gpu_1x_a100_sxm4": ("A100 40GB", 1),
}

ZERO = Decimal(0)
TEN_DECIMALS = Decimal("1E-10")
CENT = Decimal("0.01")
MICRO = Decimal("0.000001")


def quantize(value: Decimal, step: Decimal = TEN_DECIMALS) -> Decimal:
    return value.quantize(step, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class Owner:
    """Who pays for a resource: a team and one of its projects, as every source tags them."""

    team: str
    project: str

    def __post_init__(self) -> None:
        if PROJECT_TEAM.get(self.project) != self.team:
            raise ValueError(f"project {self.project!r} does not belong to team {self.team!r}")


def rng_for(seed: int, *parts: str) -> random.Random:
    """A private generator per (seed, source, purpose): adding a source never shifts another."""
    return random.Random("/".join(["demo", str(seed), *parts]))


def line_item_id(rng: random.Random) -> str:
    """A CUR-style line item ID: 52 lowercase base32 characters."""
    return base64.b32encode(rng.randbytes(33)).decode()[:52].lower()


@functools.lru_cache(maxsize=4096)
def code(label: str, length: int, alphabet: str = "0123456789ABCDEFGHJKLMNPQRSTUVWXYZ") -> str:
    """`focus_samples.stable_code`, cached: the demo asks for the same SKU codes thousands of times."""
    return stable_code(label, length, alphabet)


# --- Billing periods --------------------------------------------------------------------------


def month_start(month: BillingMonth) -> date:
    return month.start.date()


def covering_window(months: Sequence[BillingMonth]) -> tuple[datetime, datetime]:
    return months[0].start, months[-1].end


def last_day(months: Sequence[BillingMonth]) -> date:
    """The last calendar day the demo covers (inclusive): the day before the last month ends."""
    return (months[-1].end - timedelta(days=1)).date()


# --- When machines run ------------------------------------------------------------------------


class Pattern(StrEnum):
    """How a machine is used; it decides the intervals it runs."""

    ALWAYS_ON = "always-on"  # production serving or a commitment-sized workload: every hour
    TRAINING = "training"  # multi-day runs with gaps for evaluation and restarts
    INFERENCE = "inference"  # long weekdays, mostly off at weekends
    SPOT = "spot"  # short runs cut by interruptions
    EXPERIMENTS = "experiments"  # a few hours on some working days


def usage_intervals(
    rng: random.Random, pattern: Pattern, start: datetime, end: datetime, *, step_seconds: int = 60
) -> list[tuple[datetime, datetime]]:
    """Running intervals inside [start, end), each bound a multiple of `step_seconds` from `start`."""

    def snap(moment: datetime) -> datetime:
        offset = int((moment - start).total_seconds())
        return start + timedelta(seconds=offset - offset % step_seconds)

    def hours(low: float, high: float) -> timedelta:
        return timedelta(seconds=rng.randint(int(low * 3600), int(high * 3600)))

    intervals: list[tuple[datetime, datetime]] = []
    if pattern is Pattern.ALWAYS_ON:
        return [(start, end)]
    if pattern in (Pattern.TRAINING, Pattern.SPOT):
        run, gap = ((20, 120), (2, 30)) if pattern is Pattern.TRAINING else ((2, 16), (1, 12))
        moment = start + hours(0, 6)
        while moment < end:
            stop = moment + hours(*run)
            intervals.append((snap(moment), snap(stop) if stop < end else end))
            moment = stop + hours(*gap)
    else:
        day = start.replace(hour=0, minute=0, second=0, microsecond=0)
        while day < end:
            weekend = day.weekday() >= 5
            if pattern is Pattern.INFERENCE:
                if not weekend or rng.random() < 0.35:
                    first, last = (7, 23) if not weekend else (12, 19)
                    begin = day + timedelta(hours=first) + hours(0, 1.5)
                    intervals.append((begin, day + timedelta(hours=last) + hours(0, 0.9)))
            elif not weekend and rng.random() < 0.7:
                begin = day + timedelta(hours=rng.randint(8, 15)) + hours(0, 0.9)
                intervals.append((begin, begin + hours(0.5, 8)))
            day += timedelta(days=1)
        intervals = [(snap(max(a, start)), snap(b) if b < end else end) for a, b in intervals if b > start]
    return [(a, b) for a, b in intervals if a < b and a < end]


def instance_schedules(
    seed: int,
    source: str,
    fleet_name: str,
    count: int,
    pattern: Pattern,
    months: Sequence[BillingMonth],
    **kwargs: int,
) -> list[list[tuple[datetime, datetime]]]:
    """One schedule per instance over the whole demo window, so runs continue across month ends."""
    start, end = covering_window(months)
    return [
        usage_intervals(rng_for(seed, source, fleet_name, str(number), "schedule"), pattern, start, end, **kwargs)
        for number in range(1, count + 1)
    ]


def split(intervals: Iterable[tuple[datetime, datetime]], unit: timedelta) -> list[tuple[datetime, int]]:
    """Seconds used per `unit` (an hour or a day) bucket, keyed by the bucket's start, in time order."""
    used: dict[datetime, int] = defaultdict(int)
    for begin, end in intervals:
        moment = begin
        while moment < end:
            bucket = _floor(moment, unit)
            bucket_end = bucket + unit
            stop = min(end, bucket_end)
            used[bucket] += int((stop - moment).total_seconds())
            moment = stop
    return sorted(used.items())


def pieces(intervals: Iterable[tuple[datetime, datetime]], unit: timedelta) -> list[tuple[datetime, datetime]]:
    """The intervals cut at every `unit` boundary (a session crossing midnight becomes two rows)."""
    result = []
    for begin, end in intervals:
        moment = begin
        while moment < end:
            stop = min(end, _floor(moment, unit) + unit)
            result.append((moment, stop))
            moment = stop
    return result


def _floor(moment: datetime, unit: timedelta) -> datetime:
    epoch = datetime(1970, 1, 1, tzinfo=moment.tzinfo or UTC)
    seconds = int((moment - epoch).total_seconds())
    return epoch + timedelta(seconds=seconds - seconds % int(unit.total_seconds()))


def hours_of(seconds: int) -> Decimal:
    return quantize(Decimal(seconds) / 3600)


# --- The ledger -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Delivered:
    """A delivery folder or file a writer produced, with the billing source it belongs to."""

    source: str
    path: Path
    description: str


@dataclass(frozen=True)
class Charge:
    """The FOCUS meaning of one written line, recorded by the writer that wrote it."""

    source: str
    provider: str
    billing_account_id: str
    period: date
    currency: str
    billed: Decimal
    effective: Decimal
    team: str | None = None
    gpu_model: str | None = None
    gpu_hours: Decimal = ZERO
    pricing_category: str | None = None


# Sources whose FOCUS lines come from two datasets together: compare them as one group.
SOURCE_GROUPS = {"azure_actual": "azure", "azure_amortized": "azure"}
GROUP_SOURCES = {"azure": ["azure_actual", "azure_amortized"]}


def group_of(source: str) -> str:
    return SOURCE_GROUPS.get(source, source)


def sources_of(group: str) -> list[str]:
    return GROUP_SOURCES.get(group, [group])


@dataclass
class Ledger:
    charges: list[Charge] = field(default_factory=list)

    def add(self, charge: Charge) -> None:
        self.charges.append(charge)

    def billing(self) -> list[dict[str, object]]:
        """Billed and effective cost per source group, provider, billing account, period and currency."""
        sums: dict[tuple, list[Decimal]] = defaultdict(lambda: [ZERO, ZERO])
        for charge in self.charges:
            key = (group_of(charge.source), charge.provider, charge.billing_account_id, charge.period, charge.currency)
            sums[key][0] += charge.billed
            sums[key][1] += charge.effective
        return [
            {
                "sources": sources_of(group),
                "provider": provider,
                "billing_account_id": account,
                "billing_period_start": period.isoformat(),
                "billing_currency": currency,
                "billed_cost": text(billed),
                "effective_cost": text(effective),
            }
            for (group, provider, account, period, currency), (billed, effective) in sorted(sums.items())
        ]

    def gpu_hours(self) -> list[dict[str, object]]:
        """GPU-hours per source group, provider, period, GPU model and pricing category."""
        sums: dict[tuple, Decimal] = defaultdict(lambda: ZERO)
        for charge in self.charges:
            if charge.gpu_hours:
                key = (
                    group_of(charge.source),
                    charge.provider,
                    charge.period,
                    charge.gpu_model,
                    charge.pricing_category,
                )
                sums[key] += charge.gpu_hours
        return [
            {
                "sources": sources_of(group),
                "provider": provider,
                "billing_period_start": period.isoformat(),
                "gpu_model": model,
                "pricing_category": category,
                "gpu_hours": text(hours),
            }
            for (group, provider, period, model, category), hours in sorted(sums.items(), key=_sort_key)
        ]

    def team_gpu_effective_cost(self) -> list[dict[str, object]]:
        """Effective cost of GPU lines per source group, period, currency and team (null: untagged)."""
        sums: dict[tuple, Decimal] = defaultdict(lambda: ZERO)
        for charge in self.charges:
            if charge.gpu_model is not None:
                sums[(group_of(charge.source), charge.period, charge.currency, charge.team)] += charge.effective
        return [
            {
                "sources": sources_of(group),
                "billing_period_start": period.isoformat(),
                "billing_currency": currency,
                "team": team,
                "effective_cost": text(cost),
            }
            for (group, period, currency, team), cost in sorted(sums.items(), key=_sort_key)
        ]


def _sort_key(item: tuple[tuple, object]) -> tuple:
    return tuple("" if part is None else str(part) for part in item[0])


# --- Writing ----------------------------------------------------------------------------------


def text(value: Decimal) -> str:
    """A decimal as plain text without exponent or trailing zeros (`0` for zero)."""
    if value == 0:
        return "0"
    spelled = format(value, "f")
    return spelled.rstrip("0").rstrip(".") if "." in spelled else spelled


def as_double(value: Decimal | None) -> float | None:
    """A decimal as the binary float an export stores, refusing one whose shortest text differs.

    Exports that store money as doubles (CUR 2.0, AWS FOCUS, the BigQuery export) are read back
    through each double's shortest decimal text, so every value written must survive that trip.
    """
    if value is None:
        return None
    number = float(value)
    if Decimal(repr(number)) != value:
        raise ValueError(f"{value} does not survive a trip through a double ({number!r})")
    return number


def canonical_json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def write_parquet(path: Path, schema: pa.Schema, rows: list[dict[str, object]]) -> None:
    """Rows as a snappy Parquet file with an explicit schema (no inference, same bytes every run)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = {name: [row.get(name) for row in rows] for name in schema.names}
    table = pa.Table.from_pydict(columns, schema=schema)
    pq.write_table(table, path, compression="snappy")


def iso_z(moment: datetime, *, millis: bool = False) -> str:
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z" if millis else "%Y-%m-%dT%H:%M:%SZ")
