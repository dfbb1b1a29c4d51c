"""`gpu-finops demo`: the sample organisation loaded end to end, the docs, the summary and the report."""

from __future__ import annotations

import argparse
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

from pipelines.cli.docs import build_docs
from pipelines.cli.prices import refresh_prices
from pipelines.cli.report import write_report_file
from pipelines.cli.runs import execute, print_delivery_summary, print_failures, run_assets
from pipelines.cli.summary import print_summary
from pipelines.lib.settings import FinopsHome, Settings


def demo(settings: Settings, args: argparse.Namespace) -> int:
    home = settings.home
    import dagster as dg

    from pipelines.defs.asset_selections import transform_selection
    from pipelines.lib.catalog.ai_gateway import LITELLM
    from pipelines.lib.ingest.landing import register
    from synthetic_data.demo_ai_gateway import write_demo_gateway
    from synthetic_data.demo_organisation import (
        DEFAULT_MONTHS,
        DEFAULT_START_MONTH,
        demo_first_day,
        demo_last_day,
        write_demo_organisation,
    )

    with tempfile.TemporaryDirectory() as scratch:
        deliveries = write_demo_organisation(Path(scratch), seed=args.seed)
        print(f"Generated {len(deliveries)} sample deliveries of one organisation, Acme AI (seed {args.seed}).")
        for delivery in deliveries:
            register(home, delivery.source, delivery.path)
        # The teams' LiteLLM gateway log of the month the bills have AI API lines in: API spend by team.
        gateway = write_demo_gateway(
            Path(scratch) / "ai_gateway", seed=args.seed, start_month=DEFAULT_START_MONTH, months=DEFAULT_MONTHS
        )
        register(home, LITELLM.name, gateway)
    # Market prices, exchange rates and GPU metrics from the bundled snapshots and recordings.
    offline = replace(settings, offline=True)
    if not refresh_prices(offline, demo_first_day(), demo_last_day(), per_feed=False)[1]:
        return 1
    if not _demo_telemetry(offline, args.seed):
        return 1
    _demo_training_jobs(home)
    # On-prem cost lines run to a cut-off day (default: yesterday); pin it to the sample's last day.
    dbt_vars = {"onprem_costs_through": demo_last_day().isoformat()}
    results, ok = execute(
        transform_selection() | dg.AssetSelection.groups("ingest"), "load and dbt build", offline, {"vars": dbt_vars}
    )
    print_delivery_summary(home.warehouse, results)
    if not ok:
        return 1
    build_docs(home)
    print_summary(home)
    print(f"Report: {write_report_file(home, None)}")
    return 0


def _demo_training_jobs(home: FinopsHome) -> None:
    """The owned cluster's Slurm export and the research team's SkyPilot cost report into the landing zone, loaded
    with the billing deliveries (docs/ai-workloads.md "Training runs")."""
    from pipelines.lib.catalog.training_jobs import SKYPILOT_SOURCE, SLURM_SOURCE
    from pipelines.lib.ingest.landing import register
    from synthetic_data.demo_organisation import DEFAULT_MONTHS, DEFAULT_START_MONTH
    from synthetic_data.demo_training import write_demo_training

    with tempfile.TemporaryDirectory() as scratch:
        written = write_demo_training(Path(scratch), start_month=DEFAULT_START_MONTH, months=DEFAULT_MONTHS)
        register(home, SLURM_SOURCE, written["slurm"])
        register(home, SKYPILOT_SOURCE, written["skypilot"])


def _demo_telemetry(settings: Settings, seed: int) -> bool:
    """The demo fleet's GPU telemetry: nvidia-smi logs and the host map into the landing zone, and the
    recorded Prometheus answers (DCGM and the chat fleet's vLLM counters) loaded offline, all demo days in one run
    (see docs/gpu-telemetry.md)."""

    from pipelines.defs.asset_selections import group_loads
    from pipelines.lib.catalog.telemetry import HOST_MAP_SOURCE, NVIDIA_SMI_SOURCE
    from pipelines.lib.ingest.landing import register
    from pipelines.lib.ingest.telemetry import prometheus_payloads
    from synthetic_data.demo_organisation import DEFAULT_START_MONTH, demo_first_day, demo_last_day
    from synthetic_data.demo_serving import write_demo_serving
    from synthetic_data.demo_telemetry import write_demo_telemetry

    home = settings.home
    first_day = demo_first_day()
    with tempfile.TemporaryDirectory() as scratch:
        written = write_demo_telemetry(Path(scratch), seed=seed, start_month=DEFAULT_START_MONTH)
        register(home, NVIDIA_SMI_SOURCE, written["nvidia_smi"])
        register(home, HOST_MAP_SOURCE, written["host_map"])
        recordings = prometheus_payloads(home, first_day).parent
        shutil.copytree(written["prometheus"], recordings, dirs_exist_ok=True)
        serving = write_demo_serving(Path(scratch), seed=seed, start_month=DEFAULT_START_MONTH)
        shutil.copytree(serving, prometheus_payloads(home, first_day, "serving").parent, dirs_exist_ok=True)
    selection = group_loads("telemetry")
    days = (demo_last_day() - first_day).days + 1
    result = run_assets(
        selection,
        "telemetry",
        settings,
        tags={
            "dagster/asset_partition_range_start": first_day.isoformat(),
            "dagster/asset_partition_range_end": demo_last_day().isoformat(),
        },
        partitions=days,
    )
    # The recorded metrics assets are daily-partitioned: a materialization per day, all with the run's totals.
    first = {}
    for event in result.get_asset_materialization_events():
        first.setdefault(event.asset_key.to_user_string(), event)
    for key, event in sorted(first.items()):
        recorded = event.step_materialization_data.materialization.metadata
        metadata = {name: value.value for name, value in recorded.items()}
        if key == "raw/serving_metric_samples":
            pods = metadata.get("pods")
            print(
                f"loaded    vLLM serving metrics (recorded): {metadata.get('days_loaded')} days, "
                f"{pods} pod{'' if pods == 1 else 's'}, {metadata.get('rows_loaded')} samples"
            )
        else:
            print(
                f"loaded    Prometheus GPU metrics (recorded): {metadata.get('days_loaded')} days, "
                f"{metadata.get('hosts')} hosts, {metadata.get('rows_loaded')} samples"
            )
    print_failures(result)
    return result.success
