"""One ingest asset per billing source in `pipelines.lib.catalog.billing`."""

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.lib.catalog.billing import BILLING_SOURCES, BillingSource
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.settings import DUCKDB_WRITER_POOL, Settings


def build_ingest_asset(source: BillingSource) -> dg.AssetsDefinition:
    @dg.asset(
        name=source.asset_key[1],
        key_prefix=source.asset_key[0],
        group_name="ingest",
        pool=DUCKDB_WRITER_POOL,
        kinds={"duckdb", "polars"},
        # Materialized at least once per delivery cadence, or the landing zone is not being read at all
        # (late deliveries themselves: the `delivery_is_fresh` check, pipelines/defs/quality/).
        freshness_policy=dg.FreshnessPolicy.time_window(fail_window=source.delivery_cadence),
        description=(
            f"{source.description} Read from FINOPS_HOME/landing/{source.name}. A delivery replaces the "
            "billing account × billing period keys it covers; a delivery loaded before is skipped; a rejected "
            "one is moved to quarantine with a reason file."
        ),
    )
    def ingest(
        context: dg.AssetExecutionContext, duckdb: DuckDBResource, settings: dg.ResourceParam[Settings]
    ) -> dg.MaterializeResult:
        home = settings.home.create_folders()
        with duckdb.get_connection() as con:
            # Recovers and creates the raw table first: a source with nothing delivered yet still has one to count.
            results = ingest_landing_zone(home, con, source, log=context.log, run_id=context.run.run_id)
            total_rows = con.execute(f"SELECT count(*) FROM {source.raw_table.name}").fetchone()[0]
        by_status = {status: sum(r.status == status for r in results) for status in ("loaded", "duplicate", "rejected")}
        return dg.MaterializeResult(
            metadata={
                "deliveries": dg.MetadataValue.json([r.as_dict() for r in results]),
                "loaded": by_status["loaded"],
                "duplicates_skipped": by_status["duplicate"],
                "rejected": by_status["rejected"],
                "rows_loaded": sum(r.rows for r in results if r.status == "loaded"),
                "loaded_with_warnings": sum(bool(r.warnings) for r in results),
                "dagster/row_count": total_rows,
            }
        )

    return ingest


defs = dg.Definitions(assets=[build_ingest_asset(source) for source in BILLING_SOURCES])
