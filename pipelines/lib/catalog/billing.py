"""Every billing source the warehouse ingests: its landing folder, raw table, connector and quality facts.

One entry per source. The ingest assets, their raw-table checks, the CLI's `ingest --source`
choices and format auto-detection are all built from this list, so adding a source is adding
one entry here plus its connector in `sources/` and its staging model in dbt.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from pipelines.lib.catalog.entry import CatalogEntry
from pipelines.lib.catalog.facts import AllowedValues, NotBefore, QualityFacts
from pipelines.lib.catalog.tables import RawTable
from sources.aws import cur as cur_reader
from sources.aws import output_schema as cur_output_schema
from sources.aws import parse_cur_delivery
from sources.azure import cost_details as azure_reader
from sources.azure import parse_actual_cost_delivery, parse_amortized_cost_delivery
from sources.azure.cost_details import output_schema as azure_cost_details_schema
from sources.common.delivery import Delivery, ParsedDelivery
from sources.common.row_checks import WARNING, IsNull, NonNegative
from sources.focus import parse_focus_delivery
from sources.focus import reader as focus_reader
from sources.focus.reader import output_schema
from sources.gcp import billing_export as gcp_reader
from sources.gcp import output_schema as gcp_billing_output_schema
from sources.gcp import parse_billing_export_delivery
from sources.gpu_clouds import output_schema as gpu_cloud_usage_schema
from sources.gpu_clouds import parse_gpu_cloud_usage
from sources.oci import cost_report as oci_reader
from sources.oci import output_schema as oci_cost_schema
from sources.oci import parse_cost_report_delivery
from sources.onprem import output_schema as onprem_gpu_assets_schema
from sources.onprem import parse_onprem_gpu_assets


@dataclass(frozen=True, kw_only=True)
class BillingSource(CatalogEntry):
    """A provider's billing export: its deliveries land in FINOPS_HOME/landing/<name> and restate `raw_table`."""

    raw_table: RawTable
    parse: Callable[[Delivery], ParsedDelivery]
    description: str
    delivery_cadence: timedelta
    asset_key: tuple[str, ...] = ()
    """The ingest asset: the raw table's schema and name."""

    def __post_init__(self) -> None:
        if not self.asset_key:
            object.__setattr__(self, "asset_key", tuple(self.raw_table.name.split(".")))

    @property
    def load_source(self) -> None:
        """A billing table is written by its own source only: its checks judge every load of it."""
        return None


_FOCUS_SPELLED_ENUMS = (
    ("PricingCategory", ("Standard", "Dynamic", "Committed", "Other")),
    ("ChargeFrequency", ("One-Time", "Recurring", "Usage-Based")),
    ("CommitmentDiscountCategory", ("Spend", "Usage")),
    ("CommitmentDiscountStatus", ("Used", "Unused")),
    ("CapacityReservationStatus", ("Used", "Unused")),
)
"""FOCUS enumerations that staging reads whatever their case (`focus_enum_value`)."""

FOCUS = BillingSource(
    name="focus",
    title="FOCUS",
    raw_table=RawTable(
        name="raw.focus_cost_and_usage",
        columns=output_schema(),
        restatement_key=("BillingAccountId", "BillingPeriodStart"),
        currency_column="BillingCurrency",
        billed_cost_column="BilledCost",
        effective_cost_column="EffectiveCost",
    ),
    parse=parse_focus_delivery,
    description=(
        "FOCUS 1.0–1.3 billing files (AWS FOCUS_1_2_AWS, Microsoft FocusCost, Google, any FOCUS producer), "
        "one row per cost line."
    ),
    delivery_cadence=timedelta(days=2),
    quality=QualityFacts(
        # Not ProviderName: FOCUS 1.3 files name the provider in ServiceProviderName instead.
        keys=("BillingPeriodEnd", "ChargeCategory", "ChargePeriodStart", "ChargePeriodEnd"),
        allowed_values=(
            AllowedValues("ChargeCategory", ("Usage", "Purchase", "Tax", "Credit", "Adjustment")),
            AllowedValues("ChargeClass", ("Correction",)),
            # Spelled otherwise than the spec (Oracle writes `Usage-based`) still names the value: staging puts it
            # into the spec's spelling (macro focus_enum_value); the spelling itself is a warning.
            *(AllowedValues(column, values, ignore_case=True) for column, values in _FOCUS_SPELLED_ENUMS),
            *(AllowedValues(column, values, severity=WARNING) for column, values in _FOCUS_SPELLED_ENUMS),
        ),
        cost_columns=("ListCost", "ContractedCost"),
        currency_columns=("PricingCurrency",),
        not_negative=tuple(focus_reader.ROW_RULES.non_negative),
        ordered=(
            # Corrections (ChargeClass) may restate a charge of an earlier billing period; other lines outside
            # their period are late usage billed later, which providers emit: loaded with a warning.
            NotBefore("ChargePeriodStart", "BillingPeriodStart", when=IsNull("ChargeClass"), severity=WARNING),
            NotBefore("BillingPeriodEnd", "ChargePeriodEnd", when=IsNull("ChargeClass"), severity=WARNING),
            NotBefore("ChargePeriodEnd", "ChargePeriodStart"),
        ),
    ),
)

OCI_COST = BillingSource(
    name="oci_cost",
    title="OCI cost reports",
    raw_table=RawTable(
        name="raw.oci_cost_report",
        columns=oci_cost_schema(),
        restatement_key=("line_item_tenant_id", "billing_period_start"),
        currency_column="cost_currency_code",
        billed_cost_column="cost_my_cost",
        effective_cost_column="cost_my_cost",
    ),
    parse=parse_cost_report_delivery,
    description=(
        "Oracle Cloud Infrastructure cost reports (reports/cost-csv, CSV or CSV.gz), one row per resource, SKU "
        "and hour; a delivery restates whole tenancy × calendar-month keys, so it holds every report file of "
        "the months it covers."
    ),
    delivery_cadence=timedelta(days=2),
    quality=QualityFacts(
        keys=("line_item_interval_usage_start", "line_item_interval_usage_end", "billing_period_end"),
        allowed_values=(
            AllowedValues("line_item_is_correction", ("true", "false"), ignore_case=True),
            AllowedValues("cost_overage_flag", ("true", "false"), ignore_case=True),
        ),
        not_negative=tuple(oci_reader.ROW_RULES.non_negative),
        ordered=(
            NotBefore("line_item_interval_usage_start", "billing_period_start", severity=WARNING),
            NotBefore("billing_period_end", "line_item_interval_usage_end", severity=WARNING),
            NotBefore("line_item_interval_usage_end", "line_item_interval_usage_start"),
        ),
    ),
)

AWS_CUR = BillingSource(
    name="aws_cur",
    title="AWS Cost and Usage Report",
    raw_table=RawTable(
        name="raw.aws_cur_line_items",
        columns=cur_output_schema(),
        restatement_key=("bill_payer_account_id", "bill_billing_period_start_date"),
        currency_column="line_item_currency_code",
        # Raw CUR holds no amortized cost (dbt computes EffectiveCost): the audit sums the
        # unblended cost, the one amount every CUR line carries, for both.
        billed_cost_column="line_item_unblended_cost",
        effective_cost_column="line_item_unblended_cost",
    ),
    parse=parse_cur_delivery,
    description=(
        "AWS Cost and Usage Reports: CUR 2.0 (Data Exports, Parquet or CSV.gz) and legacy CUR (CSV with "
        "slash headers, or the Athena/Parquet flavour), one row per line item, restated per payer account "
        "and billing period."
    ),
    delivery_cadence=timedelta(days=2),
    quality=QualityFacts(
        keys=(
            "bill_billing_period_end_date",
            "line_item_line_item_type",
            "line_item_usage_start_date",
            "line_item_usage_end_date",
        ),
        allowed_values=(
            AllowedValues(
                "line_item_line_item_type",
                (
                    "Usage",
                    "DiscountedUsage",
                    "SavingsPlanCoveredUsage",
                    "SavingsPlanNegation",
                    "SavingsPlanRecurringFee",
                    "SavingsPlanUpfrontFee",
                    "RIFee",
                    "Fee",
                    "FlatRateSubscription",
                    "Refund",
                    "Credit",
                    "Discount",
                    "EdpDiscount",
                    "PrivateRateDiscount",
                    "BundledDiscount",
                    "SppDiscount",
                    "DistributorDiscount",
                    "Tax",
                ),
                severity=WARNING,
            ),
            AllowedValues("bill_bill_type", ("Anniversary", "Purchase", "Refund"), severity=WARNING),
            AllowedValues("pricing_term", ("OnDemand", "Reserved", "Spot"), severity=WARNING),
        ),
        cost_columns=("line_item_net_unblended_cost", "line_item_blended_cost", "pricing_public_on_demand_cost"),
        currency_columns=("pricing_currency",),
        not_negative=tuple(cur_reader.ROW_RULES.non_negative),
        ordered=(
            NotBefore("line_item_usage_start_date", "bill_billing_period_start_date", severity=WARNING),
            NotBefore("bill_billing_period_end_date", "line_item_usage_end_date", severity=WARNING),
            NotBefore("line_item_usage_end_date", "line_item_usage_start_date"),
        ),
    ),
)


GPU_CLOUD_USAGE = BillingSource(
    name="gpu_cloud_usage",
    title="GPU cloud usage",
    raw_table=RawTable(
        name="raw.gpu_cloud_usage",
        columns=gpu_cloud_usage_schema(),
        restatement_key=("billing_account_key", "billing_period_start"),
        currency_column="currency",
        billed_cost_column="cost",
        effective_cost_column="cost",
    ),
    parse=parse_gpu_cloud_usage,
    description=(
        "Usage of specialized GPU clouds (Lambda, CoreWeave, RunPod, Vast.ai, …) in the project's GPU cloud "
        "usage CSV layout (docs/gpu-cloud-usage-contract.md), one row per resource and usage period."
    ),
    # Specialized GPU clouds invoice monthly; their usage files follow the invoice.
    delivery_cadence=timedelta(days=35),
    quality=QualityFacts(
        keys=("provider", "account_id", "resource_id", "gpu_count", "usage_start", "usage_end", "usage_hours"),
        allowed_values=(AllowedValues("pricing_model", ("on_demand", "spot", "reserved")),),
        not_negative=(
            NonNegative("usage_hours"),
            NonNegative("gpu_count"),
            NonNegative("unit_price"),
            NonNegative("cost"),
        ),
        ordered=(
            NotBefore("usage_start", "billing_period_start"),
            NotBefore("usage_end", "usage_start"),
        ),
    ),
)

ONPREM_GPU_ASSETS = BillingSource(
    name="onprem_gpu_assets",
    title="On-premises GPU assets",
    raw_table=RawTable(
        name="raw.onprem_gpu_assets",
        columns=onprem_gpu_assets_schema(),
        restatement_key=("site", "billing_period_start"),
        currency_column="currency",
        billed_cost_column="purchase_price",
        effective_cost_column="purchase_price",
        snapshot=True,
    ),
    parse=parse_onprem_gpu_assets,
    description=(
        "Inventory of owned GPU servers (purchase, depreciation and running-cost facts), one row per asset; "
        "each delivery is the whole inventory. Daily cost is computed from it in dbt."
    ),
    # The inventory is re-exported when servers are bought or retired; at least once a quarter.
    delivery_cadence=timedelta(days=92),
    quality=QualityFacts(
        keys=("asset_id", "gpu_model", "gpu_count", "purchase_date", "depreciation_years"),
        not_negative=(
            NonNegative("gpu_count"),
            NonNegative("residual_value"),
            NonNegative("power_draw_kw"),
            NonNegative("electricity_price_per_kwh"),
            NonNegative("colocation_price_per_kw_month"),
            NonNegative("maintenance_per_year"),
        ),
        ordered=(NotBefore("retired_date", "purchase_date"),),
    ),
)


def _azure_cost_details_table(name: str) -> RawTable:
    """ActualCost and AmortizedCost share their columns; raw totals are the export's own cost column."""
    return RawTable(
        name=name,
        columns=azure_cost_details_schema(),
        restatement_key=("_billing_account_id", "_billing_period_start"),
        currency_column="BillingCurrencyCode",
        billed_cost_column="CostInBillingCurrency",
        effective_cost_column="CostInBillingCurrency",
    )


_AZURE_QUALITY = QualityFacts(
    keys=("Date", "ChargeType", "BillingCurrencyCode", "CostInBillingCurrency"),
    allowed_values=(
        AllowedValues(
            "ChargeType",
            (
                "Usage",
                "Purchase",
                "Refund",
                "Credit",
                "Tax",
                "UnusedReservation",
                "UnusedSavingsPlan",
                "RoundingAdjustment",
            ),
            ignore_case=True,
            severity=WARNING,
        ),
        AllowedValues(
            "PricingModel",
            ("OnDemand", "Reservation", "SavingsPlan", "Savings Plan", "Spot"),
            ignore_case=True,
            severity=WARNING,
        ),
        AllowedValues("Frequency", ("UsageBased", "Recurring", "OneTime"), ignore_case=True, severity=WARNING),
    ),
    cost_columns=("CostInPricingCurrency", "PayGCostInBillingCurrency"),
    currency_columns=("PricingCurrency",),
    not_negative=tuple(azure_reader.ROW_RULES.non_negative),
    ordered=(
        # Late usage billed in a later period (a Date before its BillingPeriodStartDate) is real: a warning.
        NotBefore("Date", "_billing_period_start", severity=WARNING),
        # Azure's BillingPeriodEndDate is the period's last day, inclusive.
        NotBefore("BillingPeriodEndDate", "Date", severity=WARNING),
    ),
)

AZURE_ACTUAL = BillingSource(
    name="azure_actual",
    title="Azure actual cost",
    raw_table=_azure_cost_details_table("raw.azure_actual_cost"),
    parse=parse_actual_cost_delivery,
    description=(
        "Azure Cost Management ActualCost exports (EA and MCA): the invoice view, reservation and savings plan "
        "purchases as billed. CSV, gzip CSV or Parquet, a file or an export run folder with manifest.json."
    ),
    delivery_cadence=timedelta(days=2),
    quality=_AZURE_QUALITY,
)

AZURE_AMORTIZED = BillingSource(
    name="azure_amortized",
    title="Azure amortized cost",
    raw_table=_azure_cost_details_table("raw.azure_amortized_cost"),
    parse=parse_amortized_cost_delivery,
    description=(
        "Azure Cost Management AmortizedCost exports (EA and MCA): reservation and savings plan costs spread "
        "over the usage they covered, with unused commitment rows. CSV, gzip CSV or Parquet, a file or an export "
        "run folder with manifest.json."
    ),
    delivery_cadence=timedelta(days=2),
    quality=_AZURE_QUALITY,
)

GCP_BILLING = BillingSource(
    name="gcp_billing",
    title="Google Cloud billing export",
    raw_table=RawTable(
        name="raw.gcp_billing_export",
        columns=gcp_billing_output_schema(),
        restatement_key=("billing_account_id", "billing_period_start"),
        currency_column="currency",
        billed_cost_column="net_cost",
        effective_cost_column="net_cost",
    ),
    parse=parse_billing_export_delivery,
    description=(
        "Google Cloud billing export to BigQuery (standard or detailed usage cost), extracted as Parquet or "
        "newline-delimited JSON; one row per export row, invoice month as the billing period."
    ),
    delivery_cadence=timedelta(days=2),
    quality=QualityFacts(
        keys=("billing_period_end", "usage_start_time", "usage_end_time", "cost", "cost_type"),
        allowed_values=(
            AllowedValues("cost_type", ("regular", "tax", "adjustment", "rounding error"), severity=WARNING),
            AllowedValues(
                "transaction_type",
                ("GOOGLE", "THIRD_PARTY_RESELLER", "THIRD_PARTY_AGENCY"),
                ignore_case=True,
                severity=WARNING,
            ),
        ),
        cost_columns=("cost", "credits_amount", "cost_at_list"),
        not_negative=tuple(gcp_reader.ROW_RULES.non_negative),
        ordered=(
            # Google bills late-reported usage in a later invoice month, never usage from a later one.
            NotBefore("billing_period_end", "usage_start_time", severity=WARNING),
            NotBefore("usage_end_time", "usage_start_time"),
        ),
    ),
)

BILLING_SOURCES: tuple[BillingSource, ...] = (
    FOCUS,
    AWS_CUR,
    AZURE_ACTUAL,
    AZURE_AMORTIZED,
    GCP_BILLING,
    OCI_COST,
    GPU_CLOUD_USAGE,
    ONPREM_GPU_ASSETS,
)

SOURCES_BY_NAME = {source.name: source for source in BILLING_SOURCES}
