"""Google Cloud Billing Catalog: Compute Engine GPU SKUs, priced per GPU-hour (API key in `GCP_API_KEY`).

Google prices a GPU VM as host (vCPU and RAM SKUs) plus one SKU per attached GPU; this feed keeps the
GPU SKUs (`category.resourceGroup == "GPU"`), which are per GPU-hour in every region a SKU lists in
`serviceRegions` (one offer per region). `usageType` gives the pricing model: OnDemand, Preemptible
(Spot VMs), Commit1Yr and Commit3Yr (committed-use hourly rates). Money is `units` (int64 as a string)
plus `nanos` (billionths), kept exact. The GPU's name comes from the description ("Nvidia Tesla A100
GPU running in Americas", "Commitment v1: Nvidia L4 GPU in Frankfurt for 1 Year", "Nvidia H100 80GB
GPU attached to Spot Preemptible VMs running in …"); Virtual Workstation SKUs are a licence on top of
a GPU, not a GPU, and are dropped.

The key goes out as the `key=` query parameter only on the request: stored URLs never carry it.
"""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal, InvalidOperation
from urllib.parse import urlencode

import polars as pl

from sources.common.http import FetchError, HttpClient, base_url
from sources.prices.offers import MONEY, OFFER_SCHEMA, LayoutChanged, Payload, PayloadStore, PriceFeed, check_offers

PROVIDER = "Google Cloud"
BASE_URL_ENV = "FINOPS_GCP_BILLING_BASE_URL"
DEFAULT_BASE_URL = "https://cloudbilling.googleapis.com"
API_KEY_ENV = "GCP_API_KEY"
COMPUTE_ENGINE = "6F81-5844-456A"
PATH = f"/v1/services/{COMPUTE_ENGINE}/skus"
PAGE_SIZE = 5000
MAX_PAGES = 40
USAGE_TYPES = {
    "OnDemand": ("on_demand", None),
    "Preemptible": ("spot", None),
    "Commit1Yr": ("committed_1y", 1),
    "Commit3Yr": ("committed_3y", 3),
}
GPU_NAME = (
    r"^(?:Commitment v\d+:\s*)?(?:Spot Preemptible\s+)?(.+?)"
    r"(?:\s+\(\d+ gpu slices?\))?(?:\s+GPU)?\s+(?:attached to|running in|in)\s"
)
"""The GPU's name inside a SKU description, without commitment/spot prefixes, slice count and `GPU`."""
MACHINE_SERIES = r"^[A-Z]\d\s+(Nvidia\s)"
"""A machine-series prefix before the GPU's name ("A4 Nvidia B200 (1 gpu slice)"), dropped."""


def fetch(client: HttpClient, store: PayloadStore, api_key: str | None) -> None:
    root = base_url(BASE_URL_ENV, DEFAULT_BASE_URL)
    token = ""
    for page in range(1, MAX_PAGES + 1):
        params = {"pageSize": str(PAGE_SIZE)} | ({"pageToken": token} if token else {})
        url = f"{root}{PATH}?{urlencode(params)}"
        response = client.get(url, params={"key": api_key})
        store.save(f"skus-page-{page:03d}.json", client.scrub(url), response.content)
        token = _document(response.content, client.scrub(url)).get("nextPageToken") or ""
        if not token:
            return
    raise FetchError(PROVIDER, client.scrub(url), f"more than {MAX_PAGES} pages of SKUs; refusing a partial capture")


def _document(content: bytes, url: str) -> dict:
    """A page of SKUs. `{}` is an empty last page (proto3 JSON omits empty fields); other shapes are refused."""
    try:
        document = json.loads(content)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise LayoutChanged(f"{PROVIDER} Billing Catalog: {url}: not JSON ({error})") from error
    if not isinstance(document, dict) or not isinstance(document.get("skus", []), list):
        raise LayoutChanged(f"{PROVIDER} Billing Catalog: {url}: no `skus` list in the response")
    if document and "skus" not in document and "nextPageToken" not in document:
        raise LayoutChanged(f"{PROVIDER} Billing Catalog: {url}: neither `skus` nor `nextPageToken` in the response")
    return document


def parse(payloads: list[Payload], observed_at: datetime) -> pl.DataFrame:
    columns: dict[str, list] = {
        name: [] for name in ("sku", "description", "resource_group", "usage_type", "regions", "unit", "price")
    }
    columns |= {"currency": [], "source_url": []}
    for payload in payloads:
        for position, sku in enumerate(_document(payload.read_bytes(), payload.source_url).get("skus", [])):
            where = f"{PROVIDER} Billing Catalog: {payload.source_url}: SKU {sku.get('skuId', position)}"
            category = sku.get("category")
            if not isinstance(category, dict) or "resourceGroup" not in category or "description" not in sku:
                raise LayoutChanged(f"{where}: no category.resourceGroup or description")
            if category["resourceGroup"] != "GPU":
                continue
            unit, price, currency = _rate(sku.get("pricingInfo"), where)
            columns["sku"].append(sku.get("skuId"))
            columns["description"].append(sku["description"])
            columns["resource_group"].append(category["resourceGroup"])
            columns["usage_type"].append(category.get("usageType"))
            columns["regions"].append(list(sku.get("serviceRegions") or [None]))
            columns["unit"].append(unit)
            columns["price"].append(price)
            columns["currency"].append(currency)
            columns["source_url"].append(payload.source_url)
    schema = {name: pl.String for name in columns} | {"regions": pl.List(pl.String), "price": MONEY}
    frame = pl.DataFrame(columns, schema=schema)
    model = pl.col("usage_type").replace_strict(
        {usage: pricing for usage, (pricing, _) in USAGE_TYPES.items()}, default=None, return_dtype=pl.String
    )
    term = pl.col("usage_type").replace_strict(
        {usage: years for usage, (_, years) in USAGE_TYPES.items()}, default=None, return_dtype=pl.Int64
    )
    gpus = frame.filter(
        model.is_not_null(),
        pl.col("price") > 0,
        ~pl.col("description").str.contains("(?i)virtual workstation"),
    )
    per_hour = gpus.filter(pl.col("unit") != "h")
    if per_hour.height:
        raise LayoutChanged(
            f"{PROVIDER} Billing Catalog: {per_hour['source_url'][0]}: SKU {per_hour['sku'][0]} is priced per "
            f"{per_hour['unit'][0]!r}, not per hour"
        )
    offers = gpus.explode("regions").select(
        observed_at=pl.lit(observed_at),
        provider=pl.lit(PROVIDER),
        region=pl.col("regions"),
        gpu_name=pl.col("description").str.extract(GPU_NAME, 1).str.replace(MACHINE_SERIES, "${1}"),
        gpu_count=pl.lit(Decimal(1), dtype=MONEY),
        pricing_model=model,
        price=pl.col("price"),
        price_unit=pl.lit("gpu-hour"),
        term_years=term,
        currency=pl.col("currency"),
        offer_statistic=pl.lit("list"),
        sku=pl.col("sku"),
        source_url=pl.col("source_url"),
    )
    unnamed = offers.filter(pl.col("gpu_name").is_null())
    if unnamed.height:
        raise LayoutChanged(f"{PROVIDER} Billing Catalog: SKU {unnamed['sku'][0]}: no GPU name in its description")
    missing = [pl.lit(None).alias(name) for name in OFFER_SCHEMA if name not in offers.columns]
    return check_offers(offers.with_columns(missing), source=f"{PROVIDER} Billing Catalog")


def _rate(pricing_info: object, where: str) -> tuple[str | None, Decimal | None, str | None]:
    """Usage unit, price of the first tier (from zero usage) and currency of the current pricing."""
    if not pricing_info:
        return None, None, None
    try:
        expression = pricing_info[0]["pricingExpression"]
        money = expression["tieredRates"][0]["unitPrice"]
        price = Decimal(str(money.get("units") or "0")) + Decimal(int(money.get("nanos") or 0)).scaleb(-9)
        return expression["usageUnit"], price, money["currencyCode"]
    except (KeyError, IndexError, TypeError, ValueError, InvalidOperation) as error:
        raise LayoutChanged(f"{where}: pricingInfo not as expected ({type(error).__name__}: {error})") from error


FEED = PriceFeed(
    name="gcp_catalog",
    provider=PROVIDER,
    title="Google Cloud Billing Catalog API (Compute Engine GPU SKUs)",
    fetch=fetch,
    parse=parse,
    base_url_env=BASE_URL_ENV,
    credential_env=API_KEY_ENV,
)
