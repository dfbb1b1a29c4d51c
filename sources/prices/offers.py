"""The shape every market-price connector produces, and the payload store it fetches into.

Why one shape: AWS bulk files, Azure's OData API, GCP's catalog, GPU clouds' JSON and GraphQL, a
marketplace's offers and an HTML pricing page all end up as the same rows — one per offer, with the
provider's own price and unit — so dbt can normalise them to $/GPU-hour in one place
(`int_prices__gpu_offers`). Connectors keep the provider's figures as published (per instance-hour,
per GPU-hour, or per whole reservation term) and leave the arithmetic to dbt.

Every connector module exposes `FEED = PriceFeed(...)`: `fetch` writes raw responses into a
`PayloadStore` (compressed, so a day can be re-parsed without refetching) and `parse` turns stored
payloads into an offers frame. Neither knows about Dagster or the warehouse.
"""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO, Any

import polars as pl
import requests

from sources.common.http import HttpClient
from sources.common.types import DECIMAL, TIMESTAMP

MONEY = DECIMAL

OFFER_SCHEMA: dict[str, pl.DataType] = {
    "observed_at": TIMESTAMP,
    "provider": pl.String,
    "region": pl.String,
    "zone": pl.String,
    "instance_type": pl.String,
    "gpu_name": pl.String,
    "gpu_count": MONEY,
    "pricing_model": pl.String,
    "price": MONEY,
    "price_unit": pl.String,
    "upfront_price": MONEY,
    "term_years": pl.Int64,
    "currency": pl.String,
    "offer_statistic": pl.String,
    "offer_count": pl.Int64,
    "sku": pl.String,
    "source_url": pl.String,
}
"""One row per offer.

observed_at: when the provider's figure was captured (UTC). provider: display name as in billing
(`AWS`, `Microsoft`, `Google Cloud`, `Lambda`, …). region/zone: the provider's codes (null where it
has none). instance_type: VM size or shape as billed (null for per-GPU SKUs). gpu_name: the provider's
own GPU name, resolved to the project vocabulary in dbt. gpu_count: GPUs per instance (fractional for
partial GPUs; null when the payload does not say — dbt then uses the instance-type seed).
pricing_model: one of PRICING_MODELS. price + price_unit: the figure as published, per PRICE_UNITS;
upfront_price: a one-time fee for the whole term (AWS partial/all-upfront reservations);
term_years: length of a commitment. offer_statistic/offer_count: `list` for a list price, or
`minimum`/`median` of `offer_count` marketplace offers. sku: the provider's product/rate id.
"""

PRICING_MODELS = frozenset(
    {
        "on_demand",
        "spot",
        "reserved_1y",
        "reserved_3y",
        "savings_plan_1y",
        "savings_plan_3y",
        "committed_1y",
        "committed_3y",
        "community",
        "interruptible",
        "capacity_block",
    }
)
PRICE_UNITS = frozenset({"instance-hour", "gpu-hour", "term"})
"""instance-hour: per hour of the whole VM; gpu-hour: per hour of one GPU; term: the whole commitment term."""
OFFER_STATISTICS = frozenset({"list", "minimum", "median"})


class LayoutChanged(ValueError):
    """A payload that is not the layout this connector knows: refuse rather than load garbage or nothing."""


@dataclass(frozen=True)
class Payload:
    """One stored raw response: a (possibly gzip-compressed) file and the URL it came from."""

    path: Path
    source_url: str

    @property
    def name(self) -> str:
        return self.path.name.removesuffix(".gz")

    def open(self) -> IO[bytes]:
        """A binary stream of the payload, decompressed on the fly (payloads may be hundreds of MB)."""
        if self.path.suffix == ".gz":
            return gzip.open(self.path, "rb")
        return self.path.open("rb")

    def read_bytes(self) -> bytes:
        with self.open() as stream:
            return stream.read()

    def json(self) -> Any:
        try:
            return json.loads(self.read_bytes())
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise LayoutChanged(f"{self.source_url}: not JSON ({error})") from error


INDEX_FILE = "index.json"


@dataclass
class PayloadStore:
    """A folder of compressed raw responses plus `index.json` (file name → source URL, capture time).

    The same layout serves the fetched payloads under FINOPS_HOME/raw/prices/<feed>/<day>/ and the
    snapshots bundled for offline mode, so one parser reads both.
    """

    folder: Path
    payloads: list[Payload] = field(default_factory=list)

    def save(self, name: str, source_url: str, content: bytes) -> Payload:
        path = self.folder / f"{name}.gz"
        self.folder.mkdir(parents=True, exist_ok=True)
        path.write_bytes(gzip.compress(content, mtime=0))
        return self._add(path, source_url)

    def save_stream(
        self, name: str, source_url: str, response: requests.Response, chunk_bytes: int = 1 << 20
    ) -> Payload:
        """Stream a large response to disk compressed, never holding it whole in memory."""
        path = self.folder / f"{name}.gz"
        self.folder.mkdir(parents=True, exist_ok=True)
        with gzip.open(path, "wb", compresslevel=6) as out:
            for chunk in response.iter_content(chunk_size=chunk_bytes):
                out.write(chunk)
        return self._add(path, source_url)

    def _add(self, path: Path, source_url: str) -> Payload:
        payload = Payload(path=path, source_url=source_url)
        self.payloads.append(payload)
        return payload

    def write_index(self, observed_at: datetime, scrub: Callable[[str], str]) -> None:
        """Record what was fetched and when; URLs pass through `scrub` so no key is ever written."""
        index = {
            "observed_at": observed_at.isoformat(),
            "payloads": [{"file": p.path.name, "source_url": scrub(p.source_url)} for p in self.payloads],
        }
        (self.folder / INDEX_FILE).write_text(json.dumps(index, indent=2) + "\n")

    @classmethod
    def read(cls, folder: Path) -> tuple[PayloadStore, datetime]:
        """A stored capture and its observation time, as written by `write_index`."""
        index = json.loads((folder / INDEX_FILE).read_text())
        store = cls(folder)
        for entry in index["payloads"]:
            store._add(folder / entry["file"], entry["source_url"])
        return store, datetime.fromisoformat(index["observed_at"])

    def discard(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


Fetch = Callable[[HttpClient, PayloadStore, "str | None"], None]
Parse = Callable[[list[Payload], datetime], pl.DataFrame]


@dataclass(frozen=True)
class PriceFeed:
    """A provider's price source: how to fetch it and how to read what was fetched."""

    name: str
    """Short id: asset key `prices/<name>`, payload folder, snapshot folder, `feed` column."""
    provider: str
    title: str
    fetch: Fetch
    parse: Parse
    base_url_env: str
    credential_env: str | None = None
    """Environment variable of the API key, for providers that need one."""
    columns: Mapping[str, pl.DataType] = field(default_factory=lambda: OFFER_SCHEMA)
    """The frame `parse` returns: offers by default; reference data (e.g. Spot Advisor bands) may differ."""
    table: str = "raw.price_observations"
    delivery_cadence: timedelta = timedelta(days=1)
    """How often a fresh capture is expected: providers' prices are read once a day."""
    delivery_grace: timedelta = timedelta(hours=12)
    """How long after `delivery_cadence` a capture may still arrive before the feed counts as late."""


def offers_frame(columns: Mapping[str, Any], *, source: str) -> pl.DataFrame:
    """Build an offers frame and check it: list values are columns (money as `Decimal`), a scalar value is
    the same for every offer (provider, pricing model, …), absent columns are null."""
    unknown = set(columns) - set(OFFER_SCHEMA)
    if unknown:
        raise ValueError(f"not offer columns: {sorted(unknown)}")
    height = max((len(value) for value in columns.values() if isinstance(value, list)), default=0)
    frame = pl.DataFrame(
        {
            name: columns[name] if isinstance(columns.get(name), list) else [columns.get(name)] * height
            for name in OFFER_SCHEMA
        },
        schema=OFFER_SCHEMA,
    )
    return check_offers(frame, source=source)


def naming_provider(provider: str, parse: Parse) -> Parse:
    """`parse` whose every LayoutChanged starts with the provider's name (messages naming only a file or URL)."""

    def parse_naming_provider(payloads: list[Payload], observed_at: datetime) -> pl.DataFrame:
        try:
            return parse(payloads, observed_at)
        except LayoutChanged as error:
            if str(error).startswith(provider):
                raise
            raise LayoutChanged(f"{provider}: {error}") from error

    return parse_naming_provider


def check_offers(frame: pl.DataFrame, *, source: str) -> pl.DataFrame:
    """Refuse an empty capture, unknown pricing models or units, and missing or negative prices."""
    if frame.is_empty():
        raise LayoutChanged(f"{source}: no GPU offers found in the payload; refusing to load an empty capture")
    frame = frame.select([pl.col(name).cast(dtype) for name, dtype in OFFER_SCHEMA.items()])
    for column, allowed in (
        ("pricing_model", PRICING_MODELS),
        ("price_unit", PRICE_UNITS),
        ("offer_statistic", OFFER_STATISTICS),
    ):
        bad = frame.filter(pl.col(column).is_null() | ~pl.col(column).is_in(sorted(allowed)))
        if not bad.is_empty():
            raise LayoutChanged(f"{source}: {column} {bad[column][0]!r} is not one of {sorted(allowed)}")
    for column in ("observed_at", "provider", "price", "currency", "source_url"):
        if frame[column].null_count():
            raise LayoutChanged(f"{source}: an offer without {column}")
    if frame.filter(pl.col("price") < 0).height:
        raise LayoutChanged(f"{source}: a negative price")
    return frame
