"""The FOCUS Cost and Usage columns this project reads, with their types.

FOCUS 1.2 is the canonical schema (FinOps Foundation, FOCUS_Spec tag v1.2); 1.0 and 1.1 are subsets
of it, and the 1.3 additions are kept as nullable columns. Anything else in a file (provider `x_`
columns, unprefixed extras such as `Id`) is kept verbatim in one JSON column, `x_extensions`.
"""

from __future__ import annotations

from sources.common.types import Kind

# Column name -> kind, in FOCUS 1.2 order of the spec's column list, then the 1.3 additions.
FOCUS_COLUMNS: dict[str, Kind] = {
    "AvailabilityZone": Kind.STRING,
    "BilledCost": Kind.DECIMAL,
    "BillingAccountId": Kind.STRING,
    "BillingAccountName": Kind.STRING,
    "BillingAccountType": Kind.STRING,
    "BillingCurrency": Kind.STRING,
    "BillingPeriodEnd": Kind.DATETIME,
    "BillingPeriodStart": Kind.DATETIME,
    "CapacityReservationId": Kind.STRING,
    "CapacityReservationStatus": Kind.STRING,
    "ChargeCategory": Kind.STRING,
    "ChargeClass": Kind.STRING,
    "ChargeDescription": Kind.STRING,
    "ChargeFrequency": Kind.STRING,
    "ChargePeriodEnd": Kind.DATETIME,
    "ChargePeriodStart": Kind.DATETIME,
    "CommitmentDiscountCategory": Kind.STRING,
    "CommitmentDiscountId": Kind.STRING,
    "CommitmentDiscountName": Kind.STRING,
    "CommitmentDiscountQuantity": Kind.DECIMAL,
    "CommitmentDiscountStatus": Kind.STRING,
    "CommitmentDiscountType": Kind.STRING,
    "CommitmentDiscountUnit": Kind.STRING,
    "ConsumedQuantity": Kind.DECIMAL,
    "ConsumedUnit": Kind.STRING,
    "ContractedCost": Kind.DECIMAL,
    "ContractedUnitPrice": Kind.DECIMAL,
    "EffectiveCost": Kind.DECIMAL,
    "InvoiceId": Kind.STRING,
    "InvoiceIssuerName": Kind.STRING,
    "ListCost": Kind.DECIMAL,
    "ListUnitPrice": Kind.DECIMAL,
    "PricingCategory": Kind.STRING,
    "PricingCurrency": Kind.STRING,
    "PricingCurrencyContractedUnitPrice": Kind.DECIMAL,
    "PricingCurrencyEffectiveCost": Kind.DECIMAL,
    "PricingCurrencyListUnitPrice": Kind.DECIMAL,
    "PricingQuantity": Kind.DECIMAL,
    "PricingUnit": Kind.STRING,
    "ProviderName": Kind.STRING,
    "PublisherName": Kind.STRING,
    "RegionId": Kind.STRING,
    "RegionName": Kind.STRING,
    "ResourceId": Kind.STRING,
    "ResourceName": Kind.STRING,
    "ResourceType": Kind.STRING,
    "ServiceCategory": Kind.STRING,
    "ServiceName": Kind.STRING,
    "ServiceSubcategory": Kind.STRING,
    "SkuId": Kind.STRING,
    "SkuMeter": Kind.STRING,
    "SkuPriceDetails": Kind.JSON,
    "SkuPriceId": Kind.STRING,
    "SubAccountId": Kind.STRING,
    "SubAccountName": Kind.STRING,
    "SubAccountType": Kind.STRING,
    "Tags": Kind.JSON,
    # FOCUS 1.3 additions, nullable here.
    "ServiceProviderName": Kind.STRING,
    "HostProviderName": Kind.STRING,
    "ContractApplied": Kind.JSON,
    "AllocatedMethodId": Kind.STRING,
    "AllocatedMethodDetails": Kind.JSON,
    "AllocatedResourceId": Kind.STRING,
    "AllocatedResourceName": Kind.STRING,
    "AllocatedTags": Kind.JSON,
}

EXTENSIONS_COLUMN = "x_extensions"
"""JSON object holding every column of the file that is not a FOCUS column, as strings."""

FOCUS_1_3_ONLY = frozenset(
    {
        "ServiceProviderName",
        "HostProviderName",
        "ContractApplied",
        "AllocatedMethodId",
        "AllocatedMethodDetails",
        "AllocatedResourceId",
        "AllocatedResourceName",
        "AllocatedTags",
    }
)
FOCUS_1_2_ONLY = frozenset(
    {
        "BillingAccountType",
        "SubAccountType",
        "InvoiceId",
        "PricingCurrency",
        "PricingCurrencyContractedUnitPrice",
        "PricingCurrencyEffectiveCost",
        "PricingCurrencyListUnitPrice",
    }
)
FOCUS_1_1_ONLY = frozenset(
    {
        "CapacityReservationId",
        "CapacityReservationStatus",
        "CommitmentDiscountQuantity",
        "CommitmentDiscountUnit",
        "ServiceSubcategory",
        "SkuMeter",
        "SkuPriceDetails",
    }
)

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
