"""Azure Retail Prices API: list prices of GPU virtual machines (`GET /api/retail/prices`, no key).

One OData query per region asks for Virtual Machines whose ARM size is of a GPU series (NC, ND, NV),
so the API returns GPU VMs only. Pages follow `NextPageLink` (rebased onto our base URL, so a mirror or
test server keeps serving the later pages); when a full page comes back without one — the API has
been seen to drop it while `$skip` paging still worked — the next page is asked for by `$skip`.

Rows as published: Consumption is per instance-hour (on-demand, or `Spot` / `Low Priority` in the
SKU or meter name → spot / interruptible), each Consumption row's `savingsPlan` list gives hourly
1- and 3-year savings-plan rates, and Reservation rows are priced for the whole term (1 or 3 years).
Windows meters, dev/test prices, zero prices and non-primary meter regions are dropped. The API says
nothing about GPUs: the size (armSkuName) resolves to GPU model and count via `gpu_instance_types`.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime
from decimal import Decimal
from urllib.parse import quote, urlencode, urlsplit

import polars as pl

from sources.common.http import FetchError, HttpClient, base_url
from sources.prices.offers import MONEY, OFFER_SCHEMA, LayoutChanged, Payload, PayloadStore, PriceFeed, check_offers

PROVIDER = "Microsoft"
BASE_URL_ENV = "FINOPS_AZURE_PRICES_BASE_URL"
DEFAULT_BASE_URL = "https://prices.azure.com"
REGIONS_ENV = "FINOPS_AZURE_PRICE_REGIONS"
DEFAULT_REGIONS = ("eastus", "westeurope")
PATH = "/api/retail/prices"
API_VERSION = "2023-01-01-preview"
"""The only version returning `savingsPlan`; its filter values are case-sensitive ('Virtual Machines')."""
GPU_SERIES = ("NC", "ND", "NV")
"""ARM size prefixes `Standard_NC…`, `Standard_ND…`, `Standard_NV…`: Azure's GPU VM families."""
PAGE_SIZE = 1000
MAX_PAGES = 100
TERMS = {"1 Year": 1, "3 Years": 3}


def regions() -> list[str]:
    """Regions to query, from FINOPS_AZURE_PRICE_REGIONS (comma-separated ARM names) or the default.

    Names go into the OData filter, so only ARM region names (lower-case letters and digits) are accepted.
    """
    configured = list(dict.fromkeys(r.strip() for r in os.environ.get(REGIONS_ENV, "").split(",") if r.strip()))
    bad = [name for name in configured if not re.fullmatch(r"[a-z][a-z0-9]{2,40}", name)]
    if bad:
        raise ValueError(f"{PROVIDER}: {REGIONS_ENV}: {bad[0]!r} is not an Azure region name such as eastus")
    return configured or list(DEFAULT_REGIONS)


def gpu_filter(region: str) -> str:
    """OData filter: Virtual Machines of a GPU series in one region (values are case-sensitive)."""
    series = " or ".join(f"contains(armSkuName, 'Standard_{prefix}')" for prefix in GPU_SERIES)
    return f"serviceName eq 'Virtual Machines' and armRegionName eq '{region}' and ({series})"


def page_url(root: str, odata_filter: str, skip: int = 0) -> str:
    params = {"api-version": API_VERSION, "$filter": odata_filter}
    if skip:
        params["$skip"] = str(skip)
    return f"{root}{PATH}?{urlencode(params, quote_via=quote, safe='$')}"


def fetch(client: HttpClient, store: PayloadStore, api_key: str | None) -> None:
    root = base_url(BASE_URL_ENV, DEFAULT_BASE_URL)
    for region in regions():
        fetch_pages(client, store, root, region, gpu_filter(region))


def fetch_pages(client: HttpClient, store: PayloadStore, root: str, region: str, odata_filter: str) -> None:
    """Every page of one filtered query, stored as `<region>-page-NNN.json`: `NextPageLink`, else `$skip`."""
    url, skip = page_url(root, odata_filter), 0
    for page in range(1, MAX_PAGES + 1):
        response = client.get(url)
        store.save(f"{region}-page-{page:03d}.json", url, response.content)
        envelope = envelope_of(response.content, url)
        count = len(envelope["Items"])
        skip += count
        if not count:
            break
        if envelope.get("NextPageLink"):
            url = _rebased(root, envelope["NextPageLink"])
        elif count >= PAGE_SIZE:
            url = page_url(root, odata_filter, skip)
        else:
            break
    else:
        raise FetchError(PROVIDER, url, f"more than {MAX_PAGES} pages for {region}; refusing a partial capture")


def envelope_of(content: bytes, url: str) -> dict:
    """The page's JSON envelope; anything else is a LayoutChanged naming the provider and URL."""
    try:
        document = json.loads(content, parse_float=Decimal)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise LayoutChanged(f"{PROVIDER} Retail Prices: {url}: not JSON ({error})") from error
    if not isinstance(document, dict) or not isinstance(document.get("Items"), list):
        raise LayoutChanged(f"{PROVIDER} Retail Prices: {url}: no `Items` list in the response")
    return document


def _rebased(root: str, link: str) -> str:
    """`NextPageLink` with its scheme and host replaced by our base URL (mirrors, proxies, tests)."""
    parts = urlsplit(link)
    if parts.path.rstrip("/") != PATH:
        raise LayoutChanged(f"{PROVIDER} Retail Prices: NextPageLink {link!r} is not a {PATH} page")
    return f"{root}{parts.path}?{parts.query}"


ITEM_FIELDS = (
    "type",
    "armSkuName",
    "armRegionName",
    "skuName",
    "meterName",
    "productName",
    "unitPrice",
    "retailPrice",
    "currencyCode",
    "unitOfMeasure",
    "reservationTerm",
    "isPrimaryMeterRegion",
    "skuId",
)
REQUIRED = ("type", "armSkuName", "armRegionName", "skuName", "meterName", "productName", "retailPrice")


def parse(payloads: list[Payload], observed_at: datetime) -> pl.DataFrame:
    items: dict[str, list] = {name: [] for name in (*ITEM_FIELDS, "billing_currency", "source_url")}
    plans: dict[str, list] = {name: [] for name in ("item", "term", "retailPrice")}
    for payload in payloads:
        envelope = envelope_of(payload.read_bytes(), payload.source_url)
        for position, item in enumerate(envelope["Items"]):
            missing = [name for name in REQUIRED if item.get(name) is None]
            if missing:
                raise LayoutChanged(f"{PROVIDER} Retail Prices: {payload.source_url}: item {position} has no {missing}")
            where = f"{payload.source_url}: item {position}"
            for plan in item.get("savingsPlan") or []:
                plans["item"].append(len(items["type"]))
                plans["term"].append(plan.get("term"))
                plans["retailPrice"].append(_money(plan.get("retailPrice", plan.get("unitPrice")), where))
            for name in ITEM_FIELDS:
                value = item.get(name)
                items[name].append(_money(value, where) if name in ("unitPrice", "retailPrice") else value)
            items["billing_currency"].append(envelope.get("BillingCurrency"))
            items["source_url"].append(payload.source_url)
    schema = {name: pl.String for name in items} | {
        "unitPrice": MONEY,
        "retailPrice": MONEY,
        "isPrimaryMeterRegion": pl.Boolean,
    }
    frame = pl.DataFrame(items, schema=schema).with_row_index("item")
    offers = _offers(frame)
    plan_schema = {"item": pl.UInt32, "term": pl.String, "retailPrice": MONEY}
    savings = _savings_plans(frame, pl.DataFrame(plans, schema=plan_schema))
    result = pl.concat([offers, savings], how="diagonal_relaxed").with_columns(
        observed_at=pl.lit(observed_at),
        provider=pl.lit(PROVIDER),
        offer_statistic=pl.lit("list"),
    )
    missing = [pl.lit(None).alias(name) for name in OFFER_SCHEMA if name not in result.columns]
    return check_offers(result.with_columns(missing), source=f"{PROVIDER} Retail Prices")


def _money(value: object, where: str) -> Decimal | None:
    """A JSON number as an exact Decimal (the payload is read with parse_float=Decimal)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise LayoutChanged(f"{PROVIDER} Retail Prices: {where}: price {value!r} is not a number")
    return Decimal(value)


def _priced_linux_gpu_rows(frame: pl.DataFrame) -> pl.DataFrame:
    """GPU sizes only, Linux only, primary meter region, a non-zero price; the filter the API cannot express."""
    return frame.filter(
        pl.col("armSkuName").str.contains(r"^Standard_N[CDV]"),
        ~pl.col("productName").str.contains(r"\bWin(dows)?\b"),
        pl.col("isPrimaryMeterRegion").fill_null(True),
        pl.col("retailPrice") > 0,
        pl.col("unitPrice").is_null() | (pl.col("unitPrice") > 0),
    )


def _offers(frame: pl.DataFrame) -> pl.DataFrame:
    rows = _priced_linux_gpu_rows(frame).filter(pl.col("type").is_in(["Consumption", "Reservation"]))
    names = pl.col("skuName") + " " + pl.col("meterName")
    term = pl.col("reservationTerm").replace_strict(TERMS, default=None, return_dtype=pl.Int64)
    consumption = pl.col("type") == "Consumption"
    rows = rows.filter(consumption | term.is_not_null())
    bad_unit = rows.filter(consumption & (pl.col("unitOfMeasure") != "1 Hour"))
    if bad_unit.height:
        raise LayoutChanged(
            f"{PROVIDER} Retail Prices: {bad_unit['source_url'][0]}: {bad_unit['armSkuName'][0]} is priced per "
            f"{bad_unit['unitOfMeasure'][0]!r}, not per '1 Hour'"
        )
    return rows.select(
        region=pl.col("armRegionName"),
        instance_type=pl.col("armSkuName"),
        pricing_model=pl.when(~consumption)
        .then(pl.format("reserved_{}y", term))
        .when(names.str.contains(r"\bSpot\b"))
        .then(pl.lit("spot"))
        .when(names.str.contains(r"\bLow Priority\b"))
        .then(pl.lit("interruptible"))
        .otherwise(pl.lit("on_demand")),
        price=pl.col("retailPrice"),
        price_unit=pl.when(consumption).then(pl.lit("instance-hour")).otherwise(pl.lit("term")),
        term_years=pl.when(consumption).then(None).otherwise(term),
        currency=pl.coalesce("currencyCode", "billing_currency"),
        sku=pl.col("skuId"),
        source_url=pl.col("source_url"),
    )


def _savings_plans(frame: pl.DataFrame, plans: pl.DataFrame) -> pl.DataFrame:
    """Hourly 1- and 3-year savings-plan rates listed on on-demand Consumption rows."""
    term = pl.col("term").replace_strict(TERMS, default=None, return_dtype=pl.Int64)
    on_demand = _priced_linux_gpu_rows(frame).filter(
        pl.col("type") == "Consumption",
        ~(pl.col("skuName") + " " + pl.col("meterName")).str.contains(r"\bSpot\b|\bLow Priority\b"),
    )
    return (
        plans.filter(term.is_not_null(), pl.col("retailPrice") > 0)
        .join(on_demand.drop("retailPrice"), on="item", how="inner")
        .select(
            region=pl.col("armRegionName"),
            instance_type=pl.col("armSkuName"),
            pricing_model=pl.format("savings_plan_{}y", term),
            price=pl.col("retailPrice"),
            price_unit=pl.lit("instance-hour"),
            term_years=term,
            currency=pl.coalesce("currencyCode", "billing_currency"),
            sku=pl.col("skuId"),
            source_url=pl.col("source_url"),
        )
    )


FEED = PriceFeed(
    name="azure_retail",
    provider=PROVIDER,
    title="Azure Retail Prices API (GPU virtual machines)",
    fetch=fetch,
    parse=parse,
    base_url_env=BASE_URL_ENV,
)
