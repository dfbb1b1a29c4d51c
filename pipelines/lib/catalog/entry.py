"""What the catalogue says about one source: where its rows land, what they must satisfy, how often they come."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from pipelines.lib.catalog.facts import LastObserved, QualityFacts
from pipelines.lib.catalog.tables import RawTable, ReferenceTable


@dataclass(frozen=True, kw_only=True)
class CatalogEntry:
    """One source of rows: a billing source, a price feed, the exchange rates, a telemetry table.

    Everything else is read from here: the raw tables created empty for dbt, the assets that write them,
    their quality suites and asset checks, and `audit.freshness`.
    """

    name: str
    """`source` in audit.loads (and a billing source's landing folder, FINOPS_HOME/landing/<name>)."""
    title: str
    asset_key: tuple[str, ...]
    """The Dagster asset that writes the rows."""
    raw_table: RawTable | ReferenceTable
    quality: QualityFacts
    """What the rows must satisfy beyond the raw table's columns and types (a GX suite per load)."""
    delivery_cadence: timedelta | None
    """Longest expected gap between two deliveries; None for a table nobody delivers on a cadence (a user's file)."""
    delivery_grace: timedelta = timedelta(0)
    """Slack after `delivery_cadence` before the source counts as late."""
    observed: LastObserved | None = None
    """How the last delivery is read from the rows (a feed is as fresh as its newest capture); None: its last load."""
    partition_column: str | None = None
    """The date column a daily partition of the asset writes: its check keeps the loads of the run's days."""

    @property
    def load_source(self) -> str | None:
        """The loads a check of this entry judges: those recorded under its name (several feeds share a table)."""
        return self.name

    @property
    def watched(self) -> bool:
        """Delivered on a cadence, so listed in `audit.freshness`."""
        return self.delivery_cadence is not None
