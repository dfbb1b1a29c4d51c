"""Late deliveries flagged in Dagster: a non-blocking check per ingest or feed asset over `audit.freshness`.

The ingest assets also carry a Dagster FreshnessPolicy (pipelines/defs/ingest/billing.py), which
watches their materializations, i.e. that the landing zone is being read at all. This check watches
the deliveries themselves: a provider that stopped sending files is flagged even while the daily
run keeps materializing the asset, and a price feed or telemetry whose newest capture is old is
flagged even while an old capture is reloaded every day. Late is a warning, not a reason to stop
the run: the data already loaded stays valid.
"""

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.lib.catalog.entry import CatalogEntry
from pipelines.lib.catalog.registry import DELIVERED_SOURCES
from pipelines.lib.quality.freshness import ensure_freshness_view, source_freshness
from pipelines.lib.settings import DUCKDB_WRITER_POOL


def build_delivery_freshness_check(source: CatalogEntry) -> dg.AssetChecksDefinition:
    grace = f" plus {source.delivery_grace} grace" if source.delivery_grace else ""
    measured = f"its newest {source.observed.column}" if source.observed else "the last delivery"

    @dg.asset_check(
        asset=dg.AssetKey(list(source.asset_key)),
        name="delivery_is_fresh",
        blocking=False,
        pool=DUCKDB_WRITER_POOL,
        description=(
            f"{source.title} delivered within its cadence ({source.delivery_cadence}{grace}) of {measured} "
            "(audit.freshness); a source that never delivered passes as not in use."
        ),
    )
    def check(duckdb: DuckDBResource) -> dg.AssetCheckResult:
        with duckdb.get_connection() as con:
            ensure_freshness_view(con, DELIVERED_SOURCES)
            freshness = source_freshness(con, source.name)
        if freshness is None:
            raise dg.Failure(f"{source.name} is missing from audit.freshness")
        return dg.AssetCheckResult(
            passed=not freshness.late,
            severity=dg.AssetCheckSeverity.WARN,
            metadata={
                "status": freshness.status,
                "last_delivery": str(freshness.last_delivery or "never"),
                "expected_by": str(freshness.expected_by or "-"),
                "delivery_cadence": str(freshness.delivery_cadence),
                "delivery_grace": str(freshness.delivery_grace),
                "measured_by": freshness.measured_by,
            },
        )

    return check


defs = dg.Definitions(asset_checks=[build_delivery_freshness_check(source) for source in DELIVERED_SOURCES])
