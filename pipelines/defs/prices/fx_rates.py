from datetime import date

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.defs.asset_selections import group_loads
from pipelines.lib.catalog.prices import ECB_RATES, FX_RATES
from pipelines.lib.prices.fx_rates import refresh_fx_rates
from pipelines.lib.settings import DUCKDB_WRITER_POOL, Settings

PRICE_PARTITIONS = dg.DailyPartitionsDefinition(start_date="2024-01-01", timezone="UTC", end_offset=1)


def partition_days(context: dg.AssetExecutionContext) -> list[date]:
    """The days of this run: one partition, or a whole range when a backfill runs as a single run."""
    return [date.fromisoformat(key) for key in context.partition_keys]


@dg.asset(
    key=list(ECB_RATES.asset_key),
    group_name="prices",
    partitions_def=PRICE_PARTITIONS,
    pool=DUCKDB_WRITER_POOL,
    kinds={"duckdb"},
    backfill_policy=dg.BackfillPolicy.single_run(),
    description=(
        "European Central Bank euro reference rates (units of currency per EUR), as known on the partition's day: "
        "how EUR bills and USD price lists meet in one reporting currency. Online from ecb.europa.eu "
        "(FINOPS_ECB_BASE_URL overrides), offline (FINOPS_OFFLINE=1) from the bundled snapshot. The payload is kept "
        "under FINOPS_HOME/raw/prices/ecb/<day>/ so a day can be re-parsed without refetching."
    ),
)
def ecb_fx_rates(
    context: dg.AssetExecutionContext, duckdb: DuckDBResource, settings: dg.ResourceParam[Settings]
) -> dg.MaterializeResult:
    # The rates known on the last day of a range include every earlier day's.
    day = partition_days(context)[-1]
    with duckdb.get_connection() as con:
        load = refresh_fx_rates(settings.home.create_folders(), con, day, offline=settings.offline, log=context.log)
        total = con.execute(f"SELECT count(*) FROM {FX_RATES.name}").fetchone()[0]
    return dg.MaterializeResult(
        metadata={
            "status": load.outcome.status,
            "source_url": load.source_url,
            "payload": str(load.payload_path),
            "days_in_payload": load.days,
            "latest_rate_day": str(load.latest_day),
            "rows_loaded": load.outcome.rows,
            "dagster/row_count": total,
        }
    )


prices_daily_job = dg.define_asset_job(
    name="prices_daily",
    selection=group_loads("prices"),
    partitions_def=PRICE_PARTITIONS,
    description="Fetch market prices and exchange rates for one day.",
)

prices_daily_schedule = dg.build_schedule_from_partitioned_job(
    prices_daily_job, hour_of_day=5, minute_of_hour=0, default_status=dg.DefaultScheduleStatus.RUNNING
)
