"""The AWS Cost and Usage Report columns this project keeps, under their CUR 2.0 / Athena names.

Three flavours of CUR reach us: CUR 2.0 (Data Exports; snake_case, MAP columns), legacy CUR CSV
(`lineItem/UsageType` slash headers, one column per tag) and legacy CUR in its Athena/Parquet
flavour (snake_case, one `resource_tags_user_*` column per tag). Legacy CUR adds and drops columns
month to month, so the columns are pinned here: every delivery is read into exactly this list,
a missing optional column is null, and a missing required one rejects the file. Everything the
pinned list does not name under `product`, `resource_tags`, `cost_category` and `discount` goes into
that column's JSON object, so tags and product attributes look the same in all three flavours.
"""

from __future__ import annotations

import re

from sources.common.types import Kind

S = Kind.STRING
D = Kind.DECIMAL
T = Kind.DATETIME

# Athena / CUR 2.0 name -> kind. What the amortization formula, the FOCUS mapping and GPU
# resolution read, plus the identifiers worth keeping for tracing a line back to AWS.
PINNED_COLUMNS: dict[str, Kind] = {
    "identity_line_item_id": S,
    "identity_time_interval": S,
    "bill_invoice_id": S,
    "bill_invoicing_entity": S,
    "bill_billing_entity": S,
    "bill_bill_type": S,
    "bill_payer_account_id": S,
    "bill_payer_account_name": S,
    "bill_billing_period_start_date": T,
    "bill_billing_period_end_date": T,
    "line_item_usage_account_id": S,
    "line_item_usage_account_name": S,
    "line_item_line_item_type": S,
    "line_item_usage_start_date": T,
    "line_item_usage_end_date": T,
    "line_item_product_code": S,
    "line_item_usage_type": S,
    "line_item_operation": S,
    "line_item_availability_zone": S,
    "line_item_resource_id": S,
    "line_item_usage_amount": D,
    "line_item_normalization_factor": D,
    "line_item_normalized_usage_amount": D,
    "line_item_currency_code": S,
    "line_item_unblended_rate": D,
    "line_item_unblended_cost": D,
    "line_item_blended_rate": D,
    "line_item_blended_cost": D,
    "line_item_net_unblended_rate": D,
    "line_item_net_unblended_cost": D,
    "line_item_line_item_description": S,
    "line_item_tax_type": S,
    "line_item_legal_entity": S,
    "pricing_public_on_demand_cost": D,
    "pricing_public_on_demand_rate": D,
    "pricing_term": S,
    "pricing_unit": S,
    "pricing_purchase_option": S,
    "pricing_lease_contract_length": S,
    "pricing_offering_class": S,
    "pricing_rate_code": S,
    "pricing_rate_id": S,
    "pricing_currency": S,
    "product_servicecode": S,
    "product_sku": S,
    "product_product_family": S,
    "product_instance_type": S,
    "product_instance_family": S,
    "product_region_code": S,
    "product_location": S,
    "product_location_type": S,
    "product_operation": S,
    "product_usagetype": S,
    "product_from_location": S,
    "product_from_location_type": S,
    "product_from_region_code": S,
    "product_to_location": S,
    "product_to_location_type": S,
    "product_to_region_code": S,
    "product_fee_code": S,
    "product_fee_description": S,
    "reservation_reservation_a_r_n": S,
    "reservation_subscription_id": S,
    "reservation_effective_cost": D,
    "reservation_net_effective_cost": D,
    "reservation_amortized_upfront_cost_for_usage": D,
    "reservation_amortized_upfront_fee_for_billing_period": D,
    "reservation_recurring_fee_for_usage": D,
    "reservation_unused_amortized_upfront_fee_for_billing_period": D,
    "reservation_net_unused_amortized_upfront_fee_for_billing_period": D,
    "reservation_unused_recurring_fee": D,
    "reservation_net_unused_recurring_fee": D,
    "reservation_unused_quantity": D,
    "reservation_total_reserved_units": D,
    "reservation_start_time": S,
    "reservation_end_time": S,
    "savings_plan_savings_plan_a_r_n": S,
    "savings_plan_savings_plan_effective_cost": D,
    "savings_plan_net_savings_plan_effective_cost": D,
    "savings_plan_savings_plan_rate": D,
    "savings_plan_used_commitment": D,
    "savings_plan_total_commitment_to_date": D,
    "savings_plan_recurring_commitment_for_billing_period": D,
    "savings_plan_amortized_upfront_commitment_for_billing_period": D,
    "savings_plan_offering_type": S,
    "savings_plan_payment_option": S,
    "savings_plan_purchase_term": S,
    "savings_plan_instance_type_family": S,
    "savings_plan_start_time": S,
    "savings_plan_end_time": S,
    "capacity_reservation_capacity_reservation_arn": S,
    "capacity_reservation_capacity_reservation_status": S,
    "discount_total_discount": D,
    "discount_bundled_discount": D,
    # Split cost allocation data (table option INCLUDE_SPLIT_COST_ALLOCATION_DATA): one row per EKS pod (or ECS
    # task), resource and hour, beside the parent EC2 instance's own line. They allocate that line's cost; they
    # are not more cost. The ratio is text in some Athena tables: typed as a decimal like the money.
    "split_line_item_parent_resource_id": S,
    "split_line_item_reserved_usage": D,
    "split_line_item_actual_usage": D,
    "split_line_item_split_usage": D,
    "split_line_item_split_usage_ratio": D,
    "split_line_item_split_cost": D,
    "split_line_item_unused_cost": D,
    "split_line_item_net_split_cost": D,
    "split_line_item_net_unused_cost": D,
    "split_line_item_public_on_demand_split_cost": D,
    "split_line_item_public_on_demand_unused_cost": D,
}

# Without these a line cannot be loaded, restated or summed: its type, when it happened, what it
# cost in which currency, and the load key (payer account, billing period).
REQUIRED_COLUMNS: tuple[str, ...] = (
    "line_item_line_item_type",
    "line_item_usage_start_date",
    "line_item_unblended_cost",
    "line_item_currency_code",
    "bill_payer_account_id",
    "bill_billing_period_start_date",
)
LEGACY_CSV_NAMES: dict[str, str] = {
    "line_item_line_item_type": "lineItem/LineItemType",
    "line_item_usage_start_date": "lineItem/UsageStartDate",
    "line_item_unblended_cost": "lineItem/UnblendedCost",
    "line_item_currency_code": "lineItem/CurrencyCode",
    "bill_payer_account_id": "bill/PayerAccountId",
    "bill_billing_period_start_date": "bill/BillingPeriodStartDate",
}
"""How the required columns are spelled in a legacy CSV header, for messages about a missing one."""

JSON_COLUMNS: tuple[str, ...] = ("product", "resource_tags", "cost_category", "discount")
"""CUR 2.0's MAP columns; legacy CUR's per-key columns with these prefixes are gathered into them."""

CUR2 = "cur2"
CUR1_CSV = "cur1_csv"
CUR1_PARQUET = "cur1_parquet"
FORMAT_TITLES = {CUR2: "CUR 2.0", CUR1_CSV: "legacy CUR CSV", CUR1_PARQUET: "legacy CUR Athena/Parquet"}

LINEAGE_COLUMNS: tuple[str, ...] = ("_cur_format", "_source_file", "_source_row")

_CAPITAL = re.compile(r"([A-Z])")
_NOT_WORD = re.compile(r"[^a-z0-9]+")


def athena_name(header: str) -> str:
    """A legacy CSV header as Athena (and CUR 2.0) spell it.

    `lineItem/UsageType` -> `line_item_usage_type`; every capital starts a word, so
    `reservation/ReservationARN` -> `reservation_reservation_a_r_n`; anything not a letter or digit
    becomes one underscore, so `resourceTags/user:Cost Center` -> `resource_tags_user_cost_center`.
    Snake_case names pass through unchanged.
    """
    return "_".join(part for part in (_snake(piece) for piece in header.split("/", 1)) if part)


def _snake(text: str) -> str:
    return _NOT_WORD.sub("_", _CAPITAL.sub(r"_\1", text).lower()).strip("_")
