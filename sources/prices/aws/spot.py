"""AWS EC2 spot prices from the public feed behind aws.amazon.com/ec2/spot/pricing (`spot.json`).

Why this feed: `DescribeSpotPriceHistory` needs AWS credentials; this file needs none and lists, per
region and instance size, the price in the cheapest availability zone right now (the zone is not
named, so `zone` stays null). Prices are strings per currency; sizes not offered show `N/A*` and new
ones sometimes `0` — neither is a price, both are skipped. Only the Linux column
(`valueColumns[name=linux]`) is kept, and only GPU/accelerator families.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal, InvalidOperation

import polars as pl

from sources.common.http import HttpClient, base_url
from sources.prices.aws import PROVIDER, is_accelerator_type, json_document
from sources.prices.offers import LayoutChanged, Payload, PayloadStore, PriceFeed, offers_frame

BASE_URL_ENV = "FINOPS_AWS_SPOT_BASE_URL"
DEFAULT_BASE_URL = "https://website.spot.ec2.aws.a2z.com"
PATH = "/spot.json"
LINUX = "linux"


def fetch(client: HttpClient, store: PayloadStore, api_key: str | None) -> None:
    url = base_url(BASE_URL_ENV, DEFAULT_BASE_URL) + PATH
    store.save("spot.json", url, client.get(url).content)


def parse(payloads: list[Payload], observed_at: datetime) -> pl.DataFrame:
    columns: dict[str, list] = {name: [] for name in ("region", "instance_type", "price", "currency", "source_url")}
    for payload in payloads:
        for region, size, price, currency in _linux_prices(payload):
            columns["region"].append(region)
            columns["instance_type"].append(size)
            columns["price"].append(price)
            columns["currency"].append(currency)
            columns["source_url"].append(payload.source_url)
    return offers_frame(
        {
            **columns,
            "observed_at": observed_at,
            "provider": PROVIDER,
            "pricing_model": "spot",
            "price_unit": "instance-hour",
            "offer_statistic": "list",
        },
        source=f"{PROVIDER} spot price feed",
    )


def _linux_prices(payload: Payload):
    """(region, size, price, currency) of every GPU/accelerator size with a Linux spot price."""
    url = payload.source_url
    config = _mapping(json_document(payload), "config", url)
    if LINUX not in (config.get("valueColumns") or []):
        raise LayoutChanged(f"{PROVIDER}: {url}: config.valueColumns has no {LINUX!r} column")
    regions = config.get("regions")
    if not isinstance(regions, list) or not regions:
        raise LayoutChanged(f"{PROVIDER}: {url}: no config.regions list")
    for region in regions:
        code = region.get("region") if isinstance(region, dict) else None
        groups = region.get("instanceTypes") if isinstance(region, dict) else None
        if not code or not isinstance(groups, list):
            raise LayoutChanged(f"{PROVIDER}: {url}: a region without `region` or `instanceTypes`")
        for group in groups:
            for size in group.get("sizes") or []:
                name = size.get("size")
                if not name or not is_accelerator_type(name):
                    continue
                linux = [column for column in size.get("valueColumns") or [] if column.get("name") == LINUX]
                if len(linux) != 1 or not isinstance(linux[0].get("prices"), dict):
                    raise LayoutChanged(f"{PROVIDER}: {url}: {code} {name}: no single `linux` price column")
                for currency, text in linux[0]["prices"].items():
                    price = _price(text, f"{url}: {code} {name}")
                    if price:
                        yield code, name, price, currency


def _price(text: object, where: str) -> Decimal | None:
    """A spot price string; None for the feed's "not offered" markers (`N/A*`, `0`)."""
    value = str(text).strip()
    if value.upper().startswith("N/A"):
        return None
    try:
        price = Decimal(value)
    except InvalidOperation:
        price = None
    if price is None or not price.is_finite():
        raise LayoutChanged(f"{PROVIDER}: {where}: spot price {value!r} is not a number")
    return price if price > 0 else None


def _mapping(document: object, key: str, url: str) -> dict:
    value = document.get(key) if isinstance(document, dict) else None
    if not isinstance(value, dict):
        raise LayoutChanged(f"{PROVIDER}: {url}: no `{key}` object")
    return value


FEED = PriceFeed(
    name="aws_spot",
    provider=PROVIDER,
    title="AWS EC2 spot price feed (spot.json, cheapest AZ per region)",
    fetch=fetch,
    parse=parse,
    base_url_env=BASE_URL_ENV,
)
