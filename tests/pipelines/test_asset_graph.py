"""The whole Dagster asset graph against a checked-in snapshot: every asset with its group, upstream assets and
checks, and every job, schedule and sensor by name.

A change to the graph (a new dbt model, a renamed check, a moved dependency) shows up here as a readable diff, so it
is seen in review rather than in production. When the change is intended, regenerate the snapshot and commit it:

    .venv/bin/pytest tests/pipelines/test_asset_graph.py --update-snapshots

(or set UPDATE_SNAPSHOTS=1). The dbt assets come from the manifest, so run `dbt parse` first (`make test` does).
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import dagster as dg
import pytest

from pipelines.definitions import defs
from pipelines.lib.settings import DUCKDB_WRITER_POOL

SNAPSHOT = Path(__file__).parent / "snapshots" / "asset_graph.txt"
REGENERATE = ".venv/bin/pytest tests/pipelines/test_asset_graph.py --update-snapshots"


def describe(definitions: dg.Definitions) -> str:
    """The graph as sorted text: one block per asset (group, deps, checks), then the jobs, schedules and sensors."""
    graph = definitions.resolve_asset_graph()
    checks: dict[dg.AssetKey, list[str]] = {}
    for check in graph.asset_check_keys:
        checks.setdefault(check.asset_key, []).append(check.name)
    lines = []
    for key in sorted(graph.get_all_asset_keys(), key=lambda key: key.to_user_string()):
        node = graph.get(key)
        lines.append(f"asset {key.to_user_string()}  group={node.group_name}")
        lines += sorted(f"  dep {parent.to_user_string()}" for parent in node.parent_keys)
        lines += sorted(f"  check {name}" for name in checks.get(key, []))
    lines += sorted(f"job {job.name}" for job in definitions.resolve_all_job_defs() if not job.name.startswith("__"))
    lines += sorted(
        f"schedule {schedule.name}  cron={schedule.cron_schedule}  job={schedule.job_name}"
        for schedule in definitions.schedules or []
    )
    lines += sorted(f"sensor {sensor.name}" for sensor in definitions.sensors or [])
    return "\n".join(lines) + "\n"


def test_the_asset_graph_matches_its_snapshot(request: pytest.FixtureRequest):
    actual = describe(defs())
    if request.config.getoption("--update-snapshots") or os.environ.get("UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(actual)
        return
    expected = SNAPSHOT.read_text() if SNAPSHOT.exists() else ""
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                fromfile="tests/pipelines/snapshots/asset_graph.txt",
                tofile="the graph pipelines.definitions loads now",
            )
        )
        pytest.fail(f"The asset graph changed. If that is intended, regenerate the snapshot:\n  {REGENERATE}\n\n{diff}")


def test_the_snapshot_names_the_assets_the_design_promises():
    """A guard on the snapshot itself: regenerating it cannot silently drop the spine of the pipeline (dbt models
    read the raw table the ingest asset writes, the marts, the check that raw matches the audit, the daily run)."""
    assets: dict[str, list[str]] = {}
    for line in SNAPSHOT.read_text().splitlines():
        if line.startswith("asset "):
            current = assets.setdefault(line.split()[1], [line])
        elif line.startswith("  "):
            current.append(line.strip())
    assert "group=ingest" in assets["raw/focus_cost_and_usage"][0]
    assert "check raw_matches_audited_deliveries" in assets["raw/focus_cost_and_usage"]
    assert "dep raw/focus_cost_and_usage" in assets["staging/stg_focus__cost_and_usage"]
    assert "dep intermediate/int_focus__cost_lines" in assets["intermediate/int_billing__cost_lines"]
    assert {"marts/fct_cost_daily", "marts/fct_gpu_spend_daily"} <= assets.keys()
    assert "schedule daily_refresh_schedule  cron=0 6 * * *  job=daily_refresh" in SNAPSHOT.read_text()


def test_every_warehouse_writer_is_in_the_single_writer_pool():
    job = defs().resolve_implicit_global_asset_job_def()
    pools = {node.name: node.definition.pool for node in job.graph.node_dict.values()}
    assert pools, "the job has no steps"
    assert set(pools.values()) == {DUCKDB_WRITER_POOL}, pools
