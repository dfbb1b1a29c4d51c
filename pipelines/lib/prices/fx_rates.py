"""Fetch (or read offline) the ECB reference rates for one day and load them into raw.ecb_fx_rates."""

from __future__ import annotations

import gzip
import hashlib
import logging
from dataclasses import dataclass
from datetime import date, timedelta
from importlib import resources
from pathlib import Path

import duckdb
import polars as pl

from pipelines.lib.catalog.prices import FX_RATES
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.loads import LoadOutcome, load_reference_rows
from sources.common.http import HttpClient
from sources.prices import ecb

SNAPSHOT = "snapshots/ecb/eurofxref-hist-90d.xml"


@dataclass(frozen=True)
class FxLoad:
    outcome: LoadOutcome
    payload_path: Path
    source_url: str
    days: int
    latest_day: date | None


def refresh_fx_rates(
    home: FinopsHome,
    con: duckdb.DuckDBPyConnection,
    day: date,
    *,
    offline: bool,
    log: logging.Logger,
    client: HttpClient | None = None,
) -> FxLoad:
    """Rates known on `day`: the 90-day file (the full history for older days), kept compressed per day."""
    folder = home.price_payloads("ecb", day)
    which = "90d" if (date.today() - day) < timedelta(days=80) else "history"
    stored = folder / f"{Path(ecb.FILES[which]).name}.gz"
    if offline:
        source_url = f"snapshot:{SNAPSHOT}"
        payload = resources.files("sources.prices").joinpath(SNAPSHOT).read_bytes()
        log.info("offline: ECB rates from the bundled snapshot %s", SNAPSHOT)
    elif stored.exists():
        source_url = ecb.rates_url(which)
        payload = gzip.decompress(stored.read_bytes())
        log.info("ECB rates for %s re-parsed from %s (no refetch)", day, stored)
    else:
        source_url, payload = ecb.fetch_reference_rates(client or HttpClient(provider=ecb.PROVIDER), which)
        log.info("fetched %s (%d bytes)", source_url, len(payload))
    rates = ecb.parse_reference_rates(payload, source_url=source_url).filter(pl.col("rate_date") <= day)
    if rates.is_empty():
        raise ecb.LayoutChanged(f"{source_url}: no rates published on or before {day}")
    folder.mkdir(parents=True, exist_ok=True)
    if not stored.exists():
        stored.write_bytes(gzip.compress(payload, mtime=0))
    digest = hashlib.sha256(payload + day.isoformat().encode()).hexdigest()
    outcome = load_reference_rows(
        con,
        FX_RATES,
        source="ecb",
        delivery=f"{source_url}@{day}",
        sha256=digest,
        frame=rates,
        format_version="ECB eurofxref",
    )
    return FxLoad(
        outcome=outcome,
        payload_path=stored,
        source_url=source_url,
        days=rates["rate_date"].n_unique(),
        latest_day=rates["rate_date"].max(),
    )
