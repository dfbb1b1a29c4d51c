"""Blocking checks that each raw billing table holds exactly what its latest deliveries held."""

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.lib.catalog.billing import BILLING_SOURCES, BillingSource
from pipelines.lib.settings import DUCKDB_WRITER_POOL
from pipelines.lib.warehouse.loads import audit_mismatches


def build_raw_matches_audit_check(source: BillingSource) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        asset=dg.AssetKey(list(source.asset_key)),
        name="raw_matches_audited_deliveries",
        blocking=True,
        pool=DUCKDB_WRITER_POOL,
        description=(
            f"Raw {source.title} rows equal, per account, billing period and currency, what the latest delivery held."
        ),
    )
    def check(duckdb: DuckDBResource) -> dg.AssetCheckResult:
        with duckdb.get_connection() as con:
            header, mismatches = audit_mismatches(con, source.raw_table)
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

    return check


defs = dg.Definitions(asset_checks=[build_raw_matches_audit_check(source) for source in BILLING_SOURCES])
