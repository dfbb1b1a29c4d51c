"""Run one source's landing zone through parse → validate → load, quarantining what is rejected."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import duckdb

from pipelines.lib.landing import pending_deliveries, quarantine
from pipelines.lib.settings import FinopsHome
from pipelines.lib.test_hooks import pause_if_requested
from pipelines.lib.warehouse import RawTable, find_load, load_delivery
from sources.delivery import Delivery, ParsedDelivery
from sources.errors import RejectedInput

Parser = Callable[[Delivery], ParsedDelivery]


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

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def ingest_landing_zone(
    home: FinopsHome,
    con: duckdb.DuckDBPyConnection,
    *,
    source: str,
    table: RawTable,
    parse: Parser,
    log: logging.Logger,
) -> list[DeliveryResult]:
    deliveries = pending_deliveries(home, source)
    log.info("%d deliveries in %s", len(deliveries), home.landing_for(source))
    results = []
    for number, delivery in enumerate(deliveries, start=1):
        result = _ingest_one(home, con, delivery, source=source, table=table, parse=parse)
        log.info(
            "[%d/%d] %s: %s%s",
            number,
            len(deliveries),
            delivery.name,
            result.status,
            f" ({result.rows} rows)" if result.status == "loaded" else f" ({result.reason})" if result.reason else "",
        )
        results.append(result)
    return results


def _ingest_one(
    home: FinopsHome,
    con: duckdb.DuckDBPyConnection,
    delivery: Delivery,
    *,
    source: str,
    table: RawTable,
    parse: Parser,
) -> DeliveryResult:
    try:
        sha256 = delivery.sha256()
        existing = find_load(con, source, sha256)
        if existing is not None:
            return DeliveryResult(delivery=delivery.name, status="duplicate", load_id=existing)
        pause_if_requested("reading")
        parsed = parse(delivery)
    except RejectedInput as error:
        quarantine(home, delivery, error)
        return DeliveryResult(delivery=delivery.name, status="rejected", reason=error.describe())
    outcome = load_delivery(
        con,
        table,
        source=source,
        delivery=delivery.name,
        sha256=sha256,
        frame=parsed.frame,
        format_version=parsed.format_version,
    )
    return DeliveryResult(
        delivery=delivery.name,
        status=outcome.status,
        load_id=outcome.load_id,
        rows=outcome.rows,
        replaced_rows=outcome.replaced_rows,
        billing_periods=outcome.billing_periods,
        totals=outcome.totals,
    )
