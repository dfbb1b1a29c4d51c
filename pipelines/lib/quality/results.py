"""Every result of a suite, kept in `audit.quality_results`, and the warnings the loads now in raw carry."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

import duckdb
import polars as pl

from sources.common.row_checks import ERROR


@dataclass(frozen=True)
class QualityResult:
    load_id: str
    source: str
    raw_table: str
    expectation: str
    column_name: str | None
    description: str
    observed_value: str
    unexpected_count: int | None
    element_count: int | None
    passed: bool
    checked_at: datetime
    run_id: str | None = None
    severity: str = ERROR
    """`error` (a failure rejects the delivery) or `warning` (recorded; the delivery loads)."""
    example_file: str | None = None
    example_row: int | None = None
    """The first failing row's file and row number, where the raw table records them."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"checked_at": self.checked_at.isoformat(timespec="seconds")}


@dataclass(frozen=True)
class QualityReport:
    """The loads one check validated and every expectation's result."""

    source: str
    checked_loads: list[str]
    results: list[QualityResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def failures(self) -> list[QualityResult]:
        """Failed error-severity expectations: what would have rejected the delivery."""
        return [result for result in self.results if not result.passed and result.severity == ERROR]

    @property
    def warnings(self) -> list[QualityResult]:
        return [result for result in self.results if not result.passed and result.severity != ERROR]


QUALITY_RESULTS_DDL = """
CREATE TABLE IF NOT EXISTS audit.quality_results (
    load_id VARCHAR NOT NULL,
    source VARCHAR NOT NULL,
    raw_table VARCHAR NOT NULL,
    expectation VARCHAR NOT NULL,
    column_name VARCHAR,
    description VARCHAR NOT NULL,
    observed_value VARCHAR NOT NULL,
    unexpected_count BIGINT,
    element_count BIGINT,
    passed BOOLEAN NOT NULL,
    checked_at TIMESTAMP NOT NULL,
    run_id VARCHAR,
    severity VARCHAR NOT NULL DEFAULT 'error',
    example_file VARCHAR,
    example_row BIGINT
)
"""


def ensure_quality_table(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE SCHEMA IF NOT EXISTS audit")
    con.execute(QUALITY_RESULTS_DDL)
    # Warehouses from before severities: every result they hold was an error-severity one.
    con.execute("ALTER TABLE audit.quality_results ADD COLUMN IF NOT EXISTS severity VARCHAR DEFAULT 'error'")
    con.execute("ALTER TABLE audit.quality_results ADD COLUMN IF NOT EXISTS example_file VARCHAR")
    con.execute("ALTER TABLE audit.quality_results ADD COLUMN IF NOT EXISTS example_row BIGINT")


def record_results(con: duckdb.DuckDBPyConnection, results: Sequence[QualityResult]) -> None:
    if not results:
        return
    frame = pl.DataFrame([asdict(result) for result in results], infer_schema_length=None)
    con.register("incoming_quality_results", frame.to_arrow())
    try:
        con.execute(
            "INSERT INTO audit.quality_results BY NAME SELECT * FROM incoming_quality_results",
        )
    finally:
        con.unregister("incoming_quality_results")


@dataclass(frozen=True)
class LiveWarning:
    """A warning recorded for a load whose rows are in raw now."""

    source: str
    load_id: str
    delivery: str
    rule: str
    column: str | None
    rows: int | None
    example: str | None
    """The first row it concerns, `<file> row <n>`."""


def live_warnings(
    con: duckdb.DuckDBPyConnection, table_name: str | None = None, *, load_source: str | None = None
) -> list[LiveWarning]:
    """Warning-severity results of the latest check of every load not superseded (of `table_name`, if given).

    Reads only (the report's connection is read-only): `ensure_quality_table` first on a new warehouse.
    """
    rows = con.execute(
        """
        with latest as (
            select load_id, max(checked_at) as checked_at from audit.quality_results group by load_id
        )
        select l.source, q.load_id, l.delivery, q.description, q.column_name, q.unexpected_count,
               case when q.example_file is not null then q.example_file || ' row ' || q.example_row end
        from audit.quality_results as q
        join latest using (load_id, checked_at)
        join audit.loads as l using (load_id)
        where (?::VARCHAR is null or l.raw_table = ?) and (?::VARCHAR is null or l.source = ?)
          and l.status = 'loaded' and not q.passed and q.severity = 'warning'
        order by l.source, l.loaded_at, q.description
        """,
        [table_name, table_name, load_source, load_source],
    ).fetchall()
    return [LiveWarning(*row) for row in rows]
