import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.lib.settings import DUCKDB_WRITER_POOL
from pipelines.lib.warehouse import FOCUS_RAW, audit_mismatches


@dg.asset_check(
    asset=dg.AssetKey(["raw", "focus_cost_and_usage"]),
    blocking=True,
    pool=DUCKDB_WRITER_POOL,
    description="Raw FOCUS rows equal, per account, billing period and currency, what the latest delivery held.",
)
def raw_focus_matches_audited_deliveries(duckdb: DuckDBResource) -> dg.AssetCheckResult:
    with duckdb.get_connection() as con:
        header, mismatches = audit_mismatches(con, FOCUS_RAW)
    table = "\n".join(
        ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        + ["| " + " | ".join(str(value) for value in row) + " |" for row in mismatches[:10]]
    )
    return dg.AssetCheckResult(
        passed=not mismatches,
        metadata={
            "mismatched_keys": len(mismatches),
            "first_mismatches": dg.MetadataValue.md(table if mismatches else "none"),
        },
    )
