"""One delivery per documented export layout and per quirk real exports carry, and what each must give.

Every fixture is in its provider's published column layout (tests/fixtures/conformance/README.md says
which), and the expected numbers are computed here from the files with the csv module and Decimal,
never read back from the readers.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

from tests.support import FIXTURES_ROOT

FIXTURES = FIXTURES_ROOT
CONFORMANCE = FIXTURES / "conformance"

AZURE_COMMITMENT_MODELS = {"reservation", "savingsplan"}
AZURE_COMMITMENT_COVERED = {"usage", "unusedreservation", "unusedsavingsplan"}

CHARGE_TYPE_DERIVED = "ChargeType derived as Usage"
PRICING_MODEL_DERIVED = "PricingModel derived"
PRICING_MODEL_FROM_COMMITMENT = "PricingModel derived from the commitment"
PRICING_CATEGORY_COMMITTED = "PricingCategory derived as Committed"
COMMITMENT_STATUS_DERIVED = "CommitmentDiscountStatus derived"
NO_EXCHANGE_RATE = "No exchange rate to the pricing currency"
CURRENCY_FROM_TENANCY = "Currency taken from the tenancy"
OCI_FLAG_COLUMNS = ("cost/overageFlag", "lineItem/isCorrection")
YES_OR_NO = {"true", "false", "yes", "no", "y", "n", "1", "0"}
"""The spellings of yes and no a reader accepts in any case (docs/data-quality.md)."""


@dataclass(frozen=True)
class Case:
    id: str
    source: str
    path: Path
    warnings: dict[str, int] = field(default_factory=dict)
    """Each warning the reader must give (rule → rows), and no other."""
    format_version: str = ""


def oci_flags_not_yes_or_no(path: Path) -> dict[str, int]:
    """The OCI reader's warnings (rule → rows) for yes/no cells holding something else, counted from the file."""
    with path.open(encoding="utf-8-sig", newline="") as handle:
        lines = list(csv.DictReader(handle))
    counts = {
        f"{column} not read as yes or no": sum(
            line[column].strip() != "" and line[column].strip().lower() not in YES_OR_NO for line in lines
        )
        for column in OCI_FLAG_COLUMNS
    }
    return {rule: count for rule, count in counts.items() if count}


CASES = (
    Case("focus-1.0-public-sample", "focus", FIXTURES / "focus-sample-data" / "focus_sample.csv", {}, "FOCUS 1.0"),
    # Microsoft's FocusCost 1.0 writes BillingAccountType and SubAccountType unprefixed (FOCUS 1.2 columns).
    Case("azure-focuscost-1.0", "focus", CONFORMANCE / "focuscost_1.0_microsoft.csv", {}, "FOCUS 1.2"),
    Case(
        "azure-focuscost-1.0-commitment-unstated",
        "focus",
        CONFORMANCE / "focuscost_1.0_microsoft_commitment_unstated.csv",
        {PRICING_CATEGORY_COMMITTED: 3, COMMITMENT_STATUS_DERIVED: 2},
        "FOCUS 1.2",
    ),
    Case(
        "azure-focuscost-1.0-usage-reversal",
        "focus",
        CONFORMANCE / "focuscost_1.0_microsoft_usage_reversal.csv",
        {},
        "FOCUS 1.2",
    ),
    Case("azure-focuscost-1.2-eur-billed-usd-priced", "focus", CONFORMANCE / "focuscost_1.2_microsoft_eur_usd.csv", {}),
    Case(
        "azure-ea-actualcost-2025-04",
        "azure_actual",
        CONFORMANCE / "azure_ea_actualcost_2025-04.csv",
        {PRICING_MODEL_DERIVED: 4},
        "Azure ActualCost (EA)",
    ),
    Case(
        "azure-ea-amortizedcost-2025-04",
        "azure_amortized",
        CONFORMANCE / "azure_ea_amortizedcost_2025-04.csv",
        {PRICING_MODEL_DERIVED: 4},
        "Azure AmortizedCost (EA)",
    ),
    Case(
        "azure-ea-late-usage",
        "azure_actual",
        CONFORMANCE / "azure_ea_actualcost_late_usage.csv",
        {PRICING_MODEL_DERIVED: 2},
    ),
    Case(
        "azure-ea-usage-reversal",
        "azure_actual",
        CONFORMANCE / "azure_ea_actualcost_usage_reversal.csv",
        {PRICING_MODEL_DERIVED: 6},
    ),
    Case(
        "azure-ea-actualcost-blank-pricing-model",
        "azure_actual",
        CONFORMANCE / "azure_ea_actualcost_blank_pricing_model.csv",
        {PRICING_MODEL_FROM_COMMITMENT: 4},
        "Azure ActualCost (EA)",
    ),
    Case(
        "azure-ea-actualcost-blank-pricing-model-2027-01",
        "azure_actual",
        CONFORMANCE / "azure_ea_actualcost_blank_pricing_model_2027-01.csv",
        {PRICING_MODEL_FROM_COMMITMENT: 4},
    ),
    Case(
        "azure-ea-amortizedcost-blank-pricing-model",
        "azure_amortized",
        CONFORMANCE / "azure_ea_amortizedcost_blank_pricing_model.csv",
        {PRICING_MODEL_FROM_COMMITMENT: 3},
        "Azure AmortizedCost (EA)",
    ),
    Case("azure-ea-real-sample", "azure_actual", FIXTURES / "focus-converters" / "azure_ea_actual_sample.csv", {}),
    Case(
        "azure-mca-amortizedcost-eur-billed-usd-priced",
        "azure_amortized",
        CONFORMANCE / "azure_mca_amortizedcost_eur_usd.csv",
        {},
        "Azure AmortizedCost (MCA)",
    ),
    Case(
        "azure-mca-actualcost-blank-pricing-model",
        "azure_actual",
        CONFORMANCE / "azure_mca_actualcost_blank_pricing_model.csv",
        {PRICING_MODEL_FROM_COMMITMENT: 3},
        "Azure ActualCost (MCA)",
    ),
    Case(
        "azure-mca-without-exchange-rate",
        "azure_actual",
        CONFORMANCE / "azure_mca_actualcost_no_exchange_rate.csv",
        {NO_EXCHANGE_RATE: 1},
    ),
    Case(
        "azure-payg-legacy",
        "azure_actual",
        CONFORMANCE / "azure_payg_legacy.csv",
        {CHARGE_TYPE_DERIVED: 3, PRICING_MODEL_DERIVED: 3},
        "Azure ActualCost (pay-as-you-go)",
    ),
    Case(
        "azure-payg-german",
        "azure_actual",
        FIXTURES / "azure" / "payg_german_2026-08.csv",
        {CHARGE_TYPE_DERIVED: 2, PRICING_MODEL_DERIVED: 2},
    ),
    Case(
        "azure-payg-mixed-camelcase",
        "azure_actual",
        CONFORMANCE / "azure_payg_mixed_camelcase.csv",
        {CHARGE_TYPE_DERIVED: 2, PRICING_MODEL_DERIVED: 2},
    ),
    Case(
        "oci-real-sample",
        "oci_cost",
        FIXTURES / "focus-converters" / "oci_cost_report_sample.csv",
        {},
        "OCI cost report",
    ),
    Case(
        "oci-zero-cost-without-currency",
        "oci_cost",
        CONFORMANCE / "oci_cost_report_zero_cost.csv",
        {CURRENCY_FROM_TENANCY: 2},
    ),
    Case(
        "oci-yes-no-flags",
        "oci_cost",
        CONFORMANCE / "oci_cost_report_yes_no_flags.csv",
        oci_flags_not_yes_or_no(CONFORMANCE / "oci_cost_report_yes_no_flags.csv"),
        "OCI cost report",
    ),
)
CASE_BY_ID = {case.id: case for case in CASES}


def rows(path: Path) -> list[dict[str, str]]:
    """The file's lines keyed by their headers; a localized `Label (Name)` header by its English `Name`."""
    with path.open(encoding="utf-8-sig", newline="") as handle:
        lines = list(csv.DictReader(handle))
    return [{_english(key): value.strip() for key, value in line.items()} for line in lines]


def _english(header: str) -> str:
    header = header.strip()
    return header[header.rindex("(") + 1 : -1] if header.endswith(")") and "(" in header else header


def pick(line: dict[str, str], *names: str) -> str:
    """The first of `names` the line has (case-insensitively), as written; empty when it has none."""
    lowered = {key.lower(): value for key, value in line.items()}
    return next((lowered[name.lower()] for name in names if name.lower() in lowered), "")


def number(text: str) -> Decimal:
    """A number as the warehouse's DECIMAL(38, 12) holds it: digits past the 12th decimal rounded half to even."""
    value = Decimal(0) if text in ("", "NULL") else Decimal(text)
    return value.quantize(Decimal("1e-12"), rounding=ROUND_HALF_EVEN)


@dataclass
class Totals:
    """Billed and effective cost per currency, as the FOCUS marts must state them."""

    billed: dict[str, Decimal] = field(default_factory=lambda: defaultdict(Decimal))
    effective: dict[str, Decimal] = field(default_factory=lambda: defaultdict(Decimal))

    def add(self, other: Totals) -> None:
        for mine, theirs in ((self.billed, other.billed), (self.effective, other.effective)):
            for currency, amount in theirs.items():
                mine[currency] += amount


def delivered_cost(case: Case) -> dict[str, Decimal]:
    """The export's own cost column summed per currency: what the raw table must hold."""
    totals: dict[str, Decimal] = defaultdict(Decimal)
    lines = rows(case.path)
    if case.source == "focus":
        for line in lines:
            totals[line["BillingCurrency"]] += number(line["BilledCost"])
    elif case.source == "oci_cost":
        # A tenancy is billed in one currency: the zero-cost lines without one take it.
        (currency,) = {line["cost/currencyCode"] for line in lines} - {""}
        for line in lines:
            totals[line["cost/currencyCode"] or currency] += number(line["cost/myCost"])
    else:
        for line in lines:
            currency = pick(line, "BillingCurrencyCode", "BillingCurrency", "Currency")
            totals[currency] += number(pick(line, "CostInBillingCurrency", "PreTaxCost", "Cost"))
    return totals


def azure_commitment(line: dict[str, str]) -> str:
    """`reservation` or `savingsplan` when the line names one (benefitId's provider, else ReservationId), else ``."""
    benefit = pick(line, "benefitId").lower()
    if "/microsoft.capacity/" in benefit:
        return "reservation"
    if "/microsoft.billingbenefits/" in benefit:
        return "savingsplan"
    return "reservation" if pick(line, "ReservationId") else ""


def _azure_keys(line: dict[str, str]) -> tuple[str, str]:
    """ChargeType and pricing model: a line naming a commitment is priced by it, whatever PricingModel says."""
    charge_type = pick(line, "ChargeType").lower() or "usage"
    commitment = azure_commitment(line) if charge_type != "tax" else ""
    return charge_type, commitment or pick(line, "PricingModel").replace(" ", "").lower()


def mart_totals(case: Case, *, with_actual: Case | None = None) -> Totals:
    """BilledCost and EffectiveCost per currency for one delivery (an amortized one with its actual twin).

    FOCUS files state both; OCI bills and amortizes alike. Azure (finops-toolkit convert.md): the amortized
    export is the effective cost, and its billed cost is the actual export's (commitment-covered usage is
    billed 0 and the purchase carries the money). An actual export without its amortized twin is the billed
    cost, and its effective cost leaves out the commitments bought (FOCUS counts them only as used).
    """
    totals = Totals()
    lines = rows(case.path)
    if case.source == "focus":
        for line in lines:
            totals.billed[line["BillingCurrency"]] += number(line["BilledCost"])
            totals.effective[line["BillingCurrency"]] += number(line["EffectiveCost"])
        return totals
    if not case.source.startswith("azure_"):
        for currency, amount in delivered_cost(case).items():
            totals.billed[currency] += amount
            totals.effective[currency] += amount
        return totals
    for line in lines:
        currency = pick(line, "BillingCurrencyCode", "BillingCurrency", "Currency")
        cost = number(pick(line, "CostInBillingCurrency", "PreTaxCost", "Cost"))
        charge_type, pricing_model = _azure_keys(line)
        commitment = pricing_model in AZURE_COMMITMENT_MODELS
        if case.source == "azure_actual":
            totals.billed[currency] += cost
            if not (commitment and charge_type in ("purchase", "refund")):
                totals.effective[currency] += cost
            continue
        totals.effective[currency] += cost
        if with_actual is None and not (commitment and charge_type in AZURE_COMMITMENT_COVERED):
            totals.billed[currency] += cost
    if with_actual is not None:
        for currency, amount in delivered_cost(with_actual).items():
            totals.billed[currency] += amount
    return totals


# --- what the quality gate adds: the suite's warning-severity rules, counted here from the files ---------

_FOCUS_PLAIN_USAGE_NEGATIVE = (
    "{} is not negative on usage lines that are not corrections (a correction may be negative)"
)
_AZURE_USAGE_NEGATIVE = "Quantity is not negative on usage lines (a refund may be negative)"
_FOCUS_LATE_USAGE = "ChargePeriodStart is not before BillingPeriodStart where ChargeClass.isnull()"
_FOCUS_SPELLED_ENUMS = {
    "PricingCategory": ("Standard", "Dynamic", "Committed", "Other"),
    "ChargeFrequency": ("One-Time", "Recurring", "Usage-Based"),
    "CommitmentDiscountCategory": ("Spend", "Usage"),
    "CommitmentDiscountStatus": ("Used", "Unused"),
    "CapacityReservationStatus": ("Used", "Unused"),
}


def _when(text: str) -> datetime:
    """A FOCUS or Azure timestamp or date (`2024-09-01 00:00:00`, `2024-09-01T00:00:00Z`, `10/30/2026`)."""
    if "/" in text:
        return datetime.strptime(text, "%m/%d/%Y")
    return datetime.fromisoformat(text.replace("Z", "+00:00")).replace(tzinfo=None)


def suite_warnings(case: Case) -> dict[str, int]:
    """The warnings the source's suite must record for the delivery (rule → rows), by docs/data-quality.md."""
    # FOCUS files spell an empty value `NULL` or leave it empty (the reader reads both as null).
    lines = [{key: None if value in ("", "NULL") else value for key, value in line.items()} for line in rows(case.path)]
    found: dict[str, int] = {}
    if case.source == "focus":
        plain_usage = [line for line in lines if line["ChargeCategory"] == "Usage" and not line.get("ChargeClass")]
        for column in ("ConsumedQuantity", "PricingQuantity"):
            found[_FOCUS_PLAIN_USAGE_NEGATIVE.format(column)] = sum(
                bool(line.get(column)) and Decimal(line[column]) < 0 for line in plain_usage
            )
        found[_FOCUS_LATE_USAGE] = sum(
            not line.get("ChargeClass") and _when(line["ChargePeriodStart"]) < _when(line["BillingPeriodStart"])
            for line in lines
        )
        for column, values in _FOCUS_SPELLED_ENUMS.items():
            lowered = {value.lower() for value in values}
            found[f"{column} is one of {', '.join(values)}"] = sum(
                bool(line.get(column)) and line[column] not in values and line[column].lower() in lowered
                for line in lines
            )
    if case.source.startswith("azure_"):
        found["Date is not before _billing_period_start"] = sum(
            bool(line.get("BillingPeriodStartDate")) and _when(line["Date"]) < _when(line["BillingPeriodStartDate"])
            for line in lines
        )
        found[_AZURE_USAGE_NEGATIVE] = sum(
            (pick(line, "ChargeType") or "usage").lower() == "usage" and Decimal(pick(line, "Quantity") or 0) < 0
            for line in lines
        )
    return {rule: count for rule, count in found.items() if count}
