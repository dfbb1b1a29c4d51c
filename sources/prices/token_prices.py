"""The shape every AI API token-price connector produces: one row per model, token type and deployment.

Why a shape of its own: an API's price is per token, not per GPU-hour, and what it varies by (the model,
input or output or cached tokens, a global or regional deployment, batch or not) has nothing in common
with an instance offer. The connectors keep the figure as published (per 1K or per 1M tokens, with its
unit) and add the price per million tokens, exactly, so every provider compares on one unit; the
model is normalised to one lower-case id (`gpt-4.1`, `amazon.nova-pro`, `meta.llama3-1-70b-instruct`)
that the bills' token lines and the comparables seed also use.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import polars as pl

from sources.common.types import DECIMAL, TIMESTAMP
from sources.prices.offers import LayoutChanged

TOKEN_PRICE_SCHEMA: dict[str, pl.DataType] = {
    "observed_at": TIMESTAMP,
    "provider": pl.String,
    "service": pl.String,
    "model": pl.String,
    "model_name": pl.String,
    "model_version": pl.String,
    "token_type": pl.String,
    "pricing_tier": pl.String,
    "deployment_type": pl.String,
    "region": pl.String,
    "price": DECIMAL,
    "unit_tokens": pl.Int64,
    "price_per_million": DECIMAL,
    "currency": pl.String,
    "effective_date": pl.Date,
    "sku": pl.String,
    "source_url": pl.String,
}
"""One row per provider × model × token type × pricing tier × deployment type × region.

provider: display name as in billing (`AWS`, `Microsoft`). service: the provider's API service
(`Amazon Bedrock`, `Azure OpenAI`). model: the normalised id; model_name: the name as published
(an Azure meter's model words, a Bedrock `model` attribute); model_version: a version the name carries
(Azure's `0806`), else null. token_type: one of TOKEN_TYPES. pricing_tier: one of PRICING_TIERS.
deployment_type: one of DEPLOYMENT_TYPES. price per unit_tokens tokens as published (1,000 or
1,000,000); price_per_million = price × 1,000,000 / unit_tokens, exact. effective_date: the day the
provider says the price took effect (null when the payload does not say). sku: the provider's meter
or product id.
"""

TOKEN_TYPES = ("input", "output", "cache_read", "cache_write", "reasoning")
PRICING_TIERS = ("standard", "batch", "priority")
"""standard: on-demand per call; batch: asynchronous batch jobs; priority: Azure's priority processing."""
DEPLOYMENT_TYPES = ("global", "data_zone", "regional")
"""Where the provider may run the call: anywhere (global), inside a data zone (EU, US), or in the region."""
UNIT_TOKENS = {"1K": 1_000, "1M": 1_000_000}
MILLION = Decimal(1_000_000)


def per_million(price: Decimal, unit_tokens: int) -> Decimal:
    """The price per million tokens of a price per `unit_tokens` tokens (1K or 1M), exact."""
    return price * MILLION / Decimal(unit_tokens)


def token_prices_frame(columns: dict[str, list], observed_at: datetime, *, source: str) -> pl.DataFrame:
    """Rows collected per column → a checked frame: an empty capture, unknown enums, missing or negative
    prices are refused, and each (model, token type, tier, deployment, region) is priced once."""
    height = len(columns["model"])
    data = {name: columns.get(name, [None] * height) for name in TOKEN_PRICE_SCHEMA}
    data["observed_at"] = [observed_at] * height
    frame = pl.DataFrame(data, schema=TOKEN_PRICE_SCHEMA)
    if frame.is_empty():
        raise LayoutChanged(f"{source}: no token prices found in the payload; refusing to load an empty capture")
    for column, allowed in (
        ("token_type", TOKEN_TYPES),
        ("pricing_tier", PRICING_TIERS),
        ("deployment_type", DEPLOYMENT_TYPES),
    ):
        bad = frame.filter(pl.col(column).is_null() | ~pl.col(column).is_in(allowed))
        if not bad.is_empty():
            raise LayoutChanged(f"{source}: {column} {bad[column][0]!r} is not one of {list(allowed)}")
    for column in ("provider", "service", "model", "price", "price_per_million", "currency", "source_url"):
        if frame[column].null_count():
            raise LayoutChanged(f"{source}: a token price without {column}")
    if frame.filter(pl.col("price") < 0).height:
        raise LayoutChanged(f"{source}: a negative token price")
    key = ["model", "token_type", "pricing_tier", "deployment_type", "region"]
    repeated = frame.group_by(key, maintain_order=True).len().filter(pl.col("len") > 1)
    if not repeated.is_empty():
        row = repeated.row(0, named=True)
        raise LayoutChanged(
            f"{source}: {row['model']} {row['token_type']} ({row['pricing_tier']}, {row['deployment_type']}, "
            f"{row['region']}) is priced {row['len']} times in one capture; expected once"
        )
    return frame
