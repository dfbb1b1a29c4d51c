"""Decisions the schedule and sensors make, as plain functions (the Dagster wrappers live in defs/automation).

- `restatement_window`: the days whose data may still change. Providers restate a bill for about two
  weeks after the month ends, so the window is the open billing period and, for the first
  `restatement_days` days of a month, the previous one too.
- `landing_snapshot` / `changed_deliveries`: what the landing sensor's cursor holds (one stat
  fingerprint per delivery) and which deliveries are new or changed since.
- `record_run_failure`: one row in `audit.run_failures` per failed run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

import duckdb

from pipelines.lib.ingest.landing import pending_deliveries
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from sources.common.delivery import Delivery
from sources.common.errors import RejectedInput


def restatement_window(today: date, restatement_days: int) -> tuple[date, date]:
    """(first, last) day, inclusive, to (re)load on `today`: last is yesterday, the last complete day."""
    last = today - timedelta(days=1)
    open_period = today.replace(day=1)
    first = open_period
    previous = (open_period - timedelta(days=1)).replace(day=1)
    if (today - open_period).days < restatement_days or last < open_period:
        first = previous
    return first, last


def days_between(first: date, last: date) -> list[date]:
    return [first + timedelta(days=offset) for offset in range((last - first).days + 1)]


@dataclass(frozen=True)
class LandedDelivery:
    source: str
    name: str
    fingerprint: str
    delivery: Delivery = field(compare=False, repr=False)

    @property
    def key(self) -> str:
        return f"{self.source}/{self.name}"


def landing_snapshot(home: FinopsHome, sources: list[str]) -> list[LandedDelivery]:
    """Every delivery waiting in the landing zone, with a fingerprint of its files' sizes and modification times.

    A stat fingerprint, not a content hash: the sensor runs every few seconds and must stay cheap on
    large exports; the load itself hashes the content and skips a delivery it has loaded before.
    """
    found = []
    for source in sources:
        for delivery in pending_deliveries(home, source):
            paths = [delivery.path] if delivery.path.is_file() else sorted(delivery.path.rglob("*"))
            stats = [
                f"{path.relative_to(delivery.path).as_posix() if path != delivery.path else ''}:"
                f"{path.stat().st_size}:{path.stat().st_mtime_ns}"
                for path in paths
                if path.is_file() and not path.is_symlink()
            ]
            found.append(LandedDelivery(source, delivery.name, "|".join(stats), delivery))
    return found


def changed_deliveries(cursor: str | None, snapshot: list[LandedDelivery]) -> tuple[list[LandedDelivery], str]:
    """The deliveries new or changed since `cursor`, and the cursor to store (the whole snapshot)."""
    seen: dict[str, str] = json.loads(cursor) if cursor else {}
    changed = [delivery for delivery in snapshot if seen.get(delivery.key) != delivery.fingerprint]
    return changed, json.dumps({delivery.key: delivery.fingerprint for delivery in snapshot}, sort_keys=True)


def already_loaded(home: FinopsHome, candidates: list[LandedDelivery]) -> set[str]:
    """Keys of the candidates whose exact content is in audit.loads (loaded by the CLI or a scheduled run).

    Only candidates are hashed (new or changed since the last tick), so this stays cheap. Raises
    WarehouseBusy while a load holds the warehouse; the sensor then tries again on its next tick.
    """
    if not candidates or not home.warehouse.exists():
        return set()
    hashes: dict[str, tuple[str, str]] = {}
    for candidate in candidates:
        try:
            hashes[candidate.key] = (candidate.source, candidate.delivery.sha256())
        except RejectedInput:
            continue  # e.g. a link out of the delivery: the load rejects and quarantines it
    if not hashes:
        return set()
    with connect(home.warehouse, read_only=True) as con:
        audited = con.execute(
            "select count(*) from information_schema.tables where table_schema = 'audit' and table_name = 'loads'"
        ).fetchone()[0]
        if not audited:
            return set()
        loaded = set(
            con.execute(
                "select source, sha256 from audit.loads where status <> 'withheld' and (source, sha256) in "
                "(select unnest(?::varchar[]), unnest(?::varchar[]))",
                [[source for source, _ in hashes.values()], [sha for _, sha in hashes.values()]],
            ).fetchall()
        )
    return {key for key, pair in hashes.items() if pair in loaded}


def record_run_failure(
    con: duckdb.DuckDBPyConnection,
    *,
    run_id: str,
    job_name: str,
    failed_at: datetime,
    failed_steps: list[str],
    message: str,
    tags: dict[str, str],
) -> None:
    """One row per failed run (a sensor retry of the same run replaces its row)."""
    con.execute("CREATE SCHEMA IF NOT EXISTS audit")
    con.execute(
        """
        CREATE TABLE IF NOT EXISTS audit.run_failures (
            run_id VARCHAR PRIMARY KEY,
            job_name VARCHAR NOT NULL,
            failed_at TIMESTAMP NOT NULL,
            failed_steps VARCHAR NOT NULL,
            message VARCHAR NOT NULL,
            tags VARCHAR NOT NULL,
            recorded_at TIMESTAMP NOT NULL
        )
        """
    )
    con.execute(
        "INSERT OR REPLACE INTO audit.run_failures VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            run_id,
            job_name,
            failed_at.astimezone(UTC).replace(tzinfo=None) if failed_at.tzinfo else failed_at,
            json.dumps(failed_steps),
            message,
            json.dumps(tags, sort_keys=True),
            datetime.now(UTC).replace(tzinfo=None),
        ],
    )
