"""Build plans (pipelines/lib/transform/build_plan.py): what a build of the models covers, against the last one.

A real DuckDB warehouse, real loads of the GPU cloud fixture (audit.loads as the ingest writes it) and dbt's own
parsed manifest. The nodes a changed build selects are checked against what `dbt ls` itself lists downstream of
the same source, and the exclusion the plan hands to dbt against `dbt ls` run with those very arguments.
"""

from __future__ import annotations

import json
import re
import shutil
from datetime import date, timedelta
from pathlib import Path

import pytest

from bench.phases import ingest
from pipelines.lib.ingest.landing import register
from pipelines.lib.settings import DBT_PROJECT_DIR, FinopsHome
from pipelines.lib.transform.build_plan import RUN_DATE_TAG, plan_build, plan_next_build, project_state
from pipelines.lib.transform.builds import ensure_builds_table, finish_build, start_build
from pipelines.lib.transform.dbt import dbt_project
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from tests.support.dbt_helpers import run_dbt

USAGE = Path(__file__).parents[1] / "fixtures" / "gpu_clouds" / "usage-2026-09"
TODAY = date(2026, 12, 7)
STATE = "state-of-the-project"


@pytest.fixture(scope="module")
def manifest() -> dict:
    return json.loads(dbt_project.manifest_path.read_text())


@pytest.fixture
def home(tmp_path: Path) -> FinopsHome:
    home = FinopsHome(tmp_path / "home")
    home.root.mkdir()
    with connect(home.warehouse) as con:
        recover_and_ensure_raw_tables(con)
        ensure_builds_table(con)
    return home


def _load(home: FinopsHome, name: str) -> None:
    register(home, "gpu_cloud_usage", USAGE / name)
    ingest(home, "gpu_cloud_usage")


def _record(home: FinopsHome, *, status: str = "succeeded", state: str = STATE, day: date = TODAY) -> None:
    with connect(home.warehouse) as con:
        build = start_build(con, run_id=None, command="dbt build", scope="full", project_state=state, run_date=day)
        finish_build(con, build, status=status)


def _plan(home: FinopsHome, manifest: dict, *, state: str = STATE, today: date = TODAY, **kwargs):
    with connect(home.warehouse) as con:
        return plan_build(con, manifest, state=state, today=today, **kwargs)


def _dbt_ls(home: FinopsHome, tmp_path: Path, *args: str) -> dict[str, dict]:
    """`dbt ls` of the project as dbt selects it: unique id -> resource type and materialization."""
    completed = run_dbt(
        home.root,
        tmp_path / "target",
        *("ls", "--quiet", "--output", "json", "--output-keys", "unique_id resource_type config", *args),
        timeout=600,
    )
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    nodes = [json.loads(line) for line in completed.stdout.splitlines() if line.startswith("{")]
    return {node["unique_id"]: node for node in nodes}


def test_a_first_build_is_full_then_nothing_until_a_load(home: FinopsHome, manifest: dict):
    first = _plan(home, manifest)
    assert (first.scope, first.reason) == ("full", "no model build has succeeded on this warehouse yet")
    assert "--exclude" not in first.dbt_args()
    _load(home, "lambda.csv")
    _record(home)
    nothing = _plan(home, manifest)
    assert nothing.scope == "nothing"
    assert nothing.reason.startswith("nothing was loaded since the last build")
    _load(home, "runpod.csv")
    changed = _plan(home, manifest)
    assert (changed.scope, changed.changed_tables) == ("changed", ("raw.gpu_cloud_usage",))


def test_a_load_selects_the_models_and_tests_downstream_of_its_source_as_dbt_sees_them(
    home: FinopsHome, manifest: dict, tmp_path: Path
):
    _record(home)
    _load(home, "lambda.csv")
    plan = _plan(home, manifest)
    downstream = _dbt_ls(
        home, tmp_path, "--select", "source:raw.gpu_cloud_usage+", "--exclude-resource-type", "unit_test"
    )
    expected = {
        unique_id
        for unique_id, node in downstream.items()
        if node["resource_type"] == "test"
        or (node["resource_type"] == "model" and node["config"]["materialized"] not in ("view", "ephemeral"))
    }
    assert plan.selected == expected
    # Views downstream are not recreated, but the tests on them run.
    views = {uid for uid, node in downstream.items() if node.get("config", {}).get("materialized") == "view"}
    assert views and not views & plan.selected
    assert any(set(manifest["nodes"][uid]["depends_on"]["nodes"]) & views for uid in plan.selected)
    # The arguments the plan gives dbt select exactly those nodes (and the exposures, which build nothing).
    built = _dbt_ls(home, tmp_path, "--resource-type", "model", "test", *plan.dbt_args())
    assert set(built) == expected


def test_a_new_day_rebuilds_the_models_that_read_the_date(home: FinopsHome, manifest: dict):
    _record(home, day=TODAY - timedelta(days=1))
    plan = _plan(home, manifest)
    assert (plan.scope, plan.changed_tables) == ("changed", ())
    tagged = {uid for uid, node in manifest["nodes"].items() if RUN_DATE_TAG in node["config"].get("tags", [])}
    assert {"model.gpu_finops.int_onprem__daily_cost_lines", "model.gpu_finops.int_fx__daily_rates"} <= tagged
    assert tagged <= plan.selected
    # The owned servers' cost lines feed the canonical cost lines and what is built from them.
    assert "model.gpu_finops.int_billing__cost_lines" in plan.selected
    assert "model.gpu_finops.fct_gpu_spend_daily" in plan.selected


def test_a_changed_project_or_a_full_build_asked_for_builds_everything(home: FinopsHome, manifest: dict):
    _record(home)
    changed = _plan(home, manifest, state="another-state")
    assert changed.scope == "full" and "--full-refresh" in changed.dbt_args()
    asked = _plan(home, manifest, full=True)
    assert asked.scope == "full" and "--full-refresh" not in asked.dbt_args()
    refresh = _plan(home, manifest, full_refresh=True)
    assert refresh.scope == "full" and "--full-refresh" in refresh.dbt_args()


def test_the_runs_vars_are_part_of_its_state_and_of_its_dbt_arguments(home: FinopsHome):
    """The vars a run gives (the demo's last owned-server day) reach dbt with the plan, and a later run with the same
    vars plans against the build made with them."""
    demo_vars = {"onprem_costs_through": "2026-10-31"}
    with connect(home.warehouse) as con:
        first = plan_next_build(con, dbt_project.manifest_path, vars_=demo_vars, engine="duckdb")
    assert first.dbt_args()[-2:] == ["--vars", '{"onprem_costs_through": "2026-10-31"}']
    _record(home, state=first.project_state, day=first.run_date)
    with connect(home.warehouse) as con:
        again = plan_next_build(con, dbt_project.manifest_path, vars_=demo_vars, engine="duckdb")
        without = plan_next_build(con, dbt_project.manifest_path, vars_={}, engine="duckdb")
    assert again.scope == "nothing"
    assert without.scope == "full" and "--vars" not in without.dbt_args()


def test_a_failed_build_leaves_the_last_successful_one_as_the_baseline(home: FinopsHome, manifest: dict):
    _record(home)
    _load(home, "lambda.csv")
    _record(home, status="failed")
    plan = _plan(home, manifest)
    assert (plan.scope, plan.changed_tables) == ("changed", ("raw.gpu_cloud_usage",))


def test_the_project_state_moves_with_a_seed_a_var_or_the_engine_not_the_home_or_connection(tmp_path, monkeypatch):
    project = tmp_path / "dbt_project"
    shutil.copytree(DBT_PROJECT_DIR, project, ignore=shutil.ignore_patterns("target", "logs", "dbt_packages"))
    base = project_state({}, "duckdb", project)
    assert project_state({}, "duckdb", project) == base
    monkeypatch.setenv("FINOPS_HOME", str(tmp_path / "elsewhere"))
    assert project_state({}, "duckdb", project) == base
    # how the warehouse is reached is not what it holds (the CLI sets the memory limit, the daemon may not)
    monkeypatch.setenv("FINOPS_DUCKDB_MEMORY_LIMIT", "1.5GB")
    monkeypatch.setenv("FINOPS_SPARK_MASTER", "spark://127.0.0.1:7077")
    assert project_state({}, "duckdb", project) == base
    assert project_state({"onprem_costs_through": "2026-10-31"}, "duckdb", project) != base
    assert project_state({}, "spark", project) != base
    monkeypatch.setenv("FINOPS_ONPREM_COSTS_THROUGH", "2026-10-31")
    assert project_state({}, "duckdb", project) != base
    monkeypatch.delenv("FINOPS_ONPREM_COSTS_THROUGH")
    seed = project / "seeds" / "gpu_models.csv"
    seed.write_text(seed.read_text() + "\n")
    assert project_state({}, "duckdb", project) != base


_READS_THE_DATE = re.compile(r"current_date|current_timestamp|now\(\)|run_started_at|onprem_costs_through\(\)")
_BUILD_STAMP = "this_run_started_at"
"""A macro that stamps rows with the build's start (bookkeeping): reading it is not reading the date."""


def test_every_model_whose_rows_depend_on_the_day_is_tagged(manifest: dict):
    macros = manifest["macros"]

    def reads_the_date(sql: str, depends_on: list[str], seen: set[str]) -> bool:
        if _READS_THE_DATE.search(sql.replace(_BUILD_STAMP, "")):
            return True
        for macro in depends_on:
            if macro in seen or macro not in macros or macros[macro]["name"] == _BUILD_STAMP:
                continue
            seen.add(macro)
            if macros[macro]["package_name"] == "gpu_finops" and reads_the_date(
                macros[macro]["macro_sql"].split("%}", 1)[-1], macros[macro]["depends_on"]["macros"], seen
            ):
                return True
        return False

    untagged = sorted(
        node["name"]
        for node in manifest["nodes"].values()
        if node["resource_type"] == "model"
        and reads_the_date(node["raw_code"], node["depends_on"]["macros"], set())
        and RUN_DATE_TAG not in node["config"].get("tags", [])
    )
    assert untagged == []


def test_no_incremental_model_keeps_a_primary_key_index(manifest: dict):
    """DuckDB maintains a primary key's index on every delete and insert, and a daily build deletes and rewrites the
    periods of every incremental model it reaches; their keys are unique by their tests (dbt_project/README.md)."""
    incremental = {
        node["name"]: node
        for node in manifest["nodes"].values()
        if node["resource_type"] == "model" and node["config"]["materialized"] == "incremental"
    }
    keyed = sorted(
        name
        for name, node in incremental.items()
        if any(constraint["type"] == "primary_key" for constraint in node.get("constraints", []))
        or any(
            constraint["type"] == "primary_key"
            for column in node["columns"].values()
            for constraint in column.get("constraints", [])
        )
    )
    assert len(incremental) >= 4 and keyed == []
    unique_tested = {
        manifest["nodes"][node["attached_node"]]["name"]
        for node in manifest["nodes"].values()
        if node["resource_type"] == "test"
        and (node.get("test_metadata") or {}).get("name") in {"unique", "unique_combination_of_columns"}
        and node.get("attached_node") in manifest["nodes"]
    }
    assert sorted(set(incremental) - unique_tested) == []
