"""Training jobs as assets: Slurm `sacct` exports and SkyPilot `sky cost-report` captures from the landing zone."""

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.lib.catalog.training_jobs import SKYPILOT, SKYPILOT_CLUSTERS, SLURM, SLURM_JOBS
from pipelines.lib.ingest.telemetry import TelemetryDelivery
from pipelines.lib.ingest.training_jobs import ingest_skypilot_reports, ingest_slurm_exports
from pipelines.lib.settings import DUCKDB_WRITER_POOL, Settings
from pipelines.lib.warehouse.tables import recover_and_ensure_tables


def _delivery_metadata(results: list[TelemetryDelivery], total: int) -> dict:
    return {
        "training_job_deliveries": dg.MetadataValue.json([r.as_dict() for r in results]),
        "loaded": sum(r.status == "loaded" for r in results),
        "duplicates_skipped": sum(r.status == "duplicate" for r in results),
        "rejected": sum(r.status == "rejected" for r in results),
        "rows_loaded": sum(r.rows for r in results if r.status == "loaded"),
        "dagster/row_count": total,
    }


@dg.asset(
    key=list(SLURM.asset_key),
    group_name="ingest",
    pool=DUCKDB_WRITER_POOL,
    kinds={"duckdb", "polars"},
    description=(
        "Slurm job allocations from `sacct --parsable2 --allocations --format=JobID,JobName,User,Account,Partition,"
        "Submit,Start,End,Elapsed,ElapsedRaw,State,NNodes,NodeList,AllocTRES` exports dropped into "
        "FINOPS_HOME/landing/slurm_sacct (times read in FINOPS_SLURM_TIMEZONE, default UTC). A file replaces its own "
        "rows; a rejected one is moved to quarantine with a reason file."
    ),
)
def slurm_jobs(
    context: dg.AssetExecutionContext, duckdb: DuckDBResource, settings: dg.ResourceParam[Settings]
) -> dg.MaterializeResult:
    home = settings.home.create_folders()
    with duckdb.get_connection() as con:
        recover_and_ensure_tables(con, SLURM_JOBS)
        results = ingest_slurm_exports(home, con, timezone=settings.slurm_timezone, log=context.log)
        total = con.execute(f"SELECT count(*) FROM {SLURM_JOBS.name}").fetchone()[0]
    return dg.MaterializeResult(metadata=_delivery_metadata(results, total))


@dg.asset(
    key=list(SKYPILOT.asset_key),
    group_name="ingest",
    pool=DUCKDB_WRITER_POOL,
    kinds={"duckdb", "polars"},
    description=(
        "SkyPilot clusters from `sky cost-report` captures (the printed table saved as text, named "
        "<anything>__<unix seconds>.txt for when it was printed) dropped into FINOPS_HOME/landing/"
        "skypilot_cost_report. A file replaces its own rows; a rejected one is moved to quarantine with a reason file."
    ),
)
def skypilot_clusters(
    context: dg.AssetExecutionContext, duckdb: DuckDBResource, settings: dg.ResourceParam[Settings]
) -> dg.MaterializeResult:
    home = settings.home.create_folders()
    with duckdb.get_connection() as con:
        recover_and_ensure_tables(con, SKYPILOT_CLUSTERS)
        results = ingest_skypilot_reports(home, con, log=context.log)
        total = con.execute(f"SELECT count(*) FROM {SKYPILOT_CLUSTERS.name}").fetchone()[0]
    return dg.MaterializeResult(metadata=_delivery_metadata(results, total))
