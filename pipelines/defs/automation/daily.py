import dagster as dg

daily_refresh_job = dg.define_asset_job(
    name="daily_refresh",
    selection=dg.AssetSelection.all() - dg.AssetSelection.groups("prices", "telemetry"),
    description=(
        "Load whatever arrived in the landing zone, then rebuild every model and run every test. "
        "Prices and exchange rates have their own daily-partitioned job (prices_daily), an hour earlier; Prometheus "
        "GPU metrics theirs (telemetry_daily), half an hour earlier."
    ),
)

daily_refresh_schedule = dg.ScheduleDefinition(
    job=daily_refresh_job,
    cron_schedule="0 6 * * *",
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.RUNNING,
)
