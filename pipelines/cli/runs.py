"""Runs of Dagster assets from the command line, and what they loaded, as the ingest and demo commands print it."""

from __future__ import annotations

import sys
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

from pipelines.cli._output import money
from pipelines.cli.console import CONSOLE_LOG_LEVEL, RunProgress, console
from pipelines.lib.operations import signals
from pipelines.lib.operations.recovery import cli_run_tags, prepare_instance
from pipelines.lib.settings import Settings


def run_assets(
    selection: Any,
    label: str,
    settings: Settings,
    *,
    run_config: dict[str, Any] | None = None,
    tags: dict[str, str] | None = None,
    partition_key: str | None = None,
    partitions: int = 0,
) -> Any:
    """One in-process Dagster run of `selection` (an AssetSelection), quietly: its console log goes to the
    command's log file, the status line shows its progress, and its warnings are printed once each at the end.

    The run's assets get `settings` (offline or not, the home) as their `settings` resource, in place of the one the
    definitions read from the environment. `partitions` is how many (asset, partition) materializations the run
    makes, for the status line.
    Returns Dagster's ExecuteInProcessResult.
    """
    import dagster as dg

    from pipelines.definitions import defs
    from pipelines.defs.transform.dbt import gpu_finops_dbt_models

    definitions = defs()
    graph = definitions.resolve_asset_graph()
    keys, checks = selection.resolve(graph), selection.resolve_checks(graph)
    # The checks are chosen with the assets: given only asset keys, a run would take every check on them, the
    # dbt source tests on a price table too, and start dbt for them.
    job = definitions.resolve_implicit_global_asset_job_def().get_subset(
        asset_selection=keys, asset_check_selection=checks
    )
    dbt_keys = keys & gpu_finops_dbt_models.keys
    dbt_checks = checks & gpu_finops_dbt_models.check_keys
    progress = RunProgress(
        label,
        dbt_step=gpu_finops_dbt_models.op.name if dbt_keys else None,
        dbt_nodes=len(dbt_keys) + len(dbt_checks),
        partitions=partitions,
        steps=len(job.graph.node_dict),
    )
    run_id = str(uuid.uuid4())  # known before the run starts, so the progress listener can subscribe to it
    # Dagster's DEBUG events are one per materialized partition: the log file keeps INFO and above.
    loggers = {"loggers": {"console": {"config": {"log_level": CONSOLE_LOG_LEVEL}}}}
    with dg.DagsterInstance.get() as instance:
        prepare_instance(instance)
        instance.add_event_listener(run_id, progress.on_event)
        with progress.ticking(), console.detail():
            result = job.execute_in_process(
                instance=instance,
                raise_on_error=False,
                run_config=loggers | (run_config or {}),
                run_id=run_id,
                resources={"settings": settings},
                partition_key=partition_key,
                tags=(tags or {}) | cli_run_tags(),
            )
    signals.raise_if_stopped()
    progress.report_warnings()
    return result


def execute(
    selection: Any, label: str, settings: Settings, dbt_config: dict[str, Any] | None = None
) -> tuple[list[dict[str, Any]], bool]:
    """One in-process run of `selection` (a Dagster AssetSelection): the deliveries it loaded, and success.

    `dbt_config` is the run's DbtBuildConfig (`vars` for `--vars`, `full`, `full_refresh`).
    """
    from pipelines.defs.transform.dbt import gpu_finops_dbt_models

    run_config = None
    if dbt_config:
        run_config = {"ops": {gpu_finops_dbt_models.op.name: {"config": dbt_config}}}
    result = run_assets(selection, label, settings, run_config=run_config)
    deliveries: list[dict[str, Any]] = []
    for event in result.get_asset_materialization_events():
        metadata = event.step_materialization_data.materialization.metadata
        if "deliveries" in metadata:
            deliveries.extend(metadata["deliveries"].value)
    if not result.success:
        print_failures(result)
        for check in result.get_asset_check_evaluations():
            if not check.passed:
                print(f"failed check: {check.asset_key.to_user_string()} {check.check_name}", file=sys.stderr)
    return deliveries, result.success


def build_models(settings: Settings, next_time: str, *, full: bool = False, full_refresh: bool = False) -> bool:
    """One dbt build of what changed since the last build (see `transform_selection`), or of every model, seed
    and test when `full`; `full_refresh` also rebuilds the incremental models from scratch. `next_time` says, if
    a signal stops it, what rebuilds them later."""
    from pipelines.defs.asset_selections import transform_selection

    signals.progress.start(f"model build ({next_time})")
    dbt_config = {"full": True, "full_refresh": True} if full_refresh else {"full": True} if full else None
    _, built = execute(transform_selection(), "dbt build", settings, dbt_config)
    signals.progress.finish("models built" if built else "model build failed")
    print("Models built." if built else "The model build failed (see above).")
    return built


def print_failures(result: Any) -> None:
    """One line per failed step of a run, to stderr, and where the stack traces are."""
    failed = [event for event in result.all_events if event.is_step_failure]
    for event in failed:
        print(f"error in {event.step_key}: {event.step_failure_data.error.message.strip()}", file=sys.stderr)
    if failed:
        console.name_log("Log (Dagster's events, dbt's output, stack traces)", sys.stderr)


def published_outcomes(warehouse: Path, results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """What became of each loaded delivery once the models were built, by load id: `withheld` (and the rule that
    refused it), or the billed and effective cost per currency as the cost lines hold its rows."""
    from pipelines.lib.warehouse.connection import connect

    load_ids = [result["load_id"] for result in results if result["status"] == "loaded" and result.get("load_id")]
    if not load_ids or not warehouse.exists():
        return {}
    outcomes: dict[str, dict[str, Any]] = {}
    with connect(warehouse, read_only=True) as con:
        withheld = con.execute(
            "select load_id, message from audit.withheld_loads where load_id in (select unnest(?::varchar[]))",
            [load_ids],
        ).fetchall()
        for load_id, message in withheld:
            outcomes[load_id] = {"withheld": message}
        modelled = con.execute(
            "select count(*) from information_schema.tables "
            "where table_schema = 'intermediate' and table_name = 'int_billing__cost_lines'"
        ).fetchall()[0][0]
        if not modelled:
            return outcomes
        totals = con.execute(
            "select x_load_id, BillingCurrency, sum(BilledCost), sum(EffectiveCost) "
            "from intermediate.int_billing__cost_lines where x_load_id in (select unnest(?::varchar[])) "
            "group by all order by all",
            [load_ids],
        ).fetchall()
    for load_id, currency, billed, effective in totals:
        outcomes.setdefault(load_id, {}).setdefault("totals", {})[currency] = {
            "billed": billed,
            "effective": effective,
        }
    return outcomes


def print_deliveries(results: list[dict[str, Any]], outcomes: dict[str, dict[str, Any]] | None = None) -> None:
    """One line per delivery with its cost; `outcomes` (from `published_outcomes`, after the build) gives the
    figures as the cost lines hold them and says which loads the models withheld. Without them the figures are
    the file's own totals, and say so."""
    for result in results:
        status = result["status"]
        if status == "rejected":
            print(f"REJECTED  {result['delivery']}\n          {result['reason']}\n          moved to quarantine/")
            continue
        if status == "duplicate":
            print(f"unchanged {result['delivery']} (loaded before as {result['load_id']})")
            continue
        outcome = (outcomes or {}).get(result["load_id"], {})
        if "withheld" in outcome:
            print(
                f"REJECTED  {result['delivery']} by model rule {outcome['withheld']}\n"
                f"          loaded as {result['load_id']}, then withheld: its rows left the warehouse, what it "
                "replaced is back, and it was moved to quarantine/"
            )
            continue
        if outcomes is None:
            figures, basis = result["totals"], " (the file's totals; the models were not rebuilt)"
        else:
            figures, basis = outcome.get("totals", {}), ""
        totals = "; ".join(
            f"{currency} billed {money(Decimal(t['billed']))} effective {money(Decimal(t['effective']))}"
            for currency, t in figures.items()
        )
        replaced = f", replaced {result['replaced_rows']} restated rows" if result["replaced_rows"] else ""
        warnings = result.get("warnings") or []
        label = f"loaded with {len(warnings)} warning{'s' if len(warnings) > 1 else ''}" if warnings else "loaded"
        print(
            f"{label}  {result['delivery']}: {result['rows']} rows, billing periods "
            f"{', '.join(result['billing_periods'])}{replaced}\n          {totals or 'no cost lines'}{basis}"
        )
        for warning in warnings:
            first = f", first at {warning['example']}" if warning.get("example") else ""
            print(f"          warning: {warning['rule']}: {warning['rows']} row(s){first}")


def withheld_deliveries(results: list[dict[str, Any]], outcomes: dict[str, dict[str, Any]]) -> list[str]:
    """The deliveries of `results` that the models withheld."""
    return [
        result["delivery"]
        for result in results
        if result["status"] == "loaded" and "withheld" in outcomes.get(result["load_id"], {})
    ]


def print_delivery_summary(warehouse: Path, results: list[dict[str, Any]]) -> None:
    """What a run loaded and the models published, in a few lines (the demo's many deliveries): counts and rows,
    each warning rule once with its rows, and every rejected, withheld or unchanged delivery in full."""
    outcomes = published_outcomes(warehouse, results)
    withheld = set(withheld_deliveries(results, outcomes))
    loaded = [r for r in results if r["status"] not in ("rejected", "duplicate") and r["delivery"] not in withheld]
    print_deliveries(
        [r for r in results if r["status"] in ("rejected", "duplicate") or r["delivery"] in withheld], outcomes
    )
    rows = sum(int(result["rows"]) for result in loaded)
    print(f"loaded    {len(loaded)} deliveries, {rows:,} rows")
    rules: dict[str, list[int]] = {}
    for result in loaded:
        for warning in result.get("warnings") or []:
            counts = rules.setdefault(warning["rule"], [0, 0])
            counts[0] += 1
            counts[1] += int(warning["rows"])
    for rule, (deliveries, rule_rows) in sorted(rules.items()):
        print(f"          warning: {rule}: {rule_rows} row(s) in {deliveries} deliveries")
