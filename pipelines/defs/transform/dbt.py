import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
from dagster_dbt import DbtCliInvocation, DbtCliResource, dbt_assets
from dagster_duckdb import DuckDBResource
from pydantic import Field

from pipelines.lib.catalog.billing import SOURCES_BY_NAME
from pipelines.lib.foundation.failpoints import pause_if_requested
from pipelines.lib.operations.recovery import DBT_PID_TAG, DBT_STOP_SECONDS
from pipelines.lib.settings import DUCKDB_WRITER_POOL, FinopsHome, Settings
from pipelines.lib.transform.build_plan import plan_next_build
from pipelines.lib.transform.builds import finish_build, start_build
from pipelines.lib.transform.dbt import (
    FinopsDbtTranslator,
    dbt_project,
    prune_run_targets,
    require_manifest,
    reuse_partial_parse,
    run_target_path,
    save_partial_parse,
)
from pipelines.lib.transform.model_audit import audit_failed_build, failing_nodes
from pipelines.lib.transform.spark_tables import publish_spark_tables, spark_tables
from pipelines.lib.transform.withholding import withhold
from pipelines.lib.warehouse.publication import publish_loads, unpublished_load_ids
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables


class DbtBuildConfig(dg.Config):
    """How one run builds the models.

    `vars`: dbt project variables, passed as `--vars`. The demo pins `onprem_costs_through` to its last day this
    way, so its on-prem cost lines cover exactly the sample months whatever today's date is. Empty (the
    default): dbt_project.yml decides.
    `full`: build every model, not only what changed since the last build (build_plan.py); `full_refresh` also
    rebuilds the incremental models from scratch (`dbt build --full-refresh`).
    """

    vars: dict[str, str] = Field(default_factory=dict)
    full: bool = False
    full_refresh: bool = False


MAX_REBUILDS = 3
"""How many times one build withholds deliveries and builds again (each round withholds at least one load)."""


@dbt_assets(
    manifest=require_manifest(),
    project=dbt_project,
    dagster_dbt_translator=FinopsDbtTranslator(),
    pool=DUCKDB_WRITER_POOL,
)
def gpu_finops_dbt_models(
    context: dg.AssetExecutionContext,
    dbt: DbtCliResource,
    duckdb: DuckDBResource,
    settings: dg.ResourceParam[Settings],
    config: DbtBuildConfig,
):
    """Staging, intermediate and mart models with their tests, built in one `dbt build` of what changed.

    A run of every model builds only what the loads and the day changed since the last build, every model when
    the project changed, and nothing (no dbt) when nothing did (pipelines/lib/transform/build_plan.py).

    Write, audit, publish: the billing loads committed since the last successful build are not published until this
    build accepts them. If data tests fail on rows of some of them, those loads are withheld (taken back out of raw,
    quarantined with the rule: model_audit.py, withholding.py) and the build runs again without them, so every other
    delivery and source reaches the marts in the same run.
    """
    everything = context.selected_asset_keys >= gpu_finops_dbt_models.keys
    with duckdb.get_connection() as con:
        recover_and_ensure_raw_tables(con)
        plan = plan_next_build(
            con,
            dbt_project.manifest_path,
            vars_=config.vars,
            engine=settings.engine,
            full=config.full or not everything,
            full_refresh=config.full_refresh,
        )
        if plan.scope == "nothing":
            context.log.info(f"No model needs building: {plan.reason}.")
            return
        context.log.info(f"Building {plan.describe()}.")
        # Unit tests check the SQL against fixed cases, not the data: dbt recommends leaving them out of
        # production builds. The test suite runs every one of them (tests/dbt/test_dbt_unit_tests.py).
        args = ["build", *plan.dbt_args()]
        build_id = start_build(
            con,
            run_id=context.run_id,
            command=plan.command(),
            # A run of some models (from the UI) covers no load: the next run of every model plans as if it had
            # not happened.
            scope=plan.scope if everything else "subset",
            project_state=plan.project_state,
            run_date=plan.run_date,
        )
        unpublished = unpublished_load_ids(con)
    # audit.builds says whether this build finished (a SIGKILL leaves it `started`: the next run rebuilds).
    prune_run_targets()
    invocation = None
    events = _StepEvents()
    parse_cache = settings.home.dbt_partial_parse(settings.engine)
    try:
        for attempt in range(MAX_REBUILDS + 1):
            target_path = run_target_path(context.op.name, context.run_id)
            reuse_partial_parse(parse_cache, target_path, os.environ)
            invocation = dbt.cli(args, context=context, raise_on_error=False, target_path=target_path)
            # A killed run's dbt keeps building on its own: the next run finds its PID here and stops it.
            context.instance.add_run_tags(context.run_id, {DBT_PID_TAG: str(invocation.process.pid)})
            for number, event in enumerate(invocation.stream()):
                yield from events.admit(event)
                if number == 0 and attempt == 0:
                    pause_if_requested("building")
            save_partial_parse(target_path, parse_cache)
            if invocation.is_successful() or settings.engine == "spark" or attempt == MAX_REBUILDS:
                break
            withheld = _withhold_what_failed(context, duckdb, settings, invocation, unpublished)
            if not withheld:
                break
            yield from _stale_sources(duckdb, withheld)
            unpublished = [load_id for load_id in unpublished if load_id not in withheld]
            context.log.warning(f"Building again without the {len(withheld)} withheld deliveries.")
        yield from events.held_back()
        error = invocation.get_error()
        if error is not None:
            raise error
        if settings.engine == "spark":
            _publish_spark_tables(context, duckdb, settings.home, invocation.target_path / "manifest.json")
    except BaseException as exc:
        interrupted = isinstance(exc, KeyboardInterrupt | GeneratorExit | dg.DagsterExecutionInterruptedError)
        if invocation is not None:
            _stop(invocation.process)
        _finish(duckdb, build_id, "interrupted" if interrupted else "failed", str(exc).strip()[:2000] or None)
        raise
    with duckdb.get_connection() as con:
        # Only a build of every model downstream of the loads has audited them (a run of some models, from the
        # UI, has not).
        if everything:
            publish_loads(con, unpublished)
        finish_build(con, build_id, status="succeeded")


class _StepEvents:
    """The events of one or more dbt invocations, as one step may yield them: each output and check result once.

    A failed check is held back until the build is over, because a rebuild without the delivery that broke it
    reports it again (a failed blocking check would fail the step). A model built again was materialized in this
    step already: its asset holds what the last invocation left.
    """

    def __init__(self) -> None:
        self.outputs: set[str] = set()
        self.checks: set[tuple[dg.AssetKey | None, str]] = set()
        self.held: dict[tuple[dg.AssetKey | None, str], dg.AssetCheckResult] = {}

    def admit(self, event: object) -> Iterator[object]:
        if isinstance(event, dg.AssetCheckResult):
            key = (event.asset_key, event.check_name or "")
            if key in self.checks:
                return
            if not event.passed:
                self.held[key] = event
                return
            self.held.pop(key, None)
            self.checks.add(key)
        elif isinstance(event, dg.Output):
            if event.output_name in self.outputs:
                return
            self.outputs.add(event.output_name)
        yield event

    def held_back(self) -> Iterator[dg.AssetCheckResult]:
        for key, event in self.held.items():
            self.checks.add(key)
            yield event
        self.held.clear()


def _withhold_what_failed(
    context: dg.AssetExecutionContext,
    duckdb: DuckDBResource,
    settings: Settings,
    invocation: DbtCliInvocation,
    unpublished: list[str],
) -> list[str]:
    """Withhold the unpublished loads the failed invocation's test failures trace to; the ids withheld."""
    if not unpublished:
        return []
    failing = failing_nodes(invocation.get_artifact("run_results.json"), invocation.get_artifact("manifest.json"))
    with duckdb.get_connection() as con:
        audit = audit_failed_build(con, failing, unpublished)
        withheld = withhold(settings.home, con, audit.withhold, context.log) if audit.withhold else []
    for node in audit.untraced:
        context.log.error(f"{node.name} ({node.status}) traces to no new delivery: {node.message}")
    return withheld


def _stale_sources(duckdb: DuckDBResource, withheld: list[str]) -> Iterator[dg.AssetObservation]:
    """An observation on each withheld delivery's ingest asset, so its page says why its marts are stale."""
    with duckdb.get_connection() as con:
        rows = con.execute(
            "select source, delivery, load_id, rule, model, failing_rows, example_file, example_row "
            "from audit.withheld_loads where load_id in (select unnest(?::varchar[]))",
            [withheld],
        ).fetchall()
    for source, delivery, load_id, rule, model, failing_rows, example_file, example_row in rows:
        yield dg.AssetObservation(
            asset_key=dg.AssetKey(list(SOURCES_BY_NAME[source].asset_key)),
            metadata={
                "withheld_delivery": delivery,
                "load_id": load_id,
                "rejected_by_model_rule": f"{rule} ({model})",
                "failing_rows": failing_rows,
                "first_failing_row": f"{example_file} row {example_row}" if example_file else "-",
                "status": "stale: the marts show this source without the withheld delivery",
            },
        )


def _stop(process: subprocess.Popen) -> None:
    """dbt, asked as by Ctrl-C, then killed: it holds the warehouse until it exits."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=DBT_STOP_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _publish_spark_tables(
    context: dg.AssetExecutionContext, duckdb: DuckDBResource, home: FinopsHome, manifest: Path
) -> None:
    """The tables Spark built, as DuckDB views, so the CLI, the report and `gpu-finops sql` read them."""
    warehouse = home.spark_warehouse
    with duckdb.get_connection() as con:
        missing = publish_spark_tables(con, spark_tables(manifest, warehouse))
    if missing:
        names = ", ".join(f"{table.schema}.{table.name}" for table in missing)
        context.log.warning(f"Spark has not built these tables yet (no files under {warehouse}): {names}")


def _finish(duckdb: DuckDBResource, build_id: str, status: str, message: str | None = None) -> None:
    with duckdb.get_connection() as con:
        finish_build(con, build_id, status=status, message=message)
