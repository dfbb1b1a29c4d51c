"""Read Azure Cost Management ActualCost and AmortizedCost exports (EA, MCA, legacy PAYG) into typed frames.

One parser serves both datasets: they share their columns and differ only in how reservations and
savings plans are costed (dbt combines them, see `int_azure__cost_lines`). Real exports differ
from each other in known ways, all handled here:

- a UTF-8 byte-order mark; PascalCase or camelCase headers (`SubscriptionId`, `subscriptionId`);
  localized headers carrying the English name in parentheses (`Abonnement-GUID (SubscriptionGuid)`);
- one concept under several names across EA, MCA and legacy layouts, resolved by ordered aliases
  (cost `CostInBillingCurrency` | `PreTaxCost` | `Cost`, currency `BillingCurrencyCode` |
  `BillingCurrency` | `Currency`, …): the first present wins, the others go to `_extra`;
- dates as `YYYY-MM-DD`, ISO date-times, or EA's `MM/DD/YYYY`: each date column must parse entirely
  in one of these formats (day-first is never guessed);
- EA tags without their outer braces (`"team": "ml","env": "prod"`), wrapped and checked as JSON;
- money in scientific notation (`5.64902E-05`) or Parquet doubles, read straight to DECIMAL(38, 12)
  (digits beyond the 12th decimal are rounded half to even, as polars casts them).

The columns are pinned (EA + MCA names); any other column is kept verbatim in the JSON column
`_extra`. Each row also gets its restatement key: the billing account (the subscription when the
file has no billing account) and the billing period start (the month of `Date` when the file has no
billing period columns).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from sources.common.delivery import LINEAGE_SCHEMA, Delivery, DeliveryWarning, ParsedDelivery
from sources.common.errors import RejectedInput
from sources.common.files import read_raw
from sources.common.manifests import azure_export
from sources.common.rejects import reject_first, shorten
from sources.common.row_checks import (
    WARNING,
    Check,
    NonNegative,
    OneOf,
    RowRules,
    Wording,
    check_rows,
    check_values,
    flag_rows,
    ordered,
    required,
)
from sources.common.typed import report_unparsed, trimmed_text, utc_timestamp
from sources.common.types import (
    DATETIME_FORMATS,
    DECIMAL,
    DECIMAL_EXPECTED,
    DECIMAL_SCALE,
    TIMESTAMP,
    Kind,
    polars_type,
)

ACTUAL_COST = "ActualCost"
AMORTIZED_COST = "AmortizedCost"

EXTRA_COLUMN = "_extra"
ACCOUNT_KEY_COLUMN = "_billing_account_id"
PERIOD_KEY_COLUMN = "_billing_period_start"


# The pinned raw columns: the EA export's columns in its own order, then what MCA and newer exports add.
COLUMNS: dict[str, Kind] = {
    "InvoiceSectionName": Kind.STRING,
    "AccountName": Kind.STRING,
    "AccountOwnerId": Kind.STRING,
    "SubscriptionId": Kind.STRING,
    "SubscriptionName": Kind.STRING,
    "ResourceGroup": Kind.STRING,
    "ResourceLocation": Kind.STRING,
    "Date": Kind.DATE,
    "ProductName": Kind.STRING,
    "MeterCategory": Kind.STRING,
    "MeterSubCategory": Kind.STRING,
    "MeterId": Kind.STRING,
    "MeterName": Kind.STRING,
    "MeterRegion": Kind.STRING,
    "UnitOfMeasure": Kind.STRING,
    "Quantity": Kind.DECIMAL,
    "EffectivePrice": Kind.DECIMAL,
    "CostInBillingCurrency": Kind.DECIMAL,
    "CostCenter": Kind.STRING,
    "ConsumedService": Kind.STRING,
    "ResourceId": Kind.STRING,
    "Tags": Kind.JSON,
    "OfferId": Kind.STRING,
    "AdditionalInfo": Kind.JSON,
    "ServiceInfo1": Kind.STRING,
    "ServiceInfo2": Kind.STRING,
    "ResourceName": Kind.STRING,
    "ReservationId": Kind.STRING,
    "ReservationName": Kind.STRING,
    "UnitPrice": Kind.DECIMAL,
    "ProductOrderId": Kind.STRING,
    "ProductOrderName": Kind.STRING,
    "Term": Kind.STRING,
    "PublisherType": Kind.STRING,
    "PublisherName": Kind.STRING,
    "ChargeType": Kind.STRING,
    "Frequency": Kind.STRING,
    "PricingModel": Kind.STRING,
    "AvailabilityZone": Kind.STRING,
    "BillingAccountId": Kind.STRING,
    "BillingAccountName": Kind.STRING,
    "BillingCurrencyCode": Kind.STRING,
    "BillingPeriodStartDate": Kind.DATE,
    "BillingPeriodEndDate": Kind.DATE,
    "BillingProfileId": Kind.STRING,
    "BillingProfileName": Kind.STRING,
    "InvoiceSectionId": Kind.STRING,
    "IsAzureCreditEligible": Kind.STRING,
    "PartNumber": Kind.STRING,
    "PayGPrice": Kind.DECIMAL,
    "PlanName": Kind.STRING,
    "ServiceFamily": Kind.STRING,
    "CostAllocationRuleName": Kind.STRING,
    "benefitId": Kind.STRING,
    "benefitName": Kind.STRING,
    # MCA and newer EA exports
    "InvoiceId": Kind.STRING,
    "PreviousInvoiceId": Kind.STRING,
    "PartnerName": Kind.STRING,
    "ResellerName": Kind.STRING,
    "ResellerMpnId": Kind.STRING,
    "CustomerTenantId": Kind.STRING,
    "CustomerName": Kind.STRING,
    "ServicePeriodStartDate": Kind.DATE,
    "ServicePeriodEndDate": Kind.DATE,
    "ProductId": Kind.STRING,
    "PublisherId": Kind.STRING,
    "Location": Kind.STRING,
    "PricingCurrency": Kind.STRING,
    "CostInPricingCurrency": Kind.DECIMAL,
    "CostInUsd": Kind.DECIMAL,
    "PayGCostInBillingCurrency": Kind.DECIMAL,
    "PayGCostInUsd": Kind.DECIMAL,
    "ExchangeRatePricingToBilling": Kind.DECIMAL,
    "ExchangeRateDate": Kind.STRING,
}

ALIASES: dict[str, tuple[str, ...]] = {
    "CostInBillingCurrency": ("PreTaxCost", "Cost"),
    "BillingCurrencyCode": ("BillingCurrency", "Currency"),
    "SubscriptionId": ("SubscriptionGuid",),
    "Date": ("UsageDateTime", "UsageDate"),
    "Quantity": ("UsageQuantity",),
    "ResourceGroup": ("ResourceGroupName",),
    "ProductName": ("Product",),
    "InvoiceSectionName": ("InvoiceSection",),
    "ResourceId": ("InstanceId", "InstanceName"),
    "PricingCurrency": ("PricingCurrencyCode",),
}
"""Other names of a pinned column, in order of preference after the pinned name itself."""

REQUIRED: tuple[tuple[str, ...], ...] = (
    ("Date",),
    ("CostInBillingCurrency",),
    ("BillingCurrencyCode",),
    ("BillingAccountId", "SubscriptionId"),
    ("MeterCategory", "ProductName"),
)
"""Each entry is satisfied by any one of its columns."""

_VALUES_BEFORE_ACCOUNT = (
    required("Date", "Date must not be empty"),
    required("CostInBillingCurrency", "the cost must not be empty"),
    required("BillingCurrencyCode", "the billing currency must not be empty"),
)
_NO_ACCOUNT = "the row names neither a billing account nor a subscription"
"""Reported on the account column the file has (BillingAccountId, else SubscriptionId)."""
_VALUES_AFTER_ACCOUNT = (
    ordered("BillingPeriodEndDate", "BillingPeriodStartDate", "the billing period ends before it starts"),
)
_SERVICE_COLUMNS = ("MeterCategory", "ConsumedService", "ProductName")
"""What FOCUS's ServiceName is read from, in int_azure__cost_lines' order: a row must name one (FOCUS: never null)."""
_NO_SERVICE = "the row names no service: MeterCategory, ConsumedService and ProductName are all empty"
"""Reported on the service column the file has (MeterCategory, else ProductName)."""
_WORDING = Wording(named=False, found=None)

_NAME_RANK: dict[str, tuple[str, int]] = {name.lower(): (name, 0) for name in COLUMNS} | {
    alias.lower(): (name, rank) for name, aliases in ALIASES.items() for rank, alias in enumerate(aliases, start=1)
}
_LOCALIZED_HEADER = re.compile(r"\(\s*([A-Za-z][A-Za-z0-9_]*)\s*\)\s*$")


@dataclass(frozen=True)
class _DateFormat:
    label: str
    shape: str
    """A regex the whole value must match, so `3/1/21` is never read as the year 21."""
    formats: tuple[str, ...]


_DATE_FORMATS = (
    _DateFormat("YYYY-MM-DD", r"^\d{4}-\d{2}-\d{2}$", ("%Y-%m-%d",)),
    _DateFormat(
        "an ISO 8601 date-time",
        r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$",
        tuple(fmt for fmt in DATETIME_FORMATS if "%H" in fmt),
    ),
    _DateFormat("MM/DD/YYYY", r"^\d{1,2}/\d{1,2}/\d{4}$", ("%m/%d/%Y",)),
)


def output_schema() -> dict[str, pl.DataType]:
    """The columns and types of every frame this module returns, in order."""
    schema: dict[str, pl.DataType] = {name: polars_type(kind) for name, kind in COLUMNS.items()}
    schema[EXTRA_COLUMN] = pl.String()
    schema[ACCOUNT_KEY_COLUMN] = pl.String()
    schema[PERIOD_KEY_COLUMN] = TIMESTAMP
    return schema | LINEAGE_SCHEMA


ROW_RULES = RowRules(
    non_negative=(
        NonNegative(
            "Quantity",
            OneOf("ChargeType", ("Usage",), ignore_case=True),
            "on usage lines (a refund may be negative)",
            severity=WARNING,
        ),
    )
)
"""Cost details carry no line item id, so no key is checked for uniqueness."""


def parse_actual_cost_delivery(delivery: Delivery) -> ParsedDelivery:
    """Connector for `azure_actual`: an ActualCost export file or run folder."""
    return parse_cost_details_delivery(delivery, dataset=ACTUAL_COST)


def parse_amortized_cost_delivery(delivery: Delivery) -> ParsedDelivery:
    """Connector for `azure_amortized`: an AmortizedCost export file or run folder."""
    return parse_cost_details_delivery(delivery, dataset=AMORTIZED_COST)


def parse_cost_details_delivery(delivery: Delivery, *, dataset: str) -> ParsedDelivery:
    """Every file of one delivery (the manifest's blobs when there is a manifest) as one frame."""
    manifest = azure_export(delivery, dataset, _DATASET_OF_TYPE)
    files = manifest.files if manifest else delivery.files()
    if not files:
        raise RejectedInput(delivery.name, "holds no CSV, CSV.gz or Parquet files")
    frames = [_read_file(file, delivery.display_name(file)) for file in files]
    frame = pl.concat(frames, how="vertical")
    if frame.height == 0:
        raise RejectedInput(delivery.name, "has headers but no data rows: nothing says which billing period it covers")
    check_rows(frame, ROW_RULES)
    layout = _layout(frame)
    frame, warnings = _derive_legacy_columns(frame)
    warnings += _pricing_currency_warnings(frame)
    version = f"Azure {dataset}" + (f" {manifest.data_version}" if manifest and manifest.data_version else "")
    return ParsedDelivery(frame=frame, format_version=f"{version} ({layout})", warnings=warnings)


def _derive_legacy_columns(frame: pl.DataFrame) -> tuple[pl.DataFrame, tuple[DeliveryWarning, ...]]:
    """Fill what older layouts leave out and the models need, with a warning for each thing derived.

    - ChargeType: legacy pay-as-you-go usage exports (`SubscriptionGuid`, `UsageDateTime`, `PreTaxCost`,
      also localized) have none, nor a Frequency: they hold nothing but metered usage, billed as used.
      A row without a ChargeType is `Usage` (Frequency `UsageBased` where it has none).
    - PricingModel, in files without the column (legacy pay-as-you-go, the 2025-04 ActualCost and
      AmortizedCost layouts): `Reservation` on a row naming its reservation (a `/microsoft.capacity/`
      benefitId, or a ReservationId), `SavingsPlan` on one naming a savings plan benefit
      (`/microsoft.billingbenefits/`), `Spot` on a ` Spot` or ` Low Priority` meter (Azure's names for its
      interruptible VMs), else `OnDemand`; Tax rows keep none.
    - PricingModel on a row that names a reservation or savings plan but leaves the column empty (exports
      written before Microsoft filled it) or names another model: the commitment's, as above. FOCUS makes a
      charge a commitment covered `Committed` whatever the pricing model says, and the cost lines read the
      commitment from PricingModel (which usage is billed 0, which purchase is kept beside the amortized
      export); the commitment columns come from the same ids, so the two always agree.
    """
    no_charge_type = pl.col("ChargeType").is_null()
    charge_type = pl.coalesce(pl.col("ChargeType"), pl.lit("Usage"))
    is_tax = charge_type.str.to_lowercase() == "tax"
    benefit = pl.col("benefitId").str.to_lowercase()
    commitment = (
        pl.when(is_tax)
        .then(None)
        .when(benefit.str.contains("/microsoft.capacity/", literal=True))
        .then(pl.lit("Reservation"))
        .when(benefit.str.contains("/microsoft.billingbenefits/", literal=True))
        .then(pl.lit("SavingsPlan"))
        .when(pl.col("ReservationId").is_not_null())
        .then(pl.lit("Reservation"))
    )
    no_pricing_model = pl.col(_NO_PRICING_MODEL_COLUMN)
    stated_commitment = pl.col("PricingModel").str.replace_all(" ", "").str.to_lowercase().is_in(_COMMITMENT_MODELS)
    commitment_unstated = ~no_pricing_model & commitment.is_not_null() & ~stated_commitment.fill_null(False)
    warnings = (
        flag_rows(
            frame,
            "ChargeType",
            no_charge_type,
            "ChargeType derived as Usage",
            "no ChargeType (a legacy pay-as-you-go usage export has none): read as Usage, billed as used"
            " (Frequency UsageBased where empty)",
        ),
        flag_rows(
            frame,
            "PricingModel",
            no_pricing_model,
            "PricingModel derived",
            "no PricingModel column in this layout: Reservation or SavingsPlan where the row names one,"
            " Spot on Spot and Low Priority meters, else OnDemand",
        ),
        flag_rows(
            frame,
            "PricingModel",
            commitment_unstated,
            "PricingModel derived from the commitment",
            "the row names a reservation or savings plan (ReservationId or benefitId) but its PricingModel is"
            " empty or another model: read as Reservation or SavingsPlan, the commitment it names",
        ),
    )
    meter = pl.col("MeterName").str.strip_chars()
    derived_pricing_model = (
        pl.when(is_tax)
        .then(None)
        .when(commitment.is_not_null())
        .then(commitment)
        .when(meter.str.ends_with(" Spot") | meter.str.ends_with(" Low Priority"))
        .then(pl.lit("Spot"))
        .otherwise(pl.lit("OnDemand"))
    )
    derived = frame.with_columns(
        charge_type.alias("ChargeType"),
        pl.when(no_charge_type & pl.col("Frequency").is_null())
        .then(pl.lit("UsageBased"))
        .otherwise(pl.col("Frequency"))
        .alias("Frequency"),
        pl.when(no_pricing_model | commitment_unstated)
        .then(derived_pricing_model)
        .otherwise(pl.col("PricingModel"))
        .alias("PricingModel"),
    ).drop(_NO_PRICING_MODEL_COLUMN)
    return derived, tuple(warning for warning in warnings if warning is not None)


def _pricing_currency_warnings(frame: pl.DataFrame) -> tuple[DeliveryWarning, ...]:
    """Rows priced in another currency than billed, with nothing to convert their prices by.

    dbt states their FOCUS PricingCurrency* columns in the billing currency instead (FOCUS requires
    PricingCurrencyEffectiveCost on every row), so the warning says the pricing currency is not kept.
    """
    unconvertible = (
        pl.col("PricingCurrency").is_not_null()
        & (pl.col("PricingCurrency") != pl.col("BillingCurrencyCode"))
        & pl.col("CostInPricingCurrency").is_null()
        & (pl.col("ExchangeRatePricingToBilling").is_null() | (pl.col("ExchangeRatePricingToBilling") == 0))
    )
    warning = flag_rows(
        frame,
        "ExchangeRatePricingToBilling",
        unconvertible,
        "No exchange rate to the pricing currency",
        "priced in another currency than billed, with neither CostInPricingCurrency nor"
        " ExchangeRatePricingToBilling: its FOCUS pricing-currency columns are stated in the billing currency",
    )
    return (warning,) if warning else ()


def read_cost_details_file(path: Path, *, source_file: str | None = None) -> pl.DataFrame:
    """Parse and validate one export file; a header-only file gives an empty frame of the output schema.

    Values the layout lacks are not derived here but for the whole delivery (parse_cost_details_delivery).
    Raises RejectedInput naming the file, and where there is one the row and column.
    """
    return _read_file(path, source_file or str(path)).select(output_schema().keys())


_COMMITMENT_MODELS = ("reservation", "savingsplan")
"""PricingModel values (lower case, spaces removed) that name a commitment, as int_azure__cost_lines reads them."""

_NO_PRICING_MODEL_COLUMN = "_no_pricing_model"
"""True on the rows of a file without a PricingModel column: derived for the delivery, then dropped."""


def _read_file(path: Path, name: str) -> pl.DataFrame:
    raw = read_raw(path, name)
    raw = _canonical_column_names(raw, name)
    _check_required_columns(raw, name)
    absent = pl.lit("PricingModel" not in raw.columns).alias(_NO_PRICING_MODEL_COLUMN)
    if raw.height == 0:
        return pl.DataFrame(schema=output_schema()).with_columns(absent)
    typed = _typed_frame(raw, name)
    typed = typed.with_columns(
        pl.coalesce(pl.col("BillingAccountId"), pl.col("SubscriptionId")).alias(ACCOUNT_KEY_COLUMN),
        pl.coalesce(pl.col("BillingPeriodStartDate"), pl.col("Date").dt.truncate("1mo")).alias(PERIOD_KEY_COLUMN),
        pl.lit(name).alias("_source_file"),
        pl.int_range(1, typed.height + 1, dtype=pl.Int64).alias("_source_row"),
    )
    account_column = "BillingAccountId" if "BillingAccountId" in raw.columns else "SubscriptionId"
    account = Check(account_column, pl.col(ACCOUNT_KEY_COLUMN).is_null(), _NO_ACCOUNT)
    service_column = "MeterCategory" if "MeterCategory" in raw.columns else "ProductName"
    service = Check(service_column, pl.all_horizontal(pl.col(c).is_null() for c in _SERVICE_COLUMNS), _NO_SERVICE)
    rules = (*_VALUES_BEFORE_ACCOUNT, account, *_VALUES_AFTER_ACCOUNT, service)
    check_values(typed, RowRules(values=rules, wording=_WORDING))
    return typed.select(*output_schema().keys(), absent)


def _canonical_column_names(raw: pl.DataFrame, name: str) -> pl.DataFrame:
    """Rename headers to the pinned names; of several aliases of one column the preferred one wins.

    Columns that are not pinned keep their header (the English name, for a localized one) and end up
    in `_extra`, as do the less preferred aliases of a column present under a better name.
    """
    candidates: dict[str, list[tuple[int, str]]] = {}
    extras: dict[str, str] = {}
    for column in raw.columns:
        cleaned = _english_name(column)
        canonical, rank = _NAME_RANK.get(cleaned.lower(), (None, 0))
        if canonical is None:
            extras[column] = cleaned
        else:
            candidates.setdefault(canonical, []).append((rank, column))
    renames: dict[str, str] = {}
    for canonical, found in candidates.items():
        found.sort()
        best_rank, best = found[0]
        if len(found) > 1 and found[1][0] == best_rank:
            raise RejectedInput(name, f"has the column twice (as {best!r} and {found[1][1]!r})", column=canonical)
        renames[best] = canonical
        extras.update({column: _english_name(column) for _, column in found[1:]})
    seen: dict[str, str] = {}
    for column, target in [*renames.items(), *extras.items()]:
        if target.lower() in seen:
            raise RejectedInput(
                name, f"has the column twice (as {seen[target.lower()]!r} and {column!r})", column=target
            )
        seen[target.lower()] = column
    return raw.rename(renames | {column: f"{EXTRA_COLUMN}.{target}" for column, target in extras.items()})


def _english_name(column: str) -> str:
    """The header without BOM and spaces; for `Abonnement-GUID (SubscriptionGuid)`, `SubscriptionGuid`."""
    cleaned = column.lstrip("\ufeff").strip()
    match = _LOCALIZED_HEADER.search(cleaned)
    return match.group(1) if match else cleaned


def _check_required_columns(raw: pl.DataFrame, name: str) -> None:
    present = set(raw.columns)
    for options in REQUIRED:
        if present.isdisjoint(options):
            names = [name for option in options for name in (option, *ALIASES.get(option, ()))]
            raise RejectedInput(
                name,
                f"is missing a required column: none of {', '.join(names)} is present",
                column=options[0],
            )


def _typed_frame(raw: pl.DataFrame, name: str) -> pl.DataFrame:
    columns: list[pl.Expr] = []
    for column, kind in COLUMNS.items():
        if column not in raw.columns:
            columns.append(pl.lit(None, dtype=output_schema()[column]).alias(column))
        elif kind is Kind.DATE:
            columns.append(_date_column(raw, column, name))
        else:
            columns.append(typed_column(raw, column, kind))
    extras = [column for column in raw.columns if column.startswith(f"{EXTRA_COLUMN}.")]
    extra = (
        pl.struct([trimmed_text(raw, column).alias(column.removeprefix(f"{EXTRA_COLUMN}.")) for column in extras])
        .struct.json_encode()
        .alias(EXTRA_COLUMN)
        if extras
        else pl.lit(None, dtype=pl.String).alias(EXTRA_COLUMN)
    )
    typed = raw.select(*columns, extra)
    for column, kind in COLUMNS.items():
        if column in raw.columns and kind in (Kind.DECIMAL, Kind.JSON):
            _report_unparsed(raw, typed, column, kind, name)
    return typed


def typed_column(raw: pl.DataFrame, column: str, kind: Kind) -> pl.Expr:
    dtype = raw.schema[column]
    if kind is Kind.DECIMAL:
        if dtype.is_float():
            # Through the shortest decimal text of the double: 0.1 stays 0.1, not 0.1000000000000000055.
            return pl.col(column).cast(pl.String).str.to_decimal(scale=DECIMAL_SCALE).cast(DECIMAL).alias(column)
        if dtype.is_numeric() or isinstance(dtype, pl.Decimal):
            return pl.col(column).cast(DECIMAL, strict=False).alias(column)
        return trimmed_text(raw, column).cast(DECIMAL, strict=False).alias(column)
    text = trimmed_text(raw, column)
    if kind is Kind.JSON and column == "Tags":
        # EA writes tags without their outer braces: `"team": "ml","env": "prod"`.
        text = pl.when(text.str.starts_with("{")).then(text).otherwise(pl.concat_str(pl.lit("{"), text, pl.lit("}")))
    return text.alias(column)


def _date_column(raw: pl.DataFrame, column: str, name: str) -> pl.Expr:
    """A date column as a UTC timestamp, parsed entirely in the one format its first value has."""
    stored = utc_timestamp(raw, column)
    if stored is not None:
        return stored
    values = raw.select(trimmed_text(raw, column)).to_series()
    present = values.drop_nulls()
    if present.is_empty():
        return pl.lit(None, dtype=TIMESTAMP).alias(column)
    first = present[0]
    chosen = next((fmt for fmt in _DATE_FORMATS if re.match(fmt.shape, first)), None)
    if chosen is None:
        row = int(values.is_not_null().arg_true()[0]) + 1
        raise RejectedInput(
            name,
            f"{shorten(first)!r} is not a date as YYYY-MM-DD, MM/DD/YYYY or an ISO 8601 date-time",
            row=row,
            column=column,
        )
    text = trimmed_text(raw, column)
    parsed = pl.coalesce(
        [text.str.to_datetime(fmt, strict=False, time_zone="UTC", time_unit="us") for fmt in chosen.formats]
    )
    expr = pl.when(text.str.contains(chosen.shape)).then(parsed).dt.replace_time_zone(None).alias(column)
    failed = values.is_not_null() & raw.select(expr).to_series().is_null()
    reject_first(
        failed,
        values,
        name,
        column,
        lambda value: f"{shorten(value)!r} is not a date in {chosen.label}, the format of this column's first value",
    )
    return expr


def _report_unparsed(raw: pl.DataFrame, typed: pl.DataFrame, column: str, kind: Kind, name: str) -> None:
    """Reject the file at the first value present in the file that did not parse."""
    if kind is Kind.DECIMAL:
        expected = DECIMAL_EXPECTED
    else:
        expected = 'a JSON object of tags (`"key": "value"` pairs)' if column == "Tags" else "a JSON object"
    report_unparsed(
        typed, column, kind, name, present=raw.select(trimmed_text(raw, column)).to_series(), expected=expected
    )


def _layout(frame: pl.DataFrame) -> str:
    """EA, MCA or a pay-as-you-go export, from the columns it filled (for audit.loads only)."""
    filled = {
        column
        for column in ("InvoiceId", "ProductId", "AccountOwnerId", "BillingAccountId")
        if frame[column].is_not_null().any()
    }
    if filled & {"InvoiceId", "ProductId"}:
        return "MCA"
    if filled & {"AccountOwnerId", "BillingAccountId"}:
        return "EA"
    return "pay-as-you-go"


_DATASET_OF_TYPE = {"actualcost": ACTUAL_COST, "usage": ACTUAL_COST, "amortizedcost": AMORTIZED_COST}
