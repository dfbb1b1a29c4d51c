"""Every documented layout and quirk parses, with exactly the warnings the policy gives it and every cost kept.

Totals and expected derived values are computed from the files (tests/conformance/cases.py), not read back
from the readers.
"""

from __future__ import annotations

import csv
import shutil
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from pipelines.lib.catalog.billing import BILLING_SOURCES
from sources.common.delivery import Delivery, ParsedDelivery
from sources.common.detect import detect_source
from sources.common.errors import RejectedInput
from sources.common.row_checks import WARNING
from sources.focus.reader import ROW_RULES as FOCUS_ROW_RULES
from tests.conformance.cases import (
    CASE_BY_ID,
    CASES,
    CONFORMANCE,
    Case,
    delivered_cost,
    number,
    pick,
    rows,
)

PARSERS = {source.name: source.parse for source in BILLING_SOURCES}
COST_COLUMNS = {
    "focus": ("BilledCost", "BillingCurrency"),
    "azure_actual": ("CostInBillingCurrency", "BillingCurrencyCode"),
    "azure_amortized": ("CostInBillingCurrency", "BillingCurrencyCode"),
    "oci_cost": ("cost_my_cost", "cost_currency_code"),
}


def parse(tmp_path: Path, case: Case) -> ParsedDelivery:
    landing = tmp_path / "landing" / case.source
    landing.mkdir(parents=True)
    shutil.copy2(case.path, landing / case.path.name)
    return PARSERS[case.source](Delivery(source=case.source, path=landing / case.path.name, landing_root=landing))


def per_currency(frame: pl.DataFrame, source: str) -> dict[str, Decimal]:
    cost, currency = COST_COLUMNS[source]
    totals: dict[str, Decimal] = defaultdict(Decimal)
    for row in frame.select(cost, currency).iter_rows():
        totals[row[1]] += row[0]
    return dict(totals)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_each_layout_loads_with_exactly_its_warnings_and_every_cost(tmp_path: Path, case: Case):
    assert detect_source(case.path) == case.source
    parsed = parse(tmp_path, case)

    assert {warning.rule: warning.rows for warning in parsed.warnings} == case.warnings
    assert len(parsed.warnings) == len(case.warnings)
    for warning in parsed.warnings:
        assert warning.file == case.path.name and warning.row is not None, warning
    assert parsed.to_polars().height == len(rows(case.path))
    assert per_currency(parsed.to_polars(), case.source) == delivered_cost(case)
    if case.format_version:
        assert parsed.format_version == case.format_version


def _meter_is_spot(meter: str) -> bool:
    return meter.endswith((" Spot", " Low Priority"))


@pytest.mark.parametrize(
    "case_id", ["azure-payg-legacy", "azure-payg-german", "azure-payg-mixed-camelcase", "azure-ea-actualcost-2025-04"]
)
def test_azure_layouts_without_charge_type_or_pricing_model_get_them_derived(tmp_path: Path, case_id: str):
    """Legacy pay-as-you-go usage is Usage, billed as used; the pricing model follows the row's reservation or meter."""
    case = CASE_BY_ID[case_id]
    frame = parse(tmp_path, case).to_polars()
    lines = rows(case.path)

    expected_charge_types = [pick(line, "ChargeType") or "Usage" for line in lines]
    expected_frequencies = [pick(line, "Frequency") or "UsageBased" for line in lines]
    expected_models = [
        "Reservation"
        if pick(line, "ReservationId")
        else "Spot"
        if _meter_is_spot(pick(line, "MeterName"))
        else "OnDemand"
        for line in lines
    ]
    assert frame["ChargeType"].to_list() == expected_charge_types
    assert frame["Frequency"].to_list() == expected_frequencies
    assert frame["PricingModel"].to_list() == expected_models
    # the fixtures exercise each branch: a Low Priority meter, a reservation's usage and purchase
    assert {"azure-payg-legacy": "Spot", "azure-ea-actualcost-2025-04": "Reservation"}.get(case_id, "OnDemand") in (
        expected_models
    )


def test_azure_files_naming_their_pricing_model_keep_it_even_where_empty(tmp_path: Path):
    """A layout with the column is not second-guessed: the MCA tax line keeps its empty PricingModel."""
    case = Case("mca", "azure_actual", CONFORMANCE.parent / "azure" / "mca_actualcost_2026-10.csv")
    parsed = parse(tmp_path, case)
    assert parsed.warnings == ()
    assert parsed.to_polars()["PricingModel"].to_list() == [
        pick(line, "PricingModel") or None for line in rows(case.path)
    ]


def test_mca_billed_in_eur_and_priced_in_usd_keeps_both_currencies(tmp_path: Path):
    case = CASE_BY_ID["azure-mca-amortizedcost-eur-billed-usd-priced"]
    frame = parse(tmp_path, case).to_polars()
    lines = rows(case.path)

    assert frame["PricingCurrency"].to_list() == [pick(line, "pricingCurrency") for line in lines] == ["USD"] * 3
    assert frame["CostInPricingCurrency"].to_list() == [number(pick(line, "costInPricingCurrency")) for line in lines]
    assert frame["ExchangeRatePricingToBilling"].to_list() == [Decimal("0.92")] * 3


def test_oci_zero_cost_lines_take_the_tenancys_currency_and_costly_ones_still_need_their_own(tmp_path: Path):
    case = CASE_BY_ID["oci-zero-cost-without-currency"]
    frame = parse(tmp_path, case).to_polars()
    lines = rows(case.path)
    assert [line["cost/currencyCode"] for line in lines].count("") == 2
    assert frame["cost_currency_code"].to_list() == ["USD"] * len(lines)

    # The same file with a line that costs something and names no currency is still rejected at that line.
    header, *body = case.path.read_text(encoding="utf-8").splitlines()
    costly = body[-1].replace(",0E-9,", ",0.5,")
    assert costly != body[-1]
    bad = tmp_path / "bad" / "costly-without-currency.csv"
    bad.parent.mkdir()
    bad.write_text("\n".join([header, *body[:-1], costly]) + "\n", encoding="utf-8")
    with pytest.raises(RejectedInput) as rejected:
        parse(tmp_path / "second", Case("costly", "oci_cost", bad))
    assert (rejected.value.row, rejected.value.column) == (len(body), "cost/currencyCode")


def test_oci_delivery_without_any_currency_is_rejected_rather_than_guessed(tmp_path: Path):
    case = CASE_BY_ID["oci-zero-cost-without-currency"]
    header, *body = case.path.read_text(encoding="utf-8").splitlines()
    only_free = tmp_path / "free" / "free-tier-only.csv"
    only_free.parent.mkdir()
    only_free.write_text("\n".join([header, *body[-2:]]) + "\n", encoding="utf-8")
    with pytest.raises(RejectedInput) as rejected:
        parse(tmp_path / "second", Case("free", "oci_cost", only_free))
    assert (rejected.value.row, rejected.value.column) == (1, "cost/currencyCode")
    assert "names no single currency" in rejected.value.reason


def test_focus_sample_negative_usage_quantities_load_and_are_left_to_the_suites_warning(tmp_path: Path):
    """The public sample's 12 Microsoft usage reversals (FOCUS: ConsumedQuantity is any decimal) load as written."""
    case = CASE_BY_ID["focus-1.0-public-sample"]
    frame = parse(tmp_path, case).to_polars()
    negative = [
        line
        for line in rows(case.path)
        if line["ChargeCategory"] == "Usage" and number(line["ConsumedQuantity"]) < 0 and line["ChargeClass"] == "NULL"
    ]
    assert len(negative) == 12 and {line["ProviderName"] for line in negative} == {"Microsoft"}
    loaded = frame.filter((pl.col("ChargeCategory") == "Usage") & (pl.col("ConsumedQuantity") < 0))
    assert sorted(loaded["ConsumedQuantity"].to_list()) == sorted(number(line["ConsumedQuantity"]) for line in negative)
    assert {rule.column: rule.severity for rule in FOCUS_ROW_RULES.non_negative} == {
        "ConsumedQuantity": WARNING,
        "PricingQuantity": WARNING,
    }


@pytest.mark.parametrize("column", ["ServiceName", "ProviderName"])
def test_a_focus_line_without_what_the_spec_requires_and_nothing_derives_is_rejected(tmp_path: Path, column: str):
    """FOCUS: ServiceName and ProviderName must not be null, and nothing else on the line says what they are."""
    case = CASE_BY_ID["azure-focuscost-1.2-eur-billed-usd-priced"]
    lines = rows(case.path)
    header = list(lines[0])
    lines[1][column] = ""
    bad = tmp_path / "bad" / f"no-{column}.csv"
    bad.parent.mkdir()
    with bad.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, header)
        writer.writeheader()
        writer.writerows(lines)
    with pytest.raises(RejectedInput) as rejected:
        parse(tmp_path / "second", Case("bad", "focus", bad))
    assert (rejected.value.file, rejected.value.row, rejected.value.column) == (bad.name, 2, column)
