"""Write, audit, publish: a billing load stays withdrawable until a model build accepts it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import duckdb

from pipelines.lib.warehouse.lake import (
    lake_of,
    publish,
    stage_withdrawal,
    unpublished_loads,
    write_parquet,
)
from pipelines.lib.warehouse.tables import AUDIT_COLUMNS
from sources.common.sql import quote_identifier


def withhold_load(con: duckdb.DuckDBPyConnection, load_id: str, why: dict[str, Any]) -> None:
    """Take an unpublished billing load back out of raw, restoring what it replaced, and record why (`why`: the
    columns of audit.withheld_loads the caller knows, model, rule, first failing row, message), in one commit."""
    lake = lake_of(con)
    source, delivery = con.execute("SELECT source, delivery FROM audit.loads WHERE load_id = ?", [load_id]).fetchone()
    staging = stage_withdrawal(lake, load_id)
    columns = AUDIT_COLUMNS["audit.withheld_loads"]
    recorded = {"load_id": load_id, "source": source, "delivery": delivery, "withheld_at": _now_utc()} | {
        name: value for name, value in why.items() if name not in ("load_id", "source", "delivery", "withheld_at")
    }
    values = [recorded.get(name) for name in columns]
    selected = ", ".join(f"?::{sql_type} AS {quote_identifier(name)}" for name, sql_type in columns.items())
    try:
        write_parquet(con, f"SELECT {selected}", staging.file(f"audit/withheld_loads/{load_id}.parquet"), values)
    except BaseException:
        staging.abandon()
        raise
    staging.commit()


def unpublished_load_ids(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Billing loads in raw that no successful model build has accepted yet (the ones a build may withhold)."""
    return unpublished_loads(lake_of(con))


def publish_loads(con: duckdb.DuckDBPyConnection, load_ids: Sequence[str]) -> None:
    """The models accepted these loads: they can no longer be withheld."""
    publish(lake_of(con), load_ids)


def _now_utc() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)
