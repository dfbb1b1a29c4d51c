"""Production mode: the daily schedule runs unattended, its runs and checks kept in PostgreSQL.

A real PostgreSQL server (Debian's `postgresql` binaries, a new cluster on a free port: tests/support/postgres.py)
holds the Dagster instance's storage, chosen the documented way (DAGSTER_PG_* in the environment;
docs/operations.md, "Running it every day in production"). `dagster-daemon run` alone does the work: its scheduler
fires `daily_refresh_schedule` (FINOPS_DAILY_CRON set to a minute three minutes ahead: one tick), the run waits in the
QueuedRunCoordinator's queue until the daemon launches it, and the run loads a small FOCUS delivery and builds every
model. The test then reads PostgreSQL's own tables: the run, its queue events, and an evaluation of every asset
check the daily job carries.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from pipelines.lib.ingest.landing import register
from pipelines.lib.operations.instance import InstanceConfigError, instance_config
from pipelines.lib.settings import DAGSTER_POSTGRES_YAML, DAGSTER_YAML, DUCKDB_WRITER_POOL, PROJECT_ROOT, FinopsHome
from tests.conformance.cases import CASE_BY_ID, mart_totals
from tests.pipelines.test_asset_graph import SNAPSHOT
from tests.support.postgres import Postgres, local_postgres
from tests.support.processes import start_group, stop_group, wait_for
from tests.support.warehouse_helpers import query

pytestmark = pytest.mark.slow

DELIVERY = CASE_BY_ID["azure-focuscost-1.2-eur-billed-usd-priced"]
BIN = Path(sys.executable).parent
NOT_IN_DAILY_JOB = {"prices", "telemetry"}
"""Groups the daily refresh leaves to their own daily-partitioned jobs (pipelines/defs/automation/daily.py)."""


def daily_job_checks() -> set[tuple[str, str]]:
    """(asset key, check) of every asset the daily job materializes, as the asset graph snapshot records them, and
    the dbt source tests of the price and telemetry tables (`source_…`), which its dbt build runs."""
    checks: set[tuple[str, str]] = set()
    key, in_daily_job = "", False
    for line in SNAPSHOT.read_text().splitlines():
        if line.startswith("asset "):
            _, key, group = line.split()
            in_daily_job = group.removeprefix("group=") not in NOT_IN_DAILY_JOB
        elif line.startswith("  check ") and (in_daily_job or line.split()[1].startswith("source_")):
            checks.add((key, line.split()[1]))
    return checks


def dagster_env(home: FinopsHome, postgres: Postgres) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith(("DAGSTER_", "FINOPS_"))}
    return env | postgres.env() | {"FINOPS_HOME": str(home.root), "DAGSTER_HOME": str(home.dagster_home)}


def once_soon() -> str:
    """A daily cron for a minute about three minutes ahead: after the daemon is up (it runs only ticks that come
    after it first sees the schedule), and one tick only (each tick is a run of its own, run key or not)."""
    fire = datetime.now(UTC).replace(second=0, microsecond=0) + timedelta(minutes=3)
    return f"{fire.minute} {fire.hour} * * *"


def run(command: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(command, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{command}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    return done.stdout


def test_the_instance_keeps_every_section_but_storage_from_dagster_yaml(tmp_path: Path):
    """The PostgreSQL instance is dagster.yaml with another storage block: the run queue, the duckdb_writer pool of
    one and run monitoring are the same in both modes, and no secret is written."""
    home = FinopsHome(tmp_path / "home")
    env = {name: value for name, value in os.environ.items() if not name.startswith(("DAGSTER_", "FINOPS_"))}
    secrets = Postgres(host="db.internal", port=5433, db="dagster", user="dagster", password="not-in-any-file-0x5e")
    env |= {"FINOPS_HOME": str(home.root)} | secrets.env()
    assert "postgres storage" in run([str(BIN / "python"), "-m", "pipelines.lib.operations.instance"], env)

    installed = (home.dagster_home / "dagster.yaml").read_text()
    assert secrets.password not in installed and secrets.host not in installed
    config, base = yaml.safe_load(installed), yaml.safe_load(DAGSTER_YAML.read_text())
    assert config["storage"] == yaml.safe_load(DAGSTER_POSTGRES_YAML.read_text())["storage"]
    assert config["storage"]["postgres"]["postgres_db"]["password"] == {"env": "DAGSTER_PG_PASSWORD"}
    assert {key: value for key, value in config.items() if key != "storage"} == {
        key: value for key, value in base.items() if key != "storage"
    }
    assert config["concurrency"]["pools"]["default_limit"] == 1
    assert config["run_coordinator"]["class"] == "QueuedRunCoordinator"

    # Half a configuration names what is missing; a process without the variables does not quietly switch the
    # instance back to SQLite.
    with pytest.raises(InstanceConfigError, match="but DAGSTER_PG_PORT, DAGSTER_PG_PASSWORD are not"):
        instance_config(
            DAGSTER_YAML, DAGSTER_POSTGRES_YAML, secrets.env() | {"DAGSTER_PG_PORT": "", "DAGSTER_PG_PASSWORD": ""}
        )
    without = {name: value for name, value in env.items() if not name.startswith("DAGSTER_PG_")}
    done = subprocess.run(
        [str(BIN / "python"), "-m", "pipelines.lib.operations.instance"],
        cwd=PROJECT_ROOT,
        env=without,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "keeps Dagster's runs in PostgreSQL, but DAGSTER_PG_HOST is not set" in done.stderr
    assert (home.dagster_home / "dagster.yaml").read_text() == installed


def test_the_daily_schedule_runs_unattended_through_the_daemons_queue_on_postgres(tmp_path: Path):
    home = FinopsHome(tmp_path / "home")
    with local_postgres() as postgres:
        env = dagster_env(home, postgres)
        assert "postgres storage" in run([str(BIN / "python"), "-m", "pipelines.lib.operations.instance"], env)
        register(home, DELIVERY.source, DELIVERY.path)
        # Only the daily refresh starts runs here: the landing sensor would load the delivery in a run of its own,
        # and the restatement schedule shares the daily cron. Stopping them is state kept in PostgreSQL too.
        run([str(BIN / "dagster"), "sensor", "stop", "landing_sensor"], env)
        run([str(BIN / "dagster"), "schedule", "stop", "restatement_window_schedule"], env)

        log = tmp_path / "daemon.log"
        daemon = start_group([str(BIN / "dagster-daemon"), "run"], env | {"FINOPS_DAILY_CRON": once_soon()}, log)
        try:

            def daily_run() -> tuple[str, str] | None:
                rows = postgres.query(
                    "select run_id, status from runs where pipeline_name = 'daily_refresh'"
                    " and status in ('SUCCESS', 'FAILURE', 'CANCELED')"
                )
                return rows[0] if rows else None

            run_id, status = wait_for("finished daily_refresh run in PostgreSQL", daily_run, within=1200, log=log)
        finally:
            stop_group(daemon)

        assert status == "SUCCESS", log.read_text()[-4000:]
        assert postgres.query("select count(*) from runs") == [(1,)]
        tags = dict(postgres.query("select key, value from run_tags where run_id = %s", run_id))
        assert tags["dagster/schedule_name"] == "daily_refresh_schedule"
        assert tags["dagster/run_key"].startswith("daily_refresh:")
        # Through the run queue: enqueued when the scheduler submitted it, launched (STARTING) by the daemon's
        # queue coordinator, then started by its run worker.
        events = [
            kind
            for (kind,) in postgres.query(
                "select dagster_event_type from event_logs where run_id = %s and dagster_event_type is not null"
                " order by id",
                run_id,
            )
        ]
        assert events.index("PIPELINE_ENQUEUED") < events.index("PIPELINE_STARTING") < events.index("PIPELINE_START")
        daemon_said = re.sub(r"\x1b\[[0-9;]*m", "", log.read_text())  # its lines are coloured
        assert "QueuedRunCoordinatorDaemon - INFO - Launched 1 runs" in daemon_said
        assert "PIPELINE_SUCCESS" in events and "PIPELINE_FAILURE" not in events

        # Every asset check of the daily job was evaluated in that run, and is recorded in PostgreSQL. What was
        # found is gathered first, so a failure shows all of it at once.
        executions = postgres.query(
            "select asset_key, check_name, execution_status from asset_check_executions where run_id = %s", run_id
        )
        evaluated = {("/".join(json.loads(key)), check): state for key, check, state in executions}
        expected = daily_job_checks()
        found = {
            "checks of the daily job without an execution": sorted(expected - set(evaluated)),
            "executions of other checks": sorted(set(evaluated) - expected),
            "checks planned but never evaluated": sorted(
                check for check, state in evaluated.items() if state == "PLANNED"
            ),
            "evaluation events": postgres.query(
                "select count(*) from event_logs where run_id = %s and dagster_event_type = 'ASSET_CHECK_EVALUATION'",
                run_id,
            )[0][0],
            "raw/focus_cost_and_usage": {
                check: state
                for (key, check), state in evaluated.items()
                if key == "raw/focus_cost_and_usage" and not check.startswith("source_")
            },
            "dbt source tests of raw/focus_cost_and_usage": {
                state
                for (key, check), state in evaluated.items()
                if key == "raw/focus_cost_and_usage" and check.startswith("source_")
            },
            "duckdb_writer slots": postgres.query(
                "select count(*) from concurrency_slots where concurrency_key = %s and not deleted", DUCKDB_WRITER_POOL
            )[0][0],
        }
        assert found == {
            "checks of the daily job without an execution": [],
            "executions of other checks": [],
            "checks planned but never evaluated": [],
            "evaluation events": len(expected),
            "raw/focus_cost_and_usage": {
                "delivery_is_fresh": found["raw/focus_cost_and_usage"].get("delivery_is_fresh"),
                "deliveries_are_published": "SUCCEEDED",
                "load_passes_quality_suite": "SUCCEEDED",
                "loads_carry_no_warnings": "SUCCEEDED",
                "raw_matches_audited_deliveries": "SUCCEEDED",
            },
            "dbt source tests of raw/focus_cost_and_usage": {"SUCCEEDED"},
            "duckdb_writer slots": 1,
        }

    # Nothing went to the embedded SQLite storage; the delivery's money reached the marts as the file states it.
    assert not (home.dagster_home / "history").exists()
    found = query(home.warehouse, "select billing_currency, sum(billed_cost) from marts.fct_cost_daily group by 1")
    assert dict(found) == dict(mart_totals(DELIVERY).billed)
