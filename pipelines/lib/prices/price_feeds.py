"""Every market-price feed the project knows. The Dagster assets, the raw tables and the CLI come from this list."""

from __future__ import annotations

from sources.prices import azure_retail, coreweave, gcp_catalog, lambda_cloud, oci, runpod, vast
from sources.prices.aws import price_list as aws_price_list
from sources.prices.aws import spot as aws_spot
from sources.prices.aws import spot_advisor as aws_spot_advisor
from sources.prices.offers import PriceFeed

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
)

FEEDS_BY_NAME = {feed.name: feed for feed in PRICE_FEEDS}
