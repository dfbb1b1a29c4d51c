"""The landing-zone sensor (a load per new or changed delivery) and the run-failure recorder."""

from datetime import UTC, datetime

import dagster as dg

from pipelines.defs.asset_selections import load_selection, transform_selection
from pipelines.lib.catalog.billing import BILLING_SOURCES, BillingSource
from pipelines.lib.operations.scheduling import already_loaded, changed_deliveries, landing_snapshot, record_run_failure
from pipelines.lib.settings import Settings
from pipelines.lib.warehouse.connection import WarehouseBusy, connect


def build_load_job(source: BillingSource):
    """One source's ingest asset and its checks, then every model and test (see `transform_selection`)."""
    return dg.define_asset_job(
        name=f"load_{source.name}",
        selection=load_selection(source.asset_key) | transform_selection(),
        description=f"Load FINOPS_HOME/landing/{source.name} and rebuild what depends on it.",
    )


LOAD_JOBS = {source.name: build_load_job(source) for source in BILLING_SOURCES}


@dg.sensor(
    jobs=list(LOAD_JOBS.values()),
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description=(
        "Watches FINOPS_HOME/landing/<source>/ and starts that source's load job for each new or changed delivery. "
        "The cursor holds each delivery's file sizes and modification times, so a delivery starts one run."
    ),
)
def landing_sensor(
    context: dg.SensorEvaluationContext, settings: dg.ResourceParam[Settings]
) -> dg.SensorResult | dg.SkipReason:
    home = settings.home
    changed, cursor = changed_deliveries(context.cursor, landing_snapshot(home, list(LOAD_JOBS)))
    try:
        # Deliveries the CLI or the daily run loaded already need no run of their own.
        loaded = already_loaded(home, changed)
    except WarehouseBusy:
        return dg.SkipReason("the warehouse is busy with a load; the landing zone is checked again next tick")
    changed = [delivery for delivery in changed if delivery.key not in loaded]
    runs = [
        dg.RunRequest(
            job_name=LOAD_JOBS[delivery.source].name,
            run_key=f"{delivery.key}@{delivery.fingerprint}",
            tags={"finops/delivery": delivery.key},
        )
        for delivery in changed
    ]
    return dg.SensorResult(run_requests=runs, cursor=cursor)


@dg.run_failure_sensor(
    monitor_all_code_locations=False,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Records every failed run (job, failed steps, error) in audit.run_failures.",
)
def run_failure_recorder(context: dg.RunFailureSensorContext, settings: dg.ResourceParam[Settings]) -> None:
    run = context.dagster_run
    failed_steps = sorted({event.step_key for event in context.get_step_failure_events() if event.step_key is not None})
    message = context.failure_event.message or "run failed"
    try:
        with connect(settings.home.warehouse) as con:
            record_run_failure(
                con,
                run_id=run.run_id,
                job_name=run.job_name,
                failed_at=_ended_at(context),
                failed_steps=failed_steps,
                message=message,
                tags=dict(run.tags),
            )
    except WarehouseBusy as busy:
        # Raising makes the sensor retry this failure on its next tick, when the writer is done.
        raise RuntimeError(f"run {run.run_id} failed; recording it waits for the warehouse: {busy}") from busy


def _ended_at(context: dg.RunFailureSensorContext) -> datetime:
    record = context.instance.get_run_record_by_id(context.dagster_run.run_id)
    ended = record.end_time if record is not None else None
    return datetime.fromtimestamp(ended, UTC) if ended else datetime.now(UTC)
