import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.lib.ingest import ingest_landing_zone
from pipelines.lib.settings import DUCKDB_WRITER_POOL, finops_home
from pipelines.lib.warehouse import FOCUS_RAW
from sources.focus import read_focus_files


@dg.asset(
    key=["raw", "focus_cost_and_usage"],
    group_name="ingest",
    pool=DUCKDB_WRITER_POOL,
    kinds={"duckdb", "polars"},
    description=(
        "FOCUS 1.0–1.3 billing files from FINOPS_HOME/landing/focus, one row per cost line. "
        "A delivery replaces the billing account × billing period keys it covers; a delivery loaded "
        "before is skipped; a rejected one is moved to quarantine with a reason file."
    ),
)
def raw_focus_cost_and_usage(context: dg.AssetExecutionContext, duckdb: DuckDBResource) -> dg.MaterializeResult:
    home = finops_home().ensure()
    with duckdb.get_connection() as con:
        results = ingest_landing_zone(
            home, con, source="focus", table=FOCUS_RAW, parse=read_focus_files, log=context.log
        )
        total_rows = con.execute(f"SELECT count(*) FROM {FOCUS_RAW.name}").fetchone()[0]
    by_status = {status: sum(r.status == status for r in results) for status in ("loaded", "duplicate", "rejected")}
    return dg.MaterializeResult(
        metadata={
            "deliveries": dg.MetadataValue.json([r.as_dict() for r in results]),
            "loaded": by_status["loaded"],
            "duplicates_skipped": by_status["duplicate"],
            "rejected": by_status["rejected"],
            "rows_loaded": sum(r.rows for r in results if r.status == "loaded"),
            "dagster/row_count": total_rows,
        }
    )
