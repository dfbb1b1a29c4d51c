import json
import shlex
import signal
import subprocess
from pathlib import Path

import dagster as dg
from dagster_dbt import DbtCliResource, dbt_assets
from dagster_duckdb import DuckDBResource
from pydantic import Field

from pipelines.lib.operations.recovery import DBT_PID_TAG, DBT_STOP_SECONDS
from pipelines.lib.operations.test_hooks import pause_if_requested
from pipelines.lib.settings import DUCKDB_WRITER_POOL, engine, finops_home
from pipelines.lib.transform.builds import finish_build, start_build
from pipelines.lib.transform.dbt import FinopsDbtTranslator, dbt_project, ensure_manifest, prune_run_targets
from pipelines.lib.transform.spark_tables import publish_spark_tables, spark_tables
from pipelines.lib.warehouse.raw_schema import ensure_raw_tables

ensure_manifest()


class DbtBuildConfig(dg.Config):
    """dbt project variables for one run, passed as `--vars`.

    The demo pins `onprem_costs_through` to its last day this way, so its on-prem cost lines cover
    exactly the sample months whatever today's date is. Empty (the default): dbt_project.yml decides.
    """

    vars: dict[str, str] = Field(default_factory=dict)


@dbt_assets(
    manifest=dbt_project.manifest_path,
    project=dbt_project,
    dagster_dbt_translator=FinopsDbtTranslator(),
    pool=DUCKDB_WRITER_POOL,
)
def gpu_finops_dbt_models(
    context: dg.AssetExecutionContext, dbt: DbtCliResource, duckdb: DuckDBResource, config: DbtBuildConfig
):
    """Staging, intermediate and mart models with their tests, built in one `dbt build`."""
    # Unit tests check the SQL against fixed cases, not the data: dbt recommends leaving them out of production
    # builds. The test suite runs every one of them (tests/dbt/test_dbt_unit_tests.py).
    args = ["build", "--exclude-resource-type", "unit_test"]
    if config.vars:
        args += ["--vars", json.dumps(config.vars, sort_keys=True)]
    with duckdb.get_connection() as con:
        ensure_raw_tables(con)
        build_id = start_build(con, run_id=context.run_id, command=shlex.join(["dbt", *args]))
    # audit.builds says whether this build finished (a SIGKILL leaves it `started`: the next run rebuilds).
    prune_run_targets()
    invocation = None
    try:
        invocation = dbt.cli(args, context=context)
        # A killed run's dbt keeps building on its own: the next run finds its PID here and stops it.
        context.instance.add_run_tags(context.run_id, {DBT_PID_TAG: str(invocation.process.pid)})
        for number, event in enumerate(invocation.stream()):
            yield event
            if number == 0:
                pause_if_requested("building")
        if engine() == "spark":
            _publish_spark_tables(context, duckdb, invocation.target_path / "manifest.json")
    except BaseException as exc:
        interrupted = isinstance(exc, KeyboardInterrupt | GeneratorExit | dg.DagsterExecutionInterruptedError)
        if invocation is not None:
            _stop(invocation.process)
        _finish(duckdb, build_id, "interrupted" if interrupted else "failed", str(exc).strip()[:2000] or None)
        raise
    _finish(duckdb, build_id, "succeeded")


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


def _publish_spark_tables(context: dg.AssetExecutionContext, duckdb: DuckDBResource, manifest: Path) -> None:
    """The tables Spark built, as DuckDB views, so the CLI, the report and `gpu-finops sql` read them."""
    warehouse = finops_home().spark_warehouse
    with duckdb.get_connection() as con:
        missing = publish_spark_tables(con, spark_tables(manifest, warehouse))
    if missing:
        names = ", ".join(f"{table.schema}.{table.name}" for table in missing)
        context.log.warning(f"Spark has not built these tables yet (no files under {warehouse}): {names}")


def _finish(duckdb: DuckDBResource, build_id: str, status: str, message: str | None = None) -> None:
    with duckdb.get_connection() as con:
        finish_build(con, build_id, status=status, message=message)
