"""Acme AI's three AWS payer accounts, each in the export format it really uses.

- The main organisation on a CUR 2.0 Data Export: hourly, with resources, snappy Parquet with the
  MAP columns `product`, `resource_tags` (`user_team`, `user_project`) and `cost_category`, money
  as doubles, laid out as `<export>/data/BILLING_PERIOD=YYYY-MM/<export>-0000N.snappy.parquet` with
  `<export>/metadata/BILLING_PERIOD=YYYY-MM/<export>-Manifest.json`. It bills p5.48xlarge and
  p4d.24xlarge On-Demand, Spot (half the spot rows with empty product attributes, the instance
  type then only in the usage type and the description), a Compute Savings Plan (covered usage,
  negation and the hourly recurring fee), a Partial Upfront Reserved Instance (discounted usage
  and the monthly RIFee, its upfront part amortized into the effective cost), plus EC2, S3 and Tax.
- Acme Vision, an acquired subsidiary still on legacy CUR: daily gzip CSV with slash headers and
  `resourceTags/user:*` columns, `yyyymmdd-yyyymmdd/<assemblyId>/` with the period manifest. The
  `user:project` tag was activated as a cost-allocation tag in the second month, so the first
  month's report has no such column, as legacy CUR's schema varies month to month.
- Acme AI Labs on a `FOCUS_1_2_AWS` Data Export: the FOCUS sample rows in the Data Exports layout,
  with money as doubles, `Tags` and `SkuPriceDetails` as MAP columns, the usage type in `SkuMeter`
  (FOCUS 1.2 with AWS columns dropped `x_UsageType`) and the three AWS columns `x_Discounts`,
  `x_Operation`, `x_ServiceCode`.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pyarrow as pa

from synthetic_data import focus_samples
from synthetic_data.demo_common import (
    CENT,
    GPU_MODELS,
    ZERO,
    Charge,
    Delivered,
    Ledger,
    Owner,
    Pattern,
    as_double,
    code,
    hours_of,
    instance_schedules,
    iso_z,
    line_item_id,
    month_start,
    quantize,
    rng_for,
    split,
    text,
    write_parquet,
)
from synthetic_data.focus_samples import BillingMonth, stable_uuid

SOURCE = "aws_cur"
PROVIDER = "AWS"
HOUR = timedelta(hours=1)
MINUTE = timedelta(minutes=1)
EKS_CLUSTER = "acme-gpu"
"""The EKS cluster of the demo's Kubernetes GPU nodes (CUR 2.0 split cost allocation data names it in pod ARNs)."""
DAY = timedelta(days=1)


@dataclass(frozen=True)
class Ec2Type:
    name: str
    vcpu: int
    memory: str
    on_demand: Decimal
    instance_family: str
    processor: str

    @property
    def family(self) -> str:
        return self.name.split(".")[0]


@dataclass(frozen=True)
class AwsRegion:
    code: str
    name: str
    prefix: str
    zones: tuple[str, ...]


@dataclass(frozen=True)
class EksPod:
    """A pod on an EKS GPU node as AWS's split cost allocation data sees it: the GPUs it requests, UTC minutes of
    every day it runs."""

    namespace: str
    pod: str
    gpus: int
    start_minute: int
    end_minute: int


@dataclass(frozen=True)
class AwsAccount:
    id: str
    name: str


@dataclass(frozen=True)
class Ec2Fleet:
    """`count` identical instances bought the same way, run by one team's project."""

    name: str
    instance_type: Ec2Type
    account: AwsAccount
    owner: Owner
    region: AwsRegion
    pattern: Pattern
    purchase: str  # on-demand | spot | reserved | savings-plan
    count: int = 1


P5 = Ec2Type("p5.48xlarge", 192, "2048 GiB", Decimal("55.04"), "GPU instance", "AMD EPYC 7R13 Processor")
P4D = Ec2Type("p4d.24xlarge", 96, "1152 GiB", Decimal("21.957642"), "GPU instance", "Intel Xeon Platinum 8275L")
M7I = Ec2Type(
    "m7i.4xlarge", 16, "64 GiB", Decimal("0.8064"), "General purpose", "Intel Xeon Scalable (Sapphire Rapids)"
)
G5 = Ec2Type("g5.2xlarge", 8, "32 GiB", Decimal("1.212"), "GPU instance", "AMD EPYC 7R32")
G6E = Ec2Type("g6e.2xlarge", 8, "64 GiB", Decimal("2.24208"), "GPU instance", "AMD EPYC 7R13 Processor")
G6E_SMALL = Ec2Type("g6e.xlarge", 4, "32 GiB", Decimal("1.861"), "GPU instance", "AMD EPYC 7R13 Processor")

USE1 = AwsRegion("us-east-1", "US East (N. Virginia)", "", ("us-east-1a", "us-east-1b", "us-east-1d"))
USE2 = AwsRegion("us-east-2", "US East (Ohio)", "USE2-", ("us-east-2a", "us-east-2b"))
USW2 = AwsRegion("us-west-2", "US West (Oregon)", "USW2-", ("us-west-2a", "us-west-2b", "us-west-2c"))

LEGAL_ENTITY = "Amazon Web Services, Inc."
SAVINGS_PLAN_RATE = Decimal("15.3703")  # p4d.24xlarge under the Compute Savings Plan, per hour
RESERVED_RECURRING = Decimal("18.00")  # p5.48xlarge 1-year Partial Upfront RI, hourly recurring fee
RESERVED_UPFRONT = Decimal("157680.00")  # its upfront fee, paid 2026-03-01: 18.00 per hour of the year
RESERVED_UPFRONT_HOURLY = Decimal("18.00")
S3_PRICE = Decimal("0.023")
TAX_RATE = Decimal("0.06")

# --- CUR 2.0 ----------------------------------------------------------------------------------

CUR2_EXPORT = "acme-cur2"
CUR2_BUCKET = "acme-billing-exports"
CUR2_PREFIX = "data-exports"
CUR2_PAYER = AwsAccount("445566778899", "acme-ai-management")
CUR2_RESEARCH = AwsAccount("446600112233", "acme-research")
CUR2_INFERENCE = AwsAccount("446600223344", "acme-inference")
CUR2_PLATFORM = AwsAccount("446600334455", "acme-platform")
CUR2_DATA = AwsAccount("446600445566", "acme-data")
CUR2_FLEET = (
    Ec2Fleet("p5-pretrain", P5, CUR2_RESEARCH, Owner("research", "llm-pretrain"), USE2, Pattern.TRAINING, "on-demand"),
    Ec2Fleet("p5-chat", P5, CUR2_INFERENCE, Owner("inference", "chat-serving"), USE1, Pattern.ALWAYS_ON, "reserved"),
    Ec2Fleet(
        "p4d-eval", P4D, CUR2_PLATFORM, Owner("platform", "eval-harness"), USE1, Pattern.ALWAYS_ON, "savings-plan"
    ),
    Ec2Fleet("p4d-sweep", P4D, CUR2_RESEARCH, Owner("research", "hparam-sweep"), USW2, Pattern.SPOT, "spot", 2),
    Ec2Fleet("m7i-etl", M7I, CUR2_DATA, Owner("data", "analytics"), USE1, Pattern.ALWAYS_ON, "on-demand"),
)
CUR2_BUCKETS = (
    ("acme-research-datasets", CUR2_RESEARCH, Owner("research", "llm-pretrain"), Decimal(180_000)),
    ("acme-data-lake", CUR2_DATA, Owner("data", "analytics"), Decimal(64_000)),
)
COST_CATEGORY = {"research": "R&D", "inference": "Product", "platform": "Shared", "data": "Product"}
# Amazon Bedrock in the last month: (model, usage type, rate per 1K tokens, thousands of tokens a day, owner,
# account). Usage types as the Bedrock reference spells them; rates at Bedrock's on-demand list prices.
_CHAT = (Owner("inference", "chat-serving"), CUR2_INFERENCE)
_EVALS = (Owner("platform", "eval-harness"), CUR2_PLATFORM)
BEDROCK_TOKEN_LINES = (
    ("Nova Pro", "USE1-NovaPro-input-tokens", Decimal("0.0008"), 42_000, *_CHAT),
    ("Nova Pro", "USE1-NovaPro-output-tokens", Decimal("0.0032"), 9_500, *_CHAT),
    ("Nova Pro", "USE1-NovaPro-cache-read-input-token-count", Decimal("0.0002"), 15_000, *_CHAT),
    ("Claude Sonnet 4", "USE1-MP:USE1_InputTokenCount-Units", Decimal("0.003"), 6_000, *_EVALS),
    ("Claude Sonnet 4", "USE1-MP:USE1_OutputTokenCount-Units", Decimal("0.015"), 1_200, *_EVALS),
)
SAVINGS_PLAN_ARN = f"arn:aws:savingsplans::{CUR2_PAYER.id}:savingsplan/{stable_uuid('demo/aws/savings-plan')}"
RESERVATION_ARN = f"arn:aws:ec2:us-east-1:{CUR2_INFERENCE.id}:reserved-instances/{stable_uuid('demo/aws/ri')}"

_S = "string"
_D = "double"
_T = "timestamp"
_MAP = "map<string,string>"
CUR2_COLUMNS: tuple[tuple[str, str], ...] = (
    ("bill_bill_type", _S),
    ("bill_billing_entity", _S),
    ("bill_billing_period_end_date", _T),
    ("bill_billing_period_start_date", _T),
    ("bill_invoice_id", _S),
    ("bill_invoicing_entity", _S),
    ("bill_payer_account_id", _S),
    ("bill_payer_account_name", _S),
    ("capacity_reservation_capacity_reservation_arn", _S),
    ("capacity_reservation_capacity_reservation_status", _S),
    ("capacity_reservation_capacity_reservation_type", _S),
    ("cost_category", _MAP),
    ("discount", "map<string,double>"),
    ("discount_bundled_discount", _D),
    ("discount_total_discount", _D),
    ("identity_line_item_id", _S),
    ("identity_time_interval", _S),
    ("line_item_availability_zone", _S),
    ("line_item_blended_cost", _D),
    ("line_item_blended_rate", _S),
    ("line_item_currency_code", _S),
    ("line_item_legal_entity", _S),
    ("line_item_line_item_description", _S),
    ("line_item_line_item_type", _S),
    ("line_item_net_unblended_cost", _D),
    ("line_item_net_unblended_rate", _S),
    ("line_item_normalization_factor", _D),
    ("line_item_normalized_usage_amount", _D),
    ("line_item_operation", _S),
    ("line_item_product_code", _S),
    ("line_item_resource_id", _S),
    ("line_item_tax_type", _S),
    ("line_item_unblended_cost", _D),
    ("line_item_unblended_rate", _S),
    ("line_item_usage_account_id", _S),
    ("line_item_usage_account_name", _S),
    ("line_item_usage_amount", _D),
    ("line_item_usage_end_date", _T),
    ("line_item_usage_start_date", _T),
    ("line_item_usage_type", _S),
    ("pricing_currency", _S),
    ("pricing_lease_contract_length", _S),
    ("pricing_offering_class", _S),
    ("pricing_public_on_demand_cost", _D),
    ("pricing_public_on_demand_rate", _S),
    ("pricing_purchase_option", _S),
    ("pricing_rate_code", _S),
    ("pricing_rate_id", _S),
    ("pricing_term", _S),
    ("pricing_unit", _S),
    ("product", _MAP),
    ("product_comment", _S),
    ("product_fee_code", _S),
    ("product_fee_description", _S),
    ("product_from_location", _S),
    ("product_from_location_type", _S),
    ("product_from_region_code", _S),
    ("product_instance_family", _S),
    ("product_instance_type", _S),
    ("product_instanceSKU", _S),
    ("product_location", _S),
    ("product_location_type", _S),
    ("product_operation", _S),
    ("product_pricing_unit", _S),
    ("product_product_family", _S),
    ("product_region_code", _S),
    ("product_servicecode", _S),
    ("product_sku", _S),
    ("product_to_location", _S),
    ("product_to_location_type", _S),
    ("product_to_region_code", _S),
    ("product_usagetype", _S),
    ("reservation_amortized_upfront_cost_for_usage", _D),
    ("reservation_amortized_upfront_fee_for_billing_period", _D),
    ("reservation_availability_zone", _S),
    ("reservation_effective_cost", _D),
    ("reservation_end_time", _S),
    ("reservation_modification_status", _S),
    ("reservation_net_amortized_upfront_cost_for_usage", _D),
    ("reservation_net_amortized_upfront_fee_for_billing_period", _D),
    ("reservation_net_effective_cost", _D),
    ("reservation_net_recurring_fee_for_usage", _D),
    ("reservation_net_unused_amortized_upfront_fee_for_billing_period", _D),
    ("reservation_net_unused_recurring_fee", _D),
    ("reservation_net_upfront_value", _D),
    ("reservation_normalized_units_per_reservation", _S),
    ("reservation_number_of_reservations", _S),
    ("reservation_recurring_fee_for_usage", _D),
    ("reservation_reservation_a_r_n", _S),
    ("reservation_start_time", _S),
    ("reservation_subscription_id", _S),
    ("reservation_total_reserved_normalized_units", _S),
    ("reservation_total_reserved_units", _S),
    ("reservation_units_per_reservation", _S),
    ("reservation_unused_amortized_upfront_fee_for_billing_period", _D),
    ("reservation_unused_normalized_unit_quantity", _D),
    ("reservation_unused_quantity", _D),
    ("reservation_unused_recurring_fee", _D),
    ("reservation_upfront_value", _D),
    ("resource_tags", _MAP),
    ("savings_plan_amortized_upfront_commitment_for_billing_period", _D),
    ("savings_plan_end_time", _S),
    ("savings_plan_instance_type_family", _S),
    ("savings_plan_net_amortized_upfront_commitment_for_billing_period", _D),
    ("savings_plan_net_recurring_commitment_for_billing_period", _D),
    ("savings_plan_net_savings_plan_effective_cost", _D),
    ("savings_plan_offering_type", _S),
    ("savings_plan_payment_option", _S),
    ("savings_plan_purchase_term", _S),
    ("savings_plan_recurring_commitment_for_billing_period", _D),
    ("savings_plan_region", _S),
    ("savings_plan_savings_plan_a_r_n", _S),
    ("savings_plan_savings_plan_effective_cost", _D),
    ("savings_plan_savings_plan_rate", _D),
    ("savings_plan_start_time", _S),
    ("savings_plan_total_commitment_to_date", _D),
    ("savings_plan_used_commitment", _D),
    ("split_line_item_actual_usage", _D),
    ("split_line_item_net_split_cost", _D),
    ("split_line_item_net_unused_cost", _D),
    ("split_line_item_parent_resource_id", _S),
    ("split_line_item_public_on_demand_split_cost", _D),
    ("split_line_item_public_on_demand_unused_cost", _D),
    ("split_line_item_reserved_usage", _D),
    ("split_line_item_split_cost", _D),
    ("split_line_item_split_usage", _D),
    ("split_line_item_split_usage_ratio", _D),
    ("split_line_item_unused_cost", _D),
)
_ARROW = {
    _S: pa.string(),
    _D: pa.float64(),
    _T: pa.timestamp("ms", tz="UTC"),
    _MAP: pa.map_(pa.string(), pa.string()),
    "map<string,double>": pa.map_(pa.string(), pa.float64()),
}
CUR2_SCHEMA = pa.schema([(name, _ARROW[kind]) for name, kind in CUR2_COLUMNS])
CUR2_ROWS_PER_FILE = 3000


class _Cur2Month:
    """Builds one billing period of the CUR 2.0 export, recording each line's meaning in the ledger."""

    def __init__(self, seed: int, month: BillingMonth, ledger: Ledger) -> None:
        self.seed = seed
        self.month = month
        self.ledger = ledger
        self.rng = rng_for(seed, SOURCE, "cur2", month.label)
        self.rows: list[dict[str, object]] = []
        self.billed_by_account: dict[str, Decimal] = defaultdict(lambda: ZERO)
        self.invoice_id = str(self.rng.randrange(10**9, 10**10))

    # One line: the CUR columns, and what the line means in FOCUS terms.
    def line(
        self,
        account: AwsAccount,
        start: datetime,
        end: datetime,
        values: dict[str, object],
        *,
        billed: Decimal,
        effective: Decimal,
        owner: Owner | None = None,
        gpu_model: str | None = None,
        gpu_hours: Decimal = ZERO,
        category: str | None = None,
    ) -> None:
        row: dict[str, object] = {name: ({} if kind.startswith("map") else None) for name, kind in CUR2_COLUMNS}
        row.update(
            bill_bill_type="Anniversary",
            bill_billing_entity="AWS",
            bill_billing_period_start_date=self.month.start,
            bill_billing_period_end_date=self.month.end,
            bill_invoice_id=self.invoice_id,
            bill_invoicing_entity=LEGAL_ENTITY,
            bill_payer_account_id=CUR2_PAYER.id,
            bill_payer_account_name=CUR2_PAYER.name,
            identity_line_item_id=line_item_id(self.rng),
            identity_time_interval=f"{iso_z(start)}/{iso_z(end)}",
            line_item_currency_code="USD",
            line_item_legal_entity=LEGAL_ENTITY,
            line_item_usage_account_id=account.id,
            line_item_usage_account_name=account.name,
            line_item_usage_start_date=start,
            line_item_usage_end_date=end,
            pricing_currency="USD",
        )
        if owner is not None:
            row["resource_tags"] = {"user_project": owner.project, "user_team": owner.team}
            row["cost_category"] = {"business_unit": COST_CATEGORY[owner.team]}
        row.update(values)
        for name, kind in CUR2_COLUMNS:
            if kind == _D:
                row[name] = as_double(row[name])
            elif kind.startswith("map"):
                row[name] = sorted(row[name].items())
        self.rows.append(row)
        self.billed_by_account[account.id] += billed
        self.ledger.add(
            Charge(
                SOURCE,
                PROVIDER,
                CUR2_PAYER.id,
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

    def instance_hour(self, fleet: Ec2Fleet, resource_id: str, zone: str, hour: datetime, seconds: int) -> Decimal:
        """The instance's usage line(s) of the hour; returns its amortized (effective) cost of the hour."""
        ec2 = fleet.instance_type
        region = fleet.region
        amount = hours_of(seconds)
        on_demand_cost = quantize(amount * ec2.on_demand)
        gpu_model, gpus = GPU_MODELS.get(ec2.name, (None, 0))
        gpu_hours = amount * gpus
        sku = code(f"demo/aws/{region.code}/{ec2.name}", 16)
        box = f"{region.prefix}BoxUsage:{ec2.name}"
        common: dict[str, object] = {
            "line_item_availability_zone": zone,
            "line_item_product_code": "AmazonEC2",
            "line_item_resource_id": resource_id,
            "line_item_usage_amount": amount,
            "line_item_operation": "RunInstances",
            "line_item_normalization_factor": normalization_factor(ec2),
            "line_item_normalized_usage_amount": quantize(amount * normalization_factor(ec2)),
            "pricing_public_on_demand_cost": on_demand_cost,
            "pricing_public_on_demand_rate": format(ec2.on_demand, "f"),
            "pricing_unit": "Hrs",
            **_product_columns(ec2, region, sku, box),
        }
        window = (hour, hour + HOUR)
        if fleet.purchase == "on-demand":
            self.line(
                fleet.account,
                *window,
                {
                    **common,
                    "line_item_line_item_type": "Usage",
                    "line_item_usage_type": box,
                    "line_item_unblended_rate": format(ec2.on_demand, "f"),
                    "line_item_unblended_cost": on_demand_cost,
                    "line_item_blended_rate": format(ec2.on_demand, "f"),
                    "line_item_blended_cost": on_demand_cost,
                    "line_item_line_item_description": f"${ec2.on_demand} per On Demand Linux {ec2.name} Instance Hour",
                    "pricing_term": "OnDemand",
                    "pricing_purchase_option": "On Demand",
                    "pricing_rate_code": f"{sku}.JRTCKXETXF.6YS6EN2CT7",
                    "pricing_rate_id": str(int(code(f"{sku}/od", 10, "0123456789"))),
                },
                billed=on_demand_cost,
                effective=on_demand_cost,
                owner=fleet.owner,
                gpu_model=gpu_model,
                gpu_hours=gpu_hours,
                category="Standard",
            )
            return on_demand_cost
        if fleet.purchase == "spot":
            spot_price = spot_price_for(self.seed, region, ec2, hour)
            cost = quantize(amount * spot_price)
            values = {
                **common,
                "line_item_line_item_type": "Usage",
                "line_item_usage_type": f"{region.prefix}SpotUsage:{ec2.name}",
                "line_item_unblended_rate": format(spot_price, "f"),
                "line_item_unblended_cost": cost,
                "line_item_blended_rate": format(spot_price, "f"),
                "line_item_blended_cost": cost,
                "line_item_line_item_description": (
                    f"{ec2.name} Linux/UNIX Spot Instance-hour in {region.name} in VPC Zone #{zone[-1]}"
                ),
                "pricing_term": "Spot",
                "pricing_purchase_option": "Spot",
                "product_usagetype": f"{region.prefix}SpotUsage:{ec2.name}",
            }
            if self.rng.random() < 0.5:
                # Spot lines often come with the product attributes left empty.
                for name in _SPOT_SPARSE:
                    values[name] = None
                values["product"] = {}
                values["pricing_public_on_demand_rate"] = None
            self.line(
                fleet.account,
                *window,
                values,
                billed=cost,
                effective=cost,
                owner=fleet.owner,
                gpu_model=gpu_model,
                gpu_hours=gpu_hours,
                category="Dynamic",
            )
            return cost
        if fleet.purchase == "savings-plan":
            effective = quantize(amount * SAVINGS_PLAN_RATE)
            plan = {
                "savings_plan_savings_plan_a_r_n": SAVINGS_PLAN_ARN,
                "savings_plan_savings_plan_rate": SAVINGS_PLAN_RATE,
                "savings_plan_savings_plan_effective_cost": effective,
                "savings_plan_offering_type": "ComputeSavingsPlans",
                "savings_plan_payment_option": "No Upfront",
                "savings_plan_purchase_term": "1yr",
                "savings_plan_start_time": "2026-01-01T00:00:00.000Z",
                "savings_plan_end_time": "2027-01-01T00:00:00.000Z",
                "savings_plan_region": region.name,
                "savings_plan_instance_type_family": ec2.family,
            }
            self.line(
                fleet.account,
                *window,
                {
                    **common,
                    **plan,
                    "line_item_line_item_type": "SavingsPlanCoveredUsage",
                    "line_item_usage_type": box,
                    "line_item_unblended_rate": format(ec2.on_demand, "f"),
                    "line_item_unblended_cost": on_demand_cost,
                    "line_item_blended_rate": format(ec2.on_demand, "f"),
                    "line_item_blended_cost": on_demand_cost,
                    "line_item_line_item_description": (
                        f"Savings Plan covered usage: {SAVINGS_PLAN_RATE} USD per hour for Linux {ec2.name} "
                        f"in {region.name}"
                    ),
                    "pricing_term": "OnDemand",
                    "pricing_rate_code": f"{sku}.JRTCKXETXF.6YS6EN2CT7",
                },
                billed=on_demand_cost,
                effective=effective,
                owner=fleet.owner,
                gpu_model=gpu_model,
                gpu_hours=gpu_hours,
                category="Committed",
            )
            # The negation takes the on-demand cost back off the invoice; the plan's fee pays instead.
            self.line(
                fleet.account,
                *window,
                {
                    **common,
                    "savings_plan_savings_plan_a_r_n": SAVINGS_PLAN_ARN,
                    "savings_plan_savings_plan_rate": SAVINGS_PLAN_RATE,
                    "line_item_line_item_type": "SavingsPlanNegation",
                    "line_item_usage_type": box,
                    "line_item_unblended_rate": format(-ec2.on_demand, "f"),
                    "line_item_unblended_cost": -on_demand_cost,
                    "line_item_blended_rate": format(-ec2.on_demand, "f"),
                    "line_item_blended_cost": -on_demand_cost,
                    "line_item_line_item_description": (
                        f"SavingsPlanNegation used by AccountId : {fleet.account.id} and UsageSku : {sku}"
                    ),
                    "pricing_public_on_demand_cost": ZERO,
                },
                billed=-on_demand_cost,
                effective=ZERO,
                owner=fleet.owner,
                gpu_model=gpu_model,
            )
            return effective
        # reserved
        upfront = quantize(amount * RESERVED_UPFRONT_HOURLY)
        recurring = quantize(amount * RESERVED_RECURRING)
        self.line(
            fleet.account,
            *window,
            {
                **common,
                "line_item_line_item_type": "DiscountedUsage",
                "line_item_usage_type": box,
                "line_item_unblended_rate": "0.0000000000",
                "line_item_unblended_cost": ZERO,
                "line_item_blended_rate": "0.0000000000",
                "line_item_blended_cost": ZERO,
                "line_item_line_item_description": (
                    f"USD {RESERVED_RECURRING} hourly fee per Linux/UNIX (Amazon VPC), {ec2.name} instance"
                ),
                "pricing_term": "Reserved",
                "pricing_purchase_option": "Partial Upfront",
                "pricing_lease_contract_length": "1yr",
                "pricing_offering_class": "standard",
                "pricing_rate_code": f"{sku}.38NPMPTW36.6YS6EN2CT7",
                "reservation_reservation_a_r_n": RESERVATION_ARN,
                "reservation_amortized_upfront_cost_for_usage": upfront,
                "reservation_recurring_fee_for_usage": recurring,
                "reservation_effective_cost": upfront + recurring,
                "reservation_start_time": "2026-03-01T00:00:00.000Z",
                "reservation_end_time": "2027-03-01T00:00:00.000Z",
            },
            billed=ZERO,
            effective=upfront + recurring,
            owner=fleet.owner,
            gpu_model=gpu_model,
            gpu_hours=gpu_hours,
            category="Committed",
        )
        return upfront + recurring

    def eks_split_hour(
        self, fleet: Ec2Fleet, resource_id: str, hour: datetime, amortized: Decimal, pods: Sequence[EksPod]
    ) -> None:
        """AWS's split cost allocation rows of an EKS node's hour: one GPU row per pod and the unused row.

        Each pod's split is the hour's amortized cost × the GPU-hours it requested ÷ the node's GPUs (AWS's split
        of an accelerated node weighs GPUs nine times CPU and memory; the demo's pods request whole nodes' worth of
        neither, so only their GPU rows are written). Pods time-slicing one GPU each request it, as AWS counts
        them. The pods' rows also carry their pod-view share of the unused cost; the instance's unused row carries
        the unused cost itself. Split rows bill nothing: the instance's line holds the cost.
        """
        ec2 = fleet.instance_type
        gpus = GPU_MODELS[ec2.name][1]
        day_start = hour.replace(hour=0, minute=0, second=0, microsecond=0)
        first, last = (hour - day_start) // MINUTE, (hour + HOUR - day_start) // MINUTE
        requested = [
            (pod, Decimal(max(0, min(last, pod.end_minute) - max(first, pod.start_minute)) * pod.gpus) / 60)
            for pod in pods
        ]
        requested = [(pod, gpu_hours) for pod, gpu_hours in requested if gpu_hours > 0]
        splits = [(pod, gpu_hours, quantize(amortized * gpu_hours / gpus)) for pod, gpu_hours in requested]
        unused = amortized - sum((cost for *_, cost in splits), ZERO)
        used = sum((gpu_hours for _, gpu_hours, _ in splits), ZERO)
        on_demand = ec2.on_demand
        usage_type = f"{fleet.region.prefix}EKS-EC2-GPU-Hours"
        common: dict[str, object] = {
            "line_item_line_item_type": "Usage",
            "line_item_product_code": "AmazonEKS",
            "line_item_operation": "EKSPod-EC2",
            "line_item_usage_type": usage_type,
            "line_item_unblended_cost": ZERO,
            "line_item_unblended_rate": "0.0000000000",
            "line_item_blended_cost": ZERO,
            "split_line_item_parent_resource_id": resource_id,
            "pricing_public_on_demand_cost": ZERO,
            "pricing_unit": "Hrs",
        }
        for pod, gpu_hours, cost in splits:
            arn = f"arn:aws:eks:{fleet.region.code}:{fleet.account.id}:pod/{EKS_CLUSTER}/{pod.namespace}/{pod.pod}/"
            arn += stable_uuid(f"demo/aws/eks/{resource_id}/{pod.namespace}/{pod.pod}")
            self.line(
                fleet.account,
                hour,
                hour + HOUR,
                {
                    **common,
                    "line_item_resource_id": arn,
                    "line_item_usage_amount": gpu_hours,
                    "line_item_line_item_description": f"EKS pod {pod.namespace}/{pod.pod} GPU usage",
                    "resource_tags": {"aws_eks_cluster_name": EKS_CLUSTER, "aws_eks_namespace": pod.namespace},
                    "split_line_item_reserved_usage": gpu_hours,
                    "split_line_item_actual_usage": gpu_hours,
                    "split_line_item_split_usage": gpu_hours,
                    "split_line_item_split_usage_ratio": quantize(gpu_hours / gpus),
                    "split_line_item_split_cost": cost,
                    "split_line_item_unused_cost": quantize(unused * gpu_hours / used),
                    "split_line_item_public_on_demand_split_cost": quantize(on_demand * gpu_hours / gpus),
                },
                billed=ZERO,
                effective=ZERO,
            )
        self.line(
            fleet.account,
            hour,
            hour + HOUR,
            {
                **common,
                "line_item_resource_id": resource_id,
                "line_item_usage_amount": gpus - used,
                "line_item_line_item_description": f"EKS node {resource_id} unused GPU capacity",
                "resource_tags": {"aws_eks_cluster_name": EKS_CLUSTER},
                "split_line_item_split_usage": gpus - used,
                "split_line_item_unused_cost": unused,
                "split_line_item_public_on_demand_unused_cost": quantize(on_demand * (gpus - used) / gpus),
            },
            billed=ZERO,
            effective=ZERO,
        )

    def savings_plan_fee(self, hour: datetime, used_hours: Decimal) -> None:
        """The plan's hourly fee; its effective cost is the part of the commitment no usage used."""
        commitment = SAVINGS_PLAN_RATE
        used = quantize(used_hours * SAVINGS_PLAN_RATE)
        unused = commitment - used
        self.line(
            CUR2_PLATFORM,
            hour,
            hour + HOUR,
            {
                "line_item_line_item_type": "SavingsPlanRecurringFee",
                "line_item_product_code": "ComputeSavingsPlans",
                "line_item_usage_type": "ComputeSP:1yrNoUpfront",
                "line_item_operation": "",
                "line_item_resource_id": SAVINGS_PLAN_ARN,
                "line_item_usage_amount": Decimal(1),
                "line_item_unblended_rate": format(commitment, "f"),
                "line_item_unblended_cost": commitment,
                "line_item_blended_rate": format(commitment, "f"),
                "line_item_blended_cost": commitment,
                "line_item_line_item_description": "1 year No Upfront Compute Savings Plan",
                "savings_plan_savings_plan_a_r_n": SAVINGS_PLAN_ARN,
                "savings_plan_total_commitment_to_date": commitment,
                "savings_plan_used_commitment": used,
                "savings_plan_recurring_commitment_for_billing_period": quantize(commitment * self.month.hours),
                "savings_plan_amortized_upfront_commitment_for_billing_period": ZERO,
                "savings_plan_offering_type": "ComputeSavingsPlans",
                "savings_plan_payment_option": "No Upfront",
                "savings_plan_purchase_term": "1yr",
                "savings_plan_start_time": "2026-01-01T00:00:00.000Z",
                "savings_plan_end_time": "2027-01-01T00:00:00.000Z",
                "product_product_family": "Savings Plans",
                "product_servicecode": "ComputeSavingsPlans",
                "product": {"product_name": "Savings Plans for AWS Compute usage"},
            },
            billed=commitment,
            effective=unused,
        )

    def reservation_fee(self, used_hours: Decimal) -> None:
        """The RI's monthly fee: billed as the recurring part; effective only what no usage used."""
        reserved_hours = self.month.hours
        unused = reserved_hours - used_hours
        recurring = quantize(reserved_hours * RESERVED_RECURRING)
        unused_fee = quantize(unused * RESERVED_RECURRING)
        unused_upfront = quantize(unused * RESERVED_UPFRONT_HOURLY)
        self.line(
            CUR2_INFERENCE,
            self.month.start,
            self.month.end,
            {
                "line_item_line_item_type": "RIFee",
                "line_item_product_code": "AmazonEC2",
                "line_item_usage_type": f"HeavyUsage:{P5.name}",
                "line_item_operation": "RunInstances",
                "line_item_resource_id": RESERVATION_ARN,
                "line_item_usage_amount": reserved_hours,
                "line_item_unblended_rate": format(RESERVED_RECURRING, "f"),
                "line_item_unblended_cost": recurring,
                "line_item_blended_rate": format(RESERVED_RECURRING, "f"),
                "line_item_blended_cost": recurring,
                "line_item_line_item_description": (
                    f"USD {RESERVED_RECURRING} hourly fee per Linux/UNIX (Amazon VPC), {P5.name} instance"
                ),
                "pricing_term": "Reserved",
                "pricing_purchase_option": "Partial Upfront",
                "pricing_lease_contract_length": "1yr",
                "pricing_offering_class": "standard",
                "pricing_unit": "Hrs",
                "reservation_reservation_a_r_n": RESERVATION_ARN,
                "reservation_amortized_upfront_fee_for_billing_period": quantize(
                    reserved_hours * RESERVED_UPFRONT_HOURLY
                ),
                "reservation_unused_amortized_upfront_fee_for_billing_period": unused_upfront,
                "reservation_unused_recurring_fee": unused_fee,
                "reservation_unused_quantity": unused,
                "reservation_total_reserved_units": text(reserved_hours),
                "reservation_number_of_reservations": "1",
                "reservation_units_per_reservation": text(reserved_hours),
                "reservation_upfront_value": RESERVED_UPFRONT,
                "reservation_start_time": "2026-03-01T00:00:00.000Z",
                "reservation_end_time": "2027-03-01T00:00:00.000Z",
                "product_product_family": "Compute Instance",
                "product_servicecode": "AmazonEC2",
                "product_region_code": USE1.code,
                "product_instance_type": P5.name,
            },
            billed=recurring,
            effective=unused_upfront + unused_fee,
        )

    def s3_day(self, day: datetime) -> None:
        for bucket, account, owner, size_gb in CUR2_BUCKETS:
            amount = quantize(size_gb * (1 + Decimal(day.day) / 400) * 24 / self.month.hours)
            cost = quantize(amount * S3_PRICE)
            sku = code("demo/aws/s3/standard", 16)
            self.line(
                account,
                day,
                day + DAY,
                {
                    "line_item_line_item_type": "Usage",
                    "line_item_product_code": "AmazonS3",
                    "line_item_usage_type": "TimedStorage-ByteHrs",
                    "line_item_operation": "StandardStorage",
                    "line_item_resource_id": bucket,
                    "line_item_usage_amount": amount,
                    "line_item_unblended_rate": format(S3_PRICE, "f"),
                    "line_item_unblended_cost": cost,
                    "line_item_blended_rate": format(S3_PRICE, "f"),
                    "line_item_blended_cost": cost,
                    "line_item_line_item_description": "$0.023 per GB - first 50 TB / month of storage used",
                    "pricing_public_on_demand_cost": cost,
                    "pricing_public_on_demand_rate": format(S3_PRICE, "f"),
                    "pricing_term": "OnDemand",
                    "pricing_unit": "GB-Mo",
                    "pricing_rate_code": f"{sku}.JRTCKXETXF.PGHJ3S3EYE",
                    "product_product_family": "Storage",
                    "product_servicecode": "AmazonS3",
                    "product_region_code": USE1.code,
                    "product_location": USE1.name,
                    "product_location_type": "AWS Region",
                    "product_sku": sku,
                    "product_usagetype": "TimedStorage-ByteHrs",
                    "product": {
                        "product_name": "Amazon Simple Storage Service",
                        "region": USE1.code,
                        "storage_class": "General Purpose",
                        "volume_type": "Standard",
                    },
                },
                billed=cost,
                effective=cost,
                owner=owner,
            )

    def bedrock_day(self, day: datetime) -> None:
        """A day of Amazon Bedrock tokens, one line per model and token type as CUR 2.0 bills them: Nova Pro for the
        chat product (first-party usage types), Claude Sonnet 4 for research through AWS Marketplace. Quantities are
        thousands of tokens, priced per `1K tokens` (the rate times the quantity is the cost)."""
        rng = rng_for(self.seed, SOURCE, "bedrock", day.date().isoformat())
        for model, usage_type, rate, thousands, owner, account in BEDROCK_TOKEN_LINES:
            amount = quantize(Decimal(thousands) * Decimal(rng.randint(80, 120)) / 100, Decimal("0.001"))
            cost = quantize(amount * rate)
            marketplace = "-MP:" in usage_type
            self.line(
                account,
                day,
                day + DAY,
                {
                    "bill_billing_entity": "AWS Marketplace" if marketplace else "AWS",
                    "line_item_line_item_type": "Usage",
                    "line_item_product_code": "AmazonBedrock",
                    "line_item_usage_type": usage_type,
                    "line_item_operation": "InvokeModelInference",
                    "line_item_usage_amount": amount,
                    "line_item_unblended_rate": format(rate, "f"),
                    "line_item_unblended_cost": cost,
                    "line_item_blended_rate": format(rate, "f"),
                    "line_item_blended_cost": cost,
                    "line_item_line_item_description": f"{model} {usage_type}",
                    "pricing_public_on_demand_cost": cost,
                    "pricing_public_on_demand_rate": format(rate, "f"),
                    "pricing_term": "OnDemand",
                    "pricing_unit": "1K tokens",
                    "product_servicecode": "AmazonBedrock",
                    "product_region_code": USE1.code,
                    "product": (
                        {"product_name": f"{model} (Amazon Bedrock Edition)", "region": USE1.code}
                        if marketplace
                        else {"product_name": "Amazon Bedrock", "region": USE1.code, "model": model}
                    ),
                },
                billed=cost,
                effective=cost,
                owner=owner,
                category="Standard",
            )

    def taxes(self) -> None:
        """US sales tax per linked account, on what the account was billed this month."""
        for account in (CUR2_RESEARCH, CUR2_INFERENCE, CUR2_PLATFORM, CUR2_DATA):
            tax = quantize(self.billed_by_account[account.id] * TAX_RATE, CENT)
            self.line(
                account,
                self.month.start,
                self.month.end,
                {
                    "line_item_line_item_type": "Tax",
                    "line_item_product_code": "AmazonEC2",
                    "line_item_usage_amount": Decimal(1),
                    "line_item_unblended_cost": tax,
                    "line_item_blended_cost": tax,
                    "line_item_line_item_description": "Tax for product code AmazonEC2",
                    "line_item_tax_type": "Sales Tax",
                    "product": {"product_name": "Amazon Elastic Compute Cloud"},
                },
                billed=tax,
                effective=tax,
            )


_SPOT_SPARSE = (
    "product_instance_type",
    "product_instance_family",
    "product_product_family",
    "product_location",
    "product_location_type",
    "product_sku",
    "product_operation",
    "product_usagetype",
    "product_region_code",
    "pricing_rate_code",
)


def _product_columns(ec2: Ec2Type, region: AwsRegion, sku: str, usage_type: str) -> dict[str, object]:
    _, gpus = GPU_MODELS.get(ec2.name, (None, 0))
    product = {
        "product_name": "Amazon Elastic Compute Cloud",
        "region": region.code,
        "instance_type_family": ec2.family,
        "vcpu": str(ec2.vcpu),
        "memory": ec2.memory,
        "operating_system": "Linux",
        "tenancy": "Shared",
        "capacitystatus": "Used",
        "physical_processor": ec2.processor,
        "pre_installed_sw": "NA",
        "servicename": "Amazon Elastic Compute Cloud",
    }
    if gpus:
        product["gpu"] = str(gpus)
    return {
        "product_instance_type": ec2.name,
        "product_instance_family": ec2.instance_family,
        "product_product_family": "Compute Instance",
        "product_location": region.name,
        "product_location_type": "AWS Region",
        "product_operation": "RunInstances",
        "product_region_code": region.code,
        "product_servicecode": "AmazonEC2",
        "product_sku": sku,
        "product_usagetype": usage_type,
        "product": product,
    }


def normalization_factor(ec2: Ec2Type) -> Decimal:
    """AWS size normalization: xlarge is 8 units, each size step doubles it."""
    size = ec2.name.split(".", 1)[1].removesuffix("xlarge")
    return Decimal(8 * (int(size) if size else 1))


def spot_price_for(seed: int, region: AwsRegion, ec2: Ec2Type, moment: datetime) -> Decimal:
    """The day's spot price in a region: 61–72% below on-demand, changing daily."""
    rng = rng_for(seed, "aws/spot-price", region.code, ec2.name, moment.strftime("%Y-%m-%d"))
    return quantize(ec2.on_demand * (100 - rng.randint(61, 72)) / 100, Decimal("0.0001"))


def write_cur2(
    out_dir: Path,
    seed: int,
    months: Sequence[BillingMonth],
    ledger: Ledger,
    eks_pods: Mapping[str, Sequence[EksPod]] | None = None,
) -> list[Delivered]:
    """The CUR 2.0 export, one delivery per month; the fleets `eks_pods` names are EKS nodes with split rows."""
    eks_pods = eks_pods or {}
    builders = {month.label: _Cur2Month(seed, month, ledger) for month in months}
    committed_hours: dict[tuple[str, datetime], Decimal] = defaultdict(lambda: ZERO)
    reserved_hours: dict[str, Decimal] = defaultdict(lambda: ZERO)
    for fleet in CUR2_FLEET:
        fleet_rng = rng_for(seed, SOURCE, fleet.name, "resources")
        for intervals in instance_schedules(seed, SOURCE, fleet.name, fleet.count, fleet.pattern, months):
            resource_id = f"i-{fleet_rng.getrandbits(68):017x}"
            zone = fleet_rng.choice(fleet.region.zones)
            for hour, seconds in split(intervals, HOUR):
                builder = builders[hour.strftime("%Y-%m")]
                amortized = builder.instance_hour(fleet, resource_id, zone, hour, seconds)
                if fleet.name in eks_pods:
                    builder.eks_split_hour(fleet, resource_id, hour, amortized, eks_pods[fleet.name])
                if fleet.purchase == "savings-plan":
                    committed_hours[(builder.month.label, hour)] += hours_of(seconds)
                elif fleet.purchase == "reserved":
                    reserved_hours[builder.month.label] += hours_of(seconds)
    delivered = []
    for month in months:
        builder = builders[month.label]
        for hour_index in range(int(month.hours)):
            hour = month.start + hour_index * HOUR
            builder.savings_plan_fee(hour, committed_hours[(month.label, hour)])
        builder.reservation_fee(reserved_hours[month.label])
        for day in month.days:
            builder.s3_day(day)
            if month is months[-1]:
                builder.bedrock_day(day)
        builder.taxes()
        delivered.append(_write_data_export(out_dir / "cur2" / month.label, CUR2_EXPORT, month, builder.rows, seed))
    return [Delivered(SOURCE, path, "AWS CUR 2.0 Data Export (Parquet), one billing period") for path in delivered]


def _write_data_export(
    root: Path,
    export: str,
    month: BillingMonth,
    rows: list[dict[str, object]],
    seed: int,
    *,
    schema: pa.Schema = CUR2_SCHEMA,
    columns: Sequence[tuple[str, str]] = CUR2_COLUMNS,
    table: str = "COST_AND_USAGE_REPORT",
    payer_id: str = CUR2_PAYER.id,
) -> Path:
    """Part files under data/BILLING_PERIOD=…, then the manifest naming them (written last, as AWS does)."""
    period = f"BILLING_PERIOD={month.label}"
    data_files = []
    for part, first in enumerate(range(0, len(rows), CUR2_ROWS_PER_FILE), start=1):
        name = f"{export}-{part:05d}.snappy.parquet"
        write_parquet(root / export / "data" / period / name, schema, rows[first : first + CUR2_ROWS_PER_FILE])
        data_files.append(f"s3://{CUR2_BUCKET}/{CUR2_PREFIX}/{export}/data/{period}/{name}")
    rng = rng_for(seed, "data-export", export, month.label)
    manifest = {
        "executionId": str(stable_uuid(f"demo/{seed}/{export}/{month.label}/{rng.random()}")),
        "exportArn": f"arn:aws:bcm-data-exports:us-east-1:{payer_id}:export/{export}-{stable_uuid(export)}",
        "exportName": export,
        "table": table,
        "billingPeriod": month.label,
        "columns": [{"name": name, "type": kind} for name, kind in columns],
        "dataFiles": data_files,
        "additionalOutputFiles": [],
    }
    manifest_path = root / export / "metadata" / period / f"{export}-Manifest.json"
    manifest_path.parent.mkdir(parents=True, exist_ok=True)
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return root


# --- Legacy CUR (CSV) -------------------------------------------------------------------------

LEGACY_REPORT = "acme-vision-cur"
LEGACY_BUCKET = "acme-vision-billing"
LEGACY_PREFIX = "cur"
LEGACY_PAYER = AwsAccount("600011112222", "acme-vision")
LEGACY_INFERENCE = AwsAccount("600033334444", "vision-inference")
LEGACY_FLEET = (
    Ec2Fleet("g5-ocr", G5, LEGACY_INFERENCE, Owner("inference", "doc-ocr"), USE1, Pattern.INFERENCE, "on-demand", 3),
    Ec2Fleet(
        "g6e-embed", G6E, LEGACY_INFERENCE, Owner("inference", "embeddings"), USE1, Pattern.INFERENCE, "on-demand", 2
    ),
    Ec2Fleet(
        "g6e-batch", G6E_SMALL, LEGACY_INFERENCE, Owner("inference", "embeddings"), USE1, Pattern.EXPERIMENTS, "spot"
    ),
)
LEGACY_BUCKETS = (("acme-vision-models", Owner("inference", "doc-ocr"), Decimal(6_500)),)
LEGACY_TAG_ACTIVATED = {"user:team": "2026-01", "user:project": "2026-10"}
"""When each cost-allocation tag was activated: a tag's column appears from that month on."""

# (category/name, manifest type)
LEGACY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("identity/LineItemId", "String"),
    ("identity/TimeInterval", "Interval"),
    ("bill/InvoiceId", "String"),
    ("bill/InvoicingEntity", "String"),
    ("bill/BillingEntity", "String"),
    ("bill/BillType", "String"),
    ("bill/PayerAccountId", "String"),
    ("bill/BillingPeriodStartDate", "DateTime"),
    ("bill/BillingPeriodEndDate", "DateTime"),
    ("lineItem/UsageAccountId", "String"),
    ("lineItem/LineItemType", "String"),
    ("lineItem/UsageStartDate", "DateTime"),
    ("lineItem/UsageEndDate", "DateTime"),
    ("lineItem/ProductCode", "String"),
    ("lineItem/UsageType", "String"),
    ("lineItem/Operation", "String"),
    ("lineItem/AvailabilityZone", "String"),
    ("lineItem/ResourceId", "String"),
    ("lineItem/UsageAmount", "BigDecimal"),
    ("lineItem/NormalizationFactor", "OptionalBigDecimal"),
    ("lineItem/NormalizedUsageAmount", "OptionalBigDecimal"),
    ("lineItem/CurrencyCode", "String"),
    ("lineItem/UnblendedRate", "OptionalBigDecimal"),
    ("lineItem/UnblendedCost", "BigDecimal"),
    ("lineItem/BlendedRate", "OptionalBigDecimal"),
    ("lineItem/BlendedCost", "BigDecimal"),
    ("lineItem/LineItemDescription", "String"),
    ("lineItem/TaxType", "String"),
    ("lineItem/LegalEntity", "String"),
    ("product/ProductName", "String"),
    ("product/capacitystatus", "String"),
    ("product/currentGeneration", "String"),
    ("product/gpu", "String"),
    ("product/gpuMemory", "String"),
    ("product/instanceFamily", "String"),
    ("product/instanceType", "String"),
    ("product/instanceTypeFamily", "String"),
    ("product/location", "String"),
    ("product/locationType", "String"),
    ("product/memory", "String"),
    ("product/operatingSystem", "String"),
    ("product/operation", "String"),
    ("product/physicalProcessor", "String"),
    ("product/productFamily", "String"),
    ("product/region", "String"),
    ("product/regionCode", "String"),
    ("product/servicecode", "String"),
    ("product/servicename", "String"),
    ("product/sku", "String"),
    ("product/storageClass", "String"),
    ("product/tenancy", "String"),
    ("product/usagetype", "String"),
    ("product/vcpu", "String"),
    ("product/volumeType", "String"),
    ("pricing/RateCode", "String"),
    ("pricing/RateId", "String"),
    ("pricing/currency", "String"),
    ("pricing/publicOnDemandCost", "BigDecimal"),
    ("pricing/publicOnDemandRate", "BigDecimal"),
    ("pricing/term", "String"),
    ("pricing/unit", "String"),
    ("reservation/AmortizedUpfrontCostForUsage", "BigDecimal"),
    ("reservation/AmortizedUpfrontFeeForBillingPeriod", "BigDecimal"),
    ("reservation/EffectiveCost", "BigDecimal"),
    ("reservation/EndTime", "OptionalString"),
    ("reservation/ModificationStatus", "OptionalString"),
    ("reservation/NormalizedUnitsPerReservation", "OptionalString"),
    ("reservation/NumberOfReservations", "OptionalString"),
    ("reservation/RecurringFeeForUsage", "BigDecimal"),
    ("reservation/StartTime", "OptionalString"),
    ("reservation/SubscriptionId", "String"),
    ("reservation/TotalReservedNormalizedUnits", "OptionalString"),
    ("reservation/TotalReservedUnits", "OptionalString"),
    ("reservation/UnitsPerReservation", "OptionalString"),
    ("reservation/UnusedAmortizedUpfrontFeeForBillingPeriod", "BigDecimal"),
    ("reservation/UnusedNormalizedUnitQuantity", "BigDecimal"),
    ("reservation/UnusedQuantity", "BigDecimal"),
    ("reservation/UnusedRecurringFee", "BigDecimal"),
    ("reservation/UpfrontValue", "BigDecimal"),
    ("savingsPlan/TotalCommitmentToDate", "OptionalBigDecimal"),
    ("savingsPlan/SavingsPlanARN", "OptionalString"),
    ("savingsPlan/SavingsPlanRate", "OptionalBigDecimal"),
    ("savingsPlan/UsedCommitment", "OptionalBigDecimal"),
    ("savingsPlan/SavingsPlanEffectiveCost", "OptionalBigDecimal"),
    ("savingsPlan/AmortizedUpfrontCommitmentForBillingPeriod", "OptionalBigDecimal"),
    ("savingsPlan/RecurringCommitmentForBillingPeriod", "OptionalBigDecimal"),
    ("resourceTags/user:team", "String"),
    ("resourceTags/user:project", "String"),
)


def legacy_columns(month: BillingMonth) -> list[tuple[str, str]]:
    """The month's header: a tag's column only once the tag was activated."""
    return [
        (name, kind)
        for name, kind in LEGACY_COLUMNS
        if not name.startswith("resourceTags/") or LEGACY_TAG_ACTIVATED[name.split("/", 1)[1]] <= month.label
    ]


def write_legacy_cur(out_dir: Path, seed: int, months: Sequence[BillingMonth], ledger: Ledger) -> list[Delivered]:
    rows_by_month: dict[str, list[dict[str, str]]] = {month.label: [] for month in months}
    billed: dict[str, Decimal] = defaultdict(lambda: ZERO)
    month_of = {month.label: month for month in months}
    line_rng = rng_for(seed, SOURCE, "legacy", "line-items")

    def add(month: BillingMonth, start: datetime, end: datetime, values: dict[str, object], **meaning) -> None:
        row = {
            "identity/LineItemId": line_item_id(line_rng),
            "identity/TimeInterval": f"{iso_z(start)}/{iso_z(end)}",
            "bill/InvoiceId": f"{int(code(f'demo/{seed}/vision/{month.label}', 9, '0123456789')):09d}",
            "bill/InvoicingEntity": LEGAL_ENTITY,
            "bill/BillingEntity": "AWS",
            "bill/BillType": "Anniversary",
            "bill/PayerAccountId": LEGACY_PAYER.id,
            "bill/BillingPeriodStartDate": iso_z(month.start, millis=True),
            "bill/BillingPeriodEndDate": iso_z(month.end, millis=True),
            "lineItem/UsageAccountId": LEGACY_INFERENCE.id,
            "lineItem/UsageStartDate": iso_z(start, millis=True),
            "lineItem/UsageEndDate": iso_z(end, millis=True),
            "lineItem/CurrencyCode": "USD",
            "lineItem/LegalEntity": LEGAL_ENTITY,
            "pricing/currency": "USD",
        }
        owner: Owner | None = meaning.pop("owner", None)
        if owner is not None:
            row["resourceTags/user:team"] = owner.team
            row["resourceTags/user:project"] = owner.project
        row.update({key: _legacy_text(value) for key, value in values.items()})
        rows_by_month[month.label].append(row)
        billed[month.label] += meaning["billed"]
        ledger.add(
            Charge(
                SOURCE,
                PROVIDER,
                LEGACY_PAYER.id,
                month_start(month),
                "USD",
                meaning["billed"],
                meaning["effective"],
                owner.team if owner else None,
                meaning.get("gpu_model"),
                meaning.get("gpu_hours", ZERO),
                meaning.get("category"),
            )
        )

    for fleet in LEGACY_FLEET:
        ec2 = fleet.instance_type
        gpu_model, gpus = GPU_MODELS[ec2.name]
        fleet_rng = rng_for(seed, SOURCE, fleet.name, "resources")
        sku = code(f"demo/aws/{fleet.region.code}/{ec2.name}", 16)
        for intervals in instance_schedules(seed, SOURCE, fleet.name, fleet.count, fleet.pattern, months):
            resource_id = f"i-{fleet_rng.getrandbits(68):017x}"
            zone = fleet_rng.choice(fleet.region.zones)
            for day, seconds in split(intervals, DAY):
                month = month_of[day.strftime("%Y-%m")]
                amount = hours_of(seconds)
                on_demand_cost = quantize(amount * ec2.on_demand)
                spot = fleet.purchase == "spot"
                rate = spot_price_for(seed, fleet.region, ec2, day) if spot else ec2.on_demand
                cost = quantize(amount * rate)
                usage_type = f"{fleet.region.prefix}{'SpotUsage' if spot else 'BoxUsage'}:{ec2.name}"
                description = (
                    f"{ec2.name} Linux/UNIX Spot Instance-hour in {fleet.region.name} in VPC Zone #{zone[-1]}"
                    if spot
                    else f"${ec2.on_demand} per On Demand Linux {ec2.name} Instance Hour"
                )
                add(
                    month,
                    day,
                    day + DAY,
                    {
                        "lineItem/LineItemType": "Usage",
                        "lineItem/ProductCode": "AmazonEC2",
                        "lineItem/UsageType": usage_type,
                        "lineItem/Operation": "RunInstances",
                        "lineItem/AvailabilityZone": zone,
                        "lineItem/ResourceId": resource_id,
                        "lineItem/UsageAmount": amount,
                        "lineItem/NormalizationFactor": normalization_factor(ec2),
                        "lineItem/NormalizedUsageAmount": quantize(amount * normalization_factor(ec2)),
                        "lineItem/UnblendedRate": rate,
                        "lineItem/UnblendedCost": cost,
                        "lineItem/BlendedRate": rate,
                        "lineItem/BlendedCost": cost,
                        "lineItem/LineItemDescription": description,
                        "product/ProductName": "Amazon Elastic Compute Cloud",
                        "product/capacitystatus": "Used",
                        "product/currentGeneration": "Yes",
                        "product/gpu": str(gpus),
                        "product/gpuMemory": "24 GiB" if ec2.family == "g5" else "48 GiB",
                        "product/instanceFamily": ec2.instance_family,
                        "product/instanceType": ec2.name,
                        "product/instanceTypeFamily": ec2.family,
                        "product/location": fleet.region.name,
                        "product/locationType": "AWS Region",
                        "product/memory": ec2.memory,
                        "product/operatingSystem": "Linux",
                        "product/operation": "RunInstances",
                        "product/physicalProcessor": ec2.processor,
                        "product/productFamily": "Compute Instance",
                        "product/region": fleet.region.code,
                        "product/regionCode": fleet.region.code,
                        "product/servicecode": "AmazonEC2",
                        "product/servicename": "Amazon Elastic Compute Cloud",
                        "product/sku": sku,
                        "product/tenancy": "Shared",
                        "product/usagetype": usage_type,
                        "product/vcpu": str(ec2.vcpu),
                        "pricing/RateCode": f"{sku}.JRTCKXETXF.6YS6EN2CT7",
                        "pricing/publicOnDemandCost": on_demand_cost,
                        "pricing/publicOnDemandRate": ec2.on_demand,
                        "pricing/term": "Spot" if spot else "OnDemand",
                        "pricing/unit": "Hrs",
                    },
                    billed=cost,
                    effective=cost,
                    owner=fleet.owner,
                    gpu_model=gpu_model,
                    gpu_hours=amount * gpus,
                    category="Dynamic" if spot else "Standard",
                )
    for month in months:
        for day in month.days:
            for bucket, owner, size_gb in LEGACY_BUCKETS:
                amount = quantize(size_gb * 24 / month.hours)
                cost = quantize(amount * S3_PRICE)
                add(
                    month,
                    day,
                    day + DAY,
                    {
                        "lineItem/LineItemType": "Usage",
                        "lineItem/ProductCode": "AmazonS3",
                        "lineItem/UsageType": "TimedStorage-ByteHrs",
                        "lineItem/Operation": "StandardStorage",
                        "lineItem/ResourceId": bucket,
                        "lineItem/UsageAmount": amount,
                        "lineItem/UnblendedRate": S3_PRICE,
                        "lineItem/UnblendedCost": cost,
                        "lineItem/BlendedRate": S3_PRICE,
                        "lineItem/BlendedCost": cost,
                        "lineItem/LineItemDescription": "$0.023 per GB - first 50 TB / month of storage used",
                        "product/ProductName": "Amazon Simple Storage Service",
                        "product/productFamily": "Storage",
                        "product/region": USE1.code,
                        "product/regionCode": USE1.code,
                        "product/servicecode": "AmazonS3",
                        "product/storageClass": "General Purpose",
                        "product/volumeType": "Standard",
                        "pricing/publicOnDemandCost": cost,
                        "pricing/publicOnDemandRate": S3_PRICE,
                        "pricing/term": "OnDemand",
                        "pricing/unit": "GB-Mo",
                    },
                    billed=cost,
                    effective=cost,
                    owner=owner,
                )
        tax = quantize(billed[month.label] * TAX_RATE, CENT)
        add(
            month,
            month.start,
            month.end,
            {
                "lineItem/LineItemType": "Tax",
                "lineItem/ProductCode": "AmazonEC2",
                "lineItem/UsageAmount": Decimal(1),
                "lineItem/UnblendedCost": tax,
                "lineItem/BlendedCost": tax,
                "lineItem/LineItemDescription": "Tax for product code AmazonEC2",
                "lineItem/TaxType": "Sales Tax",
                "product/ProductName": "Amazon Elastic Compute Cloud",
            },
            billed=tax,
            effective=tax,
        )
    delivered = []
    for month in months:
        rows = sorted(
            rows_by_month[month.label], key=lambda row: (row["lineItem/UsageStartDate"], row["identity/LineItemId"])
        )
        delivered.append(_write_legacy_period(out_dir / "legacy", month, rows, seed))
    return [Delivered(SOURCE, path, "AWS legacy CUR (gzip CSV), one billing period") for path in delivered]


def _legacy_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, Decimal):
        return format(value, "f")
    return str(value)


def _write_legacy_period(root: Path, month: BillingMonth, rows: list[dict[str, str]], seed: int) -> Path:
    span = f"{month.start:%Y%m%d}-{month.end:%Y%m%d}"
    assembly_id = stable_uuid(f"demo/{seed}/{LEGACY_REPORT}/{month.label}/assembly")
    period_dir = root / LEGACY_REPORT / span
    data_dir = period_dir / assembly_id
    data_dir.mkdir(parents=True, exist_ok=True)
    columns = legacy_columns(month)
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([name for name, _ in columns])
    writer.writerows([[row.get(name, "") for name, _ in columns] for row in rows])
    file_name = f"{LEGACY_REPORT}-1.csv.gz"
    (data_dir / file_name).write_bytes(gzip.compress(buffer.getvalue().encode("utf-8"), compresslevel=9, mtime=0))
    manifest = {
        "assemblyId": assembly_id,
        "account": LEGACY_PAYER.id,
        "columns": [
            {"category": name.split("/", 1)[0], "name": name.split("/", 1)[1], "type": kind} for name, kind in columns
        ],
        "charset": "UTF-8",
        "compression": "GZIP",
        "contentType": "text/csv",
        "reportId": code(f"demo/{LEGACY_REPORT}", 64, "0123456789abcdef"),
        "reportName": LEGACY_REPORT,
        "billingPeriod": {"start": f"{month.start:%Y%m%dT%H%M%S}.000Z", "end": f"{month.end:%Y%m%dT%H%M%S}.000Z"},
        "bucket": LEGACY_BUCKET,
        "reportKeys": [f"{LEGACY_PREFIX}/{LEGACY_REPORT}/{span}/{assembly_id}/{file_name}"],
        "additionalArtifactKeys": [],
    }
    (period_dir / f"{LEGACY_REPORT}-Manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return period_dir


# --- FOCUS 1.2 with AWS columns ---------------------------------------------------------------

FOCUS_EXPORT = "acme-labs-focus"
FOCUS_AWS_EXTRA = ("x_Discounts", "x_Operation", "x_ServiceCode")
FOCUS_AWS_COLUMNS = focus_samples.FOCUS_1_2_COLUMNS + FOCUS_AWS_EXTRA
_FOCUS_KINDS = focus_samples.FOCUS_COLUMNS


def _focus_arrow_type(name: str) -> pa.DataType:
    if name == "x_Discounts":
        return pa.map_(pa.string(), pa.float64())
    kind = _FOCUS_KINDS.get(name)
    if kind is focus_samples.Kind.DECIMAL:
        return pa.float64()
    if kind is focus_samples.Kind.DATETIME:
        return pa.timestamp("ms", tz="UTC")
    if kind is focus_samples.Kind.JSON:
        return pa.map_(pa.string(), pa.string())
    return pa.string()


FOCUS_AWS_SCHEMA = pa.schema([(name, _focus_arrow_type(name)) for name in FOCUS_AWS_COLUMNS])


def _focus_manifest_type(data_type: pa.DataType) -> str:
    if pa.types.is_map(data_type):
        return "map<string,double>" if pa.types.is_floating(data_type.item_type) else "map<string,string>"
    if pa.types.is_floating(data_type):
        return "double"
    if pa.types.is_timestamp(data_type):
        return "timestamp"
    return "string"


def focus_aws_rows(month: BillingMonth, seed: int, ledger: Ledger) -> list[dict[str, object]]:
    """The FOCUS sample's AWS rows as the Data Export writes them, each recorded in the ledger."""
    rows = []
    for source_row in focus_samples.aws_rows(month, seed):
        row: dict[str, object] = dict(source_row)
        row["SkuMeter"] = row.pop("x_UsageType", None)
        details = row.get("SkuPriceDetails")
        tags = row.get("Tags")
        instance_type = details.get("InstanceType") if isinstance(details, dict) else None
        gpu_model, _ = GPU_MODELS.get(str(instance_type), (None, 0))
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
                focus_samples.gpu_hours(source_row),
                row["PricingCategory"] if focus_samples.gpu_hours(source_row) else None,
            )
        )
        for name in FOCUS_AWS_COLUMNS:
            value = row.get(name)
            data_type = FOCUS_AWS_SCHEMA.field(name).type
            if name == "x_Discounts":
                row[name] = []
            elif pa.types.is_map(data_type):
                row[name] = None if value is None else sorted((key, str(item)) for key, item in value.items())
            elif pa.types.is_floating(data_type):
                row[name] = as_double(value)
        rows.append(row)
    return rows


def write_focus_aws(out_dir: Path, seed: int, months: Sequence[BillingMonth], ledger: Ledger) -> list[Delivered]:
    columns = [(field.name, _focus_manifest_type(field.type)) for field in FOCUS_AWS_SCHEMA]
    delivered = []
    for month in months:
        rows = focus_aws_rows(month, seed, ledger)
        delivered.append(
            _write_data_export(
                out_dir / "aws-focus" / month.label,
                FOCUS_EXPORT,
                month,
                rows,
                seed,
                schema=FOCUS_AWS_SCHEMA,
                columns=columns,
                table="FOCUS_1_2_AWS",
                payer_id=focus_samples.AWS_PAYER_ID,
            )
        )
    return [
        Delivered("focus", path, "AWS FOCUS_1_2_AWS Data Export (Parquet), one billing period") for path in delivered
    ]
