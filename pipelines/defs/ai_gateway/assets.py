"""AI gateway usage as an asset: LiteLLM spend log exports from the landing zone."""

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.lib.catalog.ai_gateway import LITELLM, LITELLM_SPEND_LOGS
from pipelines.lib.ingest.ai_gateway import ingest_litellm_spend_logs
from pipelines.lib.settings import DUCKDB_WRITER_POOL, Settings
from pipelines.lib.warehouse.tables import recover_and_ensure_tables


@dg.asset(
    key=list(LITELLM.asset_key),
    group_name="ingest",
    pool=DUCKDB_WRITER_POOL,
    kinds={"duckdb", "polars"},
    description=(
        "LiteLLM's spend log (the proxy's LiteLLM_SpendLogs table exported as CSV, one row per request: tokens, "
        "model, the key's team) dropped into FINOPS_HOME/landing/litellm_spend_logs; an export replaces the UTC days "
        "it holds. Optional: it allocates the bills' AI API spend to teams by their share of the gateway's tokens "
        "(marts.fct_ai_api_spend_by_team_daily). A rejected file is moved to quarantine with a reason file."
    ),
)
def litellm_spend_logs(
    context: dg.AssetExecutionContext, duckdb: DuckDBResource, settings: dg.ResourceParam[Settings]
) -> dg.MaterializeResult:
    home = settings.home.create_folders()
    with duckdb.get_connection() as con:
        recover_and_ensure_tables(con, LITELLM_SPEND_LOGS)
        results = ingest_litellm_spend_logs(home, con, log=context.log)
        total = con.execute(f"SELECT count(*) FROM {LITELLM_SPEND_LOGS.name}").fetchone()[0]
    return dg.MaterializeResult(
        metadata={
            "deliveries": dg.MetadataValue.json([result.as_dict() for result in results]),
            "loaded": sum(result.status == "loaded" for result in results),
            "duplicates_skipped": sum(result.status == "duplicate" for result in results),
            "rejected": sum(result.status == "rejected" for result in results),
            "rows_loaded": sum(result.rows for result in results if result.status == "loaded"),
            "dagster/row_count": total,
        }
    )
