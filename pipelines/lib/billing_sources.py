"""Every billing source the warehouse ingests: its landing folder, raw table and connector.

One entry per source. The ingest assets, their raw-table checks, the CLI's `ingest --source`
choices and format auto-detection are all built from this list, so adding a source is adding
one entry here plus its connector in `sources/` and its staging model in dbt.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pipelines.lib.warehouse import RawTable
from sources.azure import parse_actual_cost_delivery, parse_amortized_cost_delivery
from sources.azure.cost_details import output_schema as azure_cost_details_schema
from sources.delivery import Delivery, ParsedDelivery
from sources.focus import parse_focus_delivery
from sources.focus.reader import output_schema
from sources.oci import output_schema as oci_cost_schema
from sources.oci import parse_cost_report_delivery


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

BILLING_SOURCES: tuple[BillingSource, ...] = (FOCUS, OCI_COST, AZURE_ACTUAL, AZURE_AMORTIZED)

SOURCES_BY_NAME = {source.name: source for source in BILLING_SOURCES}
