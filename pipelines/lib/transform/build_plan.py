"""What one build of the models has to cover: every model, what changed since the last build, or nothing.

A daily run should cost what its deliveries cost, not what the project costs. The last successful build in
`audit.builds` records the project it built (`project_state`: a hash of the dbt project's files, the run's vars,
the engine and the dbt version) and the day it ran on. Against it:

- the project changed (a model, macro, seed or var), no build succeeded yet, or a full build was asked for:
  every model, seed and test is built (from scratch, `--full-refresh`, when the project changed: the incremental
  models would otherwise keep what the old project made of the periods no load touched);
- otherwise the raw tables a load committed to since that build started, and the models tagged `run_date`
  when the day changed (they read today's date: the owned servers' cost lines run to yesterday), are the
  changed inputs: the build selects every model and test downstream of them. Views and seeds are not
  recreated (a view reads its parents live, and neither changes unless the project does), but the tests on
  those views run, since the rows behind them changed;
- no input changed: dbt is not started at all.

Incremental models then rebuild only the periods the new loads touched, and their tests read only the rows
the build wrote (macros/incremental/). A build that fails leaves the last successful one as the baseline, so
the next run covers what it did not.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any, Literal

import duckdb

from pipelines.lib.settings import DBT_PROJECT_DIR
from pipelines.lib.transform.builds import ensure_builds_table

Scope = Literal["full", "changed", "nothing"]

RUN_DATE_TAG = "run_date"
"""The dbt tag of models whose rows depend on the day the build runs (not only on their inputs)."""

CONNECTION_FILE = "profiles.yml"
"""The connection profile: its settings count (Spark's session options decide how decimals and timestamps come
out), the environment variables it reads do not (see `project_state`)."""
PROJECT_FILES = ("models", "macros", "seeds", "tests", "dbt_project.yml", CONNECTION_FILE)
"""What the project state hashes, relative to the dbt project folder."""

_ENV_VAR = re.compile(r"""env_var\(\s*['"]([A-Za-z0-9_]+)['"]""")
_STATELESS = {"view", "ephemeral"}


@dataclass(frozen=True)
class BuildPlan:
    """One build's scope, why, and the dbt arguments that select it."""

    scope: Scope
    reason: str
    project_state: str
    run_date: date
    full_refresh: bool = False
    changed_tables: tuple[str, ...] = ()
    selected: frozenset[str] = field(default=frozenset(), repr=False)
    """The nodes (unique ids) a changed build builds."""
    excluded: tuple[str, ...] = field(default=(), repr=False)
    """The other nodes, as `fqn:` selectors: a changed build leaves them as they are."""
    vars: Mapping[str, Any] = field(default_factory=dict)
    """The run's dbt vars (part of the project state the plan was made for)."""

    def dbt_args(self) -> list[str]:
        """The arguments after `dbt build`: unit tests never (they test SQL on fixed rows, not the data); in a
        changed build, everything but the excluded nodes, each node selected on its own (no test is dropped
        because the view it tests is not recreated)."""
        args = ["--exclude-resource-type", "unit_test"]
        if self.full_refresh:
            args.append("--full-refresh")
        if self.scope == "changed" and self.excluded:
            # One value, space-separated, as dbt reads it (and dagster-dbt passes on only one value per flag).
            args += ["--indirect-selection", "empty", "--exclude", " ".join(self.excluded)]
        if self.vars:
            args += ["--vars", json.dumps(self.vars, sort_keys=True)]
        return args

    def command(self) -> str:
        """The dbt command as `audit.builds` records it: what it runs and why, without the per-node exclusions."""
        options = ["--full-refresh"] if self.full_refresh else []
        return shlex.join(["dbt", "build", *options]) + f" ({self.describe()})"

    def describe(self) -> str:
        if self.scope == "changed":
            return f"the {len(self.selected)} models and tests downstream of what changed: {self.reason}"
        if self.scope == "full":
            return f"every model ({self.reason})"
        return f"nothing ({self.reason})"


def project_state(vars_: Mapping[str, Any], engine: str, project_dir: Path = DBT_PROJECT_DIR) -> str:
    """A hash of everything besides the data that decides what the models hold: the project's files, the run's
    vars, the environment variables the models read, the engine and the dbt version.

    The connection's variables (profiles.yml: the warehouse, memory, the Spark master) are not among them: they
    change where and how fast the models are built, not what they hold, and a process that sets one to its default
    (the CLI does) must plan as one that leaves it unset (the Dagster daemon may)."""
    digest = hashlib.sha256()
    env_names: set[str] = set()
    for path in _project_files(project_dir):
        content, relative = path.read_bytes(), path.relative_to(project_dir).as_posix()
        digest.update(relative.encode() + b"\0" + content + b"\0")
        if relative != CONNECTION_FILE:
            env_names.update(_ENV_VAR.findall(content.decode("utf-8", errors="replace")))
    environment = {name: os.environ.get(name) for name in sorted(env_names) if name != "FINOPS_HOME"}
    context = {
        "vars": dict(vars_),
        "environment": environment,
        "engine": engine,
        "dbt": [version("dbt-core"), version(f"dbt-{engine}")],
    }
    digest.update(json.dumps(context, sort_keys=True, default=str).encode())
    return digest.hexdigest()


def plan_next_build(
    con: duckdb.DuckDBPyConnection,
    manifest_path: Path,
    *,
    vars_: Mapping[str, Any],
    engine: str,
    full: bool = False,
    full_refresh: bool = False,
) -> BuildPlan:
    """`plan_build` for this project as it is now, with this run's vars and engine, today in UTC."""
    ensure_builds_table(con)
    plan = plan_build(
        con,
        json.loads(manifest_path.read_text()),
        state=project_state(vars_, engine),
        today=datetime.now(UTC).date(),
        full=full,
        full_refresh=full_refresh,
    )
    return replace(plan, vars=dict(vars_))


def plan_build(
    con: duckdb.DuckDBPyConnection,
    manifest: Mapping[str, Any],
    *,
    state: str,
    today: date,
    full: bool = False,
    full_refresh: bool = False,
) -> BuildPlan:
    """The build the warehouse needs now (see the module's docstring); `manifest` is dbt's parsed manifest."""
    last = last_covering_build(con)
    if full or full_refresh:
        reason = "a full refresh was asked for" if full_refresh else "a full build was asked for"
        return BuildPlan("full", reason, state, today, full_refresh=full_refresh)
    if last is None:
        return BuildPlan("full", "no model build has succeeded on this warehouse yet", state, today)
    started_at, last_state, last_day = last
    if last_state != state:
        # The incremental models keep the periods no load touched: rebuilt by changed SQL or seeds, they start over.
        reason = "the dbt project, its vars or dbt changed since the last build"
        return BuildPlan("full", reason, state, today, full_refresh=True)
    tables = changed_raw_tables(con, since=started_at)
    dated = last_day != today
    if not tables and not dated:
        return BuildPlan(
            "nothing",
            f"nothing was loaded since the last build (started {started_at:%Y-%m-%d %H:%M:%S} UTC)",
            state,
            today,
        )
    selected = downstream_nodes(manifest, tables, run_date_changed=dated)
    excluded = tuple(sorted(_fqn_selector(manifest, node) for node in buildable_nodes(manifest) - selected))
    inputs = list(tables) + ([f"the day (models tagged {RUN_DATE_TAG})"] if dated else [])
    return BuildPlan(
        "changed",
        "new loads of " + ", ".join(inputs) if tables else f"a new day ({today.isoformat()})",
        state,
        today,
        changed_tables=tuple(tables),
        selected=frozenset(selected),
        excluded=excluded,
    )


def last_covering_build(con: duckdb.DuckDBPyConnection) -> tuple[Any, str | None, date | None] | None:
    """(started_at, project_state, run_date) of the last successful build that covered its changed inputs."""
    rows = con.execute(
        "SELECT started_at, project_state, run_date FROM audit.builds "
        "WHERE status = 'succeeded' AND scope IN ('full', 'changed') ORDER BY started_at DESC LIMIT 1"
    ).fetchall()
    return rows[0] if rows else None


def changed_raw_tables(con: duckdb.DuckDBPyConnection, *, since: Any) -> list[str]:
    """The raw tables (`raw.<name>`) a load committed to after `since`."""
    rows = con.execute(
        "SELECT DISTINCT raw_table FROM audit.loads WHERE loaded_at > ? ORDER BY raw_table", [since]
    ).fetchall()
    return [table for (table,) in rows]


def downstream_nodes(manifest: Mapping[str, Any], raw_tables: Iterable[str], *, run_date_changed: bool) -> set[str]:
    """The models and data tests a build selects when `raw_tables` changed (and the day, if `run_date_changed`):
    everything downstream of them that is built, views' tests included, views and seeds themselves not."""
    wanted = set(raw_tables)
    starts = [
        unique_id
        for unique_id, source in manifest["sources"].items()
        if f"{source['schema']}.{source['identifier']}" in wanted
    ]
    if run_date_changed:
        starts += [
            unique_id
            for unique_id, node in manifest["nodes"].items()
            if node["resource_type"] == "model" and RUN_DATE_TAG in node["config"].get("tags", [])
        ]
    children = manifest["child_map"]
    reached: set[str] = set()
    pending = list(starts)
    while pending:
        for child in children.get(pending.pop(), []):
            if child not in reached:
                reached.add(child)
                pending.append(child)
    reached.update(start for start in starts if start in manifest["nodes"])
    return reached & _built_in_a_changed_build(manifest)


def buildable_nodes(manifest: Mapping[str, Any]) -> set[str]:
    """Every node `dbt build` runs (models, seeds, snapshots, data tests; not unit tests, which it never runs
    here)."""
    return {
        unique_id
        for unique_id, node in manifest["nodes"].items()
        if node["resource_type"] in {"model", "seed", "snapshot", "test"}
    }


def _built_in_a_changed_build(manifest: Mapping[str, Any]) -> set[str]:
    """Buildable nodes but seeds and stateless models (views, ephemeral), which only a project change changes."""
    nodes = manifest["nodes"]
    return {
        unique_id
        for unique_id in buildable_nodes(manifest)
        if nodes[unique_id]["resource_type"] != "seed"
        and not (
            nodes[unique_id]["resource_type"] == "model"
            and nodes[unique_id]["config"].get("materialized") in _STATELESS
        )
    }


def _fqn_selector(manifest: Mapping[str, Any], unique_id: str) -> str:
    """The node by its whole fully qualified name: exactly one node, whatever other nodes are called."""
    return "fqn:" + ".".join(manifest["nodes"][unique_id]["fqn"])


def _project_files(project_dir: Path) -> list[Path]:
    files: list[Path] = []
    for name in PROJECT_FILES:
        path = project_dir / name
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files.extend(sorted(child for child in path.rglob("*") if child.is_file()))
    return files
