"""Runs of Dagster assets from the command line, and what they loaded, as the ingest and demo commands print it."""

from __future__ import annotations

import sys
from decimal import Decimal
from typing import Any

from pipelines.cli._output import money
from pipelines.lib.operations import signals
from pipelines.lib.operations.recovery import cli_run_tags, prepare_instance


def execute(selection: Any, dbt_vars: dict[str, str] | None = None) -> tuple[list[dict[str, Any]], bool]:
    """One in-process run of `selection` (a Dagster AssetSelection): the deliveries it loaded, and success.

    `dbt_vars` are passed to this run's `dbt build` as `--vars`.
    """
    import dagster as dg

    from pipelines.definitions import defs
    from pipelines.defs.transform.dbt import gpu_finops_dbt_models

    definitions = defs()
    job = definitions.resolve_implicit_global_asset_job_def()
    run_config = None
    if dbt_vars:
        run_config = {"ops": {gpu_finops_dbt_models.op.name: {"config": {"vars": dbt_vars}}}}
    with dg.DagsterInstance.get() as instance:
        prepare_instance(instance)
        result = job.execute_in_process(
            instance=instance,
            asset_selection=list(selection.resolve(definitions.resolve_asset_graph())),
            raise_on_error=False,
            run_config=run_config,
            tags=cli_run_tags(),
        )
    signals.raise_if_stopped()
    deliveries: list[dict[str, Any]] = []
    for event in result.get_asset_materialization_events():
        metadata = event.step_materialization_data.materialization.metadata
        if "deliveries" in metadata:
            deliveries.extend(metadata["deliveries"].value)
    if not result.success:
        for event in result.all_events:
            if event.is_step_failure:
                print(
                    f"error in {event.step_key}: {event.step_failure_data.error.message.strip()}",
                    file=sys.stderr,
                )
        for check in result.get_asset_check_evaluations():
            if not check.passed:
                print(f"failed check: {check.asset_key.to_user_string()} {check.check_name}", file=sys.stderr)
    return deliveries, result.success


def print_deliveries(results: list[dict[str, Any]]) -> None:
    for result in results:
        status = result["status"]
        if status == "rejected":
            print(f"REJECTED  {result['delivery']}\n          {result['reason']}\n          moved to quarantine/")
            continue
        if status == "duplicate":
            print(f"unchanged {result['delivery']} (loaded before as {result['load_id']})")
            continue
        totals = "; ".join(
            f"{currency} billed {money(Decimal(t['billed']))} effective {money(Decimal(t['effective']))}"
            for currency, t in result["totals"].items()
        )
        replaced = f", replaced {result['replaced_rows']} restated rows" if result["replaced_rows"] else ""
        warnings = result.get("warnings") or []
        label = f"loaded with {len(warnings)} warning{'s' if len(warnings) > 1 else ''}" if warnings else "loaded"
        print(
            f"{label}  {result['delivery']}: {result['rows']} rows, billing periods "
            f"{', '.join(result['billing_periods'])}{replaced}\n          {totals}"
        )
        for warning in warnings:
            first = f", first at {warning['example']}" if warning.get("example") else ""
            print(f"          warning: {warning['rule']}: {warning['rows']} row(s){first}")
