"""The currency list readers and suites check against is Babel's CLDR data, and it is the list it always was."""

from __future__ import annotations

from datetime import date

import pytest

from sources.common.currencies import ISO_4217_CURRENCIES, active_currencies, minor_units

# The hand-typed list this project used before taking it from Babel (legal tender on 2026-01-01).
HAND_TYPED = frozenset(
    """
    AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD CAD
    CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF
    GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK
    LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD
    OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN
    SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XCD XCG XOF XPF
    YER ZAR ZMW ZWG
    """.split()  # noqa: SIM905 (a table of codes reads better than 154 quoted strings)
)


def test_the_list_is_the_hand_typed_one():
    assert len(HAND_TYPED) == 154
    assert ISO_4217_CURRENCIES == HAND_TYPED


@pytest.mark.parametrize(
    "code",
    [
        "DEM",  # replaced by the euro in 2002
        "HRK",  # replaced by the euro in 2023
        "VEF",  # redenominated to VES
        "BOV",  # a fund code, not legal tender
        "USN",  # next-day dollars, a fund code
        "XAU",  # gold
        "XTS",  # reserved for testing
        "XXX",  # no currency
    ],
)
def test_historic_fund_and_test_codes_are_not_currencies(code: str):
    assert code not in ISO_4217_CURRENCIES


def test_a_code_that_ended_after_the_pinned_day_stays():
    """BGN ended with Bulgaria's euro on 2026-01-31; January bills are stated in it, so the day is pinned."""
    assert "BGN" in ISO_4217_CURRENCIES
    assert "BGN" not in active_currencies(date(2026, 3, 1))
    assert "EUR" in active_currencies(date(2026, 3, 1))


@pytest.mark.parametrize(("code", "decimals"), [("JPY", 0), ("KRW", 0), ("USD", 2), ("EUR", 2), ("KWD", 3), ("BHD", 3)])
def test_minor_units(code: str, decimals: int):
    assert minor_units(code) == decimals


def test_minor_units_of_no_currency_is_an_error():
    with pytest.raises(ValueError, match="XXX"):
        minor_units("XXX")
