"""Vast.ai marketplace offers (`POST /api/v0/bundles/`), summarised per GPU model × GPU count.

Vast is a marketplace: thousands of hosts' offers, not a list price. Each offer is priced for the
whole machine (`dph_total`, USD per hour including its storage) and carries `min_bid`, the lowest
bid that rents it as an interruptible instance. We keep the market's shape, not every offer: per
GPU model and GPU count, the `minimum` and the `median` price with the number of offers they
summarise — on-demand from `dph_total` of the `ondemand` offers, interruptible from `min_bid` of
the `bid` offers. The median of an even count is the mean of the two middle offers. A100 and V100
offers carry their memory size in the name ("A100 SXM4 80GB"), since Vast's name alone does not
separate the 40 and 80 GB markets.

The search is asked once per offer type and GPU count (counts from FINOPS_VAST_GPU_COUNTS, default
1,2,4,8), cheapest first, `limit` offers each: a single search capped at `limit` would cut off the
expensive multi-GPU machines. Offers not rentable, already rented, without a GPU or without a price
are left out.
"""

from __future__ import annotations

import os
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

import polars as pl

from sources.common.http import HttpClient, base_url
from sources.prices.offers import MONEY, LayoutChanged, Payload, PayloadStore, PriceFeed, check_offers, naming_provider

PROVIDER = "Vast.ai"
BASE_URL_ENV = "FINOPS_VAST_BASE_URL"
DEFAULT_BASE_URL = "https://console.vast.ai"
PATH = "/api/v0/bundles/"
GPU_COUNTS_ENV = "FINOPS_VAST_GPU_COUNTS"
DEFAULT_GPU_COUNTS = (1, 2, 4, 8)
OFFER_LIMIT = 3000
OFFER_TYPES = {"ondemand": ("on_demand", "dph_total"), "bid": ("interruptible", "min_bid")}
"""Vast search type → (pricing model, the offer field that prices it)."""
REQUIRED_FIELDS = ("id", "gpu_name", "num_gpus", "dph_total", "min_bid")
MEMORY_VARIANTS = ("A100", "V100")
"""GPUs sold in two memory sizes under one Vast name ("A100 SXM4"): their size (`gpu_ram`, MiB) joins the name."""


def _gpu_name(offer: dict[str, Any], where: str) -> str:
    """Vast's GPU name, with the memory size added where the name alone does not tell 40 from 80 GB."""
    name = str(offer["gpu_name"])
    if not name.upper().startswith(MEMORY_VARIANTS) or "GB" in name.upper():
        return name
    memory = _number(offer.get("gpu_ram"), f"{where}: gpu_ram")
    if memory is None or memory <= 0:
        raise LayoutChanged(f"{where}: {name} without gpu_ram, so 40 and 80 GB parts cannot be told apart")
    return f"{name} {round(memory / 1024)}GB"


def gpu_counts() -> tuple[int, ...]:
    raw = os.environ.get(GPU_COUNTS_ENV, "").strip()
    if not raw:
        return DEFAULT_GPU_COUNTS
    try:
        counts = tuple(int(part) for part in raw.split(",") if part.strip())
    except ValueError as error:
        raise ValueError(f"{GPU_COUNTS_ENV}={raw!r}: expected comma-separated GPU counts such as 1,2,4,8") from error
    if not counts or min(counts) < 1:
        raise ValueError(f"{GPU_COUNTS_ENV}={raw!r}: GPU counts must be positive")
    return counts


def search_body(offer_type: str, num_gpus: int) -> dict[str, Any]:
    return {
        "verified": {"eq": True},
        "rentable": {"eq": True},
        "rented": {"eq": False},
        "num_gpus": {"eq": num_gpus},
        "type": offer_type,
        "order": [["dph_total", "asc"]],
        "limit": OFFER_LIMIT,
    }


def _payload_name(offer_type: str, num_gpus: int) -> str:
    return f"bundles-{offer_type}-{num_gpus}gpu.json"


def fetch(client: HttpClient, store: PayloadStore, api_key: str | None) -> None:
    url = base_url(BASE_URL_ENV, DEFAULT_BASE_URL) + PATH
    for offer_type in OFFER_TYPES:
        for num_gpus in gpu_counts():
            response = client.post(url, json=search_body(offer_type, num_gpus))
            store.save(_payload_name(offer_type, num_gpus), url, response.content)


def _offer_type_of(payload: Payload) -> str:
    for offer_type in OFFER_TYPES:
        if payload.name.startswith(f"bundles-{offer_type}-"):
            return offer_type
    raise LayoutChanged(f"{payload.source_url}: payload {payload.name!r} is not a Vast.ai ondemand or bid search")


def _number(value: Any, where: str) -> Decimal | None:
    """An offer's number (`where` names the offer and field), None when the offer leaves it empty."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise LayoutChanged(f"{where} {value!r} is not a number")
    try:
        return Decimal(str(value))
    except InvalidOperation as error:
        raise LayoutChanged(f"{where} {value!r} is not a number") from error


def _offers(payloads: list[Payload]) -> pl.DataFrame:
    """Every usable offer of every search: pricing model, GPU name and count, price, offer id, URL."""
    columns: dict[str, list] = {
        name: [] for name in ("pricing_model", "gpu_name", "gpu_count", "price", "offer_id", "source_url")
    }
    for payload in payloads:
        pricing_model, price_field = OFFER_TYPES[_offer_type_of(payload)]
        document = payload.json()
        offers = document.get("offers") if isinstance(document, dict) else None
        if not isinstance(offers, list):
            raise LayoutChanged(f"{payload.source_url}: no `offers` list")
        for offer in offers:
            missing = [name for name in REQUIRED_FIELDS if not isinstance(offer, dict) or name not in offer]
            if missing:
                raise LayoutChanged(f"{payload.source_url}: an offer without {', '.join(missing)}")
            where = f"{payload.source_url}: offer {offer['id']}"
            price = _number(offer[price_field], f"{where}: {price_field}")
            if (
                offer.get("rentable") is False
                or offer.get("rented") is True
                or not offer["gpu_name"]
                or not offer["num_gpus"]
                or price is None
                or price <= 0
            ):
                continue
            columns["pricing_model"].append(pricing_model)
            columns["gpu_name"].append(_gpu_name(offer, where))
            columns["gpu_count"].append(Decimal(str(offer["num_gpus"])))
            columns["price"].append(price)
            columns["offer_id"].append(str(offer["id"]))
            columns["source_url"].append(payload.source_url)
    return pl.DataFrame(
        columns,
        schema={
            "pricing_model": pl.String,
            "gpu_name": pl.String,
            "gpu_count": MONEY,
            "price": MONEY,
            "offer_id": pl.String,
            "source_url": pl.String,
        },
    )


def _parse(payloads: list[Payload], observed_at: datetime) -> pl.DataFrame:
    offers = _offers(payloads)
    summary = (
        offers.group_by("pricing_model", "gpu_name", "gpu_count")
        .agg(
            prices=pl.col("price").sort(),
            cheapest_offer=pl.col("offer_id").sort_by("price", "offer_id").first(),
            source_url=pl.col("source_url").first(),
            offer_count=pl.len().cast(pl.Int64),
        )
        .with_columns(
            minimum=pl.col("prices").list.first(),
            median=(
                pl.col("prices").list.get((pl.col("offer_count") - 1) // 2)
                + pl.col("prices").list.get(pl.col("offer_count") // 2)
            )
            / 2,
        )
    )
    rows = pl.concat(
        [
            summary.select(
                "pricing_model",
                "gpu_name",
                "gpu_count",
                "offer_count",
                "source_url",
                price=pl.col(statistic),
                offer_statistic=pl.lit(statistic),
                sku=pl.col("cheapest_offer") if statistic == "minimum" else pl.lit(None, pl.String),
            )
            for statistic in ("minimum", "median")
        ]
    ).sort("pricing_model", "gpu_name", "gpu_count", "offer_statistic")
    frame = rows.with_columns(
        observed_at=pl.lit(observed_at),
        provider=pl.lit(PROVIDER),
        price_unit=pl.lit("instance-hour"),
        currency=pl.lit("USD"),
        region=pl.lit(None, pl.String),
        zone=pl.lit(None, pl.String),
        instance_type=pl.lit(None, pl.String),
        upfront_price=pl.lit(None, MONEY),
        term_years=pl.lit(None, pl.Int64),
    )
    return check_offers(frame, source=f"{PROVIDER} bundles")


parse = naming_provider(PROVIDER, _parse)
"""The offers of one capture; every LayoutChanged names the provider (and the URL where it has one)."""

FEED = PriceFeed(
    name="vast",
    provider=PROVIDER,
    title="Vast.ai bundles search (minimum and median per GPU model and count)",
    fetch=fetch,
    parse=parse,
    base_url_env=BASE_URL_ENV,
)
