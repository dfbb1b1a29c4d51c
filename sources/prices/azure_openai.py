"""Azure OpenAI token list prices from the Azure Retail Prices API (`serviceName` Foundry Models, no key).

Same API, paging and envelope as the GPU VM feed (`azure_retail`), another filter: the `Foundry Models`
service's Azure OpenAI products in each region. Each meter prices one model, one direction and one
deployment type per 1K or 1M tokens (`unitOfMeasure` `1K` / `1M`), in a name Azure abbreviates
inconsistently: `gpt 4.1 Inp regnl Tokens`, `gpt-4o-0806-Inp-glbl Tokens`, `gpt 4o 0806 cached Inp regnl
Tokens`, `GPT 5 outpt Glbl 1M Tokens`, `o3 mini 0131 Batch Outp Data Zone Tokens`. The meter is read
word by word (`parse_meter`): the model words before the direction (`Inp`/`Input`, `Outp`/`outpt`/
`Output`/`Opt`; `cached`/`cchd`/`Cd` before it for cached input), the deployment after it (`glbl`/`Gl`/
`Global`, `regnl`/`Regional`, `DZ`/`Data Zone`), `Batch` and `pp` (priority processing) anywhere.
Meters that price something other than text tokens (provisioned units, fine-tuning hours, audio,
realtime, images) are not token prices and are skipped; a token meter whose price or unit is not
readable is refused, naming the page, the item and the field.

The model id is the meter's model words, lower-case and joined by `-`, `gpt-` in front when Azure
dropped it (`4o` → `gpt-4o`, `5 mini` → `gpt-5-mini`); a four-digit word is the model's version
(`0806`) and is kept apart, so `gpt-4o-0806` and `gpt 4o` are both `gpt-4o`.
"""

from __future__ import annotations

import json
import os
import re
from datetime import date, datetime
from decimal import Decimal

import polars as pl

from sources.common.http import HttpClient, base_url
from sources.prices import azure_retail
from sources.prices.offers import LayoutChanged, Payload, PayloadStore, PriceFeed
from sources.prices.token_prices import TOKEN_PRICE_SCHEMA, UNIT_TOKENS, per_million, token_prices_frame

PROVIDER = azure_retail.PROVIDER
SERVICE = "Azure OpenAI"
SOURCE = f"{PROVIDER} Retail Prices (Azure OpenAI)"
BASE_URL_ENV = azure_retail.BASE_URL_ENV
REGIONS_ENV = "FINOPS_AZURE_OPENAI_PRICE_REGIONS"
DEFAULT_REGIONS = ("eastus", "swedencentral")
SERVICE_NAMES = ("Foundry Models", "Azure OpenAI")
"""`Foundry Models` since 2025; older captures named the service `Azure OpenAI`."""


def regions() -> list[str]:
    """Regions to query, from FINOPS_AZURE_OPENAI_PRICE_REGIONS (ARM names, comma-separated) or the default."""
    configured = list(dict.fromkeys(r.strip() for r in os.environ.get(REGIONS_ENV, "").split(",") if r.strip()))
    bad = [name for name in configured if not re.fullmatch(r"[a-z][a-z0-9]{2,40}", name)]
    if bad:
        raise ValueError(f"{PROVIDER}: {REGIONS_ENV}: {bad[0]!r} is not an Azure region name such as eastus")
    return configured or list(DEFAULT_REGIONS)


def openai_filter(region: str) -> str:
    """OData filter: Azure OpenAI consumption meters of the Foundry Models service in one region."""
    return (
        f"serviceName eq '{SERVICE_NAMES[0]}' and armRegionName eq '{region}' "
        "and contains(productName, 'OpenAI') and priceType eq 'Consumption'"
    )


def fetch(client: HttpClient, store: PayloadStore, api_key: str | None) -> None:
    root = base_url(BASE_URL_ENV, azure_retail.DEFAULT_BASE_URL)
    for region in regions():
        azure_retail.fetch_pages(client, store, root, region, openai_filter(region))


DIRECTIONS = {
    "inp": "input",
    "input": "input",
    "outp": "output",
    "outpt": "output",
    "output": "output",
    "opt": "output",
}
CACHED = frozenset({"cached", "cchd", "cd", "cache"})
DEPLOYMENTS = {
    "glbl": "global",
    "gl": "global",
    "global": "global",
    "regnl": "regional",
    "rgnl": "regional",
    "regional": "regional",
    "dz": "data_zone",
    "datazone": "data_zone",
}
NOT_TEXT_TOKENS = frozenset(
    {"rt", "realtime", "aud", "audio", "img", "image", "ft", "fine", "tuning", "training", "tts", "transcribe"}
)
"""Words of meters that price audio, realtime, image or fine-tuning tokens: not text-generation prices."""
_VERSION = re.compile(r"^\d{4}$")


def parse_meter(meter_name: str) -> dict[str, str | None] | None:
    """A token meter's model, version, token type, tier and deployment; None when it is no text-token price."""
    text = re.sub(r"\s+(1k|1m)?\s*tokens?$", "", meter_name.strip().lower())
    if text == meter_name.strip().lower():
        return None
    words = re.split(r"[\s\-_]+", text.replace("data zone", "datazone"))
    if NOT_TEXT_TOKENS.intersection(words):
        return None
    direction = next((i for i, word in enumerate(words) if word in DIRECTIONS), None)
    if direction is None:
        return None
    before, after = words[:direction], words[direction + 1 :]
    cached = bool(before) and before[-1] in CACHED
    tier = "batch" if "batch" in words else "priority" if "pp" in words else "standard"
    model_words = [w for w in before if w not in CACHED and w not in ("batch", "pp")]
    versions = [w for w in model_words if _VERSION.match(w)]
    model_words = [w for w in model_words if not _VERSION.match(w)]
    deployments = [DEPLOYMENTS[w] for w in after if w in DEPLOYMENTS]
    if not model_words or len(deployments) != 1:
        return None
    if model_words[0] != "gpt" and model_words[0][0].isdigit():
        model_words = ["gpt", *model_words]
    token_type = DIRECTIONS[words[direction]]
    if cached:
        if token_type != "input":
            return None
        token_type = "cache_read"
    return {
        "model": "-".join(model_words),
        "model_name": " ".join(w for w in before if w not in CACHED and w not in ("batch", "pp")),
        "model_version": versions[0] if versions else None,
        "token_type": token_type,
        "pricing_tier": tier,
        "deployment_type": deployments[0],
    }


REQUIRED = ("serviceName", "productName", "meterName", "armRegionName", "unitOfMeasure", "retailPrice")


def parse(payloads: list[Payload], observed_at: datetime) -> pl.DataFrame:
    columns: dict[str, list] = {name: [] for name in TOKEN_PRICE_SCHEMA if name != "observed_at"}
    for payload in payloads:
        try:
            document = json.loads(payload.read_bytes(), parse_float=Decimal)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise LayoutChanged(f"{SOURCE}: {payload.name}: not JSON ({error})") from error
        items = document.get("Items") if isinstance(document, dict) else None
        if not isinstance(items, list):
            raise LayoutChanged(f"{SOURCE}: {payload.name}: no `Items` list in the response")
        currency = document.get("BillingCurrency")
        for position, item in enumerate(items):
            row = _token_price(item, f"{payload.name}: item {position}")
            if row is None:
                continue
            row["currency"] = item.get("currencyCode") or currency
            row["source_url"] = payload.source_url
            for name, value in row.items():
                columns[name].append(value)
    return token_prices_frame(columns, observed_at, source=SOURCE)


def _token_price(item: object, where: str) -> dict | None:
    """One item as a token-price row, None when it is not an Azure OpenAI text-token consumption price."""
    if not isinstance(item, dict):
        raise LayoutChanged(f"{SOURCE}: {where}: not a JSON object")
    missing = [name for name in REQUIRED if item.get(name) is None]
    if missing:
        raise LayoutChanged(f"{SOURCE}: {where}: no {missing[0]}")
    if item["serviceName"] not in SERVICE_NAMES or "OpenAI" not in item["productName"]:
        return None
    if item.get("type", "Consumption") != "Consumption" or item.get("isPrimaryMeterRegion") is False:
        return None
    meter = parse_meter(str(item["meterName"]))
    if meter is None:
        return None
    where = f"{where} (meterName {item['meterName']!r})"
    unit = UNIT_TOKENS.get(str(item["unitOfMeasure"]))
    if unit is None:
        raise LayoutChanged(
            f"{SOURCE}: {where}: unitOfMeasure {item['unitOfMeasure']!r} is not one of {sorted(UNIT_TOKENS)}"
        )
    price = item["retailPrice"]
    if isinstance(price, bool) or not isinstance(price, int | Decimal) or price < 0:
        raise LayoutChanged(f"{SOURCE}: {where}: retailPrice {price!r} is not a price")
    if price == 0:
        return None
    return meter | {
        "provider": PROVIDER,
        "service": SERVICE,
        "region": item["armRegionName"],
        "price": Decimal(price),
        "unit_tokens": unit,
        "price_per_million": per_million(Decimal(price), unit),
        "effective_date": _date(item.get("effectiveStartDate"), where),
        "sku": item.get("meterId") or item.get("skuId"),
    }


def _date(value: object, where: str) -> date | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).date()
    except ValueError as error:
        raise LayoutChanged(f"{SOURCE}: {where}: effectiveStartDate {value!r} is not a timestamp") from error


FEED = PriceFeed(
    name="azure_openai",
    provider=PROVIDER,
    title="Azure Retail Prices API (Azure OpenAI token prices)",
    fetch=fetch,
    parse=parse,
    base_url_env=BASE_URL_ENV,
    columns=TOKEN_PRICE_SCHEMA,
    table="raw.ai_api_token_prices",
)
