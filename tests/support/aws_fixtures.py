"""Hand-written AWS Cost and Usage Report deliveries, in the folder layouts AWS writes to S3.

The rows are written out here by hand in each flavour's own column spelling and types; `build()`
writes them as the deliveries under tests/fixtures/aws/ (gzip and Parquet are binary, so the
committed files are this module's output; `test_committed_fixtures_match_their_source` keeps them
in step). Regenerate with `.venv/bin/python -m tests.aws_fixtures`.

| delivery | flavour | payer | period(s) |
|---|---|---|---|
| cur2-parquet | CUR 2.0 Parquet, create-new mode (an older run the manifest does not list) | 111122223333 | 2026-09 |
| cur2-csv | CUR 2.0 CSV.gz, overwrite mode | 111122223333 | 2026-10 |
| legacy-csv | legacy CUR CSV.gz, two months with different columns, a stale assembly | 210987654321 | 2026-10/11 |
| legacy-athena | legacy CUR Athena/Parquet flavour with its status table | 210987654321 | 2026-12 |
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import shutil
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests.support import FIXTURES_ROOT

FIXTURES = FIXTURES_ROOT / "aws"

PAYER = "111122223333"
LINKED = "444455556666"
LEGACY_PAYER = "210987654321"
SP_ARN = "arn:aws:savingsplans::111122223333:savingsplan/3f5e2d1c-sp-gpu"
RI_ARN = "arn:aws:ec2:us-east-2:111122223333:reserved-instances/9a8b7c6d-ri-p4d"
EC2 = "Amazon Elastic Compute Cloud"

# --- CUR 2.0 Parquet, September 2026 ---------------------------------------------------------

CUR2_EXPORT = "gpu-export"
CUR2_OLD_RUN = "2026-10-02T01:12:40.101Z-0b6c3c9e"
CUR2_RUN = "2026-10-03T01:09:11.337Z-7d2f4a10"
CUR2_EXECUTION = "7d2f4a10-5c3e-4f7a-9b1d-2e8c6a4f0d33"

_CUR2_STRING = [
    "identity_line_item_id",
    "identity_time_interval",
    "bill_invoice_id",
    "bill_invoicing_entity",
    "bill_billing_entity",
    "bill_bill_type",
    "bill_payer_account_id",
    "bill_payer_account_name",
    "line_item_usage_account_id",
    "line_item_usage_account_name",
    "line_item_line_item_type",
    "line_item_product_code",
    "line_item_usage_type",
    "line_item_operation",
    "line_item_availability_zone",
    "line_item_resource_id",
    "line_item_currency_code",
    "line_item_line_item_description",
    "line_item_legal_entity",
    "pricing_term",
    "pricing_unit",
    "pricing_purchase_option",
    "product_instance_type",
    "product_product_family",
    "product_region_code",
    "product_servicecode",
    "product_sku",
    "product_location",
    "reservation_reservation_a_r_n",
    "savings_plan_savings_plan_a_r_n",
    "savings_plan_offering_type",
]
_CUR2_DOUBLE = [
    "line_item_usage_amount",
    "line_item_unblended_rate",
    "line_item_unblended_cost",
    "line_item_net_unblended_cost",
    "pricing_public_on_demand_cost",
    "pricing_public_on_demand_rate",
    "reservation_effective_cost",
    "reservation_amortized_upfront_cost_for_usage",
    "reservation_recurring_fee_for_usage",
    "reservation_unused_amortized_upfront_fee_for_billing_period",
    "reservation_unused_recurring_fee",
    "savings_plan_savings_plan_effective_cost",
    "savings_plan_savings_plan_rate",
    "savings_plan_total_commitment_to_date",
    "savings_plan_used_commitment",
    "split_line_item_split_cost",
]
_CUR2_TIME = [
    "bill_billing_period_start_date",
    "bill_billing_period_end_date",
    "line_item_usage_start_date",
    "line_item_usage_end_date",
]
_CUR2_MAPS = ["product", "resource_tags", "cost_category", "discount"]
CUR2_SCHEMA = pa.schema(
    [pa.field(name, pa.string()) for name in _CUR2_STRING]
    + [pa.field(name, pa.float64()) for name in _CUR2_DOUBLE]
    + [pa.field(name, pa.timestamp("ms")) for name in _CUR2_TIME]
    + [pa.field(name, pa.map_(pa.string(), pa.string())) for name in _CUR2_MAPS]
)


def _cur2(**values) -> dict:
    sep = {
        "bill_invoicing_entity": "Amazon Web Services, Inc.",
        "bill_billing_entity": "AWS",
        "bill_bill_type": "Anniversary",
        "bill_payer_account_id": PAYER,
        "bill_payer_account_name": "research-payer",
        "bill_billing_period_start_date": datetime(2026, 9, 1),
        "bill_billing_period_end_date": datetime(2026, 10, 1),
        "line_item_usage_account_id": LINKED,
        "line_item_usage_account_name": "ml-training",
        "line_item_currency_code": "USD",
        "line_item_legal_entity": "Amazon Web Services, Inc.",
        "line_item_product_code": "AmazonEC2",
    }
    return sep | values


def _ec2_product(instance_type: str | None, **extra: str) -> list[tuple[str, str]]:
    attributes = {"product_name": EC2, "region": "us-east-1", "operating_system": "Linux"} | extra
    if instance_type:
        attributes["instance_type_family"] = instance_type.split(".")[0]
    return list(attributes.items())


CUR2_PARQUET_PART_1 = [
    _cur2(  # 10 h of an 8×H100 on demand in us-east-1 (no region prefix)
        identity_line_item_id="cur2-p5-ondemand",
        line_item_line_item_type="Usage",
        line_item_usage_start_date=datetime(2026, 9, 1),
        line_item_usage_end_date=datetime(2026, 9, 1, 10),
        line_item_usage_type="BoxUsage:p5.48xlarge",
        line_item_operation="RunInstances",
        line_item_availability_zone="us-east-1a",
        line_item_resource_id="i-0p5ondemand",
        line_item_usage_amount=10.0,
        line_item_unblended_rate=98.32,
        line_item_unblended_cost=983.2,
        line_item_line_item_description="$98.32 per On Demand Linux p5.48xlarge Instance Hour",
        pricing_term="OnDemand",
        pricing_unit="Hrs",
        pricing_public_on_demand_cost=983.2,
        pricing_public_on_demand_rate=98.32,
        product_instance_type="p5.48xlarge",
        product_product_family="Compute Instance",
        product_region_code="us-east-1",
        product_servicecode="AmazonEC2",
        product_sku="P5SKU000000001",
        product_location="US East (N. Virginia)",
        product=_ec2_product("p5.48xlarge", gpu="8", vcpu="192"),
        resource_tags=[("user_team", "research"), ("user_project", "llm")],
        cost_category=[("business_unit", "AI")],
        discount=[],
    ),
    _cur2(  # 5 h of an 8×A100 on demand in us-east-2
        identity_line_item_id="cur2-p4d-ondemand",
        line_item_line_item_type="Usage",
        line_item_usage_start_date=datetime(2026, 9, 2),
        line_item_usage_end_date=datetime(2026, 9, 2, 5),
        line_item_usage_type="USE2-BoxUsage:p4d.24xlarge",
        line_item_operation="RunInstances",
        line_item_availability_zone="us-east-2b",
        line_item_resource_id="i-0p4dondemand",
        line_item_usage_amount=5.0,
        line_item_unblended_rate=32.7726,
        line_item_unblended_cost=163.863,
        line_item_line_item_description="$32.7726 per On Demand Linux p4d.24xlarge Instance Hour",
        pricing_term="OnDemand",
        pricing_unit="Hrs",
        pricing_public_on_demand_cost=163.863,
        pricing_public_on_demand_rate=32.7726,
        product_instance_type="p4d.24xlarge",
        product_product_family="Compute Instance",
        product_region_code="us-east-2",
        product_servicecode="AmazonEC2",
        product_sku="P4DSKU00000001",
        product_location="US East (Ohio)",
        product=_ec2_product("p4d.24xlarge", region="us-east-2"),
        resource_tags=[("user_team", "vision")],
        cost_category=None,
        discount=None,
    ),
    _cur2(  # 4 h of Spot p5: Spot lines come with empty product attributes
        identity_line_item_id="cur2-p5-spot",
        line_item_line_item_type="Usage",
        line_item_usage_start_date=datetime(2026, 9, 3),
        line_item_usage_end_date=datetime(2026, 9, 3, 4),
        line_item_usage_type="USE2-SpotUsage:p5.48xlarge",
        line_item_operation="RunInstances:SV001",
        line_item_availability_zone="us-east-2a",
        line_item_resource_id="i-0p5spot",
        line_item_usage_amount=4.0,
        line_item_unblended_rate=12.5,
        line_item_unblended_cost=50.0,
        line_item_line_item_description="p5.48xlarge Linux/UNIX Spot Instance-hour in US East (Ohio) in VPC Zone #1",
        pricing_unit="Hrs",
        pricing_public_on_demand_cost=393.28,
        pricing_public_on_demand_rate=98.32,
        product=[],
        resource_tags=[("user_team", "research")],
        cost_category=None,
        discount=None,
    ),
    _cur2(  # 6 h of p5 covered by a Compute Savings Plan; unblended cost is the on-demand equivalent
        identity_line_item_id="cur2-p5-sp-covered",
        line_item_line_item_type="SavingsPlanCoveredUsage",
        line_item_usage_start_date=datetime(2026, 9, 4),
        line_item_usage_end_date=datetime(2026, 9, 4, 6),
        line_item_usage_type="BoxUsage:p5.48xlarge",
        line_item_operation="RunInstances",
        line_item_availability_zone="us-east-1a",
        line_item_resource_id="i-0p5saving",
        line_item_usage_amount=6.0,
        line_item_unblended_rate=98.32,
        line_item_unblended_cost=589.92,
        line_item_line_item_description="$98.32 per On Demand Linux p5.48xlarge Instance Hour",
        pricing_term="OnDemand",
        pricing_unit="Hrs",
        pricing_public_on_demand_cost=589.92,
        pricing_public_on_demand_rate=98.32,
        product_instance_type="p5.48xlarge",
        product_region_code="us-east-1",
        product_servicecode="AmazonEC2",
        product=_ec2_product("p5.48xlarge"),
        savings_plan_savings_plan_a_r_n=SP_ARN,
        savings_plan_savings_plan_rate=55.04,
        savings_plan_savings_plan_effective_cost=330.24,
        resource_tags=[("user_team", "research"), ("user_project", "llm")],
        cost_category=None,
        discount=None,
    ),
    _cur2(  # the negation of that on-demand equivalent (AWS repeats the usage amount on it)
        identity_line_item_id="cur2-p5-sp-negation",
        line_item_line_item_type="SavingsPlanNegation",
        line_item_usage_start_date=datetime(2026, 9, 4),
        line_item_usage_end_date=datetime(2026, 9, 4, 6),
        line_item_usage_type="BoxUsage:p5.48xlarge",
        line_item_operation="RunInstances",
        line_item_resource_id="i-0p5saving",
        line_item_usage_amount=6.0,
        line_item_unblended_rate=-98.32,
        line_item_unblended_cost=-589.92,
        line_item_line_item_description="SavingsPlanNegation used by AccountId : 444455556666 and UsageSku : P5SKU",
        product_instance_type="p5.48xlarge",
        product_servicecode="AmazonEC2",
        product=_ec2_product("p5.48xlarge"),
        savings_plan_savings_plan_a_r_n=SP_ARN,
        resource_tags=[("user_team", "research"), ("user_project", "llm")],
        cost_category=None,
        discount=None,
    ),
    _cur2(  # the Savings Plan's No Upfront fee for the period: $400 committed, $330.24 used
        identity_line_item_id="cur2-sp-recurring-fee",
        line_item_line_item_type="SavingsPlanRecurringFee",
        line_item_product_code="ComputeSavingsPlans",
        line_item_usage_start_date=datetime(2026, 9, 1),
        line_item_usage_end_date=datetime(2026, 10, 1),
        line_item_usage_type="ComputeSP:1yrNoUpfront",
        line_item_operation="",
        line_item_usage_amount=720.0,
        line_item_unblended_cost=400.0,
        line_item_line_item_description="1 year No Upfront Compute Savings Plan",
        savings_plan_savings_plan_a_r_n=SP_ARN,
        savings_plan_offering_type="ComputeSavingsPlans",
        savings_plan_total_commitment_to_date=400.0,
        savings_plan_used_commitment=330.24,
        product=[("product_name", "Savings Plans for AWS Compute usage")],
        resource_tags=None,
        cost_category=None,
        discount=None,
    ),
]
CUR2_PARQUET_PART_2 = [
    _cur2(  # 24 h of p4d covered by a Partial Upfront Reserved Instance
        identity_line_item_id="cur2-p4d-ri-covered",
        line_item_line_item_type="DiscountedUsage",
        line_item_usage_start_date=datetime(2026, 9, 5),
        line_item_usage_end_date=datetime(2026, 9, 6),
        line_item_usage_type="USE2-BoxUsage:p4d.24xlarge",
        line_item_operation="RunInstances",
        line_item_availability_zone="us-east-2b",
        line_item_resource_id="i-0p4dreserved",
        line_item_usage_amount=24.0,
        line_item_unblended_rate=0.0,
        line_item_unblended_cost=0.0,
        line_item_line_item_description="USD 19.22 hourly fee per Linux/UNIX (Amazon VPC), p4d.24xlarge instance",
        pricing_term="Reserved",
        pricing_unit="Hrs",
        pricing_purchase_option="Partial Upfront",
        pricing_public_on_demand_cost=786.5424,
        pricing_public_on_demand_rate=32.7726,
        product_instance_type="p4d.24xlarge",
        product_region_code="us-east-2",
        product_servicecode="AmazonEC2",
        product=_ec2_product("p4d.24xlarge", region="us-east-2"),
        reservation_reservation_a_r_n=RI_ARN,
        reservation_effective_cost=464.28,
        reservation_amortized_upfront_cost_for_usage=3.0,
        reservation_recurring_fee_for_usage=461.28,
        resource_tags=[("user_team", "vision")],
        cost_category=None,
        discount=None,
    ),
    _cur2(  # the RI's monthly fee: 720 h × 19.22; 696 of the 720 reserved hours went unused
        identity_line_item_id="cur2-p4d-ri-fee",
        line_item_line_item_type="RIFee",
        line_item_usage_start_date=datetime(2026, 9, 1),
        line_item_usage_end_date=datetime(2026, 10, 1),
        line_item_usage_type="USE2-HeavyUsage:p4d.24xlarge",
        line_item_operation="RunInstances",
        line_item_usage_amount=720.0,
        line_item_unblended_rate=19.22,
        line_item_unblended_cost=13838.4,
        line_item_line_item_description="USD 19.22 hourly fee per Linux/UNIX (Amazon VPC), p4d.24xlarge instance",
        pricing_term="Reserved",
        pricing_unit="Hrs",
        pricing_purchase_option="Partial Upfront",
        product_instance_type="p4d.24xlarge",
        product_region_code="us-east-2",
        product_servicecode="AmazonEC2",
        product=_ec2_product("p4d.24xlarge", region="us-east-2"),
        reservation_reservation_a_r_n=RI_ARN,
        reservation_unused_amortized_upfront_fee_for_billing_period=87.0,
        reservation_unused_recurring_fee=13377.12,
        resource_tags=None,
        cost_category=None,
        discount=None,
    ),
    _cur2(  # the RI's upfront payment, bought this month (amortized into the lines above)
        identity_line_item_id="cur2-p4d-ri-upfront",
        line_item_line_item_type="Fee",
        bill_bill_type="Purchase",
        line_item_usage_start_date=datetime(2026, 9, 1),
        line_item_usage_end_date=datetime(2026, 9, 1),
        line_item_usage_type="USE2-HeavyUsage:p4d.24xlarge",
        line_item_operation="RunInstances",
        line_item_usage_amount=1.0,
        line_item_unblended_cost=1080.0,
        line_item_line_item_description="Sign up charge for subscription: 9a8b7c6d, planId: 2191",
        product_instance_type="p4d.24xlarge",
        product_servicecode="AmazonEC2",
        product=_ec2_product("p4d.24xlarge", region="us-east-2"),
        reservation_reservation_a_r_n=RI_ARN,
        resource_tags=None,
        cost_category=None,
        discount=None,
    ),
    _cur2(  # 24 h of a non-GPU instance
        identity_line_item_id="cur2-m5-ondemand",
        line_item_line_item_type="Usage",
        line_item_usage_start_date=datetime(2026, 9, 6),
        line_item_usage_end_date=datetime(2026, 9, 7),
        line_item_usage_type="BoxUsage:m5.large",
        line_item_operation="RunInstances",
        line_item_usage_amount=24.0,
        line_item_unblended_rate=0.096,
        line_item_unblended_cost=2.304,
        line_item_line_item_description="$0.096 per On Demand Linux m5.large Instance Hour",
        pricing_term="OnDemand",
        pricing_unit="Hrs",
        pricing_public_on_demand_cost=2.304,
        pricing_public_on_demand_rate=0.096,
        product_instance_type="m5.large",
        product_servicecode="AmazonEC2",
        product=_ec2_product("m5.large"),
        resource_tags=[("user_team", "platform")],
        cost_category=None,
        discount=None,
    ),
    _cur2(
        identity_line_item_id="cur2-tax",
        line_item_line_item_type="Tax",
        line_item_usage_start_date=datetime(2026, 9, 1),
        line_item_usage_end_date=datetime(2026, 10, 1),
        line_item_usage_amount=1.0,
        line_item_unblended_cost=100.0,
        line_item_line_item_description="Tax for product code AmazonEC2",
        product=[("product_name", EC2)],
        resource_tags=None,
        cost_category=None,
        discount=None,
    ),
]
CUR2_PARQUET_OLD_RUN = [  # an earlier refresh of the same month: superseded, not in the manifest
    _cur2(
        identity_line_item_id="cur2-p5-ondemand",
        line_item_line_item_type="Usage",
        line_item_usage_start_date=datetime(2026, 9, 1),
        line_item_usage_end_date=datetime(2026, 9, 1, 9),
        line_item_usage_type="BoxUsage:p5.48xlarge",
        line_item_usage_amount=9.0,
        line_item_unblended_cost=884.88,
        product_instance_type="p5.48xlarge",
        product=None,
        resource_tags=None,
        cost_category=None,
        discount=None,
    )
]

# --- CUR 2.0 CSV.gz, October 2026: MAP columns are JSON text ----------------------------------

CUR2_CSV_HEADER = [
    "bill_bill_type",
    "bill_billing_entity",
    "bill_billing_period_end_date",
    "bill_billing_period_start_date",
    "bill_invoice_id",
    "bill_invoicing_entity",
    "bill_payer_account_id",
    "bill_payer_account_name",
    "cost_category",
    "discount",
    "identity_line_item_id",
    "identity_time_interval",
    "line_item_currency_code",
    "line_item_line_item_description",
    "line_item_line_item_type",
    "line_item_product_code",
    "line_item_unblended_cost",
    "line_item_unblended_rate",
    "line_item_usage_account_id",
    "line_item_usage_amount",
    "line_item_usage_end_date",
    "line_item_usage_start_date",
    "line_item_usage_type",
    "pricing_public_on_demand_cost",
    "product",
    "product_instance_type",
    "product_servicecode",
    "resource_tags",
]
CUR2_CSV_ROWS = [
    {
        "line_item_line_item_type": "Usage",
        "line_item_usage_type": "SpotUsage:p5.48xlarge",
        "line_item_usage_amount": "2.0",
        "line_item_unblended_rate": "12.5",
        "line_item_unblended_cost": "25.0",
        "pricing_public_on_demand_cost": "196.64",
        "line_item_line_item_description": (
            "p5.48xlarge Linux/UNIX Spot Instance-hour in US East (N. Virginia) in VPC Zone #4"
        ),
        "product": "{}",
        "resource_tags": '{"user_team":"research","user_project":"llm \\"v2\\""}',
        "cost_category": '{"business_unit":"AI"}',
        "discount": "",
        "identity_line_item_id": "csv-p5-spot",
        "line_item_usage_start_date": "2026-10-01T00:00:00.000Z",
        "line_item_usage_end_date": "2026-10-01T02:00:00.000Z",
    },
    {
        "line_item_line_item_type": "Credit",
        "line_item_usage_type": "",
        "line_item_usage_amount": "0.0",
        "line_item_unblended_rate": "",
        "line_item_unblended_cost": "-50.0",
        "pricing_public_on_demand_cost": "",
        "line_item_line_item_description": "AWS Credits for research",
        "product": '{"product_name":"Amazon Elastic Compute Cloud"}',
        "resource_tags": "",
        "cost_category": "",
        "discount": "",
        "identity_line_item_id": "csv-credit",
        "line_item_usage_start_date": "2026-10-01T00:00:00.000Z",
        "line_item_usage_end_date": "2026-11-01T00:00:00.000Z",
    },
]
CUR2_CSV_COMMON = {
    "bill_bill_type": "Anniversary",
    "bill_billing_entity": "AWS",
    "bill_billing_period_end_date": "2026-11-01T00:00:00.000Z",
    "bill_billing_period_start_date": "2026-10-01T00:00:00.000Z",
    "bill_invoice_id": "",
    "bill_invoicing_entity": "Amazon Web Services, Inc.",
    "bill_payer_account_id": PAYER,
    "bill_payer_account_name": "research-payer",
    "identity_time_interval": "2026-10-01T00:00:00Z/2026-11-01T00:00:00Z",
    "line_item_currency_code": "USD",
    "line_item_product_code": "AmazonEC2",
    "line_item_usage_account_id": LINKED,
    "product_instance_type": "",
    "product_servicecode": "AmazonEC2",
}

# --- Legacy CUR CSV.gz, October and November 2026 ---------------------------------------------

LEGACY_REPORT = "gpu-report"
LEGACY_OCT_ASSEMBLY = "5c1f7e2a-0d3b-4e8f-9a6c-2b7d1e4f8a90"
LEGACY_OCT_STALE_ASSEMBLY = "0a9e8d7c-6b5a-4f3e-8d2c-1b0a9f8e7d6c"
LEGACY_NOV_ASSEMBLY = "e4d3c2b1-a0f9-4e8d-b7c6-a5f4e3d2c1b0"

LEGACY_OCT_HEADER = [
    "identity/LineItemId",
    "identity/TimeInterval",
    "bill/InvoiceId",
    "bill/InvoicingEntity",
    "bill/BillingEntity",
    "bill/BillType",
    "bill/PayerAccountId",
    "bill/BillingPeriodStartDate",
    "bill/BillingPeriodEndDate",
    "lineItem/UsageAccountId",
    "lineItem/LineItemType",
    "lineItem/UsageStartDate",
    "lineItem/UsageEndDate",
    "lineItem/ProductCode",
    "lineItem/UsageType",
    "lineItem/Operation",
    "lineItem/AvailabilityZone",
    "lineItem/ResourceId",
    "lineItem/UsageAmount",
    "lineItem/CurrencyCode",
    "lineItem/UnblendedRate",
    "lineItem/UnblendedCost",
    "lineItem/LineItemDescription",
    "product/ProductName",
    "product/gpu",
    "product/instanceType",
    "product/region",
    "product/regionCode",
    "product/servicecode",
    "product/vcpu",
    "pricing/publicOnDemandCost",
    "pricing/publicOnDemandRate",
    "pricing/term",
    "pricing/unit",
    "reservation/ReservationARN",
    "reservation/EffectiveCost",
    "savingsPlan/SavingsPlanARN",
    "savingsPlan/SavingsPlanEffectiveCost",
    "resourceTags/user:Team",
]
_LEGACY_OCT = {
    "identity/TimeInterval": "2026-10-01T00:00:00Z/2026-10-02T00:00:00Z",
    "bill/InvoicingEntity": "Amazon Web Services, Inc.",
    "bill/BillingEntity": "AWS",
    "bill/BillType": "Anniversary",
    "bill/PayerAccountId": LEGACY_PAYER,
    "bill/BillingPeriodStartDate": "2026-10-01T00:00:00Z",
    "bill/BillingPeriodEndDate": "2026-11-01T00:00:00Z",
    "lineItem/UsageAccountId": LEGACY_PAYER,
    "lineItem/CurrencyCode": "USD",
    "lineItem/ProductCode": "AmazonEC2",
}
LEGACY_OCT_ROWS = [
    _LEGACY_OCT
    | {  # 2 h of p5 on demand
        "identity/LineItemId": "legacy-oct-p5",
        "lineItem/LineItemType": "Usage",
        "lineItem/UsageStartDate": "2026-10-01T00:00:00Z",
        "lineItem/UsageEndDate": "2026-10-01T02:00:00Z",
        "lineItem/UsageType": "BoxUsage:p5.48xlarge",
        "lineItem/Operation": "RunInstances",
        "lineItem/AvailabilityZone": "us-east-1c",
        "lineItem/ResourceId": "i-0legacyp5",
        "lineItem/UsageAmount": "2.0",
        "lineItem/UnblendedRate": "98.32",
        "lineItem/UnblendedCost": "196.64",
        "lineItem/LineItemDescription": "$98.32 per On Demand Linux p5.48xlarge Instance Hour",
        "product/ProductName": EC2,
        "product/gpu": "8",
        "product/instanceType": "p5.48xlarge",
        "product/region": "us-east-1",
        "product/regionCode": "us-east-1",
        "product/servicecode": "AmazonEC2",
        "product/vcpu": "192",
        "pricing/publicOnDemandCost": "196.64",
        "pricing/publicOnDemandRate": "98.32",
        "pricing/term": "OnDemand",
        "pricing/unit": "Hrs",
        "resourceTags/user:Team": "research",
    },
    _LEGACY_OCT
    | {  # 3 h of Spot p4d with empty product attributes
        "identity/LineItemId": "legacy-oct-p4d-spot",
        "lineItem/LineItemType": "Usage",
        "lineItem/UsageStartDate": "2026-10-02T00:00:00Z",
        "lineItem/UsageEndDate": "2026-10-02T03:00:00Z",
        "lineItem/UsageType": "USW2-SpotUsage:p4d.24xlarge",
        "lineItem/Operation": "RunInstances:SV002",
        "lineItem/AvailabilityZone": "us-west-2b",
        "lineItem/ResourceId": "i-0legacyspot",
        "lineItem/UsageAmount": "3.0",
        "lineItem/UnblendedRate": "9.8318",
        "lineItem/UnblendedCost": "29.4954",
        "lineItem/LineItemDescription": "p4d.24xlarge Linux/UNIX Spot Instance-hour in US West (Oregon) in VPC Zone #2",
        "pricing/publicOnDemandCost": "98.3178",
        "pricing/publicOnDemandRate": "32.7726",
        "resourceTags/user:Team": "vision",
    },
    _LEGACY_OCT
    | {
        "identity/LineItemId": "legacy-oct-tax",
        "lineItem/LineItemType": "Tax",
        "lineItem/UsageStartDate": "2026-10-01T00:00:00Z",
        "lineItem/UsageEndDate": "2026-11-01T00:00:00Z",
        "lineItem/UsageAmount": "1.0",
        "lineItem/UnblendedCost": "22.61",
        "lineItem/LineItemDescription": "Tax for product code AmazonEC2",
        "product/ProductName": EC2,
        "pricing/publicOnDemandCost": "0.0",
    },
]
LEGACY_OCT_STALE_ROWS = [row | {"lineItem/UnblendedCost": "999.99"} for row in LEGACY_OCT_ROWS[:1]]

LEGACY_NOV_HEADER = [  # a month later the report has a net cost column and another tag, no Savings Plan columns
    "identity/LineItemId",
    "identity/TimeInterval",
    "bill/BillType",
    "bill/PayerAccountId",
    "bill/BillingPeriodStartDate",
    "bill/BillingPeriodEndDate",
    "lineItem/UsageAccountId",
    "lineItem/LineItemType",
    "lineItem/UsageStartDate",
    "lineItem/UsageEndDate",
    "lineItem/ProductCode",
    "lineItem/UsageType",
    "lineItem/UsageAmount",
    "lineItem/CurrencyCode",
    "lineItem/UnblendedCost",
    "lineItem/NetUnblendedCost",
    "lineItem/LineItemDescription",
    "product/ProductName",
    "product/instanceType",
    "pricing/publicOnDemandCost",
    "pricing/unit",
    "resourceTags/user:Project",
    "resourceTags/user:Team",
    "resourceTags/user:team",
]
_LEGACY_NOV = {
    "identity/TimeInterval": "2026-11-01T00:00:00Z/2026-11-02T00:00:00Z",
    "bill/BillType": "Anniversary",
    "bill/PayerAccountId": LEGACY_PAYER,
    "bill/BillingPeriodStartDate": "2026-11-01T00:00:00Z",
    "bill/BillingPeriodEndDate": "2026-12-01T00:00:00Z",
    "lineItem/UsageAccountId": LEGACY_PAYER,
    "lineItem/CurrencyCode": "USD",
    "lineItem/ProductCode": "AmazonEC2",
}
LEGACY_NOV_ROWS = [
    _LEGACY_NOV
    | {  # 1 h of p4d with a 10% private rate
        "identity/LineItemId": "legacy-nov-p4d",
        "lineItem/LineItemType": "Usage",
        "lineItem/UsageStartDate": "2026-11-01T00:00:00Z",
        "lineItem/UsageEndDate": "2026-11-01T01:00:00Z",
        "lineItem/UsageType": "USE2-BoxUsage:p4d.24xlarge",
        "lineItem/UsageAmount": "1.0",
        "lineItem/UnblendedCost": "32.7726",
        "lineItem/NetUnblendedCost": "29.49534",
        "lineItem/LineItemDescription": "$32.7726 per On Demand Linux p4d.24xlarge Instance Hour",
        "product/ProductName": EC2,
        "product/instanceType": "p4d.24xlarge",
        "pricing/publicOnDemandCost": "32.7726",
        "pricing/unit": "Hrs",
        "resourceTags/user:Project": "cv",
        "resourceTags/user:Team": "",
        "resourceTags/user:team": "vision",
    },
    _LEGACY_NOV
    | {
        "identity/LineItemId": "legacy-nov-tax",
        "lineItem/LineItemType": "Tax",
        "lineItem/UsageStartDate": "2026-11-01T00:00:00Z",
        "lineItem/UsageEndDate": "2026-12-01T00:00:00Z",
        "lineItem/UsageAmount": "1.0",
        "lineItem/UnblendedCost": "3.27",
        "lineItem/NetUnblendedCost": "2.95",
        "lineItem/LineItemDescription": "Tax for product code AmazonEC2",
    },
]

# --- Legacy CUR, Athena/Parquet flavour, December 2026 ----------------------------------------

ATHENA_SCHEMA = pa.schema(
    [
        ("identity_line_item_id", pa.string()),
        ("bill_payer_account_id", pa.string()),
        ("bill_billing_period_start_date", pa.timestamp("ms")),
        ("bill_billing_period_end_date", pa.timestamp("ms")),
        ("line_item_usage_account_id", pa.string()),
        ("line_item_line_item_type", pa.string()),
        ("line_item_usage_start_date", pa.timestamp("ms")),
        ("line_item_usage_end_date", pa.timestamp("ms")),
        ("line_item_product_code", pa.string()),
        ("line_item_usage_type", pa.string()),
        ("line_item_usage_amount", pa.float64()),
        ("line_item_currency_code", pa.string()),
        ("line_item_unblended_cost", pa.float64()),
        ("line_item_line_item_description", pa.string()),
        ("product_product_name", pa.string()),
        ("product_instance_type", pa.string()),
        ("product_region", pa.string()),
        ("pricing_public_on_demand_cost", pa.float64()),
        ("pricing_unit", pa.string()),
        ("resource_tags_user_team", pa.string()),
        ("resource_tags_user_project", pa.string()),
        ("cost_category_business_unit", pa.string()),
        ("year", pa.string()),
        ("month", pa.string()),
    ]
)
_DEC = {
    "bill_payer_account_id": LEGACY_PAYER,
    "bill_billing_period_start_date": datetime(2026, 12, 1),
    "bill_billing_period_end_date": datetime(2027, 1, 1),
    "line_item_usage_account_id": LEGACY_PAYER,
    "line_item_currency_code": "USD",
    "line_item_product_code": "AmazonEC2",
    "year": "2026",
    "month": "12",
}
ATHENA_ROWS = [
    _DEC
    | {  # 1.5 h of g5.12xlarge (4×A10G)
        "identity_line_item_id": "athena-g5",
        "line_item_line_item_type": "Usage",
        "line_item_usage_start_date": datetime(2026, 12, 1),
        "line_item_usage_end_date": datetime(2026, 12, 1, 2),
        "line_item_usage_type": "EUC1-BoxUsage:g5.12xlarge",
        "line_item_usage_amount": 1.5,
        "line_item_unblended_cost": 8.496,
        "line_item_line_item_description": "$5.664 per On Demand Linux g5.12xlarge Instance Hour",
        "product_product_name": EC2,
        "product_instance_type": "g5.12xlarge",
        "product_region": "eu-central-1",
        "pricing_public_on_demand_cost": 8.496,
        "pricing_unit": "Hrs",
        "resource_tags_user_team": "inference",
        "resource_tags_user_project": None,
        "cost_category_business_unit": "AI",
    },
    _DEC
    | {
        "identity_line_item_id": "athena-s3",
        "line_item_line_item_type": "Usage",
        "line_item_usage_start_date": datetime(2026, 12, 2),
        "line_item_usage_end_date": datetime(2026, 12, 3),
        "line_item_product_code": "AmazonS3",
        "line_item_usage_type": "EUC1-TimedStorage-ByteHrs",
        "line_item_usage_amount": 0.1,
        "line_item_unblended_cost": 0.0023,
        "line_item_line_item_description": "$0.0245 per GB - first 50 TB / month of storage used",
        "product_product_name": "Amazon Simple Storage Service",
        "product_instance_type": None,
        "product_region": "eu-central-1",
        "pricing_public_on_demand_cost": 0.0023,
        "pricing_unit": "GB-Mo",
        "resource_tags_user_team": None,
        "resource_tags_user_project": None,
        "cost_category_business_unit": None,
    },
]


# --- writers ---------------------------------------------------------------------------------


def csv_text(header: list[str], rows: list[dict[str, str]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, lineterminator="\n")
    writer.writeheader()
    writer.writerows([{column: row.get(column, "") for column in header} for row in rows])
    return buffer.getvalue().encode()


def write_gzip(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(data, mtime=0))
    return path


def write_json(path: Path, content: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")
    return path


def write_parquet(path: Path, rows: list[dict], schema: pa.Schema) -> Path:
    unknown = {key for row in rows for key in row} - set(schema.names)
    assert not unknown, f"columns missing from the schema: {unknown}"
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = {field.name: [row.get(field.name) for row in rows] for field in schema}
    pq.write_table(pa.table(columns, schema=schema), path, compression="snappy")
    return path


def cur2_manifest(export: str, period: str, execution: str, data_files: list[str]) -> dict:
    return {
        "executionId": execution,
        "exportArn": f"arn:aws:bcm-data-exports:us-east-1:{PAYER}:export/{export}-0b1c2d3e",
        "columns": [{"name": name, "type": "string"} for name in CUR2_SCHEMA.names],
        "dataFiles": data_files,
        "additionalOutputFiles": [],
        "billingPeriod": {"start": f"{period}-01T00:00:00.000Z"},
    }


def legacy_manifest(period_folder: str, assembly: str, report_keys: list[str]) -> dict:
    start, end = period_folder.split("-")
    return {
        "assemblyId": assembly,
        "account": LEGACY_PAYER,
        "columns": [{"category": "lineItem", "name": "UsageType", "type": "String"}],
        "charset": "UTF-8",
        "compression": "GZIP",
        "contentType": "text/csv",
        "reportId": "8f0e7d6c5b4a39281706f5e4d3c2b1a0",
        "reportName": LEGACY_REPORT,
        "billingPeriod": {"start": f"{start}T000000.000Z", "end": f"{end}T000000.000Z"},
        "bucket": "finops-cur",
        "reportKeys": report_keys,
        "additionalArtifactKeys": [],
    }


def build(root: Path = FIXTURES) -> Path:
    """Write every fixture delivery under `root` (replacing what is there)."""
    for name in ("cur2-parquet", "cur2-csv", "legacy-csv", "legacy-athena"):
        shutil.rmtree(root / name, ignore_errors=True)
    _build_cur2_parquet(root / "cur2-parquet")
    _build_cur2_csv(root / "cur2-csv")
    _build_legacy_csv(root / "legacy-csv")
    _build_legacy_athena(root / "legacy-athena")
    return root


def _build_cur2_parquet(root: Path) -> None:
    export = root / "exports" / CUR2_EXPORT
    data = export / "data" / "BILLING_PERIOD=2026-09"
    write_parquet(data / CUR2_OLD_RUN / f"{CUR2_EXPORT}-00001.snappy.parquet", CUR2_PARQUET_OLD_RUN, CUR2_SCHEMA)
    parts = [CUR2_PARQUET_PART_1, CUR2_PARQUET_PART_2]
    files = []
    for number, rows in enumerate(parts, start=1):
        relative = f"data/BILLING_PERIOD=2026-09/{CUR2_RUN}/{CUR2_EXPORT}-0000{number}.snappy.parquet"
        write_parquet(export / relative, rows, CUR2_SCHEMA)
        files.append(f"s3://finops-exports/exports/{CUR2_EXPORT}/{relative}")
    manifest = cur2_manifest(CUR2_EXPORT, "2026-09", CUR2_EXECUTION, files)
    write_json(export / "metadata" / "BILLING_PERIOD=2026-09" / f"{CUR2_EXPORT}-Manifest.json", manifest)


def _build_cur2_csv(root: Path) -> None:
    export = root / "exports" / "csv-export"
    relative = "data/BILLING_PERIOD=2026-10/csv-export-00001.csv.gz"
    rows = [CUR2_CSV_COMMON | row for row in CUR2_CSV_ROWS]
    write_gzip(export / relative, csv_text(CUR2_CSV_HEADER, rows))
    manifest = cur2_manifest(
        "csv-export",
        "2026-10",
        "5e0c9a12-3b4d-4c6e-8f70-a1b2c3d4e5f6",
        [f"s3://finops-exports/exports/csv-export/{relative}"],
    )
    write_json(export / "metadata" / "BILLING_PERIOD=2026-10" / "csv-export-Manifest.json", manifest)


def _build_legacy_csv(root: Path) -> None:
    report = root / "cur" / LEGACY_REPORT
    months = [
        ("20261001-20261101", LEGACY_OCT_ASSEMBLY, LEGACY_OCT_HEADER, LEGACY_OCT_ROWS),
        ("20261101-20261201", LEGACY_NOV_ASSEMBLY, LEGACY_NOV_HEADER, LEGACY_NOV_ROWS),
    ]
    for period, assembly, header, rows in months:
        key = f"cur/{LEGACY_REPORT}/{period}/{assembly}/{LEGACY_REPORT}-1.csv.gz"
        write_gzip(root / key, csv_text(header, rows))
        manifest = legacy_manifest(period, assembly, [key])
        write_json(report / period / f"{LEGACY_REPORT}-Manifest.json", manifest)
        write_json(report / period / assembly / f"{LEGACY_REPORT}-Manifest.json", manifest)
    # October was delivered once before: its assembly folder keeps that run's file and manifest copy.
    period = "20261001-20261101"
    stale_key = f"cur/{LEGACY_REPORT}/{period}/{LEGACY_OCT_STALE_ASSEMBLY}/{LEGACY_REPORT}-1.csv.gz"
    write_gzip(root / stale_key, csv_text(LEGACY_OCT_HEADER, LEGACY_OCT_STALE_ROWS))
    write_json(
        report / period / LEGACY_OCT_STALE_ASSEMBLY / f"{LEGACY_REPORT}-Manifest.json",
        legacy_manifest(period, LEGACY_OCT_STALE_ASSEMBLY, [stale_key]),
    )


def _build_legacy_athena(root: Path) -> None:
    report = root / "cur" / LEGACY_REPORT / LEGACY_REPORT
    data = report / "year=2026" / "month=12" / f"{LEGACY_REPORT}-00001.snappy.parquet"
    write_parquet(data, ATHENA_ROWS, ATHENA_SCHEMA)
    status = pa.schema([("status", pa.string())])
    write_parquet(
        root / "cur" / LEGACY_REPORT / "cost_and_usage_data_status" / "cost_and_usage_data_status.parquet",
        [{"status": "READY"}],
        status,
    )


if __name__ == "__main__":
    print(f"wrote {build()}")
