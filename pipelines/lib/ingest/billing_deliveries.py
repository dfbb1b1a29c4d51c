"""Run one source's landing zone through parse → load → quality gate → commit, quarantining what is rejected.

The reader rejects what cannot be read faithfully; the source's Great Expectations suite then runs on
the delivery's rows inside the load transaction (`QualityGate`), so a delivery breaking an
error-severity rule is rolled back and quarantined like an unreadable one, and one that loads carries
its warnings (the reader's and the suite's) in `audit.quality_results` from the moment it commits.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import duckdb

from pipelines.lib.foundation.failpoints import pause_if_requested
from pipelines.lib.ingest.landing import pending_deliveries, quarantine
from pipelines.lib.quality.gate import QualityGate
from pipelines.lib.quality.results import QualityReport
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.loads import find_load, load_delivery
from pipelines.lib.warehouse.tables import recover_and_ensure_tables
from sources.common.delivery import Delivery
from sources.common.errors import RejectedInput

if TYPE_CHECKING:
    from pipelines.lib.catalog.billing import BillingSource


@dataclass(frozen=True)
class DeliveryResult:
    delivery: str
    status: str
    """`loaded`, `duplicate` (loaded before; nothing changed) or `rejected` (quarantined)."""
    load_id: str | None = None
    rows: int = 0
    replaced_rows: int = 0
    billing_periods: list[str] = field(default_factory=list)
    totals: dict[str, dict[str, str]] = field(default_factory=dict)
    reason: str | None = None
    warnings: list[dict[str, Any]] = field(default_factory=list)
    """Per warning rule of a loaded delivery: `rule`, `column`, `rows`, `example` (file and row)."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _warnings_of(report: QualityReport) -> list[dict[str, Any]]:
    return [
        {
            "rule": warning.description,
            "column": warning.column_name,
            "rows": warning.unexpected_count,
            "example": f"{warning.example_file} row {warning.example_row}" if warning.example_file else None,
        }
        for warning in report.warnings
    ]


def ingest_landing_zone(
    home: FinopsHome,
    con: duckdb.DuckDBPyConnection,
    source: BillingSource,
    *,
    log: logging.Logger,
    run_id: str | None = None,
) -> list[DeliveryResult]:
    # A load a crash interrupted is recovered before anything is compared with it.
    recover_and_ensure_tables(con, source.raw_table)
    deliveries = pending_deliveries(home, source.name)
    log.info("%d deliveries in %s", len(deliveries), home.landing_for(source.name))
    gate = QualityGate(source.raw_table, source.quality, source.name, run_id)
    results = []
    for number, delivery in enumerate(deliveries, start=1):
        result = _ingest_one(home, con, delivery, source=source, gate=gate)
        detail = {"loaded": f" ({result.rows} rows)", "rejected": f" ({result.reason})"}.get(result.status, "")
        if result.warnings:
            detail += f", {len(result.warnings)} warning(s): " + "; ".join(w["rule"] for w in result.warnings)
        log.info("[%d/%d] %s: %s%s", number, len(deliveries), delivery.name, result.status, detail)
        results.append(result)
    return results


def _ingest_one(
    home: FinopsHome, con: duckdb.DuckDBPyConnection, delivery: Delivery, *, source: BillingSource, gate: QualityGate
) -> DeliveryResult:
    checked: list[QualityReport] = []
    try:
        sha256 = delivery.sha256()
        existing = find_load(con, source.name, sha256)
        if existing is not None:
            return DeliveryResult(delivery=delivery.name, status="duplicate", load_id=existing)
        pause_if_requested("reading")
        parsed = source.parse(delivery)
        outcome = load_delivery(
            con,
            source.raw_table,
            source=source.name,
            delivery=delivery.name,
            sha256=sha256,
            frame=parsed.frame,
            format_version=parsed.format_version,
            before_commit=lambda load_id: checked.append(
                gate.check(con, load_id, delivery=delivery.name, rows=parsed.rows, reader_warnings=parsed.warnings)
            ),
        )
    except RejectedInput as error:
        quarantine(home, delivery, error)
        return DeliveryResult(delivery=delivery.name, status="rejected", reason=error.describe())
    return DeliveryResult(
        delivery=delivery.name,
        status=outcome.status,
        load_id=outcome.load_id,
        rows=outcome.rows,
        replaced_rows=outcome.replaced_rows,
        billing_periods=outcome.billing_periods,
        totals=outcome.totals,
        warnings=_warnings_of(checked[0]) if checked else [],
    )
