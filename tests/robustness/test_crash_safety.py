"""A load killed with SIGKILL mid-transaction, a second writer while the warehouse is busy, restatement audit.

The load runs in a child process that the test hook (pipelines/lib/foundation/failpoints.py, phase `committing`) holds
just before COMMIT: the old rows are deleted and the new ones inserted, inside the open transaction.
Killing it there is the worst moment; the warehouse must come back exactly as it was.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.lib.catalog.billing import FOCUS
from pipelines.lib.foundation.failpoints import PAUSE_AT_ENV
from pipelines.lib.foundation.processes import process_alive
from pipelines.lib.ingest.landing import register
from pipelines.lib.operations import recovery
from pipelines.lib.operations.recovery import CLI_HOST_TAG, CLI_PID_TAG, DBT_PID_TAG
from pipelines.lib.settings import DUCKDB_WRITER_POOL, PROJECT_ROOT, FinopsHome
from pipelines.lib.warehouse.connection import WarehouseBusy, connect
from tests.support.focus_fixtures import focus_rows, write_csv
from tests.support.focus_ingest import OCTOBER, SEPTEMBER, ingest_focus
from tests.support.home_helpers import isolated_home
from tests.support.paused_child import kill_now, start_paused, start_paused_focus_ingest
from tests.support.warehouse_helpers import add_lake_rows, query, table_fingerprint, warehouse_contents


@pytest.fixture
def home(tmp_path: Path) -> FinopsHome:
    return FinopsHome(tmp_path / "home").create_folders()


def billed_by_period(home: FinopsHome) -> dict[str, Decimal]:
    sql = "select strftime(BillingPeriodStart, '%Y-%m'), sum(BilledCost) from raw.focus_cost_and_usage group by 1"
    return dict(query(home.warehouse, sql))


def test_sigkill_inside_the_transaction_leaves_the_warehouse_as_it_was(home: FinopsHome, tmp_path: Path):
    register(home, "focus", write_csv(tmp_path / "sep.csv", focus_rows(SEPTEMBER | {"BilledCost": "1"})))
    assert [r.status for r in ingest_focus(home)] == ["loaded"]
    before = table_fingerprint(home.warehouse)

    # A restatement of September plus October: the killed transaction had deleted and inserted rows.
    restated = write_csv(
        tmp_path / "sep-oct.csv",
        focus_rows(SEPTEMBER | {"BilledCost": "5"}, SEPTEMBER | {"BilledCost": "6"}, OCTOBER | {"BilledCost": "7"}),
    )
    register(home, "focus", restated)
    child = start_paused_focus_ingest(home, "committing", tmp_path / "inside-transaction")

    # While the child holds the warehouse, a second writer is refused with a plain message naming the file.
    with pytest.raises(WarehouseBusy) as busy, connect(home.warehouse):
        pass
    assert str(home.warehouse) in str(busy.value) and "locked by another process" in str(busy.value)

    kill_now(child)

    assert table_fingerprint(home.warehouse) == before
    assert billed_by_period(home) == {"2026-09": Decimal(1)}

    # Rerun: the delivery (still in the landing zone) loads exactly once.
    assert [r.status for r in ingest_focus(home)] == ["duplicate", "loaded"]
    assert billed_by_period(home) == {"2026-09": Decimal(11), "2026-10": Decimal(7)}
    assert query(home.warehouse, "select count(*) from raw.focus_cost_and_usage") == [(3,)]
    after_rerun = table_fingerprint(home.warehouse)
    assert [r.status for r in ingest_focus(home)] == ["duplicate", "duplicate"]
    assert table_fingerprint(home.warehouse) == after_rerun
    loads = query(home.warehouse, "select status, row_count from audit.loads order by loaded_at")
    assert loads == [("superseded", 1), ("loaded", 3)]


def test_cli_reports_a_busy_warehouse_plainly(home: FinopsHome, tmp_path: Path):
    register(home, "focus", write_csv(tmp_path / "sep.csv", focus_rows(SEPTEMBER)))
    child = start_paused_focus_ingest(home, "committing", tmp_path / "inside-transaction")
    try:
        env = os.environ | {"FINOPS_HOME": str(home.root)}
        env.pop(PAUSE_AT_ENV, None)
        cli = subprocess.run(
            [sys.executable, "-m", "pipelines.cli", "sql", "select 1"],
            cwd=PROJECT_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    assert cli.returncode == 2
    assert cli.stderr.startswith(f"error: the warehouse {home.warehouse} is locked by another process")
    assert "Traceback" not in cli.stderr


def test_restatement_records_rows_and_cost_before_and_after(home: FinopsHome, tmp_path: Path):
    register(
        home,
        "focus",
        write_csv(tmp_path / "v1.csv", focus_rows(SEPTEMBER | {"BilledCost": "1.25"}, OCTOBER | {"BilledCost": "2"})),
    )
    (first,) = ingest_focus(home)
    assert query(home.warehouse, "select count(*) from audit.restatements") == [(0,)]

    register(
        home,
        "focus",
        write_csv(tmp_path / "v2.csv", focus_rows(SEPTEMBER | {"BilledCost": "5"}, SEPTEMBER | {"BilledCost": "6.5"})),
    )
    second = ingest_focus(home)[-1]
    rows = query(
        home.warehouse,
        "select load_id, billing_account_id, strftime(billing_period_start, '%Y-%m'), billing_currency, "
        "replaced_load_ids, rows_before, billed_cost_before, rows_after, billed_cost_after from audit.restatements",
    )
    # Only September was restated: one row before (1.25), two after (5 + 6.5 = 11.5). October is untouched.
    assert rows == [
        (second.load_id, "111122223333", "2026-09", "USD", first.load_id, 1, Decimal("1.25"), 2, Decimal("11.5"))
    ]
    effective = query(home.warehouse, "select effective_cost_before, effective_cost_after from audit.restatements")
    assert effective == [(Decimal("98.32"), Decimal("196.64"))]


# --- the CLI killed at every phase ---------------------------------------------------------------------------
#
# One delivery, ingested once without interruption (the reference warehouse), and once through a chain of runs
# each killed at a later phase; the run after the last kill must finish the work and leave a warehouse equal to
# the reference. Every run in the chain reaching its phase shows the kill before it left nothing wedged (a pool
# slot still claimed, a dbt still holding the warehouse). One chain rather than one home per phase: a dbt build
# of every model takes a minute or two, and the chain needs only one full build.

DELIVERY = "sep.csv"
DELIVERY_ROWS = focus_rows(
    SEPTEMBER | {"BilledCost": "1.25"}, SEPTEMBER | {"BilledCost": "2.5", "EffectiveCost": "0.75"}
)


def cli_env(home: FinopsHome) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("FINOPS_", "DAGSTER_"))}
    return env | {"FINOPS_HOME": str(home.root)}


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "pipelines.cli", *args]


def ingest_command(home: FinopsHome) -> list[str]:
    """`gpu-finops ingest` of the delivery placed in the landing zone under the same name in every home."""
    return cli("ingest", "--source", "focus", str(home.landing_for("focus") / DELIVERY))


def deliver(home: FinopsHome) -> None:
    home.landing_for("focus").mkdir(parents=True, exist_ok=True)
    write_csv(home.landing_for("focus") / DELIVERY, DELIVERY_ROWS)


def run_to_end(command: list[str], home: FinopsHome, timeout: float = 600) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    done = subprocess.run(command, cwd=PROJECT_ROOT, env=cli_env(home), capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done, time.monotonic() - started


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[FinopsHome, float]:
    """The delivery ingested without interruption, and how long that took (a full CLI ingest: only the slow kill
    tests use it, so `make test` never builds it)."""
    home = FinopsHome(tmp_path_factory.mktemp("reference") / "home").create_folders()
    deliver(home)
    _, seconds = run_to_end(ingest_command(home), home)
    return home, seconds


def stop(child: subprocess.Popen, signum: int) -> int:
    os.kill(child.pid, signum)
    return child.wait(timeout=60)


def dagster_runs() -> list:
    """The runs of the Dagster instance the test points DAGSTER_HOME at."""
    import dagster as dg

    with dg.DagsterInstance.get() as instance:
        return instance.get_runs()


def builds(home: FinopsHome) -> list[str]:
    return [status for (status,) in query(home.warehouse, "select status from audit.builds order by started_at")]


JOB_CHILD = """
import os
import sys
import dagster as dg
from pipelines.definitions import defs
from pipelines.lib.settings import Settings

os.environ.update(Settings.from_environment().child_environment())
with dg.DagsterInstance.get() as instance:
    defs().resolve_job_def("load_focus").execute_in_process(instance=instance, raise_on_error=False)
"""


@pytest.mark.slow
def test_every_phase_killed_then_the_next_ingest_finishes_the_work(
    reference: tuple[FinopsHome, float], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    reference_home, reference_seconds = reference
    home = FinopsHome(tmp_path / "home").create_folders()
    monkeypatch.setenv("DAGSTER_HOME", str(home.dagster_home))
    deliver(home)
    env = cli_env(home)
    marker = tmp_path / "phase-reached"

    # A scheduled-style Dagster job run (the landing sensor's job, no CLI tags: its PID is on its events),
    # killed while it reads the delivery and holds the duckdb_writer slot.
    job = start_paused([sys.executable, "-c", JOB_CHILD], "reading", marker, env)
    assert stop(job, signal.SIGKILL) == -signal.SIGKILL

    # Ctrl-C while reading: exit 130, one line saying what was and was not done; nothing is loaded.
    child = start_paused(ingest_command(home), "reading", marker, env)
    assert stop(child, signal.SIGINT) == 130
    said = marker.with_suffix(".err").read_text().strip().splitlines()[-1]
    assert said.startswith("gpu-finops ingest stopped by SIGINT: done: nothing. Not done: loading"), said
    assert "model build" in said

    # Killed inside the load transaction, with SIGKILL and with SIGTERM: rolled back either way.
    child = start_paused(ingest_command(home), "committing", marker, env)
    assert stop(child, signal.SIGKILL) == -signal.SIGKILL
    child = start_paused(ingest_command(home), "committing", marker, env)
    assert stop(child, signal.SIGTERM) == 143
    said = marker.with_suffix(".err").read_text().strip().splitlines()[-1]
    assert said.startswith("gpu-finops ingest stopped by SIGTERM:") and "rolled back" in said, said
    assert query(home.warehouse, "select count(*) from raw.focus_cost_and_usage") == [(0,)]

    # Killed while the quality suite validates the load.
    child = start_paused(ingest_command(home), "validating", marker, env)
    assert stop(child, signal.SIGKILL) == -signal.SIGKILL

    # SIGTERM during the dbt build: dbt is stopped with the run, the build is recorded as interrupted.
    child = start_paused(ingest_command(home), "building", marker, env)
    dbt_pids = {int(run.tags[DBT_PID_TAG]) for run in dagster_runs() if DBT_PID_TAG in run.tags}
    assert stop(child, signal.SIGTERM) == 143
    assert not any(process_alive(pid) for pid in dbt_pids)
    assert builds(home) == ["interrupted"]

    # SIGKILL during the dbt build: the build stays `started`, and its dbt runs on, holding the warehouse,
    # until the next run stops it.
    child = start_paused(ingest_command(home), "building", marker, env)
    orphan = {int(run.tags[DBT_PID_TAG]) for run in dagster_runs() if DBT_PID_TAG in run.tags} - dbt_pids
    assert stop(child, signal.SIGKILL) == -signal.SIGKILL
    assert len(orphan) == 1 and process_alive(*orphan)

    # The same command again finishes the work: no delivery is new, but the unfinished build is redone.
    done, seconds = run_to_end(ingest_command(home), home)
    assert "Rebuilding the models: the last model build" in done.stdout
    assert "Recovered from a crash" in done.stdout
    # Not wedged: about as long as the uninterrupted run (the machine's load varies, so with a margin).
    assert seconds < reference_seconds * 1.5 + 60, (seconds, reference_seconds)
    assert not process_alive(*orphan)
    # The killed build was found `started` and marked interrupted by the build that finished the work.
    assert builds(home) == ["interrupted", "interrupted", "succeeded"]

    assert warehouse_contents(home.warehouse) == warehouse_contents(reference_home.warehouse)
    # Money, independently: 1.25 + 2.5 billed, 98.32 + 0.75 effective, in raw and in the FOCUS mart.
    for table in ("raw.focus_cost_and_usage", "marts.focus_cost_and_usage"):
        assert query(home.warehouse, f"select sum(BilledCost), sum(EffectiveCost) from {table}") == [
            (Decimal("3.75"), Decimal("99.07"))
        ]
    # Every run is finished, none holds a slot: the pool is free for the next writer.
    import dagster as dg

    with dg.DagsterInstance.get() as instance:
        assert all(run.is_finished for run in instance.get_runs())
        assert instance.event_log_storage.get_concurrency_info(DUCKDB_WRITER_POOL).claimed_slots == []


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_killed_focus_export_leaves_no_half_file_and_the_next_one_writes_it_whole(
    reference: tuple[FinopsHome, float], tmp_path: Path, signum: int
):
    reference_home, _ = reference
    expected = tmp_path / "expected"
    run_to_end(cli("export", "focus", str(expected)), reference_home)

    home = FinopsHome(tmp_path / "home").create_folders()
    shutil.copyfile(reference_home.warehouse, home.warehouse)
    target = tmp_path / "export"
    child = start_paused(cli("export", "focus", str(target)), "exporting", tmp_path / "exporting", cli_env(home))
    assert sorted(path.name for path in target.iterdir()) == [
        f".focus_cost_and_usage.csv.{child.pid}.tmp",
        f".focus_cost_and_usage.parquet.{child.pid}.tmp",
    ]
    assert stop(child, signum) == (-signal.SIGKILL if signum == signal.SIGKILL else 143)
    # No file under the final name: a reader never opens half an export.
    assert not any(path.name.startswith("focus") for path in target.iterdir())

    run_to_end(cli("export", "focus", str(target)), home)
    assert sorted(path.name for path in target.iterdir()) == [
        "focus_cost_and_usage.csv",
        "focus_cost_and_usage.parquet",
    ]
    assert (target / "focus_cost_and_usage.csv").read_bytes() == (expected / "focus_cost_and_usage.csv").read_bytes()
    assert pq.read_table(target / "focus_cost_and_usage.parquet").equals(
        pq.read_table(expected / "focus_cost_and_usage.parquet")
    )


# --- the pool: live runs waited for, dead ones reclaimed (no dbt, seconds) ------------------------------------


def holding_run(instance, run_id: str, pid: int):
    """A CLI run recorded as started, with `pid` as its process, holding the duckdb_writer slot."""
    import dagster as dg
    from dagster._core.storage.dagster_run import DagsterRun

    tags = {CLI_PID_TAG: str(pid), CLI_HOST_TAG: socket.gethostname()}
    instance.add_run(DagsterRun(job_name="load_focus", run_id=run_id, status=dg.DagsterRunStatus.STARTED, tags=tags))
    instance.event_log_storage.initialize_concurrency_limit_to_default(DUCKDB_WRITER_POOL)
    claim = instance.event_log_storage.claim_concurrency_slot(DUCKDB_WRITER_POOL, run_id, "raw__focus_cost_and_usage")
    assert claim.is_claimed


def test_a_live_run_is_waited_for_by_name_and_reclaimed_once_its_process_dies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import dagster as dg

    isolated_home(tmp_path, monkeypatch)
    monkeypatch.setattr(recovery, "WAIT_MESSAGE_SECONDS", 1)
    monkeypatch.setattr(recovery, "POLL_SECONDS", 0.2)
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    said: list[str] = []
    with dg.DagsterInstance.get() as instance:
        holding_run(instance, "live-run", holder.pid)
        killer = threading.Timer(2.5, lambda: os.kill(holder.pid, signal.SIGKILL))
        killer.start()
        started = time.monotonic()
        reclaimed = recovery.prepare_instance(instance, said.append)
        waited = time.monotonic() - started
        holder.wait()
        assert [process.run_id for process in reclaimed] == ["live-run"]
        assert instance.get_run_by_id("live-run").status == dg.DagsterRunStatus.FAILURE
        assert instance.event_log_storage.get_concurrency_info(DUCKDB_WRITER_POOL).claimed_slots == []
    # Waited while the process lived, saying so once a (here: shortened) minute, naming run, PID and start.
    assert 2.5 <= waited < 30
    waiting = [line for line in said if line.startswith("Waiting for run live-run")]
    assert 2 <= len(waiting) <= waited / recovery.WAIT_MESSAGE_SECONDS + 1, said
    assert f"(PID {holder.pid} on {socket.gethostname()}, running since " in waiting[0]
    assert said[-1].startswith("Recovered from a crash: run live-run") and "its pool slot freed" in said[-1]


def test_a_run_whose_pid_now_belongs_to_a_newer_process_is_dead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """PIDs are reused: a live process that started after the run did is not the run's process."""
    import dagster as dg

    isolated_home(tmp_path, monkeypatch)
    with dg.DagsterInstance.get() as instance:
        holding_run(instance, "old-run", os.getpid())
        time.sleep(1.5)
        newer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        try:
            instance.add_run_tags("old-run", {CLI_PID_TAG: str(newer.pid)})
            assert [process.run_id for process in recovery.reclaim_dead_runs(instance, lambda line: None)] == [
                "old-run"
            ]
            assert newer.poll() is None
        finally:
            newer.kill()
            newer.wait()
        assert instance.get_run_by_id("old-run").status == dg.DagsterRunStatus.FAILURE
        assert instance.event_log_storage.get_concurrency_info(DUCKDB_WRITER_POOL).claimed_slots == []


def test_a_build_is_owed_after_a_crash_until_one_succeeds_after_the_last_billing_load(tmp_path: Path):
    import duckdb

    from pipelines.lib.transform.builds import finish_build, rebuild_reason, start_build
    from pipelines.lib.warehouse.tables import recover_and_ensure_tables

    con = duckdb.connect(str(tmp_path / "warehouse.duckdb"))
    billing = ["raw.focus_cost_and_usage"]
    assert rebuild_reason(con, billing) is None  # a new warehouse: nothing loaded, nothing owed
    recover_and_ensure_tables(con, FOCUS.raw_table)

    def load(table: str) -> None:
        add_lake_rows(
            con,
            "audit.loads",
            "select uuid()::varchar as load_id, 'x' as source, ? as raw_table, 'd' as delivery, 'sha' as sha256, "
            "1 as row_count, 0 as replaced_row_count, '[]' as billing_periods, '{}' as cost_totals, "
            "?::timestamp as loaded_at, '' as replaced_load_ids",
            [table, datetime.now(UTC).replace(tzinfo=None)],
        )
        time.sleep(0.01)

    load("raw.focus_cost_and_usage")
    assert rebuild_reason(con, billing) == "no model build has succeeded since data was loaded"
    first = start_build(con, run_id="r1", command="dbt build")
    assert "never finished (its process died)" in rebuild_reason(con, billing)  # killed: still `started`
    second = start_build(con, run_id="r2", command="dbt build")
    assert con.execute("select status from audit.builds where build_id = ?", [first]).fetchall() == [("interrupted",)]
    finish_build(con, second, status="failed", message="a test failed")
    assert rebuild_reason(con, billing).endswith(" failed")
    finish_build(con, start_build(con, run_id="r3", command="dbt build"), status="succeeded")
    assert rebuild_reason(con, billing) is None
    load("raw.price_observations")  # a price load is not the billing ingest's to rebuild for
    assert rebuild_reason(con, billing) is None
    load("raw.focus_cost_and_usage")  # committed, then killed before its build
    assert "is newer than the last successful model build" in rebuild_reason(con, billing)
