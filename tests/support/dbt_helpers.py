"""Running dbt itself against a fresh, empty warehouse in a test (for dbt unit tests and contracts)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml
from filelock import FileLock

from pipelines.lib.settings import DBT_PROJECT_DIR
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
    return subprocess.run(
        [str(Path(sys.executable).parent / "dbt"), *args, "--target-path", str(tmp_path / "target")],
        cwd=DBT_PROJECT_DIR,
        env=dbt_environment(home),
        capture_output=True,
        text=True,
        timeout=900,
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
