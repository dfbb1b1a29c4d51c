"""Is every source delivering as often as it should? `audit.freshness`, from the registry's cadences.

Each billing source declares `delivery_cadence`, the longest expected gap between two deliveries.
`audit.delivery_cadence` holds those declarations (rewritten from the registry whenever the view is
ensured) and the view `audit.freshness` compares them with the last load in `audit.loads`:
a source is late once its last delivery plus its cadence lies in the past. A source that never
delivered is `never delivered` (an organisation need not use every source), not late. The view shows
no clock time of its own, so the warehouse's contents only change when a delivery does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

import duckdb

from pipelines.lib.warehouse import RawTable, ensure_tables


class DeliveredSource(Protocol):
    """Anything delivered into a raw table on a cadence: a billing source today, a feed later."""

    name: str
    raw_table: RawTable
    delivery_cadence: timedelta


FRESHNESS_VIEW = """
CREATE OR REPLACE VIEW audit.freshness AS
WITH last_load AS (
    SELECT source, max(loaded_at) AS last_delivery, count(*) AS loads
    FROM audit.loads
    GROUP BY source
),
now_utc AS (
    SELECT CAST(current_timestamp AT TIME ZONE 'UTC' AS TIMESTAMP) AS checked_at
)
SELECT
    c.source,
    c.raw_table,
    c.delivery_cadence,
    l.last_delivery,
    l.last_delivery + c.delivery_cadence AS expected_by,
    CASE WHEN l.last_delivery IS NULL THEN NULL ELSE l.last_delivery + c.delivery_cadence < n.checked_at END AS late,
    CASE
        WHEN l.last_delivery IS NULL THEN 'never delivered'
        WHEN l.last_delivery + c.delivery_cadence < n.checked_at THEN 'late'
        ELSE 'on time'
    END AS status,
    coalesce(l.loads, 0) AS loads
FROM audit.delivery_cadence AS c
CROSS JOIN now_utc AS n
LEFT JOIN last_load AS l USING (source)
"""


@dataclass(frozen=True)
class Freshness:
    source: str
    raw_table: str
    delivery_cadence: timedelta
    last_delivery: datetime | None
    expected_by: datetime | None
    late: bool | None
    status: str
    loads: int


def ensure_freshness_view(con: duckdb.DuckDBPyConnection, sources: Iterable[DeliveredSource]) -> None:
    """Write each source's cadence into audit.delivery_cadence and (re)create audit.freshness over audit.loads."""
    sources = list(sources)
    for source in sources:
        ensure_tables(con, source.raw_table)  # audit.loads too, before the first delivery ever
    con.begin()
    try:
        con.execute(
            "CREATE TABLE IF NOT EXISTS audit.delivery_cadence ("
            "source VARCHAR PRIMARY KEY, raw_table VARCHAR NOT NULL, delivery_cadence INTERVAL NOT NULL)"
        )
        con.execute("DELETE FROM audit.delivery_cadence")
        con.executemany(
            "INSERT INTO audit.delivery_cadence VALUES (?, ?, ?)",
            [[source.name, source.raw_table.name, source.delivery_cadence] for source in sources],
        )
        con.execute(FRESHNESS_VIEW)
    except BaseException:
        con.rollback()
        raise
    con.commit()


def source_freshness(con: duckdb.DuckDBPyConnection, source: str) -> Freshness | None:
    row = con.execute(
        "SELECT source, raw_table, delivery_cadence, last_delivery, expected_by, late, status, loads "
        "FROM audit.freshness WHERE source = ?",
        [source],
    ).fetchone()
    return Freshness(*row) if row else None
