"""AWS EC2 Price List bulk offer files, one CSV per region: on-demand, reserved and capacity-block list prices.

Why CSV per region: the all-region JSON is GBs and needs several GB of RAM to `json.load`; a region's
CSV is a few hundred MB, streams to disk compressed (`PayloadStore.save_stream`) and is read by
DuckDB in an in-memory connection that filters while it scans, so memory stays bounded whatever the
file's size. The CSV starts with 5 metadata lines (FormatVersion, Disclaimer, Publication Date,
Version, OfferCode), then the header; every value is a quoted string, prices included.

Kept: GPU and accelerator instance types (GPU column > 0, or an accelerator family), Linux, Shared
tenancy, CapacityStatus Used, no pre-installed software, operation RunInstances. Classified:
- TermType OnDemand + MarketOption OnDemand, hourly → on_demand;
- TermType OnDemand + MarketOption CapacityBlock, hourly → capacity_block (p-series blocks);
- TermType Reserved, OfferingClass standard, 1yr/3yr → reserved_1y/3y, one row per purchase option
  (No/Partial/All Upfront): the hourly rate in `price` and the term's upfront fee in `upfront_price`.
Convertible reservations are left out (they trade flexibility for price; not the list figure).
Regions come from FINOPS_AWS_PRICE_REGIONS (comma-separated codes).
"""

from __future__ import annotations

import csv
import os
import re
from datetime import datetime

import duckdb
import polars as pl
import requests

from sources.common.http import FetchError, HttpClient, base_url
from sources.prices.aws import ACCELERATOR_FAMILY, PROVIDER
from sources.prices.offers import OFFER_SCHEMA, LayoutChanged, Payload, PayloadStore, PriceFeed, check_offers

BASE_URL_ENV = "FINOPS_AWS_PRICING_BASE_URL"
DEFAULT_BASE_URL = "https://pricing.us-east-1.amazonaws.com"
REGIONS_ENV = "FINOPS_AWS_PRICE_REGIONS"
DEFAULT_REGIONS = ("us-east-1", "us-west-2", "eu-west-1")
MAX_REGIONS = 40
"""A bound on requests per capture (AWS has ~35 commercial regions)."""
PATH = "/offers/v1.0/aws/AmazonEC2/current/{region}/index.csv"
METADATA_LINES = 5
REQUIRED_COLUMNS = (
    "SKU",
    "OfferTermCode",
    "RateCode",
    "TermType",
    "Unit",
    "PricePerUnit",
    "Currency",
    "LeaseContractLength",
    "PurchaseOption",
    "OfferingClass",
    "Product Family",
    "Instance Type",
    "Tenancy",
    "Operating System",
    "Pre Installed S/W",
    "CapacityStatus",
    "GPU",
    "Region Code",
    "MarketOption",
    "operation",
)
_REGION_CODE = re.compile(r"^[a-z]{2}(-[a-z]+)+-[0-9]+$")


def regions() -> list[str]:
    """Region codes to fetch, from FINOPS_AWS_PRICE_REGIONS or the default short list."""
    raw = os.environ.get(REGIONS_ENV, "").strip()
    if not raw:
        return list(DEFAULT_REGIONS)
    codes = list(dict.fromkeys(code.strip() for code in raw.split(",") if code.strip()))
    bad = [code for code in codes if not _REGION_CODE.match(code)]
    if bad:
        raise ValueError(f"{PROVIDER}: {REGIONS_ENV}: {bad[0]!r} is not an AWS region code such as us-east-1")
    if len(codes) > MAX_REGIONS:
        raise ValueError(f"{PROVIDER}: {REGIONS_ENV} names {len(codes)} regions; at most {MAX_REGIONS}")
    return codes


def fetch(client: HttpClient, store: PayloadStore, api_key: str | None) -> None:
    """One streamed download per region, in the configured order, each stored gzip-compressed."""
    base = base_url(BASE_URL_ENV, DEFAULT_BASE_URL)
    for region in regions():
        url = base + PATH.format(region=region)
        response = client.get(url, stream=True)
        try:
            with response:
                store.save_stream(f"{region}.csv", url, response)
        except requests.RequestException as error:
            raise FetchError(PROVIDER, client.scrub(url), f"download interrupted: {type(error).__name__}") from error


_OFFERS_SQL = f"""
with price_rows as (
    select
        "SKU" as product_sku,
        "OfferTermCode" as offer_term,
        "RateCode" as rate_code,
        "TermType" as term_type,
        "Unit" as unit,
        "PricePerUnit" as price_text,
        "Currency" as currency,
        "LeaseContractLength" as lease,
        "OfferingClass" as offering_class,
        "MarketOption" as market_option,
        "Instance Type" as instance_type,
        "Region Code" as region,
        try_cast(nullif("GPU", 'NA') as decimal(38, 12)) as gpus
    from read_csv(
        $path, skip = {METADATA_LINES}, header = true, columns = $columns,
        delim = ',', quote = '"', escape = '"', auto_detect = false
    )
    where "Product Family" like 'Compute Instance%'
        and "Operating System" = 'Linux'
        and "Tenancy" = 'Shared'
        and "CapacityStatus" = 'Used'
        and coalesce("Pre Installed S/W", 'NA') in ('NA', '')
        and "operation" = 'RunInstances'
        and (
            try_cast(nullif("GPU", 'NA') as decimal(38, 12)) > 0
            or regexp_matches("Instance Type", '{ACCELERATOR_FAMILY}')
        )
),

classified as (
    select
        *,
        case
            when term_type = 'OnDemand' and market_option = 'OnDemand' then 'on_demand'
            when term_type = 'OnDemand' and market_option = 'CapacityBlock' then 'capacity_block'
            when term_type = 'Reserved' and offering_class = 'standard' and lease = '1yr' then 'reserved_1y'
            when term_type = 'Reserved' and offering_class = 'standard' and lease = '3yr' then 'reserved_3y'
        end as pricing_model
    from price_rows
),

offers as (
    select
        region,
        instance_type,
        pricing_model,
        any_value(gpus) as gpu_count,
        count(*) filter (where unit = 'Hrs') as hourly_rows,
        max(cast(price_text as decimal(38, 12))) filter (where unit = 'Hrs') as price,
        max(cast(price_text as decimal(38, 12))) filter (where unit = 'Quantity') as upfront_price,
        any_value(currency) as currency,
        max(rate_code) filter (where unit = 'Hrs') as sku
    from classified
    where pricing_model is not null
    group by product_sku, offer_term, region, instance_type, pricing_model
)

select * from offers
order by region, instance_type, pricing_model, price, upfront_price nulls first
"""


def parse(payloads: list[Payload], observed_at: datetime) -> pl.DataFrame:
    frames = [_parse_region(payload) for payload in payloads]
    if not frames:
        raise LayoutChanged(f"{PROVIDER} price list: no payloads in the capture")
    offers = pl.concat(frames)
    frame = offers.with_columns(
        observed_at=pl.lit(observed_at, dtype=OFFER_SCHEMA["observed_at"]),
        provider=pl.lit(PROVIDER),
        zone=pl.lit(None, dtype=pl.String),
        gpu_name=pl.lit(None, dtype=pl.String),
        price_unit=pl.lit("instance-hour"),
        term_years=pl.when(pl.col("pricing_model") == "reserved_1y")
        .then(1)
        .when(pl.col("pricing_model") == "reserved_3y")
        .then(3)
        .otherwise(None)
        .cast(pl.Int64),
        offer_statistic=pl.lit("list"),
        offer_count=pl.lit(None, dtype=pl.Int64),
    )
    return check_offers(frame, source=f"{PROVIDER} EC2 price list")


def _parse_region(payload: Payload) -> pl.DataFrame:
    """A region's CSV → its GPU offers, filtered and classified by DuckDB while it streams the file."""
    header = _header(payload)
    missing = [column for column in REQUIRED_COLUMNS if column not in header]
    if missing:
        raise LayoutChanged(f"{PROVIDER}: {payload.source_url}: price list CSV without column(s) {missing}")
    columns = ", ".join(f"{_sql_text(name)}: 'VARCHAR'" for name in header)
    with duckdb.connect() as con:
        con.execute("set memory_limit = '1GB'")
        con.execute("set threads = 1")
        try:
            sql = _OFFERS_SQL.replace("$columns", "{" + columns + "}")
            offers = con.sql(sql, params={"path": str(payload.path)}).pl()
        except duckdb.Error as error:
            raise LayoutChanged(f"{PROVIDER}: {payload.source_url}: unreadable price list CSV ({error})") from error
    if offers.is_empty():
        raise LayoutChanged(f"{PROVIDER}: {payload.source_url}: no GPU instance prices in the price list CSV")
    ambiguous = offers.filter((pl.col("hourly_rows") != 1) | pl.col("price").is_null())
    if not ambiguous.is_empty():
        row = ambiguous.row(0, named=True)
        raise LayoutChanged(
            f"{PROVIDER}: {payload.source_url}: {row['instance_type']} {row['pricing_model']} has "
            f"{row['hourly_rows']} hourly price rows in one offer term; expected exactly one"
        )
    return offers.drop("hourly_rows").with_columns(source_url=pl.lit(payload.source_url))


def _header(payload: Payload) -> list[str]:
    """The column names after the 5 metadata lines; refuses an HTML error page or another file served instead."""
    with payload.open() as stream:
        lines = [stream.readline().decode("utf-8", "replace") for _ in range(METADATA_LINES + 1)]
    if not lines[0].startswith('"FormatVersion"') or '"OfferCode","AmazonEC2"' not in lines[METADATA_LINES - 1]:
        raise LayoutChanged(
            f"{PROVIDER}: {payload.source_url}: not an EC2 price list CSV "
            f"(expected 5 metadata lines FormatVersion … OfferCode AmazonEC2, got {lines[0].strip()[:60]!r})"
        )
    header = next(csv.reader([lines[METADATA_LINES]]), [])
    if len(set(header)) != len(header):
        raise LayoutChanged(f"{PROVIDER}: {payload.source_url}: price list CSV header repeats a column name")
    return header


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


FEED = PriceFeed(
    name="aws_price_list",
    provider=PROVIDER,
    title="AWS EC2 Price List bulk offer files (per-region CSV)",
    fetch=fetch,
    parse=parse,
    base_url_env=BASE_URL_ENV,
)
