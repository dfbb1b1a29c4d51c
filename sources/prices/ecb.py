"""European Central Bank euro foreign exchange reference rates (daily, 90-day and full history XML).

The ECB publishes one rate per currency per TARGET business day, as units of the currency per
1 EUR. They are what lets EUR billing exports and USD price lists meet in one reporting currency.
No authentication. The XML layout has been stable for two decades; if it changes, parsing fails
loudly rather than loading nothing.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import date
from decimal import Decimal, InvalidOperation

import polars as pl

from sources.common.http import HttpClient, base_url
from sources.common.types import DECIMAL

PROVIDER = "ECB"
BASE_URL_ENV = "FINOPS_ECB_BASE_URL"
DEFAULT_BASE_URL = "https://www.ecb.europa.eu"
FILES = {
    "daily": "/stats/eurofxref/eurofxref-daily.xml",
    "90d": "/stats/eurofxref/eurofxref-hist-90d.xml",
    "history": "/stats/eurofxref/eurofxref-hist.xml",
}
_CUBE = "{http://www.ecb.int/vocabulary/2002-08-01/eurofxref}Cube"

RATE_SCHEMA = {
    "rate_date": pl.Date,
    "base_currency": pl.String,
    "quote_currency": pl.String,
    "rate": DECIMAL,
    "source_url": pl.String,
}


class LayoutChanged(ValueError):
    """The payload is not the ECB reference-rate XML we know: refuse rather than load garbage."""


def rates_url(which: str = "daily") -> str:
    if which not in FILES:
        raise ValueError(f"unknown ECB file {which!r}; one of {', '.join(FILES)}")
    return base_url(BASE_URL_ENV, DEFAULT_BASE_URL) + FILES[which]


def fetch_reference_rates(client: HttpClient, which: str = "daily") -> tuple[str, bytes]:
    """(URL, raw XML) of one ECB reference-rate file."""
    url = rates_url(which)
    return url, client.get(url).content


def parse_reference_rates(payload: bytes, *, source_url: str) -> pl.DataFrame:
    """One row per day and currency: `rate` units of `quote_currency` per 1 EUR, exact decimals."""
    try:
        root = ET.fromstring(payload)
    except ET.ParseError as error:
        raise LayoutChanged(f"{source_url}: not XML ({error})") from error
    days: list[date] = []
    currencies: list[str] = []
    rates: list[Decimal] = []
    for day in root.iter(_CUBE):
        when = day.get("time")
        if when is None:
            continue
        try:
            rate_date = date.fromisoformat(when)
        except ValueError as error:
            raise LayoutChanged(f"{source_url}: day {when!r} is not an ISO date") from error
        for quote in day.findall(_CUBE):
            currency, rate = quote.get("currency"), quote.get("rate")
            if not currency or len(currency) != 3 or rate is None:
                raise LayoutChanged(f"{source_url}: {when}: a rate without currency code or value")
            try:
                value = Decimal(rate)
            except InvalidOperation as error:
                raise LayoutChanged(f"{source_url}: {when} {currency}: rate {rate!r} is not a number") from error
            if value <= 0:
                raise LayoutChanged(f"{source_url}: {when} {currency}: rate {rate!r} is not positive")
            days.append(rate_date)
            currencies.append(currency.upper())
            rates.append(value)
    if not rates:
        raise LayoutChanged(f"{source_url}: no <Cube time=…><Cube currency=… rate=…/> elements found")
    return pl.DataFrame(
        {
            "rate_date": days,
            "base_currency": ["EUR"] * len(rates),
            "quote_currency": currencies,
            "rate": rates,
            "source_url": [source_url] * len(rates),
        },
        schema=RATE_SCHEMA,
    ).sort("rate_date", "quote_currency")
