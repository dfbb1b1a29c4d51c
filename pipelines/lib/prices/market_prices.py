"""Fetch (or read offline) one price feed for one day and load its rows into the warehouse.

Each day's capture of each feed replaces only that (feed, day): a provider that fails today leaves
yesterday's prices — and every other provider's — where they were. Raw responses are kept under
FINOPS_HOME/raw/prices/<feed>/<day>/ so a day is re-parsed (after a parser fix, say) without
refetching; offline mode reads the captures bundled in `sources/prices/snapshots/<feed>/<date>/`.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
from dataclasses import dataclass
from datetime import UTC, date, datetime
from importlib import resources
from pathlib import Path

import duckdb
import polars as pl

from pipelines.lib.catalog.prices import price_table
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.loads import LoadOutcome, load_reference_rows
from sources.common.http import HttpClient, credential
from sources.prices.offers import INDEX_FILE, PayloadStore, PriceFeed

SNAPSHOTS = Path(str(resources.files("sources.prices").joinpath("snapshots")))


class NoSnapshot(FileNotFoundError):
    """Offline mode asked for a day before the earliest bundled capture of a feed."""


@dataclass(frozen=True)
class PriceLoad:
    outcome: LoadOutcome
    days: list[date]
    captures: list[Path]
    observed_at: datetime
    """When the latest capture used was made."""
    source_urls: list[str]
    offers: int
    """Offers in the latest day's capture."""


def bundled_snapshot(feed: PriceFeed, day: date) -> Path:
    """The latest capture of `feed` bundled with the package on or before `day`."""
    folder = SNAPSHOTS / feed.name
    captures = sorted(p for p in folder.glob("*") if (p / INDEX_FILE).exists() and date.fromisoformat(p.name) <= day)
    if not captures:
        raise NoSnapshot(f"{feed.name}: no bundled snapshot on or before {day} in {folder}")
    return captures[-1]


def refresh_price_feed(
    home: FinopsHome,
    con: duckdb.DuckDBPyConnection,
    feed: PriceFeed,
    days: list[date],
    *,
    offline: bool,
    log: logging.Logger,
    client: HttpClient | None = None,
    today: date | None = None,
) -> PriceLoad:
    """Capture `feed` for each of `days` (fetch, reuse the stored capture, or read the bundled one); load them at once.

    Providers publish current prices only, so a day is fetched only when it is today (UTC, ±1 day);
    earlier days come from captures stored when they were current. Raises MissingCredential when
    the feed needs a key the environment does not hold (callers skip), FetchError naming the
    provider, URL and reason, LayoutChanged for a payload we cannot read, NoSnapshot when no
    capture exists for a day. Nothing is loaded unless every day succeeds.
    """
    today = today or datetime.now(UTC).date()
    captures = {
        day: _capture_for(home, feed, day, offline=offline, log=log, client=client, today=today) for day in days
    }
    parsed: dict[Path, tuple[pl.DataFrame, datetime, list[str]]] = {}
    digest = hashlib.sha256(feed.name.encode())
    for capture in sorted(set(captures.values())):
        used_for = sorted(day for day, used in captures.items() if used == capture)
        log.info("%s: %s for %d day(s), %s…%s", feed.name, capture, len(used_for), used_for[0], used_for[-1])
        store, observed_at = PayloadStore.read(capture)
        parsed[capture] = (feed.parse(store.payloads, observed_at), observed_at, [p.source_url for p in store.payloads])
        for payload in store.payloads:
            with payload.path.open("rb") as stored:
                for chunk in iter(lambda: stored.read(1 << 20), b""):
                    digest.update(chunk)
    digest.update(",".join(f"{day}={capture.name}" for day, capture in sorted(captures.items())).encode())
    frame = pl.concat(
        [
            parsed[capture][0].with_columns(feed=pl.lit(feed.name), price_day=pl.lit(day))
            for day, capture in captures.items()
        ]
    )
    outcome = load_reference_rows(
        con,
        price_table(feed),
        source=f"prices/{feed.name}",
        delivery=f"{feed.name}@{min(days)}" + (f"…{max(days)}" if len(days) > 1 else ""),
        sha256=digest.hexdigest(),
        frame=frame,
        format_version=feed.title,
    )
    latest_frame, observed_at, source_urls = parsed[captures[max(days)]]
    return PriceLoad(
        outcome=outcome,
        days=sorted(days),
        captures=sorted(set(captures.values())),
        observed_at=observed_at,
        source_urls=source_urls,
        offers=latest_frame.height,
    )


def _capture_for(
    home: FinopsHome,
    feed: PriceFeed,
    day: date,
    *,
    offline: bool,
    log: logging.Logger,
    client: HttpClient | None,
    today: date,
) -> Path:
    folder = home.price_payloads(feed.name, day)
    if offline:
        return bundled_snapshot(feed, day)
    if (folder / INDEX_FILE).exists():
        log.info("%s for %s re-parsed from %s (no refetch)", feed.name, day, folder)
        return folder
    if abs((day - today).days) > 1:
        raise NoSnapshot(
            f"{feed.name}: no capture stored for {day} in {folder}, and providers only publish current prices: "
            "past days can be loaded only from captures made at the time (or offline from the bundled ones)"
        )
    return _fetch(feed, folder, log, client)


def _fetch(feed: PriceFeed, folder: Path, log: logging.Logger, client: HttpClient | None) -> Path:
    """Fetch into a scratch folder and move it into place only when every request succeeded."""
    key = credential(feed.credential_env, provider=feed.provider) if feed.credential_env else None
    client = client or HttpClient(provider=feed.provider, secrets=(key,) if key else ())
    scratch = folder.with_name(folder.name + ".partial")
    shutil.rmtree(scratch, ignore_errors=True)
    store = PayloadStore(scratch)
    observed_at = datetime.now(UTC).replace(tzinfo=None)
    try:
        feed.fetch(client, store, key)
        store.write_index(observed_at, client.scrub)
    except BaseException:
        store.discard()
        raise
    shutil.rmtree(folder, ignore_errors=True)
    scratch.rename(folder)
    log.info("%s: fetched %d payload(s) into %s", feed.name, len(store.payloads), folder)
    return folder
