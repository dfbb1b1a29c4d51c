"""Coming back from a crash on the Dagster side: runs whose process died give back the `duckdb_writer` slot.

A run killed with SIGKILL (an OOM kill, a crashed VM) never reaches its own cleanup: its status stays
STARTED and the pool's only slot stays claimed, so every later writer would wait forever. Before the CLI
starts a run, `prepare_instance` looks at every unfinished run and every run holding or queueing for the
pool: a run whose process is gone is marked failed, the dbt it started (still building on its own) is
stopped, and its slots and queued steps are freed. A run that is alive is waited for, with one line a
minute naming it. Scheduled runs launched by the daemon are covered by Dagster's run monitoring
(`run_monitoring` in dagster.yaml), which fails runs whose worker died and frees their slots.

Where a run's process is: the CLI tags its runs with its PID and host (`CLI_PID_TAG`, `CLI_HOST_TAG`);
for other runs, the PID recorded on the run's first events (a run worker's). A PID whose process started
after the run did has been reused by another process: the run's own process is gone.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pipelines.lib.foundation.processes import process_alive
from pipelines.lib.settings import DUCKDB_WRITER_POOL

if TYPE_CHECKING:
    import dagster as dg

CLI_PID_TAG = "finops/pid"
CLI_HOST_TAG = "finops/host"
DBT_PID_TAG = "finops/dbt_pid"
"""Set by the dbt asset once `dbt build` started: a dead run's dbt is stopped (it would hold the warehouse)."""

WAIT_MESSAGE_SECONDS = 60
"""How often a wait for a live run says so."""
POLL_SECONDS = 2.0
DBT_STOP_SECONDS = 10.0
"""How long a dead run's dbt gets to stop after SIGTERM before SIGKILL."""

Say = Callable[[str], None]


def cli_run_tags() -> dict[str, str]:
    """Tags of a run the CLI executes in its own process: where to look for it after a crash."""
    return {CLI_PID_TAG: str(os.getpid()), CLI_HOST_TAG: socket.gethostname()}


@dataclass(frozen=True)
class RunProcess:
    run_id: str
    pid: int | None
    host: str | None
    started: datetime | None
    alive: bool

    def describe(self) -> str:
        where = f"PID {self.pid}" if self.pid is not None else "PID unknown"
        if self.host:
            where += f" on {self.host}"
        since = f", running since {self.started:%Y-%m-%d %H:%M:%S} UTC" if self.started else ""
        return f"run {self.run_id} ({where}{since})"


def prepare_instance(instance: dg.DagsterInstance, say: Say = print) -> list[RunProcess]:
    """Free the pool from dead runs, then wait while a live run holds it. Returns the runs found dead."""
    reclaimed = reclaim_dead_runs(instance, say)
    last_message = None
    while live := _live_pool_holders(instance):
        now = time.monotonic()
        if last_message is None or now - last_message >= WAIT_MESSAGE_SECONDS:
            for holder in live:
                say(f"Waiting for {holder.describe()}: it holds the {DUCKDB_WRITER_POOL} pool (one writer at a time).")
            last_message = now
        time.sleep(POLL_SECONDS)
        reclaimed += reclaim_dead_runs(instance, say)
    # A holder that died between the last two looks is no longer live but still holds its slot.
    return reclaimed + reclaim_dead_runs(instance, say)


def reclaim_dead_runs(instance: dg.DagsterInstance, say: Say = print) -> list[RunProcess]:
    """Mark unfinished runs whose process is gone as failed, stop their dbt, free their pool slots.

    Finished runs that still hold a slot (their process died between the end and the release) are freed too.
    """
    import dagster as dg

    unfinished = instance.get_runs(
        filters=dg.RunsFilter(
            statuses=[dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]
        )
    )
    runs = {run.run_id: run for run in unfinished}
    for run_id in _pool_run_ids(instance) - set(runs):
        run = instance.get_run_by_id(run_id)
        if run is not None:
            runs[run_id] = run
    reclaimed = []
    for run in runs.values():
        if run.is_finished:
            instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
            continue
        process = run_process(instance, run)
        if process.alive:
            continue
        if process.pid is None and run.status == dg.DagsterRunStatus.STARTING:
            continue  # no process recorded yet: run monitoring's start timeout judges it
        stopped = _stop_orphaned_dbt(run)
        message = f"the process of {process.describe()} is gone (killed or crashed): marked failed by gpu-finops"
        instance.report_run_failed(run, message=message)
        instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
        say(f"Recovered from a crash: {process.describe()} had died; marked failed, its pool slot freed{stopped}.")
        reclaimed.append(process)
    return reclaimed


def free_own_runs(instance: dg.DagsterInstance) -> None:
    """Free the slots of this process's runs: on SIGTERM or Ctrl-C, nothing it held may stay claimed."""
    import dagster as dg

    mine = instance.get_runs(filters=dg.RunsFilter(tags={CLI_PID_TAG: str(os.getpid())}))
    for run in mine:
        if not run.is_finished:
            instance.report_run_failed(run, message="stopped by a signal (SIGTERM or Ctrl-C)")
        instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)


def run_process(instance: dg.DagsterInstance, run: dg.DagsterRun) -> RunProcess:
    """Where the run's process is, and whether it is alive."""
    record = instance.get_run_record_by_id(run.run_id)
    start = record.start_time if record is not None and record.start_time else None
    if start is None and record is not None:
        start = record.create_timestamp.timestamp()
    started = datetime.fromtimestamp(start, UTC) if start else None
    host = run.tags.get(CLI_HOST_TAG)
    pid = int(run.tags[CLI_PID_TAG]) if CLI_PID_TAG in run.tags else _first_event_pid(instance, run.run_id)
    if pid is None:
        alive = True  # nothing to look at: assume alive, and leave it to run monitoring
    elif host is not None and host != socket.gethostname():
        alive = True  # another machine's process cannot be looked at from here
    else:
        alive = process_alive(pid, not_started_after=start)
    return RunProcess(run.run_id, pid, host, started, alive)


def _first_event_pid(instance: dg.DagsterInstance, run_id: str) -> int | None:
    """The PID on the run's start events: written by the process that executes the run."""
    import dagster as dg

    records = instance.event_log_storage.get_records_for_run(
        run_id, of_type={dg.DagsterEventType.RUN_START, dg.DagsterEventType.STEP_START}, limit=5
    ).records
    for record in records:
        event = record.event_log_entry.dagster_event
        if event is not None and event.pid is not None:
            return event.pid
    return None


def _pool_run_ids(instance: dg.DagsterInstance) -> set[str]:
    info = instance.event_log_storage.get_concurrency_info(DUCKDB_WRITER_POOL)
    return {slot.run_id for slot in info.claimed_slots} | {step.run_id for step in info.pending_steps}


def _live_pool_holders(instance: dg.DagsterInstance) -> list[RunProcess]:
    info = instance.event_log_storage.get_concurrency_info(DUCKDB_WRITER_POOL)
    holders = []
    for run_id in sorted({slot.run_id for slot in info.claimed_slots}):
        run = instance.get_run_by_id(run_id)
        if run is not None and not run.is_finished:
            holders.append(run_process(instance, run))
    return [holder for holder in holders if holder.alive]


def _stop_orphaned_dbt(run: dg.DagsterRun) -> str:
    """A dead run's `dbt build` keeps running on its own and holds the warehouse: stop it (SIGTERM, then SIGKILL)."""
    if DBT_PID_TAG not in run.tags:
        return ""
    pid = int(run.tags[DBT_PID_TAG])
    if not process_alive(pid) or "dbt" not in _command_line(pid):
        return ""
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + DBT_STOP_SECONDS
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if process_alive(pid):
        os.kill(pid, signal.SIGKILL)
        while process_alive(pid):
            time.sleep(0.1)
    return f", and the dbt build it left running (PID {pid}) was stopped"


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
