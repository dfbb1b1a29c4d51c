"""The FOCUS Cost and Usage columns this project reads, with their types.

FOCUS 1.2 is the canonical schema (FinOps Foundation, FOCUS_Spec tag v1.2); 1.0 and 1.1 are subsets
of it, and the 1.3 additions are kept as nullable columns. Anything else in a file (provider `x_`
columns, unprefixed extras such as `Id`) is kept verbatim in one JSON column, `x_extensions`.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from sources.common.types import Kind

FOCUS_COLUMNS_DEFINITION = Path(__file__).resolve().parents[2] / "dbt_project" / "dbt_project.yml"
"""Where the column list is defined, once: the dbt project's var `focus_columns` (the models read it too)."""


def _focus_columns() -> tuple[tuple[str, Kind, str], ...]:
    """(name, kind, FOCUS version that introduced it) of every column, in the definition's order."""
    project = yaml.safe_load(FOCUS_COLUMNS_DEFINITION.read_text(encoding="utf-8"))
    return tuple((name, Kind(kind), version) for name, kind, version in project["vars"]["focus_columns"])


_DEFINED = _focus_columns()

# Column name -> kind, in FOCUS 1.2 order of the spec's column list, then the 1.3 additions.
FOCUS_COLUMNS: dict[str, Kind] = {name: kind for name, kind, _ in _DEFINED}

EXTENSIONS_COLUMN = "x_extensions"
"""JSON object holding every column of the file that is not a FOCUS column, as strings."""

# The columns each FOCUS version added: older files lack them.
FOCUS_1_3_ONLY = frozenset(name for name, _, version in _DEFINED if version == "1.3")
FOCUS_1_2_ONLY = frozenset(name for name, _, version in _DEFINED if version == "1.2")
FOCUS_1_1_ONLY = frozenset(name for name, _, version in _DEFINED if version == "1.1")

# The FOCUS 1.2 Mandatory columns. ProviderName and PublisherName are deprecated in 1.3, where
# ServiceProviderName takes their place: either name satisfies the requirement.
MANDATORY_COLUMNS: tuple[str, ...] = (
    "BilledCost",
    "BillingAccountId",
    "BillingAccountName",
    "BillingCurrency",
    "BillingPeriodEnd",
    "BillingPeriodStart",
    "ChargeCategory",
    "ChargeClass",
    "ChargeDescription",
    "ChargePeriodEnd",
    "ChargePeriodStart",
    "ContractedCost",
    "EffectiveCost",
    "InvoiceIssuerName",
    "ListCost",
    "PricingQuantity",
    "PricingUnit",
    "ProviderName",
    "PublisherName",
    "ServiceCategory",
    "ServiceName",
)
MANDATORY_ALTERNATIVES: dict[str, str] = {
    "ProviderName": "ServiceProviderName",
    "PublisherName": "ServiceProviderName",
}

# Values the warehouse cannot do without on any row: the load key, the money and the currency.
NOT_NULL_COLUMNS: tuple[str, ...] = (
    "BilledCost",
    "EffectiveCost",
    "BillingAccountId",
    "BillingCurrency",
    "BillingPeriodStart",
    "BillingPeriodEnd",
    "ChargePeriodStart",
    "ChargePeriodEnd",
    "ChargeCategory",
)

CHARGE_CATEGORIES = frozenset({"Usage", "Purchase", "Tax", "Credit", "Adjustment"})
CHARGE_CLASSES = frozenset({"Correction"})
