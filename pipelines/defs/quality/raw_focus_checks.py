import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.lib.settings import DUCKDB_WRITER_POOL
from pipelines.lib.warehouse import FOCUS_RAW

# For each billing account × billing period, the rows in raw must be exactly those of the latest
# delivery that carried the key, with the totals recorded when it was loaded: nothing lost,
# nothing left over from a restated delivery, nothing counted twice.
_MISMATCHES_SQL = f"""
with latest_load as (
    select t.billing_account_id, t.billing_period_start, arg_max(t.load_id, l.loaded_at) as load_id
    from audit.load_totals as t
    join audit.loads as l using (load_id)
    where l.raw_table = '{FOCUS_RAW.name}'
    group by t.billing_account_id, t.billing_period_start
),
expected as (
    select t.*
    from audit.load_totals as t
    join latest_load using (load_id, billing_account_id, billing_period_start)
),
actual as (
    select _load_id as load_id, BillingAccountId as billing_account_id,
           BillingPeriodStart as billing_period_start, BillingCurrency as billing_currency,
           count(*) as row_count, sum(BilledCost) as billed_cost, sum(EffectiveCost) as effective_cost
    from {FOCUS_RAW.name}
    group by all
)
select coalesce(e.billing_account_id, a.billing_account_id) as billing_account_id,
       coalesce(e.billing_period_start, a.billing_period_start) as billing_period_start,
       coalesce(e.billing_currency, a.billing_currency) as billing_currency,
       e.load_id as expected_load, a.load_id as found_load,
       e.billed_cost as expected_billed, a.billed_cost as found_billed,
       e.row_count as expected_rows, a.row_count as found_rows
from expected as e
full outer join actual as a
  on e.load_id = a.load_id and e.billing_account_id = a.billing_account_id
 and e.billing_period_start = a.billing_period_start and e.billing_currency = a.billing_currency
where e.load_id is null or a.load_id is null
   or e.row_count <> a.row_count or e.billed_cost <> a.billed_cost or e.effective_cost <> a.effective_cost
"""


@dg.asset_check(
    asset=dg.AssetKey(["raw", "focus_cost_and_usage"]),
    blocking=True,
    pool=DUCKDB_WRITER_POOL,
    description="Raw FOCUS rows equal, per account, billing period and currency, what the latest delivery held.",
)
def raw_focus_matches_audited_deliveries(duckdb: DuckDBResource) -> dg.AssetCheckResult:
    with duckdb.get_connection() as con:
        cursor = con.execute(_MISMATCHES_SQL)
        header = [column[0] for column in cursor.description]
        mismatches = cursor.fetchall()
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
