"""Every billing source the warehouse ingests: its landing folder, raw table and connector.

One entry per source. The ingest assets, their raw-table checks, the CLI's `ingest --source`
choices and format auto-detection are all built from this list, so adding a source is adding
one entry here plus its connector in `sources/` and its staging model in dbt.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pipelines.lib.warehouse import RawTable
from sources.aws import output_schema as cur_output_schema
from sources.aws import parse_cur_delivery
from sources.azure import parse_actual_cost_delivery, parse_amortized_cost_delivery
from sources.azure.cost_details import output_schema as azure_cost_details_schema
from sources.delivery import Delivery, ParsedDelivery
from sources.focus import parse_focus_delivery
from sources.focus.reader import output_schema
from sources.gcp import output_schema as gcp_billing_output_schema
from sources.gcp import parse_billing_export_delivery
from sources.gpu_clouds import output_schema as gpu_cloud_usage_schema
from sources.gpu_clouds import parse_gpu_cloud_usage
from sources.oci import output_schema as oci_cost_schema
from sources.oci import parse_cost_report_delivery
from sources.onprem import output_schema as onprem_gpu_assets_schema
from sources.onprem import parse_onprem_gpu_assets


@dataclass(frozen=True)
class BillingSource:
    name: str
    """Landing folder (FINOPS_HOME/landing/<name>) and `source` in audit.loads."""
    title: str
    raw_table: RawTable
    parse: Callable[[Delivery], ParsedDelivery]
    description: str

    @property
    def asset_key(self) -> tuple[str, str]:
        schema, table = self.raw_table.name.split(".")
        return (schema, table)


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


AZURE_ACTUAL = BillingSource(
    name="azure_actual",
    title="Azure actual cost",
    raw_table=_azure_cost_details_table("raw.azure_actual_cost"),
    parse=parse_actual_cost_delivery,
    description=(
        "Azure Cost Management ActualCost exports (EA and MCA): the invoice view, reservation and savings plan "
        "purchases as billed. CSV, gzip CSV or Parquet, a file or an export run folder with manifest.json."
    ),
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
