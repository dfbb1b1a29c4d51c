"""Running dbt itself in a test: on any test warehouse (`run_dbt`) or a fresh, empty one (unit tests, contracts)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path

import yaml
from filelock import FileLock

from pipelines.lib.settings import DBT_PROJECT_DIR, FinopsHome
from pipelines.lib.transform.dbt import DBT_EXECUTABLE, PARTIAL_PARSE_FILE, reuse_partial_parse
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables

UNIT_TEST_BUILD = ("build", "--exclude", "test_type:data")
"""Every model (on no rows, without its data tests, which the end-to-end tests run on real data) and every unit test:
dbt needs the parents' tables to exist to type a unit test's inputs. Enforced contracts are checked as each mart is
created."""


def dbt_on_empty_warehouse(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`dbt <args>` on a new warehouse holding every raw table (empty), with its own target folder."""
    home = tmp_path / "home"
    home.mkdir(parents=True)
    with connect(home / "warehouse.duckdb") as con:
        recover_and_ensure_raw_tables(con)
    return run_dbt(home, tmp_path / "target", *args)


def run_dbt(
    home: Path,
    target: Path,
    *args: str,
    environment: Mapping[str, str] | None = None,
    timeout: float = 900,
) -> subprocess.CompletedProcess[str]:
    """`dbt <args>` on the warehouse in `home` (in `environment`, by default `dbt_environment(home)`), writing its
    files to `target`, its output captured. Started as the pipeline starts dbt (`reuse_partial_parse`): from the
    project's parse, not a full parse of its own in every new home (about 15 s each). A `target` dbt has already
    parsed in keeps dbt's own parse: a test that runs dbt again there with the same `--vars` (which dbt's saved parse
    hashes, so the project's parse does not hold for them) starts from it."""
    environment = dict(environment if environment is not None else dbt_environment(home))
    engine = environment.get("FINOPS_ENGINE", "duckdb")
    if not (target / PARTIAL_PARSE_FILE).exists():
        reuse_partial_parse(FinopsHome(home).dbt_partial_parse(engine), target, environment)
    return subprocess.run(
        [DBT_EXECUTABLE, *args, "--target-path", str(target)],
        cwd=DBT_PROJECT_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def dbt_environment(home: Path, engine: str = "duckdb") -> dict[str, str]:
    """The environment of a dbt subprocess building the warehouse in `home` on `engine`: the lake is the one in
    `home` (FINOPS_LAKE left to its default), and Spark runs on this machine (local[2]) unless the caller's
    FINOPS_SPARK_MASTER says otherwise."""
    environment = {key: value for key, value in os.environ.items() if key != "FINOPS_LAKE"}
    return environment | {"FINOPS_HOME": str(home), "FINOPS_ENGINE": engine}


def shared_dbt_on_empty_warehouse(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`dbt_on_empty_warehouse` run once for every process that asks for it with the same `folder`: the first one
    builds under a file lock and records the outcome, the others (pytest-xdist workers) read it."""
    folder.mkdir(parents=True, exist_ok=True)
    outcome = folder / "outcome.json"
    with FileLock(folder / ".lock"):
        if not outcome.exists():
            done = dbt_on_empty_warehouse(folder, *args)
            outcome.write_text(json.dumps({"args": done.args, "returncode": done.returncode, "stdout": done.stdout}))
    recorded = json.loads(outcome.read_text())
    return subprocess.CompletedProcess(recorded["args"], recorded["returncode"], recorded["stdout"], "")


def unit_tests_in_yaml(model: str | None = None) -> set[str]:
    """The unit tests declared in the project's YAML (of one model, if given), read here rather than from dbt's
    manifest."""
    names = set()
    for path in (DBT_PROJECT_DIR / "models").rglob("*.yml"):
        document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        names |= {test["name"] for test in document.get("unit_tests", []) if model in (None, test["model"])}
    return names


def passed_unit_tests(stdout: str) -> set[str]:
    """The unit tests a dbt run's output reports as passed."""
    return set(re.findall(r"PASS [a-z0-9_]+::([a-z0-9_]+) ", stdout))
