"""Telemetry as assets: DCGM GPU metrics and vLLM/SGLang serving counters from Prometheus per day, nvidia-smi logs
and the host map."""

from collections.abc import Callable
from datetime import date
from typing import Any

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.defs.asset_selections import group_loads
from pipelines.lib.catalog.telemetry import HOST_MAP, NVIDIA_SMI, NVIDIA_SMI_SAMPLES, TELEMETRY_HOST_MAP
from pipelines.lib.ingest.telemetry import (
    DCGM_FEED,
    SERVING_FEED,
    PrometheusLoad,
    RangeFeed,
    TelemetryDelivery,
    fetch_prometheus_days,
    ingest_host_maps,
    ingest_nvidia_smi_logs,
)
from pipelines.lib.settings import DUCKDB_WRITER_POOL, Settings
from pipelines.lib.warehouse.tables import recover_and_ensure_tables

TELEMETRY_PARTITIONS = dg.DailyPartitionsDefinition(start_date="2024-01-01", timezone="UTC")
"""Complete UTC days only: the newest partition is yesterday."""


def _partition_days(context: dg.AssetExecutionContext) -> list[date]:
    """The UTC days of the run's partitions (a backfill runs them all at once)."""
    window = context.partition_time_window
    first, last = window.start.date(), window.end.date()
    return [date.fromordinal(number) for number in range(first.toordinal(), last.toordinal())]


def build_range_feed_asset(
    feed: RangeFeed, *, description: str, counts: Callable[[PrometheusLoad], dict[str, Any]]
) -> dg.AssetsDefinition:
    """The daily-partitioned asset of a Prometheus range feed; `counts` is the metadata that tells its loads apart
    (answers read, hosts or pods), between the status and the rows."""

    @dg.asset(
        key=list(feed.entry.asset_key),
        group_name="telemetry",
        partitions_def=TELEMETRY_PARTITIONS,
        backfill_policy=dg.BackfillPolicy.single_run(),
        pool=DUCKDB_WRITER_POOL,
        kinds={"duckdb", "prometheus"},
        output_required=False,
        description=description,
    )
    def _range_feed(context: dg.AssetExecutionContext, duckdb: DuckDBResource, settings: dg.ResourceParam[Settings]):
        home, days = settings.home.create_folders(), _partition_days(context)
        with duckdb.get_connection() as con:
            recover_and_ensure_tables(con, feed.table)
            load = fetch_prometheus_days(
                home,
                con,
                days,
                offline=settings.offline,
                log=context.log,
                step_seconds=settings.prometheus_step_seconds,
                feed=feed,
            )
            total = con.execute(f"SELECT count(*) FROM {feed.table.name}").fetchone()[0]
        for reason in load.skipped[:5]:
            context.log.warning(reason)
        for warning in load.warnings[:5]:
            context.log.warning(warning.describe())
        if load.outcome is None:
            # Nothing configured or recorded: no materialization, so nothing downstream runs on it.
            context.log.warning("no %s loaded for %d day(s): %s", feed.reads, len(days), load.skipped[0])
            return
        yield dg.MaterializeResult(
            metadata={
                "status": load.outcome.status,
                "days_loaded": len(load.days),
                "days_skipped": dg.MetadataValue.json(load.skipped),
                **counts(load),
                "rows_loaded": load.outcome.rows,
                "dagster/row_count": total,
            }
        )

    return _range_feed


prometheus_gpu_samples = build_range_feed_asset(
    DCGM_FEED,
    description=(
        "NVIDIA DCGM exporter GPU metrics (SM/GR-engine/tensor activity, GPU util, memory, power, energy) per GPU "
        "from the Prometheus HTTP API (FINOPS_PROMETHEUS_URL, optional bearer token FINOPS_PROMETHEUS_TOKEN, step "
        "FINOPS_PROMETHEUS_STEP_SECONDS, default 60), one UTC day per partition, replacing that day. Skipped, not "
        "failed, when FINOPS_PROMETHEUS_URL is unset. Answers are kept under FINOPS_HOME/raw/telemetry/prometheus/"
        "<day>/; with FINOPS_OFFLINE=1 those recordings are parsed instead of calling Prometheus."
    ),
    counts=lambda load: {"query_range_answers": load.responses, "hosts": load.hosts},
)

serving_metric_samples = build_range_feed_asset(
    SERVING_FEED,
    description=(
        "vLLM and SGLang serving counters (prompt and generation tokens, prefix-cache queries and hits, finished "
        "requests, prefill and decode seconds) per model and pod, read as the bare counters from the same Prometheus "
        "as the GPU metrics (FINOPS_PROMETHEUS_URL, FINOPS_PROMETHEUS_TOKEN, FINOPS_PROMETHEUS_STEP_SECONDS), one UTC "
        "day per partition, replacing that day. Skipped, not failed, when FINOPS_PROMETHEUS_URL is unset. Answers are "
        "kept under FINOPS_HOME/raw/telemetry/serving/<day>/; offline those recordings, and any text exposition "
        "captures (*.prom) put there, are parsed instead of calling Prometheus."
    ),
    counts=lambda load: {
        "answers_and_captures": load.responses,
        "pods": load.pods,
        "warnings": dg.MetadataValue.json([warning.describe() for warning in load.warnings[:20]]),
    },
)


def _delivery_metadata(results: list[TelemetryDelivery], total: int) -> dict:
    return {
        "telemetry_deliveries": dg.MetadataValue.json([r.as_dict() for r in results]),
        "loaded": sum(r.status == "loaded" for r in results),
        "duplicates_skipped": sum(r.status == "duplicate" for r in results),
        "rejected": sum(r.status == "rejected" for r in results),
        "rows_loaded": sum(r.rows for r in results if r.status == "loaded"),
        "dagster/row_count": total,
    }


@dg.asset(
    key=list(NVIDIA_SMI.asset_key),
    group_name="ingest",
    pool=DUCKDB_WRITER_POOL,
    kinds={"duckdb", "polars"},
    description=(
        "nvidia-smi --query-gpu=timestamp,name,uuid,utilization.gpu,memory.used,power.draw --format=csv -l N logs "
        "dropped into FINOPS_HOME/landing/nvidia_smi (one host per file, <host>.csv or <host>--<anything>.csv; "
        "local times read in FINOPS_NVIDIA_SMI_TIMEZONE, default UTC). A file replaces its own rows per day and host; "
        "a rejected one is moved to quarantine with a reason file."
    ),
)
def nvidia_smi_gpu_samples(
    context: dg.AssetExecutionContext, duckdb: DuckDBResource, settings: dg.ResourceParam[Settings]
) -> dg.MaterializeResult:
    home = settings.home.create_folders()
    with duckdb.get_connection() as con:
        recover_and_ensure_tables(con, NVIDIA_SMI_SAMPLES)
        results = ingest_nvidia_smi_logs(home, con, timezone=settings.nvidia_smi_timezone, log=context.log)
        total = con.execute(f"SELECT count(*) FROM {NVIDIA_SMI_SAMPLES.name}").fetchone()[0]
    return dg.MaterializeResult(metadata=_delivery_metadata(results, total))


@dg.asset(
    key=list(TELEMETRY_HOST_MAP.asset_key),
    group_name="ingest",
    pool=DUCKDB_WRITER_POOL,
    kinds={"duckdb", "polars"},
    description=(
        "The host → billed resource map a user maintains (docs/gpu-telemetry.md), for hosts whose metric labels "
        "carry no resource id: CSV files dropped into FINOPS_HOME/landing/telemetry_host_map, each replacing the "
        "whole map."
    ),
)
def telemetry_host_map(
    context: dg.AssetExecutionContext, duckdb: DuckDBResource, settings: dg.ResourceParam[Settings]
) -> dg.MaterializeResult:
    home = settings.home.create_folders()
    with duckdb.get_connection() as con:
        recover_and_ensure_tables(con, HOST_MAP)
        results = ingest_host_maps(home, con, log=context.log)
        total = con.execute(f"SELECT count(*) FROM {HOST_MAP.name}").fetchone()[0]
    return dg.MaterializeResult(metadata=_delivery_metadata(results, total))


telemetry_daily_job = dg.define_asset_job(
    name="telemetry_daily",
    selection=group_loads("telemetry"),
    partitions_def=TELEMETRY_PARTITIONS,
    description=(
        "Read yesterday's DCGM GPU metrics and vLLM/SGLang serving counters from Prometheus (skipped when "
        "FINOPS_PROMETHEUS_URL is unset)."
    ),
)

telemetry_daily_schedule = dg.build_schedule_from_partitioned_job(
    telemetry_daily_job, hour_of_day=5, minute_of_hour=30, default_status=dg.DefaultScheduleStatus.RUNNING
)
