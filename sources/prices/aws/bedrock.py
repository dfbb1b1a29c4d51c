"""Amazon Bedrock token list prices from the AWS Price List bulk API (one JSON offer file per region, no key).

`/offers/v1.0/aws/AmazonBedrock/current/<region>/index.json` has the price list's usual layout:
`products` (sku → `attributes`) and `terms.OnDemand` (sku → offer term → `priceDimensions` with `unit`
and `pricePerUnit`). A model's token prices are the products whose `usagetype` ends in a token
direction, `<REGION>-<Model>-input-tokens`, `…-output-tokens`, `…-cache-read-input-token-count`,
`…-cache-write-input-token-count`, with `-batch` for batch inference (e.g. `USE1-NovaPro-input-tokens`);
provisioned throughput, customisation, storage and image products are not token prices and are
skipped. Prices are per `1K tokens` or `1M tokens` (the dimension's `unit`).

The usage type abbreviates the model (`NovaPro`), so the model id comes from the product's `provider`
and `model` attributes, in Bedrock's model-id spelling without the version suffix: `Amazon` + `Nova
Pro` → `amazon.nova-pro`, `Meta` + `Llama 3.1 8B Instruct` → `meta.llama3-1-8b-instruct` (lower case,
dots and spaces to `-`, `llama` joined to its version as Bedrock writes it, the provider's own name
dropped from the front: `DeepSeek` + `DeepSeek R1` → `deepseek.r1`, but `Mistral AI` + `Mistral Large` →
`mistral.mistral-large`).
Models sold through AWS Marketplace (Anthropic's among them) are billed under other product codes and
are not in this file.
"""

from __future__ import annotations

import json
import os
import re
from datetime import date, datetime
from decimal import Decimal, InvalidOperation

import polars as pl

from sources.common.http import HttpClient, base_url
from sources.prices.aws import PROVIDER, price_list
from sources.prices.offers import LayoutChanged, Payload, PayloadStore, PriceFeed
from sources.prices.token_prices import TOKEN_PRICE_SCHEMA, per_million, token_prices_frame

SERVICE = "Amazon Bedrock"
SOURCE = f"{PROVIDER} price list ({SERVICE})"
BASE_URL_ENV = price_list.BASE_URL_ENV
REGIONS_ENV = "FINOPS_AWS_BEDROCK_PRICE_REGIONS"
DEFAULT_REGIONS = ("us-east-1", "eu-central-1")
PATH = "/offers/v1.0/aws/AmazonBedrock/current/{region}/index.json"
OFFER_CODE = "AmazonBedrock"

USAGE_TYPE = re.compile(
    r"^[A-Z0-9]+-(?P<model>.+?)-(?P<direction>input-tokens|output-tokens|cache-read-input-token-count|"
    r"cache-write-input-token-count)(?P<batch>-batch)?$"
)
TOKEN_TYPES = {
    "input-tokens": "input",
    "output-tokens": "output",
    "cache-read-input-token-count": "cache_read",
    "cache-write-input-token-count": "cache_write",
}
UNITS = {"1k tokens": 1_000, "1m tokens": 1_000_000}
PROVIDER_PREFIXES = {"amazon": "amazon", "meta": "meta", "mistral ai": "mistral", "ai21 labs": "ai21"}
"""Bedrock's model-id prefix where it is not the provider's name in lower case."""


def regions() -> list[str]:
    """Region codes to fetch, from FINOPS_AWS_BEDROCK_PRICE_REGIONS or the default."""
    raw = os.environ.get(REGIONS_ENV, "").strip()
    codes = list(dict.fromkeys(code.strip() for code in raw.split(",") if code.strip())) or list(DEFAULT_REGIONS)
    bad = [code for code in codes if not re.fullmatch(r"[a-z]{2}(-[a-z]+)+-[0-9]+", code)]
    if bad:
        raise ValueError(f"{PROVIDER}: {REGIONS_ENV}: {bad[0]!r} is not an AWS region code such as us-east-1")
    if len(codes) > price_list.MAX_REGIONS:
        raise ValueError(f"{PROVIDER}: {REGIONS_ENV} names {len(codes)} regions; at most {price_list.MAX_REGIONS}")
    return codes


def fetch(client: HttpClient, store: PayloadStore, api_key: str | None) -> None:
    base = base_url(BASE_URL_ENV, price_list.DEFAULT_BASE_URL)
    for region in regions():
        url = base + PATH.format(region=region)
        store.save(f"{region}.json", url, client.get(url).content)


def model_id(provider: str, model: str) -> str:
    """Bedrock's model id without its version suffix, from the `provider` and `model` attributes."""
    prefix = PROVIDER_PREFIXES.get(provider.strip().lower(), provider.strip().lower().replace(" ", "-"))
    name = model.strip().lower()
    own = provider.strip().lower()
    if name.startswith(own + " ") or name.startswith(own + "-"):
        name = name[len(own) + 1 :]
    name = re.sub(r"[\s.]+", "-", name)
    name = re.sub(r"^llama-(\d)", r"llama\1", name)
    return f"{prefix}.{name}"


def parse(payloads: list[Payload], observed_at: datetime) -> pl.DataFrame:
    columns: dict[str, list] = {name: [] for name in TOKEN_PRICE_SCHEMA if name != "observed_at"}
    for payload in payloads:
        document = _document(payload)
        on_demand = document["terms"].get("OnDemand") or {}
        for sku, product in document["products"].items():
            where = f"{payload.name}: product {sku}"
            attributes = product.get("attributes") if isinstance(product, dict) else None
            if not isinstance(attributes, dict):
                raise LayoutChanged(f"{SOURCE}: {where}: no `attributes` object")
            match = USAGE_TYPE.match(str(attributes.get("usagetype", "")))
            if match is None:
                continue
            where = f"{where} (usagetype {attributes['usagetype']})"
            for name in ("provider", "model", "regionCode"):
                if not attributes.get(name):
                    raise LayoutChanged(f"{SOURCE}: {where}: no attribute `{name}`")
            price, unit, currency, effective = _on_demand_price(on_demand.get(sku), where)
            columns["provider"].append(PROVIDER)
            columns["service"].append(SERVICE)
            columns["model"].append(model_id(attributes["provider"], attributes["model"]))
            columns["model_name"].append(attributes["model"])
            columns["model_version"].append(None)
            columns["token_type"].append(TOKEN_TYPES[match["direction"]])
            columns["pricing_tier"].append("batch" if match["batch"] else "standard")
            columns["deployment_type"].append("regional")
            columns["region"].append(attributes["regionCode"])
            columns["price"].append(price)
            columns["unit_tokens"].append(unit)
            columns["price_per_million"].append(per_million(price, unit))
            columns["currency"].append(currency)
            columns["effective_date"].append(effective)
            columns["sku"].append(sku)
            columns["source_url"].append(payload.source_url)
    return token_prices_frame(columns, observed_at, source=SOURCE)


def _document(payload: Payload) -> dict:
    try:
        document = json.loads(payload.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise LayoutChanged(f"{SOURCE}: {payload.name}: not JSON ({error})") from error
    if not isinstance(document, dict) or document.get("offerCode") != OFFER_CODE:
        raise LayoutChanged(f"{SOURCE}: {payload.name}: not an {OFFER_CODE} offer file (offerCode is missing or other)")
    if not isinstance(document.get("products"), dict) or not isinstance(document.get("terms"), dict):
        raise LayoutChanged(f"{SOURCE}: {payload.name}: no `products` and `terms` objects")
    return document


def _on_demand_price(terms: object, where: str) -> tuple[Decimal, int, str, date | None]:
    """The one on-demand price dimension of a token product: (price, tokens per unit, currency, effective day)."""
    if not isinstance(terms, dict) or len(terms) != 1:
        raise LayoutChanged(f"{SOURCE}: {where}: expected one OnDemand offer term, found {len(terms or {})}")
    (term,) = terms.values()
    dimensions = list((term.get("priceDimensions") or {}).values()) if isinstance(term, dict) else []
    if len(dimensions) != 1:
        raise LayoutChanged(f"{SOURCE}: {where}: expected one price dimension, found {len(dimensions)}")
    (dimension,) = dimensions
    unit = UNITS.get(str(dimension.get("unit", "")).strip().lower())
    if unit is None:
        raise LayoutChanged(f"{SOURCE}: {where}: unit {dimension.get('unit')!r} is not '1K tokens' or '1M tokens'")
    prices = dimension.get("pricePerUnit")
    if not isinstance(prices, dict) or len(prices) != 1:
        raise LayoutChanged(f"{SOURCE}: {where}: pricePerUnit {prices!r} is not one currency's price")
    ((currency, text),) = prices.items()
    try:
        price = Decimal(str(text))
    except InvalidOperation as error:
        raise LayoutChanged(f"{SOURCE}: {where}: pricePerUnit {currency} {text!r} is not a number") from error
    if not price.is_finite() or price < 0:
        raise LayoutChanged(f"{SOURCE}: {where}: pricePerUnit {currency} {text!r} is not a price")
    effective = term.get("effectiveDate")
    try:
        day = datetime.fromisoformat(str(effective).replace("Z", "+00:00")).date() if effective else None
    except ValueError as error:
        raise LayoutChanged(f"{SOURCE}: {where}: effectiveDate {effective!r} is not a timestamp") from error
    return price, unit, currency, day


FEED = PriceFeed(
    name="aws_bedrock",
    provider=PROVIDER,
    title="AWS Price List bulk offer files (Amazon Bedrock token prices, per-region JSON)",
    fetch=fetch,
    parse=parse,
    base_url_env=BASE_URL_ENV,
    columns=TOKEN_PRICE_SCHEMA,
    table="raw.ai_api_token_prices",
)
