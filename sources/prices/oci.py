"""OCI GPU shape prices from Oracle's cost estimator: `shapes.json` plus the products price list.

No key. `shapes.json` lists every compute shape (`subType.value == "gpu"` marks GPU shapes, with
`gpuQty`); each shape names its billed product by `products[].partNumber`. The price list
(`/pls/apex/cetools/api/v1/products/`, ORDS: follows `hasMore` + the `next` link, bounded) gives each
part number's `metricName` and pay-as-you-go price per currency. A GPU shape's hourly price is the
unit price × `gpuQty` when the metric is per GPU ("GPU Per Hour"), else unit price × the product's
`qty`. OCI charges the same in every commercial region (region null) and bills preemptible capacity
at 50% of on-demand, so shapes with `allowPreemptible` also get a `spot` row at half the price.

Shapes are fetched from www.oracle.com (FINOPS_OCI_BASE_URL) and prices from apexapps.oracle.com
(FINOPS_OCI_PRICES_BASE_URL).
"""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urljoin

import polars as pl

from sources.common.http import FetchError, HttpClient, base_url
from sources.prices.offers import LayoutChanged, Payload, PayloadStore, PriceFeed, naming_provider, offers_frame

PROVIDER = "Oracle"
"""As billing names it (OCI cost reports) and as seed `price_providers` lists it."""
BASE_URL_ENV = "FINOPS_OCI_BASE_URL"
DEFAULT_BASE_URL = "https://www.oracle.com"
SHAPES_PATH = "/a/ocom/docs/cloudestimator2/data/shapes.json"
PRICES_BASE_URL_ENV = "FINOPS_OCI_PRICES_BASE_URL"
DEFAULT_PRICES_BASE_URL = "https://apexapps.oracle.com"
PRODUCTS_PATH = "/pls/apex/cetools/api/v1/products/"
MAX_PRODUCT_PAGES = 20
CURRENCY = "USD"
PREEMPTIBLE_FACTOR = Decimal("0.5")
"""OCI: "Preemptible instances are billed at 50% of the on-demand price"."""
SHAPES_FILE = "shapes.json"


def fetch(client: HttpClient, store: PayloadStore, api_key: str | None) -> None:
    shapes_url = base_url(BASE_URL_ENV, DEFAULT_BASE_URL) + SHAPES_PATH
    store.save(SHAPES_FILE, shapes_url, client.get(shapes_url).content)
    url = base_url(PRICES_BASE_URL_ENV, DEFAULT_PRICES_BASE_URL) + PRODUCTS_PATH
    for page in range(1, MAX_PRODUCT_PAGES + 1):
        response = client.get(url)
        store.save(f"products-{page:03d}.json", url, response.content)
        next_url = _next_page(response.content, url)
        if next_url is None:
            return
        url = next_url
    raise FetchError(PROVIDER, url, f"the price list has more than {MAX_PRODUCT_PAGES} pages; refusing to go on")


def _next_page(content: bytes, url: str) -> str | None:
    """The ORDS `next` link when `hasMore` is true; unreadable pages are left to the parser."""
    try:
        document = json.loads(content)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(document, dict) or not document.get("hasMore"):
        return None
    for link in document.get("links") or []:
        if isinstance(link, dict) and link.get("rel") == "next" and link.get("href"):
            return urljoin(url, link["href"])
    raise FetchError(PROVIDER, url, "hasMore is true but there is no `next` link")


def _decimal(value: Any, where: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise LayoutChanged(f"{where}: {value!r} is not a number")
    try:
        return Decimal(str(value))
    except InvalidOperation as error:
        raise LayoutChanged(f"{where}: {value!r} is not a number") from error


def _unit_prices(payloads: list[Payload]) -> dict[str, tuple[str, Decimal, str]]:
    """partNumber → (metric name, pay-as-you-go unit price in USD, source URL)."""
    prices: dict[str, tuple[str, Decimal, str]] = {}
    for payload in payloads:
        document = payload.json()
        items = document.get("items") if isinstance(document, dict) else None
        if not isinstance(items, list):
            raise LayoutChanged(f"{payload.source_url}: no `items` list of products")
        for item in items:
            if not isinstance(item, dict) or "partNumber" not in item:
                raise LayoutChanged(f"{payload.source_url}: a product without partNumber")
            part = item["partNumber"]
            for localization in item.get("currencyCodeLocalizations") or []:
                if localization.get("currencyCode") != CURRENCY:
                    continue
                for price in localization.get("prices") or []:
                    if price.get("model") == "PAY_AS_YOU_GO":
                        value = _decimal(price.get("value"), f"{payload.source_url}: {part}")
                        prices[part] = (str(item.get("metricName") or ""), value, payload.source_url)
    return prices


def _parse(payloads: list[Payload], observed_at: datetime) -> pl.DataFrame:
    shapes_payload = next((p for p in payloads if p.name == SHAPES_FILE), None)
    if shapes_payload is None:
        raise LayoutChanged(f"{PROVIDER}: no {SHAPES_FILE} among the stored payloads")
    prices = _unit_prices([p for p in payloads if p is not shapes_payload])
    document = shapes_payload.json()
    shapes = document.get("items") if isinstance(document, dict) else None
    if not isinstance(shapes, list):
        raise LayoutChanged(f"{shapes_payload.source_url}: no `items` list of shapes")
    columns: dict[str, list] = {
        name: [] for name in ("instance_type", "gpu_name", "gpu_count", "pricing_model", "price", "sku", "source_url")
    }
    for shape in shapes:
        if not isinstance(shape, dict) or "name" not in shape or "subType" not in shape:
            raise LayoutChanged(f"{shapes_payload.source_url}: a shape without name or subType")
        name = shape["name"]
        if (shape["subType"] or {}).get("value") != "gpu" or shape.get("hidden") or shape.get("status") != "ACTIVE":
            continue
        where = f"{shapes_payload.source_url}: {name}"
        gpu_qty = _decimal(shape.get("gpuQty"), f"{where}: gpuQty")
        products = [p for p in shape.get("products") or [] if isinstance(p, dict) and p.get("partNumber") in prices]
        if not products:
            raise LayoutChanged(f"{where}: none of its products has a {CURRENCY} pay-as-you-go price in the price list")
        product = products[0]
        metric, unit_price, _ = prices[product["partNumber"]]
        quantity = gpu_qty if "gpu" in metric.lower() else _decimal(product.get("qty"), f"{where}: qty")
        on_demand = unit_price * quantity
        offers = [("on_demand", on_demand)]
        if shape.get("allowPreemptible"):
            offers.append(("spot", on_demand * PREEMPTIBLE_FACTOR))
        for model, price in offers:
            columns["instance_type"].append(name)
            columns["gpu_name"].append(_gpu_name(shape))
            columns["gpu_count"].append(gpu_qty)
            columns["pricing_model"].append(model)
            columns["price"].append(price)
            columns["sku"].append(product["partNumber"])
            columns["source_url"].append(shapes_payload.source_url)
    return offers_frame(
        {
            **columns,
            "observed_at": observed_at,
            "provider": PROVIDER,
            "price_unit": "instance-hour",
            "currency": CURRENCY,
            "offer_statistic": "list",
        },
        source=f"{PROVIDER} cost estimator",
    )


def _gpu_name(shape: dict[str, Any]) -> str | None:
    """The GPU part of a `BM.GPU.<model>.<count>` shape name; older names (`BM.GPU4.8`) name none, so
    dbt resolves those through the instance-type seed."""
    parts = str(shape["name"]).split(".")
    return parts[2] if len(parts) == 4 and parts[1] == "GPU" else None


parse = naming_provider(PROVIDER, _parse)
"""The offers of one capture; every LayoutChanged names the provider (and the URL where it has one)."""

FEED = PriceFeed(
    name="oci",
    provider=PROVIDER,
    title="OCI cost estimator shapes.json and products price list",
    fetch=fetch,
    parse=parse,
    base_url_env=BASE_URL_ENV,
)
