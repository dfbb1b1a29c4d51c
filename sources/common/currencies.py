"""ISO 4217 currency codes and their minor units, from Babel's copy of the Unicode CLDR.

The codes are those legal tender in some territory on `AS_OF` (CLDR territory-currency data with
`tender=True`, as Babel ships it; Babel comes with dbt, so no list is typed by hand). The date is
pinned, not today: the list then changes only when someone moves the date, and a code that ends
(BGN, replaced by the euro on 2026-01-31) stays valid for the bills still stated in it. Fund codes
(BOV, CLF, USN, …), precious metals and the test codes (XTS, XXX) are not legal tender anywhere, and
historic codes (DEM, HRK, …) no longer are, so all of them are left out: a bill in one of them is a
parse slip, not a currency.

Readers check a code's shape (`CODE_SHAPE`) as they parse; the load's quality suite checks it is
one of `ISO_4217_CURRENCIES`.
"""

from __future__ import annotations

from datetime import date
from functools import cache

from babel.core import get_global
from babel.numbers import get_currency_precision, get_territory_currencies

AS_OF = date(2026, 1, 1)
"""The day whose legal tender makes the list (154 codes with Babel 2.19 / CLDR 47)."""
CODE_SHAPE = r"^[A-Z]{3}$"
"""Three capital letters: what a reader can tell of a code without the list."""


@cache
def active_currencies(on: date = AS_OF) -> frozenset[str]:
    """The codes legal tender in at least one territory on `on`."""
    return frozenset(
        code
        for territory in get_global("territory_currencies")
        for code in get_territory_currencies(territory, on, tender=True)
    )


ISO_4217_CURRENCIES: frozenset[str] = active_currencies()


def minor_units(code: str) -> int:
    """Decimals an amount in `code` is stated with (JPY 0, USD 2, KWD 3), as CLDR gives them."""
    if code not in ISO_4217_CURRENCIES:
        raise ValueError(f"{code!r} is not an active ISO 4217 currency code")
    return get_currency_precision(code)
