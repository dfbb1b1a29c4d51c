"""Every raw table dbt reads, created empty when missing.

dbt's sources must exist even for providers an organisation does not use (no Azure, no prices
fetched yet): an empty table contributes nothing to the marts, a missing one fails the build.
"""

from __future__ import annotations

import duckdb

from pipelines.lib.ingest.billing_sources import BILLING_SOURCES
from pipelines.lib.ingest.telemetry import TELEMETRY_TABLES
from pipelines.lib.prices.fx_rates import FX_RATES
from pipelines.lib.prices.market_prices import price_table
from pipelines.lib.prices.price_feeds import PRICE_FEEDS
from pipelines.lib.warehouse.warehouse import RawTable, ReferenceTable, ensure_tables

RAW_TABLES: tuple[RawTable | ReferenceTable, ...] = (
    *(source.raw_table for source in BILLING_SOURCES),
    FX_RATES,
    *{price_table(feed).name: price_table(feed) for feed in PRICE_FEEDS}.values(),
    *TELEMETRY_TABLES,
)


def ensure_raw_tables(con: duckdb.DuckDBPyConnection) -> None:
    for table in RAW_TABLES:
        ensure_tables(con, table)
