"""AWS Spot Advisor: typical spot savings and interruption frequency per region, OS and instance type.

Why a feed of its own: spot prices say what spot costs; the advisor says how often it is taken back
(`r`: an index into `ranges`, e.g. band 4 = ">20%" of instances interrupted in a month) and how much
it saves on average against on-demand (`s`, whole percent). It is reference data, not an offer, so it
has its own table (raw.aws_spot_advisor). The bands change monthly; a daily copy keeps their history.
Only GPU/accelerator families are kept; Linux and Windows both (the advisor's two OS keys).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import polars as pl

from sources.common.http import HttpClient, base_url
from sources.common.types import TIMESTAMP
from sources.prices.aws import PROVIDER, is_accelerator_type, json_document
from sources.prices.offers import MONEY, LayoutChanged, Payload, PayloadStore, PriceFeed

BASE_URL_ENV = "FINOPS_AWS_SPOT_ADVISOR_BASE_URL"
DEFAULT_BASE_URL = "https://spot-bid-advisor.s3.amazonaws.com"
PATH = "/spot-advisor-data.json"

ADVISOR_SCHEMA: dict[str, pl.DataType] = {
    "observed_at": TIMESTAMP,
    "region": pl.String,
    "os": pl.String,
    "instance_type": pl.String,
    "savings_pct": MONEY,
    "interruption_band": pl.Int64,
    "interruption_label": pl.String,
    "interruption_max_pct": MONEY,
    "source_url": pl.String,
}
"""One row per region × OS × instance type.

savings_pct: average spot saving against on-demand, in percent (`s`). interruption_band: the index
into the advisor's `ranges` (`r`, 0 = least interrupted); interruption_label and
interruption_max_pct: that band's label (`<5%`, `5-10%`, …, `>20%`) and upper bound as published.
"""


def fetch(client: HttpClient, store: PayloadStore, api_key: str | None) -> None:
    url = base_url(BASE_URL_ENV, DEFAULT_BASE_URL) + PATH
    store.save("spot-advisor-data.json", url, client.get(url).content)


def parse(payloads: list[Payload], observed_at: datetime) -> pl.DataFrame:
    columns: dict[str, list] = {name: [] for name in ADVISOR_SCHEMA}
    for payload in payloads:
        url = payload.source_url
        document = json_document(payload)
        bands = _bands(document.get("ranges"), url)
        advice = document.get("spot_advisor")
        if not isinstance(advice, dict) or not advice:
            raise LayoutChanged(f"{PROVIDER}: {url}: no `spot_advisor` object of regions")
        for region, systems in advice.items():
            if not isinstance(systems, dict):
                raise LayoutChanged(f"{PROVIDER}: {url}: spot_advisor.{region} is not an object of OS names")
            for os_name, types in systems.items():
                if not isinstance(types, dict):
                    raise LayoutChanged(f"{PROVIDER}: {url}: spot_advisor.{region}.{os_name} is not an object of types")
                for instance_type, entry in types.items():
                    if not is_accelerator_type(instance_type):
                        continue
                    savings, band = _entry(entry, f"{url}: {region} {os_name} {instance_type}")
                    if band not in bands:
                        raise LayoutChanged(
                            f"{PROVIDER}: {url}: {region} {os_name} {instance_type}: band {band} not in `ranges`"
                        )
                    label, max_pct = bands[band]
                    columns["observed_at"].append(observed_at)
                    columns["region"].append(region)
                    columns["os"].append(os_name)
                    columns["instance_type"].append(instance_type)
                    columns["savings_pct"].append(savings)
                    columns["interruption_band"].append(band)
                    columns["interruption_label"].append(label)
                    columns["interruption_max_pct"].append(max_pct)
                    columns["source_url"].append(url)
    frame = pl.DataFrame(columns, schema=ADVISOR_SCHEMA)
    if frame.is_empty():
        raise LayoutChanged(
            f"{PROVIDER} Spot Advisor: no GPU instance types in the payload; refusing to load an empty capture"
        )
    return frame


def _bands(ranges: object, url: str) -> dict[int, tuple[str, Decimal]]:
    """index → (label, max %) from the advisor's `ranges` list."""
    if not isinstance(ranges, list) or not ranges:
        raise LayoutChanged(f"{PROVIDER}: {url}: no `ranges` list of interruption bands")
    bands = {}
    for band in ranges:
        try:
            bands[int(band["index"])] = (str(band["label"]), Decimal(str(band["max"])))
        except (KeyError, TypeError, ValueError, ArithmeticError) as error:
            raise LayoutChanged(f"{PROVIDER}: {url}: interruption band {band!r} without index/label/max") from error
    return bands


def _entry(entry: object, where: str) -> tuple[Decimal, int]:
    """(`s` savings %, `r` band index) of one instance type."""
    try:
        savings, band = Decimal(str(entry["s"])), int(entry["r"])
    except (KeyError, TypeError, ValueError, ArithmeticError) as error:
        raise LayoutChanged(f"{PROVIDER}: {where}: expected {{'s': savings %, 'r': band}}, got {entry!r}") from error
    if not savings.is_finite() or not 0 <= savings <= 100:
        raise LayoutChanged(f"{PROVIDER}: {where}: savings {savings} is not a percentage")
    return savings, band


FEED = PriceFeed(
    name="aws_spot_advisor",
    provider=PROVIDER,
    title="AWS Spot Advisor (spot-advisor-data.json: savings % and interruption band)",
    fetch=fetch,
    parse=parse,
    base_url_env=BASE_URL_ENV,
    columns=ADVISOR_SCHEMA,
    table="raw.aws_spot_advisor",
)
