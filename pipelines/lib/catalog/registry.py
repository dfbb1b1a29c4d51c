"""The catalogue: every source of rows, once, and the views of it the other layers read.

Registering a source is one entry in `billing.py`, `prices.py`, `telemetry.py`, `training_jobs.py` or
`ai_gateway.py` (plus its connector in `sources/` and its staging model in dbt); everything below is derived from
`CATALOGUE`.
"""

from __future__ import annotations

from pipelines.lib.catalog.ai_gateway import AI_GATEWAY
from pipelines.lib.catalog.billing import BILLING_SOURCES, BillingSource
from pipelines.lib.catalog.entry import CatalogEntry
from pipelines.lib.catalog.prices import ECB_RATES, PRICE_FEED_ENTRIES
from pipelines.lib.catalog.tables import RawTable, ReferenceTable
from pipelines.lib.catalog.telemetry import TELEMETRY
from pipelines.lib.catalog.training_jobs import TRAINING_JOBS

CATALOGUE: tuple[CatalogEntry, ...] = (
    *BILLING_SOURCES,
    *PRICE_FEED_ENTRIES,
    ECB_RATES,
    *TELEMETRY,
    *TRAINING_JOBS,
    *AI_GATEWAY,
)

ENTRIES_BY_NAME = {entry.name: entry for entry in CATALOGUE}

FEED_DELIVERIES: tuple[CatalogEntry, ...] = tuple(
    entry for entry in CATALOGUE if not isinstance(entry, BillingSource) and entry.watched
)
"""The daily feeds watched for freshness: price feeds, the exchange rates, telemetry samples."""

DELIVERED_SOURCES: tuple[CatalogEntry, ...] = tuple(entry for entry in CATALOGUE if entry.watched)
"""Every source in audit.freshness."""

RAW_TABLES: tuple[RawTable | ReferenceTable, ...] = tuple(
    {entry.raw_table.name: entry.raw_table for entry in CATALOGUE}.values()
)
"""Every raw table dbt reads (several price feeds share one)."""
