"""`audit.builds`: one row per `dbt build` of the models, so a run can tell that the last one never finished.

The dbt asset writes a `started` row before dbt starts and sets it to `succeeded` or `failed` (or
`interrupted`, on SIGTERM or Ctrl-C) when dbt ends. A process killed with SIGKILL leaves its row at
`started`; the next build marks such rows `interrupted` (only one writer runs at a time, so a `started`
row found then belongs to a process that is gone). `rebuild_reason` is what the CLI asks before it skips
a rebuild because no delivery was new.

Each row also records what the build covered (`scope`: `full`, every model, or `changed`, what changed since the
last one), the state of the project it built and the day it ran on: the next build plans against the last
successful one (build_plan.py).
"""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb

from pipelines.lib.catalog.billing import BILLING_SOURCES
from pipelines.lib.warehouse.connection import connect

STATUSES = ("started", "succeeded", "failed", "interrupted")


def ensure_builds_table(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE SCHEMA IF NOT EXISTS audit")
    con.execute(
        """
        CREATE TABLE IF NOT EXISTS audit.builds (
            build_id VARCHAR PRIMARY KEY,
            run_id VARCHAR,
            command VARCHAR NOT NULL,
            status VARCHAR NOT NULL,
            started_at TIMESTAMP NOT NULL,
            finished_at TIMESTAMP,
            message VARCHAR
        )
        """
    )
    # Warehouses from before build plans: their builds were full builds of an unknown project state.
    con.execute("ALTER TABLE audit.builds ADD COLUMN IF NOT EXISTS scope VARCHAR DEFAULT 'full'")
    con.execute("ALTER TABLE audit.builds ADD COLUMN IF NOT EXISTS project_state VARCHAR")
    con.execute("ALTER TABLE audit.builds ADD COLUMN IF NOT EXISTS run_date DATE")


def start_build(
    con: duckdb.DuckDBPyConnection,
    *,
    run_id: str | None,
    command: str,
    scope: str = "full",
    project_state: str | None = None,
    run_date: date | None = None,
) -> str:
    """Record a build about to start; earlier builds still `started` are marked `interrupted`."""
    ensure_builds_table(con)
    now = _now()
    build_id = str(uuid.uuid4())
    con.begin()
    con.execute(
        "UPDATE audit.builds SET status = 'interrupted', message = 'the process ended before dbt finished' "
        "WHERE status = 'started'"
    )
    con.execute(
        "INSERT INTO audit.builds (build_id, run_id, command, status, started_at, scope, project_state, run_date) "
        "VALUES (?, ?, ?, 'started', ?, ?, ?, ?)",
        [build_id, run_id, command, now, scope, project_state, run_date],
    )
    con.commit()
    return build_id


def finish_build(con: duckdb.DuckDBPyConnection, build_id: str, *, status: str, message: str | None = None) -> None:
    if status not in STATUSES[1:]:
        raise ValueError(f"a build ends as one of {STATUSES[1:]}, not {status!r}")
    con.execute(
        "UPDATE audit.builds SET status = ?, finished_at = ?, message = ? WHERE build_id = ?",
        [status, _now(), message, build_id],
    )


def rebuild_reason(con: duckdb.DuckDBPyConnection, raw_tables: list[str]) -> str | None:
    """Why the models need a build although no delivery is new, or None when the last build covers every load.

    A build is owed when the last one did not succeed, or when a load of `raw_tables` was committed after
    the last successful build started (the run was killed between the load and the build).
    """
    tables = {
        name
        for (name,) in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'audit'"
        ).fetchall()
    }
    if "loads" not in tables:
        return None
    last_load = con.execute(
        "SELECT max(loaded_at) FROM audit.loads WHERE raw_table IN (SELECT unnest(?::VARCHAR[]))", [raw_tables]
    ).fetchall()[0][0]
    builds = (
        con.execute("SELECT status, started_at FROM audit.builds ORDER BY started_at DESC LIMIT 1").fetchall()
        if "builds" in tables
        else []
    )
    if builds and builds[0][0] != "succeeded":
        status, started_at = builds[0]
        how = {"started": "never finished (its process died)", "interrupted": "was interrupted", "failed": "failed"}
        return f"the last model build (started {started_at:%Y-%m-%d %H:%M:%S} UTC) {how.get(status, status)}"
    if last_load is None:
        return None
    if not builds:
        return "no model build has succeeded since data was loaded"
    if last_load > builds[0][1]:
        return f"data loaded at {last_load:%Y-%m-%d %H:%M:%S} UTC is newer than the last successful model build"
    return None


def owed_build(warehouse: Path) -> str | None:
    """`rebuild_reason` for the billing sources' raw tables (None before the first load)."""

    if not warehouse.exists():
        return None
    with connect(warehouse, read_only=True) as con:
        return rebuild_reason(con, [source.raw_table.name for source in BILLING_SOURCES])


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)
