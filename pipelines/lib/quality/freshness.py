"""Is every source delivering as often as it should? `audit.freshness`, from the registry's cadences.

Each source declares `delivery_cadence`, the longest expected gap between two deliveries, and
`delivery_grace`, the slack after it. `audit.delivery_cadence` holds those declarations (rewritten
whenever the view is ensured) and the view `audit.freshness` compares them with the last delivery:
a source is late once its last delivery plus cadence plus grace lies in the past.

What "last delivery" means depends on the source. A billing file is fresh when it arrived, so its
last load in `audit.loads` counts. A price feed or telemetry is fresh when its data is: a feed that
reloads an old capture every day (offline, or a provider serving a stale file) is not delivering,
so its newest `observed_at` / `sampled_at` counts (`LastObserved`). A source that never delivered
is `never delivered` (an organisation need not use every source), not late. The view shows no clock
time of its own, so the warehouse's contents only change when a delivery does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

import duckdb

from pipelines.lib.catalog.facts import LastObserved
from pipelines.lib.catalog.tables import RawTable, ReferenceTable
from pipelines.lib.quality.results import ensure_quality_table
from pipelines.lib.warehouse.tables import recover_and_ensure_tables
from sources.common.sql import quote_identifier


class DeliveredSource(Protocol):
    """Anything delivered into a raw table on a cadence: a billing source, a price feed, telemetry."""

    name: str
    raw_table: RawTable | ReferenceTable
    delivery_cadence: timedelta
    delivery_grace: timedelta
    observed: LastObserved | None


FRESHNESS_VIEW = """
CREATE OR REPLACE VIEW audit.freshness AS
WITH last_load AS (
    SELECT source, max(loaded_at) AS last_load, count(*) AS loads
    FROM audit.loads
    GROUP BY source
),
last_observed AS (
{observed}
),
now_utc AS (
    SELECT CAST(current_timestamp AT TIME ZONE 'UTC' AS TIMESTAMP) AS checked_at
),
delivered AS (
    SELECT
        c.*,
        CASE WHEN c.measured_by = 'load' THEN l.last_load ELSE o.last_observed END AS last_delivery,
        coalesce(l.loads, 0) AS loads
    FROM audit.delivery_cadence AS c
    LEFT JOIN last_load AS l USING (source)
    LEFT JOIN last_observed AS o USING (source)
)
SELECT
    d.source,
    d.raw_table,
    d.delivery_cadence,
    d.last_delivery,
    d.last_delivery + d.delivery_cadence + d.delivery_grace AS expected_by,
    CASE
        WHEN d.last_delivery IS NULL THEN NULL
        ELSE d.last_delivery + d.delivery_cadence + d.delivery_grace < n.checked_at
    END AS late,
    CASE
        WHEN d.last_delivery IS NULL THEN 'never delivered'
        WHEN d.last_delivery + d.delivery_cadence + d.delivery_grace < n.checked_at THEN 'late'
        ELSE 'on time'
    END AS status,
    d.loads,
    d.delivery_grace,
    d.measured_by
FROM delivered AS d
CROSS JOIN now_utc AS n
"""


SOURCE_STATUS_VIEW = """
CREATE OR REPLACE VIEW audit.source_status AS
WITH live_loads AS (
    SELECT source, count(*) AS live_loads, max(loaded_at) AS last_loaded_at
    FROM audit.loads
    WHERE status = 'loaded'
    GROUP BY source
),
latest_check AS (
    SELECT load_id, max(checked_at) AS checked_at FROM audit.quality_results GROUP BY load_id
),
failed_in_raw AS (
    SELECT l.source, q.load_id, q.severity, q.description
    FROM audit.quality_results AS q
    JOIN latest_check USING (load_id, checked_at)
    JOIN audit.loads AS l USING (load_id)
    WHERE l.status = 'loaded' AND NOT q.passed
),
withheld_keys AS (
    SELECT w.load_id, w.source, l.loaded_at, t.billing_account_id, t.billing_period_start
    FROM audit.withheld_loads AS w
    JOIN audit.loads AS l USING (load_id)
    JOIN audit.load_totals AS t USING (load_id)
),
-- A withheld delivery stops being news once later deliveries of its source carried every key it carried (a later
-- one withheld in turn is the news then).
outstanding AS (
    SELECT DISTINCT k.load_id
    FROM withheld_keys AS k
    WHERE NOT EXISTS (
        SELECT 1
        FROM audit.loads AS later
        JOIN audit.load_totals AS later_keys USING (load_id)
        WHERE later.source = k.source AND later.loaded_at > k.loaded_at
          AND later_keys.billing_account_id = k.billing_account_id
          AND later_keys.billing_period_start = k.billing_period_start
    )
),
withheld_by_source AS (
    SELECT
        source,
        count(*) AS loads_withheld,
        string_agg(delivery || ' REJECTED by model rule ' || message, '; ' ORDER BY withheld_at) AS withheld_why
    FROM audit.withheld_loads
    WHERE load_id IN (SELECT load_id FROM outstanding)
    GROUP BY source
),
by_source AS (
    SELECT
        source,
        count(DISTINCT CASE WHEN severity = 'error' THEN load_id END) AS loads_failing,
        count(DISTINCT CASE WHEN severity <> 'error' THEN load_id END) AS loads_with_warnings,
        string_agg(DISTINCT CASE WHEN severity = 'error' THEN description END, '; ') AS failing_rules,
        string_agg(DISTINCT CASE WHEN severity <> 'error' THEN description END, '; ') AS warning_rules
    FROM failed_in_raw
    GROUP BY source
)
SELECT
    f.source,
    f.raw_table,
    CASE
        WHEN coalesce(b.loads_failing, 0) > 0 THEN 'failing'
        WHEN coalesce(w.loads_withheld, 0) > 0 THEN 'stale'
        WHEN f.status = 'late' THEN 'stale'
        WHEN f.status = 'never delivered' THEN 'never delivered'
        WHEN coalesce(b.loads_with_warnings, 0) > 0 THEN 'ok, with warnings'
        ELSE 'ok'
    END AS status,
    CASE
        WHEN coalesce(b.loads_failing, 0) > 0
            THEN b.loads_failing || ' load(s) in raw fail: ' || b.failing_rules
        WHEN coalesce(w.loads_withheld, 0) > 0
            THEN w.loads_withheld || ' delivery(ies) withheld, the marts show the source without them: '
                 || w.withheld_why
        WHEN f.status = 'late'
            THEN 'no delivery since ' || strftime(f.last_delivery, '%Y-%m-%d %H:%M') || ' UTC, expected by '
                 || strftime(f.expected_by, '%Y-%m-%d %H:%M') || ' UTC'
        WHEN coalesce(b.loads_with_warnings, 0) > 0
            THEN b.loads_with_warnings || ' load(s) in raw carry warnings: ' || b.warning_rules
    END AS why,
    f.last_delivery,
    f.expected_by,
    coalesce(l.live_loads, 0) AS live_loads,
    coalesce(b.loads_failing, 0) AS loads_failing,
    coalesce(b.loads_with_warnings, 0) AS loads_with_warnings,
    coalesce(w.loads_withheld, 0) AS loads_withheld,
    b.failing_rules,
    b.warning_rules
FROM audit.freshness AS f
LEFT JOIN live_loads AS l USING (source)
LEFT JOIN by_source AS b USING (source)
LEFT JOIN withheld_by_source AS w USING (source)
"""
"""One row per source: `ok`, `ok, with warnings`, `stale` (late, or a delivery the models withheld that no later
delivery has replaced), `failing` (a load in raw breaks an error rule: only loads no quality gate saw can) or
`never delivered`, and why. Deliveries the quality gate rejected are not here: they never reach the warehouse
(see FINOPS_HOME/quarantine)."""


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
    delivery_grace: timedelta
    measured_by: str
    """`load` (the last load in audit.loads) or the raw column whose newest value counts, e.g. `observed_at`."""


def _observed_sql(sources: list[DeliveredSource]) -> str:
    selects = sorted(
        {
            f"    SELECT {source.observed.source_sql} AS source, "
            f"max(CAST({quote_identifier(source.observed.column)} AS TIMESTAMP)) AS last_observed "
            f"FROM {source.raw_table.name} GROUP BY 1"
            for source in sources
            if source.observed is not None
        }
    )
    return "\n    UNION ALL\n".join(selects) or "    SELECT NULL::VARCHAR AS source, NULL::TIMESTAMP AS last_observed"


def ensure_freshness_view(con: duckdb.DuckDBPyConnection, sources: Iterable[DeliveredSource]) -> None:
    """Write each source's cadence into audit.delivery_cadence and (re)create audit.freshness over its deliveries."""
    sources = list(sources)
    for source in sources:
        recover_and_ensure_tables(con, source.raw_table)  # audit.loads too, before the first delivery ever
    con.begin()
    try:
        con.execute("DROP VIEW IF EXISTS audit.source_status")
        con.execute("DROP VIEW IF EXISTS audit.freshness")
        con.execute("DROP TABLE IF EXISTS audit.delivery_cadence")
        con.execute(
            "CREATE TABLE audit.delivery_cadence (source VARCHAR PRIMARY KEY, raw_table VARCHAR NOT NULL, "
            "delivery_cadence INTERVAL NOT NULL, delivery_grace INTERVAL NOT NULL, measured_by VARCHAR NOT NULL)"
        )
        con.executemany(
            "INSERT INTO audit.delivery_cadence VALUES (?, ?, ?, ?, ?)",
            [
                [
                    source.name,
                    source.raw_table.name,
                    source.delivery_cadence,
                    source.delivery_grace,
                    source.observed.column if source.observed else "load",
                ]
                for source in sources
            ],
        )
        con.execute(FRESHNESS_VIEW.format(observed=_observed_sql(sources)))
        ensure_quality_table(con)
        con.execute(SOURCE_STATUS_VIEW)
    except BaseException:
        con.rollback()
        raise
    con.commit()


def source_freshness(con: duckdb.DuckDBPyConnection, source: str) -> Freshness | None:
    row = con.execute(
        "SELECT source, raw_table, delivery_cadence, last_delivery, expected_by, late, status, loads, "
        "delivery_grace, measured_by FROM audit.freshness WHERE source = ?",
        [source],
    ).fetchone()
    return Freshness(*row) if row else None
