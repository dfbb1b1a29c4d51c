"""The daily refresh, and the re-load of the daily-partitioned sources over the restatement window.

Billing sources are file deliveries: a restated bill arrives as a new or changed delivery in the
landing zone, which the landing sensor (and this daily run) loads, replacing the billing periods it
carries. The daily-partitioned sources whose history stays available (exchange rates) are re-run for every day
of the restatement window that has no materialization yet, in one run over the range of missing days; a
day already captured is re-parsed from its stored payload, never refetched, so re-running it is cheap.
"""

from datetime import date

import dagster as dg

from pipelines.defs.asset_selections import transform_selection
from pipelines.defs.prices.fx_rates import PRICE_PARTITIONS, ecb_fx_rates, prices_daily_job
from pipelines.lib.operations.scheduling import days_between, restatement_window
from pipelines.lib.settings import Settings

RELOADABLE_DAILY_ASSETS = [ecb_fx_rates.key]
"""Daily-partitioned assets whose past days can be loaded again at any time (the ECB publishes its history).
Market-price feeds are not among them: providers publish current prices only, so a day they missed cannot be
fetched later (`prices_daily_schedule` captures each day as it comes). A new daily-partitioned source whose
history stays available (telemetry from a Prometheus with retention) is added here with its job."""

daily_refresh_job = dg.define_asset_job(
    name="daily_refresh",
    selection=dg.AssetSelection.groups("ingest") | transform_selection(),
    description=(
        "Load whatever arrived in the landing zone, then build the models and tests downstream of what it and the "
        "day changed (every model when the dbt project changed; none when nothing did). "
        "Prices and exchange rates have their own daily-partitioned job (prices_daily), an hour earlier; Prometheus "
        "GPU metrics theirs (telemetry_daily), half an hour earlier."
    ),
)


def build_daily_refresh_schedule(settings: Settings) -> dg.ScheduleDefinition:
    @dg.schedule(
        name="daily_refresh_schedule",
        cron_schedule=settings.daily_cron,
        job=daily_refresh_job,
        execution_timezone="UTC",
        default_status=dg.DefaultScheduleStatus.RUNNING,
        description="Every day (FINOPS_DAILY_CRON, default 06:00 UTC): load the landing zone, build what changed.",
    )
    def _daily_refresh(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
        today = context.scheduled_execution_time.date()
        first, last = restatement_window(today, settings.restatement_days)
        return dg.RunRequest(
            run_key=f"daily_refresh:{today.isoformat()}",
            tags={"finops/restatement_window": f"{first.isoformat()}..{last.isoformat()}"},
        )

    return _daily_refresh


def partitions_to_reload(instance: dg.DagsterInstance, asset_keys: list[dg.AssetKey], days: list[date]) -> list[str]:
    """The window's days for which some asset of the partitioned job has no materialization."""
    keys = [day.isoformat() for day in days]
    missing: set[str] = set()
    for asset_key in asset_keys:
        missing |= set(keys) - instance.get_materialized_partitions(asset_key)
    return [key for key in keys if key in missing]


def build_restatement_window_schedule(settings: Settings) -> dg.ScheduleDefinition:
    @dg.schedule(
        name="restatement_window_schedule",
        cron_schedule=settings.daily_cron,
        job=prices_daily_job,
        execution_timezone="UTC",
        default_status=dg.DefaultScheduleStatus.RUNNING,
        description=(
            "Every day with the refresh: re-run each day of the restatement window (the open billing period, and the "
            "previous one for FINOPS_RESTATEMENT_DAYS after it ends) that the exchange rates lack, in one run."
        ),
    )
    def _restatement_window(context: dg.ScheduleEvaluationContext):
        today = context.scheduled_execution_time.date()
        first, last = restatement_window(today, settings.restatement_days)
        days = [day for day in days_between(first, last) if PRICE_PARTITIONS.has_partition_key(day.isoformat())]
        reload = partitions_to_reload(context.instance, RELOADABLE_DAILY_ASSETS, days)
        if not reload:
            return dg.SkipReason(f"every day from {first} to {last} is loaded")
        if len(reload) == 1:
            return dg.RunRequest(
                run_key=f"prices_daily:{reload[0]}:{today.isoformat()}",
                partition_key=reload[0],
                asset_selection=RELOADABLE_DAILY_ASSETS,
            )
        # One run over the range from the first to the last day missing (the price assets backfill a range in a
        # single run); the days between that are already loaded are re-parsed from their stored captures.
        return dg.RunRequest(
            run_key=f"prices_daily:{reload[0]}..{reload[-1]}:{today.isoformat()}",
            tags={"dagster/asset_partition_range_start": reload[0], "dagster/asset_partition_range_end": reload[-1]},
            asset_selection=RELOADABLE_DAILY_ASSETS,
        )

    return _restatement_window


@dg.definitions
def daily_schedules() -> dg.Definitions:
    # The schedules' times come from the settings, read here where Dagster loads the definitions.
    settings = Settings.from_environment()
    return dg.Definitions(
        schedules=[build_daily_refresh_schedule(settings), build_restatement_window_schedule(settings)]
    )
