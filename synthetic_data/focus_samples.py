"""Write realistic, deterministic FOCUS billing files with GPU rows from four providers.

No real billing export may be committed, yet the parsers and the warehouse must be exercised on the
shapes real providers deliver. Each file here copies one real-world variant:

- AWS: FOCUS 1.2 Parquet like the `FOCUS_1_2_AWS` Data Export, money as decimal128, `x_UsageType`
  with and without a region prefix, On-Demand, Spot and Savings Plan usage, the plan's recurring
  fee, storage, data transfer and a Tax row.
- Microsoft: FOCUS 1.0 CSV like FocusCost, with a UTF-8 BOM, CRLF line ends, unprefixed
  `BillingAccountType`/`SubAccountType`, billed in EUR, with a reservation's Used, Unused and
  purchase rows.
- Google Cloud: FOCUS 1.0 gzip CSV like FOCUS-Sample-Data, with the literal `NULL` and an extra
  unprefixed `Id` column; GPUs billed as their own per-GPU-hour SKUs beside VM core and RAM SKUs.
- Lambda: FOCUS 1.3 CSV with `ServiceProviderName`/`HostProviderName` and without the deprecated
  `ProviderName`/`PublisherName`.

Every value comes from `random.Random` instances seeded from the seed, provider and month, so the
same seed gives byte-identical files; nothing reads the clock. Money is `Decimal` end to end and
`expected_totals.json` records the sums the files must add up to.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import random
import re
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sources.focus.columns import FOCUS_1_1_ONLY, FOCUS_1_2_ONLY, FOCUS_1_3_ONLY, FOCUS_COLUMNS, Kind

Row = dict[str, object]

EXPECTED_TOTALS_FILE = "expected_totals.json"

MONEY_SCALE = 10
"""Decimals kept on every cost, price and quantity: what AWS writes, and what fits decimal128(38, 10)."""
_QUANTUM = Decimal(1).scaleb(-MONEY_SCALE)
ZERO = Decimal(0).quantize(_QUANTUM)
_SECONDS_PER_HOUR = Decimal(3600)


def exact(value: Decimal) -> Decimal:
    """Round to the file scale, half up: the one rounding step, shared by costs and quantities."""
    return value.quantize(_QUANTUM, rounding=ROUND_HALF_UP)


# --- FOCUS column sets per version ------------------------------------------------------------

# SkuMeter and SkuPriceDetails arrived in FOCUS 1.1 (spec "Introduced (version)").
_INTRODUCED_AFTER_1_0 = FOCUS_1_1_ONLY | FOCUS_1_2_ONLY | FOCUS_1_3_ONLY | {"SkuMeter", "SkuPriceDetails"}
FOCUS_1_0_COLUMNS = tuple(name for name in FOCUS_COLUMNS if name not in _INTRODUCED_AFTER_1_0)
FOCUS_1_2_COLUMNS = tuple(name for name in FOCUS_COLUMNS if name not in FOCUS_1_3_ONLY)
FOCUS_1_3_COLUMNS = tuple(name for name in FOCUS_COLUMNS if name not in {"ProviderName", "PublisherName"})


def _in_catalogue_order(names: Iterable[str]) -> tuple[str, ...]:
    wanted = set(names)
    return tuple(name for name in FOCUS_COLUMNS if name in wanted)


# --- Calendar ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class BillingMonth:
    """A calendar billing period in UTC; `end` is exclusive, as FOCUS requires."""

    start: datetime
    end: datetime

    @property
    def label(self) -> str:
        return self.start.strftime("%Y-%m")

    @property
    def days(self) -> list[datetime]:
        return [self.start + timedelta(days=offset) for offset in range((self.end - self.start).days)]

    @property
    def hours(self) -> Decimal:
        return Decimal((self.end - self.start).days * 24)


def billing_months(start_month: str, months: int) -> list[BillingMonth]:
    match = re.fullmatch(r"(\d{4})-(\d{2})", start_month)
    if not match or not 1 <= int(match[2]) <= 12:
        raise ValueError(f"start_month must look like 2026-09, got {start_month!r}")
    if months < 1:
        raise ValueError(f"months must be at least 1, got {months}")
    year, month = int(match[1]), int(match[2])
    periods = []
    for _ in range(months):
        next_year, next_month = (year + 1, 1) if month == 12 else (year, month + 1)
        start = datetime(year, month, 1, tzinfo=UTC)
        periods.append(BillingMonth(start, datetime(next_year, next_month, 1, tzinfo=UTC)))
        year, month = next_year, next_month
    return periods


# --- What runs where --------------------------------------------------------------------------


class Workload(StrEnum):
    """How a machine is used through the month; it decides the hours billed each day."""

    TRAINING = "training"  # multi-day runs: full days, a few restarts and gaps between runs
    INFERENCE = "inference"  # serving: long weekdays, weekends mostly scaled to zero
    EXPERIMENTS = "experiments"  # sweeps and notebooks: a few hours on working days


class Purchase(StrEnum):
    ON_DEMAND = "on-demand"
    SPOT = "spot"
    COMMITTED = "committed"


@dataclass(frozen=True)
class Machine:
    """A GPU instance type with its price per instance-hour in the file's billing currency."""

    name: str
    gpu_count: int
    core_count: int
    memory_gib: int
    on_demand_price: Decimal
    spot_price: Decimal | None = None
    description: str = ""

    @property
    def sku_price_details(self) -> dict[str, object]:
        return {
            "CoreCount": self.core_count,
            "GpuCount": self.gpu_count,
            "InstanceType": self.name,
            "MemorySize": self.memory_gib,
        }


@dataclass(frozen=True)
class Region:
    id: str
    name: str
    zones: tuple[str | None, ...] = (None,)
    usage_type_prefix: str = ""


@dataclass(frozen=True)
class SubAccount:
    id: str
    name: str
    team: str


@dataclass(frozen=True)
class FleetTemplate:
    """`count` identical machines; a larger fleet (more rows) is a larger count."""

    machine: Machine
    region: Region
    account: SubAccount
    project: str
    workload: Workload
    purchase: Purchase
    count: int
    name_prefix: str
    resource_group: str = ""


@dataclass(frozen=True)
class Instance:
    resource_id: str
    resource_name: str
    zone: str | None
    template: FleetTemplate

    @property
    def machine(self) -> Machine:
        return self.template.machine

    @property
    def tags(self) -> dict[str, object]:
        return {"project": self.template.project, "team": self.template.account.team}


def _build_fleet(
    rng: random.Random,
    templates: Iterable[FleetTemplate],
    resource_id: Callable[[random.Random, FleetTemplate, str, str | None], str],
) -> list[Instance]:
    fleet = []
    for template in templates:
        for number in range(1, template.count + 1):
            name = f"{template.name_prefix}-{number:02d}"
            zone = rng.choice(template.region.zones)
            fleet.append(Instance(resource_id(rng, template, name, zone), name, zone, template))
    return fleet


def hours_used(
    rng: random.Random, workload: Workload, day: datetime, *, interruptible: bool = False, billing_step_seconds: int = 1
) -> Decimal:
    """Hours billed for one machine on one day; zero means no row (the machine was stopped)."""
    weekend = day.weekday() >= 5
    if workload is Workload.TRAINING:
        draw = rng.random()
        if draw < 0.08:
            return ZERO
        seconds = 24 * 3600 if draw >= 0.22 else rng.randint(3 * 3600, 23 * 3600)
    elif workload is Workload.INFERENCE:
        if weekend and rng.random() < 0.65:
            return ZERO
        seconds = rng.randint(3 * 3600, 10 * 3600) if weekend else rng.randint(9 * 3600, 22 * 3600)
    else:
        if weekend or rng.random() < 0.2:
            return ZERO
        seconds = rng.randint(1800, 9 * 3600)
    if interruptible and seconds > 4 * 3600 and rng.random() < 0.35:
        seconds = rng.randint(3600, seconds - 1800)
    seconds -= seconds % billing_step_seconds
    return exact(Decimal(seconds) / _SECONDS_PER_HOUR)


# --- Row building blocks ----------------------------------------------------------------------


def stable_code(label: str, length: int, alphabet: str = "0123456789ABCDEFGHJKLMNPQRSTUVWXYZ") -> str:
    """An ID-like code that depends on the label only, so SKU IDs stay the same across seeds."""
    number = int.from_bytes(hashlib.sha256(label.encode()).digest(), "big")
    characters = []
    for _ in range(length):
        number, index = divmod(number, len(alphabet))
        characters.append(alphabet[index])
    return "".join(characters)


def stable_uuid(label: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"gpu-finops/synthetic/{label}"))


def priced(
    quantity: Decimal, *, list_price: Decimal, contracted_price: Decimal, commitment_rate: Decimal | None = None
) -> Row:
    """The cost columns of a priced charge.

    With a `commitment_rate` the commitment pays for the usage: nothing is billed and the effective
    cost is the amortized commitment rate, while list and contracted costs keep the on-demand view.
    """
    contracted_cost = exact(quantity * contracted_price)
    effective_cost = contracted_cost if commitment_rate is None else exact(quantity * commitment_rate)
    return {
        "PricingQuantity": quantity,
        "ListUnitPrice": list_price,
        "ContractedUnitPrice": contracted_price,
        "ListCost": exact(quantity * list_price),
        "ContractedCost": contracted_cost,
        "BilledCost": contracted_cost if commitment_rate is None else ZERO,
        "EffectiveCost": effective_cost,
        "PricingCurrencyListUnitPrice": list_price,
        "PricingCurrencyContractedUnitPrice": contracted_price,
        "PricingCurrencyEffectiveCost": effective_cost,
    }


def unpriced(amount: Decimal) -> Row:
    """Cost columns of a Tax or Credit row: no quantity, no unit price, one amount everywhere."""
    return {
        "PricingQuantity": None,
        "PricingUnit": None,
        "PricingCategory": None,
        "ListUnitPrice": None,
        "ContractedUnitPrice": None,
        "ListCost": amount,
        "ContractedCost": amount,
        "BilledCost": amount,
        "EffectiveCost": amount,
        "PricingCurrencyEffectiveCost": amount,
    }


def charge_row(fixed: Row, month: BillingMonth, start: datetime, end: datetime, **values: object) -> Row:
    row: Row = {
        **fixed,
        "BillingPeriodStart": month.start,
        "BillingPeriodEnd": month.end,
        "ChargePeriodStart": start,
        "ChargePeriodEnd": end,
        "ChargeClass": None,
    }
    row.update(values)
    return row


def usage_row(fixed: Row, month: BillingMonth, day: datetime, **values: object) -> Row:
    return charge_row(
        fixed,
        month,
        day,
        day + timedelta(days=1),
        ChargeCategory="Usage",
        ChargeFrequency="Usage-Based",
        **values,
    )


def instance_usage(
    fixed: Row, month: BillingMonth, day: datetime, instance: Instance, hours: Decimal, amounts: Row, **values: object
) -> Row:
    """One machine's usage for one day, shared by every provider; `amounts` and `values` override."""
    template = instance.template
    fields: Row = {
        "PricingUnit": "Hours",
        "ConsumedQuantity": hours,
        "ConsumedUnit": "Hours",
        "SkuPriceDetails": instance.machine.sku_price_details,
        "ServiceCategory": "Compute",
        "ServiceSubcategory": "Virtual Machines",
        "RegionId": template.region.id,
        "RegionName": template.region.name,
        "AvailabilityZone": instance.zone,
        "ResourceId": instance.resource_id,
        "ResourceName": instance.resource_name,
        "SubAccountId": template.account.id,
        "SubAccountName": template.account.name,
        "Tags": instance.tags,
    }
    return usage_row(fixed, month, day, **{**fields, **amounts, **values})


def storage_usage(
    fixed: Row, month: BillingMonth, day: datetime, gigabytes: Decimal, price: Decimal, **values: object
) -> Row:
    """A day's share of a GB-month storage charge, as providers bill stored bytes daily."""
    quantity = exact(gigabytes / len(month.days))
    return usage_row(
        fixed,
        month,
        day,
        **priced(quantity, list_price=price, contracted_price=price),
        PricingUnit="GB-Months",
        PricingCategory="Standard",
        ConsumedQuantity=quantity,
        ConsumedUnit="GB-Months",
        ServiceCategory="Storage",
        **values,
    )


def rng_for(seed: int, *parts: str) -> random.Random:
    """A private generator per (seed, provider, month): adding one file never shifts another."""
    return random.Random("/".join([str(seed), *parts]))


def percent_off(price: Decimal, percent: Decimal) -> Decimal:
    return (price * (100 - percent) / 100).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)


# --- AWS: FOCUS 1.2 Parquet -------------------------------------------------------------------

AWS_PAYER_ID = "811122233344"
_AWS_P5 = Machine("p5.48xlarge", 8, 192, 2048, Decimal("55.04"))
_AWS_P4D = Machine("p4d.24xlarge", 8, 96, 1152, Decimal("21.957642"))
_AWS_G5 = Machine("g5.xlarge", 1, 4, 16, Decimal("1.006"))
_AWS_G6E = Machine("g6e.2xlarge", 1, 8, 64, Decimal("2.24208"))
# us-east-1 EC2 usage types carry no region prefix; other regions do.
_AWS_USE1 = Region("us-east-1", "US East (N. Virginia)", ("us-east-1a", "us-east-1b", "us-east-1d"))
_AWS_USE2 = Region("us-east-2", "US East (Ohio)", ("us-east-2a", "us-east-2b"), "USE2-")
_AWS_USW2 = Region("us-west-2", "US West (Oregon)", ("us-west-2a", "us-west-2b", "us-west-2c"), "USW2-")
_AWS_RESEARCH = SubAccount("210987654321", "labs-research", "research")
_AWS_INFERENCE = SubAccount("309876543210", "labs-inference", "inference")
_AWS_PLATFORM = SubAccount("408765432109", "labs-platform", "platform")
AWS_FLEET = (
    FleetTemplate(
        _AWS_P5, _AWS_USE2, _AWS_RESEARCH, "llm-pretrain", Workload.TRAINING, Purchase.ON_DEMAND, 2, "p5-pretrain"
    ),
    FleetTemplate(_AWS_P4D, _AWS_USW2, _AWS_RESEARCH, "hparam-sweep", Workload.TRAINING, Purchase.SPOT, 2, "p4d-sweep"),
    FleetTemplate(
        _AWS_P4D, _AWS_USE1, _AWS_PLATFORM, "eval-harness", Workload.TRAINING, Purchase.COMMITTED, 1, "p4d-eval"
    ),
    FleetTemplate(
        _AWS_G5, _AWS_USE1, _AWS_INFERENCE, "chat-serving", Workload.INFERENCE, Purchase.ON_DEMAND, 3, "g5-chat"
    ),
    FleetTemplate(
        _AWS_G6E, _AWS_USE1, _AWS_INFERENCE, "embeddings", Workload.INFERENCE, Purchase.ON_DEMAND, 2, "g6e-embed"
    ),
)
_AWS_SAVINGS_PLAN_ARN = f"arn:aws:savingsplans::{AWS_PAYER_ID}:savingsplan/{stable_uuid('aws/savings-plan')}"
_AWS_SAVINGS_PLAN_COMMITMENT = Decimal("15.40")  # USD per hour per covered p4d.24xlarge, 1 year No Upfront
_AWS_SAVINGS_PLAN_RATE = Decimal("15.3703")  # p4d.24xlarge under the plan: 30% off on-demand
_AWS_BUCKETS = (
    ("acme-research-datasets", _AWS_RESEARCH, "llm-pretrain", Decimal(180_000)),
    ("acme-research-checkpoints", _AWS_RESEARCH, "llm-pretrain", Decimal(95_000)),
    ("acme-inference-models", _AWS_INFERENCE, "chat-serving", Decimal(4_200)),
)
_AWS_S3_PRICE = Decimal("0.023")
_AWS_TRANSFER_PRICE = Decimal("0.09")
_AWS_TAX_RATE = Decimal("0.06")
AWS_EXTRA_COLUMNS = ("x_UsageType", "x_ServiceCode", "x_Operation")
AWS_COLUMNS = FOCUS_1_2_COLUMNS + AWS_EXTRA_COLUMNS


def _aws_instance_id(rng: random.Random, template: FleetTemplate, name: str, zone: str | None) -> str:
    return f"i-{rng.getrandbits(68):017x}"


def aws_rows(month: BillingMonth, seed: int) -> list[Row]:
    rng = rng_for(seed, "aws", month.label)
    fleet = _build_fleet(rng_for(seed, "aws", "fleet"), AWS_FLEET, _aws_instance_id)
    fixed: Row = {
        "ProviderName": "AWS",
        "PublisherName": "AWS",
        "InvoiceIssuerName": "AWS",
        "BillingAccountId": AWS_PAYER_ID,
        "BillingAccountName": "Acme AI Labs",
        "BillingAccountType": "Billing Account",
        "SubAccountType": "Account",
        "BillingCurrency": "USD",
        "PricingCurrency": "USD",
        "InvoiceId": f"{rng.randrange(10**9, 10**10)}",
    }
    rows: list[Row] = []
    for day in month.days:
        for instance in fleet:
            purchase = instance.template.purchase
            hours = hours_used(rng, instance.template.workload, day, interruptible=purchase is Purchase.SPOT)
            if hours:
                rows.append(_aws_instance_row(rng, fixed, month, day, instance, hours))
        rows.extend(_aws_storage_and_transfer_rows(rng, fixed, month, day))
    committed_instances = sum(instance.template.purchase is Purchase.COMMITTED for instance in fleet)
    rows.append(_aws_savings_plan_fee(fixed, month, rows, committed_instances))
    rows.append(_aws_tax(fixed, month, rows))
    return rows


def _aws_instance_row(
    rng: random.Random, fixed: Row, month: BillingMonth, day: datetime, instance: Instance, hours: Decimal
) -> Row:
    machine, region, purchase = instance.machine, instance.template.region, instance.template.purchase
    sku = stable_code(f"aws/{region.id}/{machine.name}", 16)
    on_demand_rate_code = f"{sku}.JRTCKXETXF.6YS6EN2CT7"
    if purchase is Purchase.SPOT:
        spot_price = percent_off(machine.on_demand_price, Decimal(rng.randint(55, 70)))
        amounts = priced(hours, list_price=machine.on_demand_price, contracted_price=spot_price)
        return instance_usage(
            fixed,
            month,
            day,
            instance,
            hours,
            amounts,
            PricingCategory="Dynamic",
            ChargeDescription=f"{machine.name} Linux/UNIX Spot Instance-hour in {region.name}",
            ServiceName="Amazon Elastic Compute Cloud",
            ResourceType="Instance",
            SkuId=sku,
            SkuPriceId=f"{sku}.SPOT.{stable_code('aws/spot', 10)}",
            x_UsageType=f"{region.usage_type_prefix}SpotUsage:{machine.name}",
            x_ServiceCode="AmazonEC2",
            x_Operation="RunInstances",
        )
    commitment: Row
    description = f"${machine.on_demand_price} per On Demand Linux {machine.name} Instance Hour"
    if purchase is Purchase.COMMITTED:
        amounts = priced(
            hours,
            list_price=machine.on_demand_price,
            contracted_price=machine.on_demand_price,
            commitment_rate=_AWS_SAVINGS_PLAN_RATE,
        )
        commitment = {
            "PricingCategory": "Committed",
            "CommitmentDiscountId": _AWS_SAVINGS_PLAN_ARN,
            "CommitmentDiscountCategory": "Spend",
            "CommitmentDiscountType": "Savings Plan",
            "CommitmentDiscountStatus": "Used",
            "CommitmentDiscountQuantity": amounts["EffectiveCost"],
            "CommitmentDiscountUnit": "USD",
        }
        description = (
            f"Savings Plan covered usage: {_AWS_SAVINGS_PLAN_RATE} USD per hour for Linux "
            f"{machine.name} in {region.name}"
        )
    else:
        amounts = priced(hours, list_price=machine.on_demand_price, contracted_price=machine.on_demand_price)
        commitment = {"PricingCategory": "Standard"}
    return instance_usage(
        fixed,
        month,
        day,
        instance,
        hours,
        amounts,
        **commitment,
        ChargeDescription=description,
        ServiceName="Amazon Elastic Compute Cloud",
        ResourceType="Instance",
        SkuId=sku,
        SkuPriceId=on_demand_rate_code,
        x_UsageType=f"{region.usage_type_prefix}BoxUsage:{machine.name}",
        x_ServiceCode="AmazonEC2",
        x_Operation="RunInstances",
    )


def _aws_storage_and_transfer_rows(rng: random.Random, fixed: Row, month: BillingMonth, day: datetime) -> list[Row]:
    growth = 1 + Decimal(day.day) / 500
    rows = [
        storage_usage(
            fixed,
            month,
            day,
            exact(size_gb * growth),
            _AWS_S3_PRICE,
            ChargeDescription="$0.023 per GB - first 50 TB / month of storage used",
            ServiceName="Amazon Simple Storage Service",
            ServiceSubcategory="Object Storage",
            RegionId=_AWS_USE1.id,
            RegionName=_AWS_USE1.name,
            ResourceId=bucket,
            ResourceType="Bucket",
            SkuId=stable_code("aws/s3/standard", 16),
            SkuPriceId=f"{stable_code('aws/s3/standard', 16)}.JRTCKXETXF.PGHJ3S3EYE",
            SkuPriceDetails={"StorageClass": "Standard"},
            SubAccountId=account.id,
            SubAccountName=account.name,
            Tags={"project": project, "team": account.team},
            x_UsageType="TimedStorage-ByteHrs",
            x_ServiceCode="AmazonS3",
            x_Operation="StandardStorage",
        )
        for bucket, account, project, size_gb in _AWS_BUCKETS
    ]
    gigabytes_out = Decimal(rng.randint(150_000, 900_000)) / 1000
    rows.append(
        usage_row(
            fixed,
            month,
            day,
            **priced(gigabytes_out, list_price=_AWS_TRANSFER_PRICE, contracted_price=_AWS_TRANSFER_PRICE),
            PricingUnit="GB",
            PricingCategory="Standard",
            ConsumedQuantity=gigabytes_out,
            ConsumedUnit="GB",
            ChargeDescription="$0.090 per GB - first 10 TB / month data transfer out beyond the global free tier",
            ServiceCategory="Networking",
            ServiceSubcategory="Network Connectivity",
            ServiceName="AWS Data Transfer",
            RegionId=_AWS_USE1.id,
            RegionName=_AWS_USE1.name,
            SkuId=stable_code("aws/data-transfer-out", 16),
            SkuPriceId=f"{stable_code('aws/data-transfer-out', 16)}.JRTCKXETXF.N7WSYHVUT2",
            SubAccountId=_AWS_INFERENCE.id,
            SubAccountName=_AWS_INFERENCE.name,
            Tags={"project": "chat-serving", "team": _AWS_INFERENCE.team},
            x_UsageType="DataTransfer-Out-Bytes",
            x_ServiceCode="AWSDataTransfer",
            x_Operation="RunInstances",
        )
    )
    return rows


def _aws_savings_plan_fee(fixed: Row, month: BillingMonth, rows: list[Row], covered_instances: int) -> Row:
    """The month's recurring fee; as in AWS amortization its effective cost is the unused commitment.

    The plan is sized to the committed machines, so their usage never exceeds it.
    """
    hourly_commitment = _AWS_SAVINGS_PLAN_COMMITMENT * covered_instances
    fee = exact(month.hours * hourly_commitment)
    used = sum((row["EffectiveCost"] for row in rows if row.get("CommitmentDiscountId")), ZERO)
    amounts = priced(month.hours, list_price=hourly_commitment, contracted_price=hourly_commitment)
    amounts["EffectiveCost"] = amounts["PricingCurrencyEffectiveCost"] = fee - used
    return charge_row(
        fixed,
        month,
        month.start,
        month.end,
        **amounts,
        ChargeCategory="Purchase",
        ChargeFrequency="Recurring",
        PricingCategory="Standard",
        PricingUnit="Hours",
        ChargeDescription=(f"1 year No Upfront Compute Savings Plan with {hourly_commitment} USD hourly commitment"),
        CommitmentDiscountId=_AWS_SAVINGS_PLAN_ARN,
        CommitmentDiscountCategory="Spend",
        CommitmentDiscountType="Savings Plan",
        CommitmentDiscountQuantity=fee,
        CommitmentDiscountUnit="USD",
        ResourceId=_AWS_SAVINGS_PLAN_ARN,
        ServiceCategory="Compute",
        ServiceSubcategory="Virtual Machines",
        ServiceName="Savings Plans for AWS Compute usage",
        SubAccountId=_AWS_PLATFORM.id,
        SubAccountName=_AWS_PLATFORM.name,
        x_UsageType="ComputeSP:1yrNoUpfront",
        x_ServiceCode="ComputeSavingsPlans",
        x_Operation="SavingsPlanRecurringFee",
    )


def _aws_tax(fixed: Row, month: BillingMonth, rows: list[Row]) -> Row:
    taxable = sum(
        (
            row["BilledCost"]
            for row in rows
            if row["SubAccountId"] == _AWS_INFERENCE.id and row.get("x_ServiceCode") == "AmazonEC2"
        ),
        ZERO,
    )
    tax = exact((taxable * _AWS_TAX_RATE).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
    return charge_row(
        fixed,
        month,
        month.start,
        month.end,
        **unpriced(tax),
        ChargeCategory="Tax",
        ChargeFrequency="One-Time",
        ChargeDescription="Tax for product code AmazonEC2",
        ServiceCategory="Compute",
        ServiceSubcategory="Virtual Machines",
        ServiceName="Amazon Elastic Compute Cloud",
        SubAccountId=_AWS_INFERENCE.id,
        SubAccountName=_AWS_INFERENCE.name,
        x_ServiceCode="AmazonEC2",
    )


# --- Microsoft: FOCUS 1.0 CSV with a BOM, billed in EUR ----------------------------------------

_AZURE_NC24 = Machine("Standard_NC24ads_A100_v4", 1, 24, 220, Decimal("3.3792"), Decimal("0.6757"))
_AZURE_ND96 = Machine("Standard_ND96isr_H100_v5", 8, 96, 1900, Decimal("108.5453"), Decimal("27.1363"))
_AZURE_EASTUS = Region("eastus", "East US")
_AZURE_RESEARCH = SubAccount(stable_uuid("azure/research"), "Acme Research EU", "research")
_AZURE_INFERENCE = SubAccount(stable_uuid("azure/inference"), "Acme Inference EU", "inference")
AZURE_FLEET = (
    FleetTemplate(
        _AZURE_NC24,
        _AZURE_EASTUS,
        _AZURE_INFERENCE,
        "doc-ocr",
        Workload.INFERENCE,
        Purchase.ON_DEMAND,
        4,
        "vm-ocr",
        "rg-inference-ocr",
    ),
    FleetTemplate(
        _AZURE_NC24,
        _AZURE_EASTUS,
        _AZURE_RESEARCH,
        "hparam-sweep",
        Workload.EXPERIMENTS,
        Purchase.SPOT,
        3,
        "vm-sweep",
        "rg-research-sweeps",
    ),
    FleetTemplate(
        _AZURE_ND96,
        _AZURE_EASTUS,
        _AZURE_RESEARCH,
        "multimodal-pretrain",
        Workload.TRAINING,
        Purchase.COMMITTED,
        1,
        "vm-h100-train",
        "rg-research-train",
    ),
)
_AZURE_RESERVATION_ID = (
    f"/providers/Microsoft.Capacity/reservationOrders/{stable_uuid('azure/ri-order')}"
    f"/reservations/{stable_uuid('azure/ri')}"
)
_AZURE_RESERVATION_NAME = "VM_RI_ND96isr_H100_v5_eastus_1y"
_AZURE_RESERVATION_RATE = Decimal("36.80")  # EUR per hour: the 1-year term amortized over 8,760 hours
_AZURE_RESERVATION_INSTALMENT = Decimal("26864.00")  # EUR per reserved VM, monthly payment of the 1-year term
_AZURE_HOT_LRS_PRICE = Decimal("0.0184")
_AZURE_STORAGE_ACCOUNTS = (
    ("stacmeresearchdata", _AZURE_RESEARCH, "rg-research-data", "multimodal-pretrain", Decimal(62_000), 150),
    ("stacmeocrmodels", _AZURE_INFERENCE, "rg-inference-ocr", "doc-ocr", Decimal(1_800), 4),
)
MICROSOFT_EXTRA_COLUMNS = ("x_ResourceGroupName", "x_SkuMeterCategory", "x_SkuMeterSubcategory", "x_SkuMeterName")
# Microsoft's 1.0 export carried the later BillingAccountType/SubAccountType without the x_ prefix.
MICROSOFT_COLUMNS = (
    _in_catalogue_order([*FOCUS_1_0_COLUMNS, "SkuPriceDetails", "BillingAccountType", "SubAccountType"])
    + MICROSOFT_EXTRA_COLUMNS
)
_AZURE_METER_SUBCATEGORY = {_AZURE_NC24.name: "NCadsA100v4 Series", _AZURE_ND96.name: "NDisrH100v5 Series"}


def _azure_vm_id(rng: random.Random, template: FleetTemplate, name: str, zone: str | None) -> str:
    return (
        f"/subscriptions/{template.account.id}/resourcegroups/{template.resource_group}"
        f"/providers/microsoft.compute/virtualmachines/{name}"
    )


def microsoft_rows(month: BillingMonth, seed: int) -> list[Row]:
    rng = rng_for(seed, "microsoft", month.label)
    fleet = _build_fleet(rng_for(seed, "microsoft", "fleet"), AZURE_FLEET, _azure_vm_id)
    fixed: Row = {
        "ProviderName": "Microsoft",
        "PublisherName": "Microsoft",
        "InvoiceIssuerName": "Microsoft",
        "BillingAccountId": "/providers/Microsoft.Billing/billingAccounts/81255734",
        "BillingAccountName": "Acme AI Europe GmbH",
        "BillingAccountType": "Billing Account",
        "SubAccountType": "Subscription",
        "BillingCurrency": "EUR",
    }
    # The reservation is sized to the committed VMs, so their usage never exceeds it.
    reserved_instances = sum(instance.template.purchase is Purchase.COMMITTED for instance in fleet)
    rows: list[Row] = []
    for day in month.days:
        reserved_hours_left = Decimal(24 * reserved_instances)
        for instance in fleet:
            purchase = instance.template.purchase
            hours = hours_used(rng, instance.template.workload, day, interruptible=purchase is Purchase.SPOT)
            if purchase is Purchase.COMMITTED:
                reserved_hours_left -= hours
            if hours:
                rows.append(_azure_vm_row(fixed, month, day, instance, hours))
        if reserved_hours_left:
            rows.append(_azure_unused_reservation(fixed, month, day, exact(reserved_hours_left)))
        rows.extend(_azure_storage_rows(fixed, month, day))
    rows.append(_azure_reservation_instalment(fixed, month, reserved_instances))
    return rows


def _azure_vm_row(fixed: Row, month: BillingMonth, day: datetime, instance: Instance, hours: Decimal) -> Row:
    machine, purchase = instance.machine, instance.template.purchase
    meter = machine.name.removeprefix("Standard_").replace("_", " ")
    product = stable_code(f"azure/{machine.name}", 12)
    commitment: Row
    if purchase is Purchase.SPOT:
        meter += " Spot"
        amounts = priced(hours, list_price=machine.spot_price, contracted_price=machine.spot_price)
        commitment = {"PricingCategory": "Dynamic"}
    elif purchase is Purchase.COMMITTED:
        amounts = priced(
            hours,
            list_price=machine.on_demand_price,
            contracted_price=machine.on_demand_price,
            commitment_rate=_AZURE_RESERVATION_RATE,
        )
        commitment = {
            "PricingCategory": "Committed",
            "CommitmentDiscountStatus": "Used",
            **_azure_reservation_columns(),
        }
    else:
        amounts = priced(hours, list_price=machine.on_demand_price, contracted_price=machine.on_demand_price)
        commitment = {"PricingCategory": "Standard"}
    return instance_usage(
        fixed,
        month,
        day,
        instance,
        hours,
        amounts,
        **commitment,
        ChargeDescription=meter,
        ServiceName="Virtual Machines",
        ResourceType="Virtual machine",
        SkuId=f"{product}/{stable_code(meter, 4)}",
        SkuPriceId=f"{product}/{stable_code(meter, 4)}/{purchase.value}",
        x_ResourceGroupName=instance.template.resource_group,
        x_SkuMeterCategory="Virtual Machines",
        x_SkuMeterSubcategory=_AZURE_METER_SUBCATEGORY[machine.name],
        x_SkuMeterName=meter,
    )


def _azure_reservation_columns() -> Row:
    return {
        "CommitmentDiscountId": _AZURE_RESERVATION_ID,
        "CommitmentDiscountName": _AZURE_RESERVATION_NAME,
        "CommitmentDiscountCategory": "Usage",
        "CommitmentDiscountType": "Reservation",
    }


def _azure_unused_reservation(fixed: Row, month: BillingMonth, day: datetime, hours: Decimal) -> Row:
    """Reserved hours no VM used that day: still paid for, so effective cost without consumption."""
    machine = _AZURE_ND96
    return usage_row(
        fixed,
        month,
        day,
        **priced(
            hours,
            list_price=machine.on_demand_price,
            contracted_price=machine.on_demand_price,
            commitment_rate=_AZURE_RESERVATION_RATE,
        ),
        **_azure_reservation_columns(),
        CommitmentDiscountStatus="Unused",
        PricingCategory="Committed",
        PricingUnit="Hours",
        ChargeDescription="Unused reservation: ND96isr H100 v5",
        ServiceCategory="Compute",
        ServiceName="Virtual Machines",
        ResourceId=_AZURE_RESERVATION_ID,
        ResourceName=_AZURE_RESERVATION_NAME,
        ResourceType="Reservation",
        RegionId=_AZURE_EASTUS.id,
        RegionName=_AZURE_EASTUS.name,
        SkuId=f"{stable_code(f'azure/{machine.name}', 12)}/{stable_code('ND96isr H100 v5', 4)}",
        SkuPriceId=f"{stable_code(f'azure/{machine.name}', 12)}/{stable_code('ND96isr H100 v5', 4)}/committed",
        SkuPriceDetails=machine.sku_price_details,
        SubAccountId=_AZURE_RESEARCH.id,
        SubAccountName=_AZURE_RESEARCH.name,
        x_SkuMeterCategory="Virtual Machines",
        x_SkuMeterSubcategory=_AZURE_METER_SUBCATEGORY[machine.name],
        x_SkuMeterName="ND96isr H100 v5",
    )


def _azure_reservation_instalment(fixed: Row, month: BillingMonth, reserved_instances: int) -> Row:
    """The monthly payment: billed now, amortized through the Used and Unused rows, so effective 0."""
    amounts = priced(
        Decimal(reserved_instances),
        list_price=_AZURE_RESERVATION_INSTALMENT,
        contracted_price=_AZURE_RESERVATION_INSTALMENT,
    )
    amounts["EffectiveCost"] = amounts["PricingCurrencyEffectiveCost"] = ZERO
    return charge_row(
        fixed,
        month,
        month.start,
        month.end,
        **amounts,
        **_azure_reservation_columns(),
        ChargeCategory="Purchase",
        ChargeFrequency="Recurring",
        PricingCategory="Standard",
        PricingUnit="Months",
        ChargeDescription="Reservation purchase, monthly instalment: ND96isr H100 v5, East US, 1 year",
        ServiceCategory="Compute",
        ServiceName="Virtual Machines",
        ResourceId=_AZURE_RESERVATION_ID,
        ResourceName=_AZURE_RESERVATION_NAME,
        ResourceType="Reservation",
        RegionId=_AZURE_EASTUS.id,
        RegionName=_AZURE_EASTUS.name,
        SubAccountId=_AZURE_RESEARCH.id,
        SubAccountName=_AZURE_RESEARCH.name,
    )


def _azure_storage_rows(fixed: Row, month: BillingMonth, day: datetime) -> list[Row]:
    product = stable_code("azure/storage/hot-lrs", 12)
    return [
        storage_usage(
            fixed,
            month,
            day,
            size_gb + daily_growth_gb * day.day,
            _AZURE_HOT_LRS_PRICE,
            ChargeDescription="Hot LRS Data Stored",
            ServiceName="Storage",
            RegionId=_AZURE_EASTUS.id,
            RegionName=_AZURE_EASTUS.name,
            ResourceId=(
                f"/subscriptions/{account.id}/resourcegroups/{resource_group}"
                f"/providers/microsoft.storage/storageaccounts/{name}"
            ),
            ResourceName=name,
            ResourceType="Storage account",
            SkuId=f"{product}/0001",
            SkuPriceId=f"{product}/0001/on-demand",
            SkuPriceDetails={"Redundancy": "Local", "StorageClass": "Hot"},
            SubAccountId=account.id,
            SubAccountName=account.name,
            Tags={"project": project, "team": account.team},
            x_ResourceGroupName=resource_group,
            x_SkuMeterCategory="Storage",
            x_SkuMeterSubcategory="Tiered Block Blob",
            x_SkuMeterName="Hot LRS Data Stored",
        )
        for name, account, resource_group, project, size_gb, daily_growth_gb in _AZURE_STORAGE_ACCOUNTS
    ]


# --- Google Cloud: FOCUS 1.0 gzip CSV with NULL literals and an Id column ----------------------


@dataclass(frozen=True)
class GoogleSku:
    """A Cloud Billing SKU; GPUs, cores and RAM are separate SKUs, each priced per unit-hour."""

    description: str
    price: Decimal
    pricing_unit: str
    price_details: dict[str, object]

    @property
    def id(self) -> str:
        code = stable_code(f"google/{self.description}", 12, "0123456789ABCDEF")
        return f"{code[:4]}-{code[4:8]}-{code[8:]}"


# Chosen so that a3-highgpu-8g costs about 11.06 USD per GPU-hour all in (Epoch, March 2025).
_GCP_A3_ON_DEMAND = (
    GoogleSku("Nvidia H100 80GB GPU running in Americas", Decimal("9.141"), "Hours", {"GpuCount": 1}),
    GoogleSku("A3 Instance Core running in Americas", Decimal("0.033982"), "Hours", {"CoreCount": 1}),
    GoogleSku("A3 Instance Ram running in Americas", Decimal("0.004555"), "GiB-Hours", {"MemorySize": 1}),
)
_GCP_A3_SPOT = (
    GoogleSku("Spot Preemptible Nvidia H100 80GB GPU running in Americas", Decimal("2.7423"), "Hours", {"GpuCount": 1}),
    GoogleSku("Spot Preemptible A3 Instance Core running in Americas", Decimal("0.010195"), "Hours", {"CoreCount": 1}),
    GoogleSku(
        "Spot Preemptible A3 Instance Ram running in Americas", Decimal("0.0013665"), "GiB-Hours", {"MemorySize": 1}
    ),
)
_GCP_VERTEX_A100 = GoogleSku(
    "Custom model training Nvidia Tesla A100 GPU running in Americas", Decimal("3.37399"), "Hours", {"GpuCount": 1}
)
_GCP_STORAGE = GoogleSku(
    "Standard Storage US Multi-region", Decimal("0.026"), "GB-Months", {"StorageClass": "Standard"}
)
# No instance price: Google bills the machine through the GPU, core and RAM SKUs above.
_GCP_A3 = Machine("a3-highgpu-8g", 8, 208, 1872, Decimal(0))
_GCP_US_CENTRAL1 = Region("us-central1", "Iowa", ("us-central1-a", "us-central1-b", "us-central1-c"))
_GCP_RESEARCH = SubAccount("acme-research-train", "Research Training", "research")
_GCP_PLATFORM = SubAccount("acme-platform-eval", "Platform Evaluation", "platform")
GOOGLE_FLEET = (
    FleetTemplate(
        _GCP_A3,
        _GCP_US_CENTRAL1,
        _GCP_RESEARCH,
        "llm-pretrain",
        Workload.TRAINING,
        Purchase.ON_DEMAND,
        2,
        "a3-pretrain",
    ),
    FleetTemplate(
        _GCP_A3, _GCP_US_CENTRAL1, _GCP_RESEARCH, "hparam-sweep", Workload.TRAINING, Purchase.SPOT, 1, "a3-spot-sweep"
    ),
)
_GCP_VERTEX_GPUS_PER_JOB = 8
_GCP_SERVICE_IDS = {
    "Compute Engine": "6F81-5844-456A",
    "Vertex AI": "C7E2-9256-1C43",
    "Cloud Storage": "95FF-2EF5-5EA1",
}
GOOGLE_EXTRA_COLUMNS = ("x_ServiceId", "x_Location", "x_ExportTime")
_GOOGLE_FOCUS_COLUMNS = _in_catalogue_order([*FOCUS_1_0_COLUMNS, "SkuPriceDetails"])
# FOCUS-Sample-Data's FOCUS 1.0 header has the unprefixed Id between ServiceCategory and ServiceName.
_ID_POSITION = _GOOGLE_FOCUS_COLUMNS.index("ServiceCategory") + 1
GOOGLE_COLUMNS = (
    *_GOOGLE_FOCUS_COLUMNS[:_ID_POSITION],
    "Id",
    *_GOOGLE_FOCUS_COLUMNS[_ID_POSITION:],
    *GOOGLE_EXTRA_COLUMNS,
)


def _gce_instance_id(rng: random.Random, template: FleetTemplate, name: str, zone: str | None) -> str:
    return f"//compute.googleapis.com/projects/{template.account.id}/zones/{zone}/instances/{name}"


def google_rows(month: BillingMonth, seed: int) -> list[Row]:
    rng = rng_for(seed, "google", month.label)
    fleet = _build_fleet(rng_for(seed, "google", "fleet"), GOOGLE_FLEET, _gce_instance_id)
    fixed: Row = {
        "ProviderName": "Google Cloud",
        "PublisherName": "Google Cloud",
        "InvoiceIssuerName": "Google Cloud",
        "BillingAccountId": "01A2B3-C4D5E6-F7A8B9",
        "BillingAccountName": "Acme AI GCP",
        "BillingCurrency": "USD",
    }
    rows: list[Row] = []
    for day in month.days:
        for instance in fleet:
            purchase = instance.template.purchase
            hours = hours_used(rng, instance.template.workload, day, interruptible=purchase is Purchase.SPOT)
            if hours:
                rows.extend(_gce_vm_rows(fixed, month, day, instance, hours))
        hours = hours_used(rng, Workload.EXPERIMENTS, day)
        if hours:
            rows.append(_vertex_training_row(rng, fixed, month, day, hours))
        rows.append(_gcs_storage_row(fixed, month, day))
    rows.append(_google_promotion_credit(rng, fixed, month))
    for row in rows:
        row["Id"] = f"{rng.getrandbits(128):032x}"
        row["x_ExportTime"] = row["ChargePeriodEnd"] + timedelta(hours=rng.randint(2, 30), minutes=rng.randint(0, 59))
    return rows


def _google_sku_columns(sku: GoogleSku, quantity: Decimal) -> Row:
    return {
        **priced(quantity, list_price=sku.price, contracted_price=sku.price),
        "PricingUnit": sku.pricing_unit,
        "ConsumedQuantity": quantity,
        "ConsumedUnit": sku.pricing_unit,
        "ChargeDescription": sku.description,
        "SkuId": sku.id,
        "SkuPriceId": sku.id,
        "SkuPriceDetails": sku.price_details,
    }


def _gce_vm_rows(fixed: Row, month: BillingMonth, day: datetime, instance: Instance, hours: Decimal) -> list[Row]:
    """GPU, vCPU and RAM of one VM-day as three SKU rows, quantities in GPU-, core- and GiB-hours."""
    machine, purchase = instance.machine, instance.template.purchase
    skus = _GCP_A3_SPOT if purchase is Purchase.SPOT else _GCP_A3_ON_DEMAND
    units = (machine.gpu_count, machine.core_count, machine.memory_gib)
    return [
        instance_usage(
            fixed,
            month,
            day,
            instance,
            hours,
            {},
            **_google_sku_columns(sku, hours * unit_count),
            PricingCategory="Dynamic" if purchase is Purchase.SPOT else "Standard",
            ServiceName="Compute Engine",
            ResourceType="compute.googleapis.com/Instance",
            x_ServiceId=_GCP_SERVICE_IDS["Compute Engine"],
            x_Location=instance.zone,
        )
        for sku, unit_count in zip(skus, units, strict=True)
    ]


def _vertex_training_row(rng: random.Random, fixed: Row, month: BillingMonth, day: datetime, hours: Decimal) -> Row:
    job = f"{rng.randrange(10**18, 10**19)}"
    return usage_row(
        fixed,
        month,
        day,
        **_google_sku_columns(_GCP_VERTEX_A100, hours * _GCP_VERTEX_GPUS_PER_JOB),
        PricingCategory="Standard",
        ServiceCategory="AI and Machine Learning",
        ServiceName="Vertex AI",
        RegionId=_GCP_US_CENTRAL1.id,
        RegionName=_GCP_US_CENTRAL1.name,
        ResourceId=f"//aiplatform.googleapis.com/projects/{_GCP_PLATFORM.id}/locations/us-central1/customJobs/{job}",
        ResourceName=f"eval-finetune-{day:%Y%m%d}",
        ResourceType="aiplatform.googleapis.com/CustomJob",
        SubAccountId=_GCP_PLATFORM.id,
        SubAccountName=_GCP_PLATFORM.name,
        Tags={"project": "eval-harness", "team": _GCP_PLATFORM.team},
        x_ServiceId=_GCP_SERVICE_IDS["Vertex AI"],
        x_Location=_GCP_US_CENTRAL1.id,
    )


def _gcs_storage_row(fixed: Row, month: BillingMonth, day: datetime) -> Row:
    bucket = "acme-research-train-shards"
    return storage_usage(
        fixed,
        month,
        day,
        Decimal(240_000) + 900 * day.day,
        _GCP_STORAGE.price,
        ChargeDescription=_GCP_STORAGE.description,
        ServiceName="Cloud Storage",
        RegionId="us",
        RegionName="United States",
        ResourceId=f"//storage.googleapis.com/projects/_/buckets/{bucket}",
        ResourceName=bucket,
        ResourceType="storage.googleapis.com/Bucket",
        SkuId=_GCP_STORAGE.id,
        SkuPriceId=_GCP_STORAGE.id,
        SkuPriceDetails=_GCP_STORAGE.price_details,
        SubAccountId=_GCP_RESEARCH.id,
        SubAccountName=_GCP_RESEARCH.name,
        Tags={"project": "llm-pretrain", "team": _GCP_RESEARCH.team},
        x_ServiceId=_GCP_SERVICE_IDS["Cloud Storage"],
        x_Location="us",
    )


def _google_promotion_credit(rng: random.Random, fixed: Row, month: BillingMonth) -> Row:
    amount = -exact(Decimal(rng.randint(150_000, 300_000)) / 100)
    credit = unpriced(amount)
    credit["ListCost"] = credit["ContractedCost"] = ZERO
    return charge_row(
        fixed,
        month,
        month.start,
        month.end,
        **credit,
        ChargeCategory="Credit",
        ChargeFrequency="One-Time",
        ChargeDescription="Promotional credit: AI startup program, GPU usage",
        ServiceCategory="Compute",
        ServiceName="Compute Engine",
        SubAccountId=_GCP_RESEARCH.id,
        SubAccountName=_GCP_RESEARCH.name,
        x_ServiceId=_GCP_SERVICE_IDS["Compute Engine"],
    )


# --- Lambda: FOCUS 1.3 CSV --------------------------------------------------------------------

_LAMBDA_8X_H100 = Machine("gpu_8x_h100_sxm5", 8, 208, 1800, Decimal("23.92"), description="8x H100 (80 GB SXM5)")
_LAMBDA_1X_A100 = Machine("gpu_1x_a100_sxm4", 1, 30, 200, Decimal("1.29"), description="1x A100 (40 GB SXM4)")
_LAMBDA_VIRGINIA = Region("us-east-1", "Virginia, USA")
_LAMBDA_TEXAS = Region("us-south-1", "Texas, USA")
_LAMBDA_RESEARCH = SubAccount("team-research", "Research", "research")
_LAMBDA_INFERENCE = SubAccount("team-inference", "Inference", "inference")
_LAMBDA_PLATFORM = SubAccount("team-platform", "Platform", "platform")
LAMBDA_FLEET = (
    FleetTemplate(
        _LAMBDA_8X_H100,
        _LAMBDA_TEXAS,
        _LAMBDA_RESEARCH,
        "llm-pretrain",
        Workload.TRAINING,
        Purchase.ON_DEMAND,
        2,
        "h100x8-rl",
    ),
    FleetTemplate(
        _LAMBDA_1X_A100,
        _LAMBDA_VIRGINIA,
        _LAMBDA_INFERENCE,
        "embeddings",
        Workload.INFERENCE,
        Purchase.ON_DEMAND,
        2,
        "a100-rerank",
    ),
    FleetTemplate(
        _LAMBDA_1X_A100,
        _LAMBDA_VIRGINIA,
        _LAMBDA_PLATFORM,
        "notebooks",
        Workload.EXPERIMENTS,
        Purchase.ON_DEMAND,
        3,
        "a100-notebook",
    ),
)
_LAMBDA_FILESYSTEM_PRICE = Decimal("0.20")
_LAMBDA_FILESYSTEMS = (
    ("rl-checkpoints", _LAMBDA_TEXAS, _LAMBDA_RESEARCH, "llm-pretrain", Decimal(12_000)),
    ("shared-notebooks", _LAMBDA_VIRGINIA, _LAMBDA_PLATFORM, "notebooks", Decimal(1_500)),
)
LAMBDA_COLUMNS = FOCUS_1_3_COLUMNS


def _lambda_instance_id(rng: random.Random, template: FleetTemplate, name: str, zone: str | None) -> str:
    return f"{rng.getrandbits(128):032x}"


def lambda_rows(month: BillingMonth, seed: int) -> list[Row]:
    rng = rng_for(seed, "lambda", month.label)
    fleet = _build_fleet(rng_for(seed, "lambda", "fleet"), LAMBDA_FLEET, _lambda_instance_id)
    fixed: Row = {
        "ServiceProviderName": "Lambda",
        "HostProviderName": "Lambda",
        "InvoiceIssuerName": "Lambda, Inc.",
        "BillingAccountId": "org_4b1f0c9e7d2a",
        "BillingAccountName": "Acme AI",
        "BillingAccountType": "Organization",
        "SubAccountType": "Team",
        "BillingCurrency": "USD",
        "PricingCurrency": "USD",
        "InvoiceId": f"LMB-{month.label}-{rng.randrange(10**5, 10**6)}",
    }
    rows: list[Row] = []
    for day in month.days:
        for instance in fleet:
            hours = hours_used(rng, instance.template.workload, day, billing_step_seconds=60)
            if hours:
                rows.append(_lambda_instance_row(fixed, month, day, instance, hours))
        rows.extend(_lambda_filesystem_rows(fixed, month, day))
    return rows


def _lambda_instance_row(fixed: Row, month: BillingMonth, day: datetime, instance: Instance, hours: Decimal) -> Row:
    machine = instance.machine
    return instance_usage(
        fixed,
        month,
        day,
        instance,
        hours,
        priced(hours, list_price=machine.on_demand_price, contracted_price=machine.on_demand_price),
        PricingCategory="Standard",
        ChargeDescription=f"On-demand {machine.description} instance",
        ServiceName="On-Demand Cloud",
        ResourceType="Instance",
        SkuId=machine.name,
        SkuPriceId=f"{machine.name}:on-demand",
    )


def _lambda_filesystem_rows(fixed: Row, month: BillingMonth, day: datetime) -> list[Row]:
    return [
        storage_usage(
            fixed,
            month,
            day,
            size_gb,
            _LAMBDA_FILESYSTEM_PRICE,
            ChargeDescription="Persistent filesystem storage",
            ServiceName="Filesystems",
            ServiceSubcategory="File Storage",
            RegionId=region.id,
            RegionName=region.name,
            ResourceId=stable_code(f"lambda/filesystem/{name}", 32, "0123456789abcdef"),
            ResourceName=name,
            ResourceType="Filesystem",
            SkuId="filesystem",
            SkuPriceId="filesystem:on-demand",
            SubAccountId=account.id,
            SubAccountName=account.name,
            Tags={"project": project, "team": account.team},
        )
        for name, region, account, project, size_gb in _LAMBDA_FILESYSTEMS
    ]


# --- Writers ----------------------------------------------------------------------------------


def cell_text(value: object, null_text: str) -> str:
    """One CSV cell as real exports spell it: plain decimals, ISO 8601 UTC with Z, compact JSON."""
    if value is None:
        return null_text
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    if isinstance(value, str):
        return value
    raise TypeError(f"no CSV spelling for {type(value).__name__}: {value!r}")


def _check_columns(rows: list[Row], columns: tuple[str, ...]) -> None:
    """Catch a misspelt provider column: FOCUS columns a version lacks may be dropped, nothing else."""
    allowed = set(columns) | set(FOCUS_COLUMNS)
    for row in rows:
        if unknown := row.keys() - allowed:
            raise ValueError(f"row has columns outside the file layout: {sorted(unknown)}")


def write_csv(
    path: Path,
    columns: tuple[str, ...],
    rows: list[Row],
    *,
    null_text: str = "",
    byte_order_mark: bool = False,
    line_end: str = "\n",
    compress: bool = False,
) -> None:
    _check_columns(rows, columns)
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator=line_end)
    writer.writerow(columns)
    writer.writerows([cell_text(row.get(name), null_text) for name in columns] for row in rows)
    data = (("\ufeff" if byte_order_mark else "") + buffer.getvalue()).encode("utf-8")
    # mtime=0 and no file name in the header keep gzip output byte-identical between runs.
    path.write_bytes(gzip.compress(data, compresslevel=9, mtime=0) if compress else data)


_ARROW_TYPES = {
    Kind.DECIMAL: pa.decimal128(38, MONEY_SCALE),
    Kind.DATETIME: pa.timestamp("ms", tz="UTC"),
    Kind.JSON: pa.string(),
    Kind.STRING: pa.string(),
}


def write_parquet(path: Path, columns: tuple[str, ...], rows: list[Row]) -> None:
    """Typed columns as Data Exports write them: exact decimal128 money, UTC timestamps, JSON as text."""
    _check_columns(rows, columns)
    arrays = []
    for name in columns:
        kind = FOCUS_COLUMNS.get(name, Kind.STRING)
        values = [row.get(name) for row in rows]
        if kind is Kind.JSON:
            values = [None if value is None else cell_text(value, "") for value in values]
        arrays.append(pa.array(values, type=_ARROW_TYPES[kind]))
    pq.write_table(pa.Table.from_arrays(arrays, names=list(columns)), path, compression="snappy")


# --- Files and totals -------------------------------------------------------------------------


@dataclass(frozen=True)
class ProviderExport:
    provider: str
    extension: str
    build_rows: Callable[[BillingMonth, int], list[Row]]
    write: Callable[[Path, list[Row]], None]

    def relative_path(self, month: BillingMonth) -> Path:
        return Path(self.provider) / f"{self.provider}-focus-{month.label}.{self.extension}"


EXPORTS = (
    ProviderExport("aws", "parquet", aws_rows, lambda path, rows: write_parquet(path, AWS_COLUMNS, rows)),
    ProviderExport(
        "microsoft",
        "csv",
        microsoft_rows,
        lambda path, rows: write_csv(path, MICROSOFT_COLUMNS, rows, byte_order_mark=True, line_end="\r\n"),
    ),
    ProviderExport(
        "google",
        "csv.gz",
        google_rows,
        lambda path, rows: write_csv(path, GOOGLE_COLUMNS, rows, null_text="NULL", compress=True),
    ),
    ProviderExport("lambda", "csv", lambda_rows, lambda path, rows: write_csv(path, LAMBDA_COLUMNS, rows)),
)


def gpu_hours(row: Row) -> Decimal:
    """GPU-hours a row bills: usage of a priced GPU (instance or per-GPU SKU), unused commitments excluded."""
    details = row.get("SkuPriceDetails")
    if row["ChargeCategory"] != "Usage" or row.get("CommitmentDiscountStatus") == "Unused":
        return ZERO
    if not isinstance(details, dict) or not details.get("GpuCount"):
        return ZERO
    return row["PricingQuantity"] * details["GpuCount"]


def file_totals(relative_path: Path, rows: list[Row]) -> list[dict[str, object]]:
    """Per (billing period, currency) sums, for tests that read the files back independently."""
    groups: dict[tuple[datetime, str], list[Row]] = {}
    for row in rows:
        groups.setdefault((row["BillingPeriodStart"], row["BillingCurrency"]), []).append(row)
    return [
        {
            "file": relative_path.as_posix(),
            "billing_period_start": cell_text(period_start, ""),
            "billing_currency": currency,
            "rows": len(group),
            "billed_cost": cell_text(sum((row["BilledCost"] for row in group), ZERO), ""),
            "effective_cost": cell_text(sum((row["EffectiveCost"] for row in group), ZERO), ""),
            "gpu_hours": cell_text(sum((gpu_hours(row) for row in group), ZERO), ""),
        }
        for (period_start, currency), group in sorted(groups.items())
    ]


def write_focus_samples(out_dir: Path, *, seed: int = 42, start_month: str = "2026-09", months: int = 2) -> list[Path]:
    """Write one FOCUS file per provider and billing month, plus `expected_totals.json`.

    Returns the data files' paths (not the totals file), in provider then month order.
    """
    out_dir = Path(out_dir)
    periods = billing_months(start_month, months)
    written: list[Path] = []
    totals: list[dict[str, object]] = []
    for export in EXPORTS:
        (out_dir / export.provider).mkdir(parents=True, exist_ok=True)
        for month in periods:
            rows = export.build_rows(month, seed)
            relative_path = export.relative_path(month)
            export.write(out_dir / relative_path, rows)
            written.append(out_dir / relative_path)
            totals.extend(file_totals(relative_path, rows))
    document = {"seed": seed, "start_month": start_month, "months": months, "files": totals}
    (out_dir / EXPECTED_TOTALS_FILE).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return written
