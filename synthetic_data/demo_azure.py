"""Acme AI's two Azure billing accounts, as Cost Management exports deliver them.

- The US Enterprise Agreement (USD) exports both datasets of each month: ActualCost and
  AmortizedCost, EA column set, UTF-8 byte-order mark, `MM/DD/YYYY` dates, tags without outer braces
  and `AdditionalInfo` JSON, each run in `{path}/{yyyyMMdd-yyyyMMdd}/{export}/{run time}/{run id}/`
  with the `manifest.json` listing its `blobs`. It runs ND96isr H100 v5 on a 1-year reservation
  (paid monthly: a Purchase row in the actual dataset, the hours used as reservation usage and the
  hours nobody used as UnusedReservation rows in the amortized one) and as Spot, NC24ads A100 v4
  on demand, and blob storage.
- The European entity (EUR) exports FocusCost 1.0r2: the FOCUS sample's Microsoft rows in the same
  run-folder layout.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

from synthetic_data import focus_samples
from synthetic_data.demo_common import (
    GPU_MODELS,
    ZERO,
    Charge,
    Delivered,
    Ledger,
    Owner,
    Pattern,
    code,
    hours_of,
    instance_schedules,
    month_start,
    quantize,
    split,
)
from synthetic_data.focus_samples import BillingMonth, stable_uuid

PROVIDER = "Microsoft"
DAY = timedelta(days=1)
EA_COLUMNS = (
    "InvoiceSectionName",
    "AccountName",
    "AccountOwnerId",
    "SubscriptionId",
    "SubscriptionName",
    "ResourceGroup",
    "ResourceLocation",
    "Date",
    "ProductName",
    "MeterCategory",
    "MeterSubCategory",
    "MeterId",
    "MeterName",
    "MeterRegion",
    "UnitOfMeasure",
    "Quantity",
    "EffectivePrice",
    "CostInBillingCurrency",
    "CostCenter",
    "ConsumedService",
    "ResourceId",
    "Tags",
    "OfferId",
    "AdditionalInfo",
    "ServiceInfo1",
    "ServiceInfo2",
    "ResourceName",
    "ReservationId",
    "ReservationName",
    "UnitPrice",
    "ProductOrderId",
    "ProductOrderName",
    "Term",
    "PublisherType",
    "PublisherName",
    "ChargeType",
    "Frequency",
    "PricingModel",
    "AvailabilityZone",
    "BillingAccountId",
    "BillingAccountName",
    "BillingCurrencyCode",
    "BillingPeriodStartDate",
    "BillingPeriodEndDate",
    "BillingProfileId",
    "BillingProfileName",
    "InvoiceSectionId",
    "IsAzureCreditEligible",
    "PartNumber",
    "PayGPrice",
    "PlanName",
    "ServiceFamily",
    "CostAllocationRuleName",
    "benefitId",
    "benefitName",
)
ROWS_PER_BLOB = 150

EA_ACCOUNT_ID = "8611537"
EA_ACCOUNT_NAME = "Acme AI Inc."
EA_STORAGE_ACCOUNT = "acmefinopsexports"
EA_CONTAINER = "cost-exports"
EA_PATH = "acme-ea"


@dataclass(frozen=True)
class VmSize:
    name: str
    series: str  # meter subcategory, e.g. NDisrH100v5 Series
    vcpus: int
    on_demand: Decimal
    spot: Decimal

    @property
    def meter(self) -> str:
        return self.name.removeprefix("Standard_").replace("_", " ")


@dataclass(frozen=True)
class Subscription:
    id: str
    name: str
    team: str


@dataclass(frozen=True)
class VmFleet:
    name: str
    size: VmSize
    subscription: Subscription
    resource_group: str
    owner: Owner
    pattern: Pattern
    pricing_model: str  # OnDemand | Spot | Reservation
    count: int = 1


ND96 = VmSize("Standard_ND96isr_H100_v5", "NDisrH100v5 Series", 96, Decimal("98.32"), Decimal("24.58"))
NC24 = VmSize("Standard_NC24ads_A100_v4", "NCadsA100v4 Series", 24, Decimal("3.673"), Decimal("0.7345"))
RESEARCH = Subscription(stable_uuid("demo/azure/research"), "acme-research-prod", "research")
INFERENCE = Subscription(stable_uuid("demo/azure/inference"), "acme-inference-prod", "inference")
DATA = Subscription(stable_uuid("demo/azure/data"), "acme-data-prod", "data")
FLEET = (
    VmFleet(
        "vm-h100-mm",
        ND96,
        RESEARCH,
        "rg-research-train",
        Owner("research", "multimodal-pretrain"),
        Pattern.TRAINING,
        "Reservation",
    ),
    VmFleet(
        "vm-h100-sweep", ND96, RESEARCH, "rg-research-sweeps", Owner("research", "hparam-sweep"), Pattern.SPOT, "Spot"
    ),
    VmFleet("vm-recsys", NC24, DATA, "rg-data-recsys", Owner("data", "recsys"), Pattern.INFERENCE, "OnDemand", 2),
    VmFleet(
        "vm-embed",
        NC24,
        INFERENCE,
        "rg-inference-embed",
        Owner("inference", "embeddings"),
        Pattern.ALWAYS_ON,
        "OnDemand",
    ),
)
RESERVATION_ORDER = stable_uuid("demo/azure/reservation-order")
RESERVATION_ID = stable_uuid("demo/azure/reservation")
RESERVATION_NAME = "VM_RI_ND96isr_H100_v5_eastus_1y"
RESERVATION_BENEFIT = (
    f"/providers/Microsoft.Capacity/reservationOrders/{RESERVATION_ORDER}/reservations/{RESERVATION_ID}"
)
RESERVATION_TERM_PRICE = Decimal("350400.00")  # 1 year (Retail Prices API), paid monthly
RESERVATION_HOURLY = RESERVATION_TERM_PRICE / 8760  # 40.00: the term over its hours
RESERVATION_INSTALMENT = RESERVATION_TERM_PRICE / 12  # 29,200.00 a month
RESERVATION_PAYMENT_DAY = 12
HOT_LRS = Decimal("0.0184")
STORAGE = (
    ("stacmeresearchdata", RESEARCH, "rg-research-data", Owner("research", "multimodal-pretrain"), Decimal(48_000)),
    ("stacmerecsysfeatures", DATA, "rg-data-recsys", Owner("data", "recsys"), Decimal(9_500)),
)


def _date(moment: datetime) -> str:
    return moment.strftime("%m/%d/%Y")


def _tags(owner: Owner) -> str:
    """EA exports write tags as JSON members without the enclosing braces."""
    return f'"team": "{owner.team}","project": "{owner.project}"'


def _number(value: Decimal) -> str:
    return format(value, "f")


# Azure OpenAI in the last month: (meter as Azure abbreviates it, unit of measure, USD price per unit, units a day,
# owner, subscription, resource group). Quantity counts units of measure (thousands or millions of tokens).
_SUPPORT_BOT = (Owner("inference", "chat-serving"), INFERENCE, "rg-inference-chat")
_RECSYS = (Owner("data", "recsys"), DATA, "rg-data-recsys")
AZURE_OPENAI_METERS = (
    ("gpt 4.1 Inp regnl Tokens", "1K", Decimal("0.002"), 18_000, *_SUPPORT_BOT),
    ("gpt 4.1 outpt regnl Tokens", "1K", Decimal("0.008"), 3_600, *_SUPPORT_BOT),
    ("gpt 4o 0806 cached Inp regnl Tokens", "1K", Decimal("0.00125"), 9_000, *_SUPPORT_BOT),
    ("GPT 5 outpt Glbl 1M Tokens", "1M", Decimal("10"), 1, *_RECSYS),
    ("GPT 5 Inp Glbl 1M Tokens", "1M", Decimal("1.25"), 6, *_RECSYS),
)


class _EaMonth:
    """Rows of one month's ActualCost and AmortizedCost datasets and their ledger entries."""

    def __init__(self, month: BillingMonth, ledger: Ledger) -> None:
        self.month = month
        self.ledger = ledger
        self.actual: list[dict[str, str]] = []
        self.amortized: list[dict[str, str]] = []

    def common(self, subscription: Subscription, day: datetime) -> dict[str, str]:
        return {
            "InvoiceSectionName": "Acme AI Engineering",
            "AccountName": "Cloud Platform",
            "AccountOwnerId": "cloud-platform@acme.example",
            "SubscriptionId": subscription.id,
            "SubscriptionName": subscription.name,
            "Date": _date(day),
            "OfferId": "MS-AZR-0017P",
            "PublisherType": "Azure",
            "PublisherName": "Microsoft",
            "BillingAccountId": EA_ACCOUNT_ID,
            "BillingAccountName": EA_ACCOUNT_NAME,
            "BillingCurrencyCode": "USD",
            "BillingPeriodStartDate": _date(self.month.start),
            "BillingPeriodEndDate": _date(self.month.end - DAY),
            "BillingProfileId": EA_ACCOUNT_ID,
            "BillingProfileName": EA_ACCOUNT_NAME,
            "InvoiceSectionId": "4521",
            "IsAzureCreditEligible": "True",
        }

    def record(
        self,
        actual: dict[str, str] | None,
        amortized: dict[str, str] | None,
        *,
        billed: Decimal,
        effective: Decimal,
        owner: Owner | None = None,
        gpu_model: str | None = None,
        gpu_hours: Decimal = ZERO,
        category: str | None = None,
        source: str = "azure_amortized",
    ) -> None:
        if actual is not None:
            self.actual.append(actual)
        if amortized is not None:
            self.amortized.append(amortized)
        self.ledger.add(
            Charge(
                source,
                PROVIDER,
                EA_ACCOUNT_ID,
                month_start(self.month),
                "USD",
                billed,
                effective,
                owner.team if owner else None,
                gpu_model,
                gpu_hours,
                category,
            )
        )

    def vm_day(self, fleet: VmFleet, number: int, day: datetime, seconds: int) -> Decimal:
        size = fleet.size
        quantity = hours_of(seconds)
        gpu_model, gpus = GPU_MODELS[size.name]
        name = f"{fleet.name}-{number:02d}"
        spot = fleet.pricing_model == "Spot"
        meter = f"{size.meter} Spot" if spot else size.meter
        price = size.spot if spot else size.on_demand
        row = {
            **self.common(fleet.subscription, day),
            "ResourceGroup": fleet.resource_group,
            "ResourceLocation": "EastUS",
            "ProductName": f"Virtual Machines {size.series} - {meter} - US East",
            "MeterCategory": "Virtual Machines",
            "MeterSubCategory": size.series,
            "MeterId": stable_uuid(f"demo/azure/meter/{meter}"),
            "MeterName": meter,
            "MeterRegion": "US East",
            "UnitOfMeasure": "1 Hour",
            "Quantity": _number(quantity),
            "ConsumedService": "Microsoft.Compute",
            "ResourceId": (
                f"/subscriptions/{fleet.subscription.id}/resourceGroups/{fleet.resource_group}"
                f"/providers/Microsoft.Compute/virtualMachines/{name}"
            ),
            "Tags": _tags(fleet.owner),
            "AdditionalInfo": json.dumps(
                {
                    "UsageType": "ComputeHR",
                    "ImageType": "Canonical",
                    "ServiceType": size.name,
                    "VMName": name,
                    "VCPUs": size.vcpus,
                }
            ),
            "ResourceName": name,
            "UnitPrice": _number(size.on_demand),
            "PayGPrice": _number(size.on_demand),
            "Frequency": "UsageBased",
            "ChargeType": "Usage",
            "PricingModel": fleet.pricing_model,
            "PartNumber": code(f"demo/azure/part/{meter}", 9),
            "ServiceFamily": "Compute",
        }
        category = {"OnDemand": "Standard", "Spot": "Dynamic", "Reservation": "Committed"}[fleet.pricing_model]
        if fleet.pricing_model == "Reservation":
            amortized_cost = quantize(quantity * RESERVATION_HOURLY)
            reservation = {
                "ReservationId": RESERVATION_ID,
                "ReservationName": RESERVATION_NAME,
                "ProductOrderId": RESERVATION_ORDER,
                "ProductOrderName": "Reserved VM Instance, Standard_ND96isr_H100_v5, US East, 1 Year",
                "Term": "1Year",
                "benefitId": RESERVATION_BENEFIT,
                "benefitName": RESERVATION_NAME,
            }
            actual = {**row, **reservation, "EffectivePrice": "0", "CostInBillingCurrency": "0"}
            amortized = {
                **row,
                **reservation,
                "EffectivePrice": _number(RESERVATION_HOURLY),
                "CostInBillingCurrency": _number(amortized_cost),
            }
            self.record(
                actual,
                amortized,
                billed=ZERO,
                effective=amortized_cost,
                owner=fleet.owner,
                gpu_model=gpu_model,
                gpu_hours=quantity * gpus,
                category=category,
            )
            return quantity
        cost = quantize(quantity * price)
        priced = {**row, "EffectivePrice": _number(price), "CostInBillingCurrency": _number(cost)}
        self.record(
            priced,
            dict(priced),
            billed=cost,
            effective=cost,
            owner=fleet.owner,
            gpu_model=gpu_model,
            gpu_hours=quantity * gpus,
            category=category,
        )
        return ZERO

    def unused_reservation(self, day: datetime, unused_hours: Decimal) -> None:
        """Reserved hours no VM used that day: paid for all the same, so amortized cost without usage."""
        cost = quantize(unused_hours * RESERVATION_HOURLY)
        row = {
            **self.common(RESEARCH, day),
            "ResourceLocation": "EastUS",
            "ProductName": f"Virtual Machines {ND96.series} - {ND96.meter} - US East",
            "MeterCategory": "Virtual Machines",
            "MeterSubCategory": ND96.series,
            "MeterId": stable_uuid(f"demo/azure/meter/{ND96.meter}"),
            "MeterName": ND96.meter,
            "MeterRegion": "US East",
            "UnitOfMeasure": "1 Hour",
            "Quantity": _number(unused_hours),
            "EffectivePrice": _number(RESERVATION_HOURLY),
            "CostInBillingCurrency": _number(cost),
            "ConsumedService": "Microsoft.Capacity",
            "AdditionalInfo": json.dumps({"ServiceType": ND96.name}),
            "ReservationId": RESERVATION_ID,
            "ReservationName": RESERVATION_NAME,
            "UnitPrice": _number(ND96.on_demand),
            "PayGPrice": _number(ND96.on_demand),
            "ProductOrderId": RESERVATION_ORDER,
            "ProductOrderName": "Reserved VM Instance, Standard_ND96isr_H100_v5, US East, 1 Year",
            "Term": "1Year",
            "ChargeType": "UnusedReservation",
            "Frequency": "UsageBased",
            "PricingModel": "Reservation",
            "ServiceFamily": "Compute",
            "benefitId": RESERVATION_BENEFIT,
            "benefitName": RESERVATION_NAME,
        }
        self.record(None, row, billed=ZERO, effective=cost, gpu_model="H100")

    def reservation_purchase(self) -> None:
        """The monthly instalment: on the invoice, but amortized through the usage rows instead."""
        day = self.month.start + (RESERVATION_PAYMENT_DAY - 1) * DAY
        row = {
            **self.common(RESEARCH, day),
            "ProductName": "Reserved VM Instance, Standard_ND96isr_H100_v5, US East, 1 Year",
            "MeterRegion": "US East",
            "Quantity": "1",
            "EffectivePrice": _number(RESERVATION_INSTALMENT),
            "CostInBillingCurrency": _number(RESERVATION_INSTALMENT),
            "ConsumedService": "Microsoft.Capacity",
            "ReservationId": RESERVATION_ID,
            "ReservationName": RESERVATION_NAME,
            "UnitPrice": _number(RESERVATION_INSTALMENT),
            "ProductOrderId": RESERVATION_ORDER,
            "ProductOrderName": "Reserved VM Instance, Standard_ND96isr_H100_v5, US East, 1 Year",
            "Term": "1Year",
            "ChargeType": "Purchase",
            "Frequency": "Recurring",
            "PricingModel": "Reservation",
            "ServiceFamily": "Compute",
            "benefitId": RESERVATION_BENEFIT,
            "benefitName": RESERVATION_NAME,
        }
        self.record(row, None, billed=RESERVATION_INSTALMENT, effective=ZERO, source="azure_actual")

    def storage_day(self, day: datetime) -> None:
        for account, subscription, group, owner, size_gb in STORAGE:
            quantity = quantize((size_gb + 150 * day.day) / len(self.month.days))
            cost = quantize(quantity * HOT_LRS)
            row = {
                **self.common(subscription, day),
                "ResourceGroup": group,
                "ResourceLocation": "EastUS",
                "ProductName": "Blob Storage - Hot LRS - US East",
                "MeterCategory": "Storage",
                "MeterSubCategory": "Tiered Block Blob",
                "MeterId": stable_uuid("demo/azure/meter/hot-lrs"),
                "MeterName": "Hot LRS Data Stored",
                "MeterRegion": "US East",
                "UnitOfMeasure": "1 GB/Month",
                "Quantity": _number(quantity),
                "EffectivePrice": _number(HOT_LRS),
                "CostInBillingCurrency": _number(cost),
                "ConsumedService": "Microsoft.Storage",
                "ResourceId": (
                    f"/subscriptions/{subscription.id}/resourceGroups/{group}"
                    f"/providers/Microsoft.Storage/storageAccounts/{account}"
                ),
                "Tags": _tags(owner),
                "AdditionalInfo": "",
                "ResourceName": account,
                "UnitPrice": _number(HOT_LRS),
                "PayGPrice": _number(HOT_LRS),
                "Frequency": "UsageBased",
                "ChargeType": "Usage",
                "PricingModel": "OnDemand",
                "PartNumber": code("demo/azure/part/hot-lrs", 9),
                "ServiceFamily": "Storage",
            }
            self.record(row, dict(row), billed=cost, effective=cost, owner=owner)

    def openai_day(self, day: datetime) -> None:
        """A day of Azure OpenAI tokens, one row per meter, in both datasets (no commitment touches them)."""
        for meter, unit, price, units, owner, subscription, group in AZURE_OPENAI_METERS:
            quantity = Decimal(units) * Decimal(100 + day.day % 7 * 5) / 100
            cost = quantize(quantity * price)
            row = {
                **self.common(subscription, day),
                "ResourceGroup": group,
                "ResourceLocation": "EastUS",
                "ProductName": f"Azure OpenAI - {meter}",
                "MeterCategory": "Foundry Models",
                "MeterSubCategory": "Azure OpenAI",
                "MeterId": stable_uuid(f"demo/azure/meter/{meter}"),
                "MeterName": meter,
                "MeterRegion": "US East",
                "UnitOfMeasure": unit,
                "Quantity": _number(quantity),
                "EffectivePrice": _number(price),
                "CostInBillingCurrency": _number(cost),
                "ConsumedService": "Microsoft.CognitiveServices",
                "ResourceId": (
                    f"/subscriptions/{subscription.id}/resourceGroups/{group}"
                    f"/providers/Microsoft.CognitiveServices/accounts/{owner.project}-aoai"
                ),
                "Tags": _tags(owner),
                "AdditionalInfo": "",
                "ResourceName": f"{owner.project}-aoai",
                "UnitPrice": _number(price),
                "PayGPrice": _number(price),
                "Frequency": "UsageBased",
                "ChargeType": "Usage",
                "PricingModel": "OnDemand",
                "PartNumber": code(f"demo/azure/part/{meter}", 9),
                "ServiceFamily": "AI + Machine Learning",
            }
            self.record(row, dict(row), billed=cost, effective=cost, owner=owner, category="Standard")


def write_ea_exports(out_dir: Path, seed: int, months: Sequence[BillingMonth], ledger: Ledger) -> list[Delivered]:
    builders = {month.label: _EaMonth(month, ledger) for month in months}
    reserved_used: dict[datetime, Decimal] = defaultdict(lambda: ZERO)
    for fleet in FLEET:
        schedules = instance_schedules(seed, "azure", fleet.name, fleet.count, fleet.pattern, months)
        for number, intervals in enumerate(schedules, start=1):
            for day, seconds in split(intervals, DAY):
                used = builders[day.strftime("%Y-%m")].vm_day(fleet, number, day, seconds)
                reserved_used[day] += used
    for month in months:
        builder = builders[month.label]
        for day in month.days:
            unused = Decimal(24) - reserved_used[day]
            if unused:
                builder.unused_reservation(day, unused)
            builder.storage_day(day)
            if month is months[-1]:
                builder.openai_day(day)
        builder.reservation_purchase()
    delivered = []
    for month in months:
        builder = builders[month.label]
        for dataset, rows, export in (
            ("ActualCost", builder.actual, "acme-ea-actual"),
            ("AmortizedCost", builder.amortized, "acme-ea-amortized"),
        ):
            rows = sorted(
                rows,
                key=lambda row: (
                    _sortable(row["Date"]),
                    row.get("ResourceId", ""),
                    row["ChargeType"],
                    row.get("MeterName", ""),
                ),
            )
            path = _write_run(
                out_dir / EA_CONTAINER,
                EA_PATH,
                export,
                dataset,
                "2023-05-01",
                month,
                EA_COLUMNS,
                rows,
                seed,
                resource=f"/providers/Microsoft.Billing/billingAccounts/{EA_ACCOUNT_ID}",
            )
            source = "azure_actual" if dataset == "ActualCost" else "azure_amortized"
            delivered.append(Delivered(source, path, f"Azure EA {dataset} export run, one month"))
    return delivered


def _sortable(us_date: str) -> str:
    month, day, year = us_date.split("/")
    return f"{year}{month}{day}"


def _write_run(
    container: Path,
    path: str,
    export: str,
    dataset: str,
    data_version: str,
    month: BillingMonth,
    columns: Sequence[str],
    rows: list[dict[str, object]],
    seed: int,
    *,
    resource: str,
    to_text: Callable[[object], str] = lambda value: "" if value is None else str(value),
) -> Path:
    """One export run: CSV part files (BOM, CRLF) and the manifest.json that lists them, written last."""
    span = f"{month.start:%Y%m%d}-{(month.end - DAY):%Y%m%d}"
    run_time = month.end + timedelta(hours=5, minutes=int(code(f"{export}/{month.label}", 2, "0123456789")))
    run_id = stable_uuid(f"demo/{seed}/azure/{export}/{month.label}")
    export_dir = container / path / span / export
    run_dir = export_dir / f"{run_time:%Y%m%d%H%M}" / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    blobs = []
    for part, first in enumerate(range(0, max(len(rows), 1), ROWS_PER_BLOB), start=1):
        chunk = rows[first : first + ROWS_PER_BLOB]
        buffer = io.StringIO(newline="")
        writer = csv.writer(buffer, lineterminator="\r\n")
        writer.writerow(columns)
        writer.writerows([[to_text(row.get(name)) for name in columns] for row in chunk])
        data = ("\ufeff" + buffer.getvalue()).encode("utf-8")
        name = f"part_0_{part:04d}.csv"
        (run_dir / name).write_bytes(data)
        blobs.append(
            {
                "blobName": f"{path}/{span}/{export}/{run_time:%Y%m%d%H%M}/{run_id}/{name}",
                "byteCount": len(data),
                "dataRowCount": len(chunk),
            }
        )
    manifest = {
        "manifestVersion": "2024-04-01",
        "byteCount": sum(blob["byteCount"] for blob in blobs),
        "blobCount": len(blobs),
        "dataRowCount": len(rows),
        "exportConfig": {
            "exportName": export,
            "resourceId": f"{resource}/providers/Microsoft.CostManagement/exports/{export}",
            "dataVersion": data_version,
            "apiVersion": "2023-07-01-preview",
            "type": dataset,
            "timeFrame": "TheLastBillingMonth",
            "granularity": "Daily",
        },
        "deliveryConfig": {
            "partitionData": True,
            "dataOverwriteBehavior": "OverwritePreviousReport",
            "fileFormat": "Csv",
            "compressionMode": "None",
            "containerUri": (
                f"/subscriptions/{stable_uuid('demo/azure/finops')}/resourceGroups/rg-finops"
                f"/providers/Microsoft.Storage/storageAccounts/{EA_STORAGE_ACCOUNT}"
            ),
            "rootFolderPath": path,
        },
        "runInfo": {
            "executionType": "Scheduled",
            "submittedTime": run_time.strftime("%Y-%m-%dT%H:%M:%S.0000000Z"),
            "runId": run_id,
            "startDate": month.start.strftime("%Y-%m-%dT%H:%M:%S"),
            "endDate": (month.end - DAY).strftime("%Y-%m-%dT%H:%M:%S"),
        },
        "blobs": blobs,
    }
    (run_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return export_dir


# --- FocusCost for the European billing account ------------------------------------------------

FOCUS_EXPORT = "acme-eu-focus"


def write_focus_cost(out_dir: Path, seed: int, months: Sequence[BillingMonth], ledger: Ledger) -> list[Delivered]:
    delivered = []
    for month in months:
        rows = focus_samples.microsoft_rows(month, seed)
        for row in rows:
            details = row.get("SkuPriceDetails")
            tags = row.get("Tags")
            instance_type = details.get("InstanceType") if isinstance(details, dict) else None
            gpu_model, _ = GPU_MODELS.get(str(instance_type), (None, 0))
            hours = focus_samples.gpu_hours(row)
            ledger.add(
                Charge(
                    "focus",
                    PROVIDER,
                    str(row["BillingAccountId"]),
                    month_start(month),
                    str(row["BillingCurrency"]),
                    row["BilledCost"],
                    row["EffectiveCost"],
                    tags.get("team") if isinstance(tags, dict) else None,
                    gpu_model,
                    hours,
                    row["PricingCategory"] if hours else None,
                )
            )
        path = _write_run(
            out_dir / EA_CONTAINER,
            "acme-eu",
            FOCUS_EXPORT,
            "FocusCost",
            "1.0r2",
            month,
            focus_samples.MICROSOFT_COLUMNS,
            rows,
            seed,
            resource="/providers/Microsoft.Billing/billingAccounts/81255734",
            to_text=lambda value: focus_samples.cell_text(value, ""),
        )
        delivered.append(Delivered("focus", path, "Azure FocusCost 1.0r2 export run, one month"))
    return delivered
