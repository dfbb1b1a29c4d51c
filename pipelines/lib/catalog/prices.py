"""Every market-price feed and the ECB's exchange rates: their raw tables, assets, quality facts and cadence.

A price feed is its connector's `PriceFeed` (`sources/prices/`); registering one is adding it to
`PRICE_FEEDS`. The Dagster assets, the raw tables, the quality checks, freshness and the CLI come from here.
The rules the rows must satisfy are the connectors' own sets (`sources.prices.offers`) and the readers'
plausible time range (`sources.common.row_checks`), so a rule exists once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import polars as pl

from pipelines.lib.catalog.entry import CatalogEntry
from pipelines.lib.catalog.facts import (
    MAX_ABS_COST,
    AllowedValues,
    Derived,
    InRange,
    LastObserved,
    NotBefore,
    QualityFacts,
)
from pipelines.lib.catalog.tables import ReferenceTable
from sources.common.row_checks import EARLIEST, LATEST, NonNegative
from sources.prices import azure_openai, azure_retail, coreweave, ecb, gcp_catalog, lambda_cloud, oci, runpod, vast
from sources.prices.aws import bedrock as aws_bedrock
from sources.prices.aws import price_list as aws_price_list
from sources.prices.aws import spot as aws_spot
from sources.prices.aws import spot_advisor as aws_spot_advisor
from sources.prices.offers import OFFER_STATISTICS, PRICE_UNITS, PRICING_MODELS, PriceFeed
from sources.prices.token_prices import DEPLOYMENT_TYPES, PRICING_TIERS, TOKEN_TYPES

PRICE_FEEDS: tuple[PriceFeed, ...] = (
    lambda_cloud.FEED,
    aws_price_list.FEED,
    aws_spot.FEED,
    aws_spot_advisor.FEED,
    azure_retail.FEED,
    gcp_catalog.FEED,
    runpod.FEED,
    vast.FEED,
    oci.FEED,
    coreweave.FEED,
    azure_openai.FEED,
    aws_bedrock.FEED,
)

FEEDS_BY_NAME = {feed.name: feed for feed in PRICE_FEEDS}


def price_table(feed: PriceFeed) -> ReferenceTable:
    """The raw table a feed loads into; every row carries its feed and the day it was captured for."""
    return ReferenceTable(
        name=feed.table,
        columns={**feed.columns, "feed": pl.String, "price_day": pl.Date},
        replace_key=("feed", "price_day"),
        partition_by=("feed",),
    )


CAPTURE_DEADLINE = Derived("_captured_by", "CAST(price_day AS TIMESTAMP) + INTERVAL 2 DAY")
"""A day's prices are fetched while that day is today (UTC, ±1 day; `market_prices._capture_for`), so
a capture observed after the end of the following day cannot be that day's: a slipped date."""

_PLAUSIBLE_TIME = InRange("observed_at", EARLIEST, LATEST, unit="(a plausible capture time)")


def _feed_facts(feed: PriceFeed) -> tuple[AllowedValues, NotBefore]:
    return (
        AllowedValues("feed", (feed.name,)),
        NotBefore("_captured_by", "observed_at"),
    )


def offer_facts(feed: PriceFeed) -> QualityFacts:
    """raw.price_observations, the rows of one feed: the offers shape of `sources.prices.offers`."""
    allowed, captured = _feed_facts(feed)
    return QualityFacts(
        keys=(
            "observed_at",
            "provider",
            "pricing_model",
            "price",
            "price_unit",
            "offer_statistic",
            "currency",
            "source_url",
            "feed",
            "price_day",
        ),
        allowed_values=(
            allowed,
            AllowedValues("pricing_model", tuple(sorted(PRICING_MODELS))),
            AllowedValues("price_unit", tuple(sorted(PRICE_UNITS))),
            AllowedValues("offer_statistic", tuple(sorted(OFFER_STATISTICS))),
        ),
        cost_columns=("price", "upfront_price"),
        currency_columns=("currency",),
        not_negative=tuple(
            NonNegative(column) for column in ("price", "upfront_price", "gpu_count", "term_years", "offer_count")
        ),
        ordered=(captured,),
        in_range=(_PLAUSIBLE_TIME,),
        derived=(CAPTURE_DEADLINE,),
    )


def spot_advisor_facts(feed: PriceFeed) -> QualityFacts:
    """raw.aws_spot_advisor: savings and interruption bands are percentages."""
    allowed, captured = _feed_facts(feed)
    return QualityFacts(
        keys=("observed_at", "region", "os", "instance_type", "interruption_band", "source_url", "feed", "price_day"),
        allowed_values=(allowed,),
        not_negative=(NonNegative("interruption_band"),),
        ordered=(captured,),
        in_range=(
            _PLAUSIBLE_TIME,
            InRange("savings_pct", 0, 100, unit="%"),
            InRange("interruption_max_pct", 0, 100, unit="%"),
        ),
        derived=(CAPTURE_DEADLINE,),
    )


def token_price_facts(feed: PriceFeed) -> QualityFacts:
    """raw.ai_api_token_prices: token types, tiers and deployments in their sets; prices not negative, per 1K or 1M."""
    allowed, captured = _feed_facts(feed)
    return QualityFacts(
        keys=(
            "observed_at",
            "provider",
            "service",
            "model",
            "token_type",
            "pricing_tier",
            "deployment_type",
            "price",
            "unit_tokens",
            "price_per_million",
            "currency",
            "source_url",
            "feed",
            "price_day",
        ),
        allowed_values=(
            allowed,
            AllowedValues("token_type", TOKEN_TYPES),
            AllowedValues("pricing_tier", PRICING_TIERS),
            AllowedValues("deployment_type", DEPLOYMENT_TYPES),
        ),
        cost_columns=("price", "price_per_million"),
        currency_columns=("currency",),
        not_negative=(NonNegative("price"), NonNegative("price_per_million")),
        ordered=(captured,),
        in_range=(_PLAUSIBLE_TIME, InRange("unit_tokens", 1_000, 1_000_000, unit="tokens per priced unit")),
        derived=(CAPTURE_DEADLINE,),
    )


FACTS_BY_TABLE = {
    "raw.price_observations": offer_facts,
    "raw.aws_spot_advisor": spot_advisor_facts,
    "raw.ai_api_token_prices": token_price_facts,
}
"""The quality facts of each table price feeds load into, by the table's name."""


@dataclass(frozen=True, kw_only=True)
class PriceFeedEntry(CatalogEntry):
    """A market-price feed: one daily-partitioned asset per feed, its rows marked with the feed's name."""

    feed: PriceFeed


def price_feed_entry(feed: PriceFeed) -> PriceFeedEntry:
    facts = FACTS_BY_TABLE[feed.table](feed)
    return PriceFeedEntry(
        name=f"prices/{feed.name}",
        title=feed.title,
        asset_key=("prices", feed.name),
        raw_table=price_table(feed),
        quality=facts,
        delivery_cadence=feed.delivery_cadence,
        delivery_grace=feed.delivery_grace,
        observed=LastObserved("observed_at", "'prices/' || feed"),
        partition_column="price_day",
        feed=feed,
    )


PRICE_FEED_ENTRIES: tuple[PriceFeedEntry, ...] = tuple(price_feed_entry(feed) for feed in PRICE_FEEDS)

FX_RATES = ReferenceTable(
    name="raw.ecb_fx_rates",
    columns=ecb.RATE_SCHEMA,
    replace_key=("rate_date", "quote_currency"),
    partition_by=("base_currency",),
)

FX_FACTS = QualityFacts(
    keys=("rate_date", "base_currency", "quote_currency", "rate", "source_url"),
    currency_columns=("base_currency", "quote_currency"),
    in_range=(InRange("rate", 0, MAX_ABS_COST, strict_min=True, unit="(units per EUR)"),),
)
"""raw.ecb_fx_rates: ISO 4217 codes on both sides and a positive, finite rate."""

ECB_RATES = CatalogEntry(
    name="ecb",
    title="ECB reference rates",
    asset_key=("raw", "ecb_fx_rates"),
    raw_table=FX_RATES,
    # One load holds the 90 days of rates known on its day, so the check keeps every pending ECB load.
    quality=FX_FACTS,
    delivery_cadence=timedelta(days=1),
    # Rates appear at 16:00 CET on TARGET working days only: Easter leaves four days without one.
    delivery_grace=timedelta(days=5),
    observed=LastObserved("rate_date", "'ecb'"),
)
