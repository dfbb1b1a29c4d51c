"""What the spend alert checks report: new GPU spend anomalies with their drivers, projected budget overruns, and the
optional webhook that carries them (docs/spend-anomalies-and-forecast.md "Spend anomalies").

Kept apart from Dagster so the CLI and tests read the same rows. The webhook URL comes from the environment only
(`GPU_FINOPS_ALERT_WEBHOOK_URL`); chat webhooks carry their token in the path, so the whole URL is a secret of the
shared HTTP client and never appears in a log line, an error or check metadata.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

import duckdb

from sources.common.http import FetchError, HttpClient

WEBHOOK_ENV = "GPU_FINOPS_ALERT_WEBHOOK_URL"
ALERT_DAYS_ENV = "GPU_FINOPS_ALERT_DAYS"

ANOMALY_COLUMNS = (
    "anomaly_key",
    "charge_date",
    "grain",
    "provider_name",
    "gpu_model",
    "team",
    "billing_currency",
    "actual_cost",
    "expected_cost",
    "cost_deviation",
    "anomaly_score",
    "direction",
    "cause_class",
)
DRIVER_COLUMNS = (
    "driver_rank",
    "resource_provider_name",
    "resource_gpu_model",
    "resource_team",
    "resource_id",
    "resource_name",
    "pricing_category",
    "previous_pricing_category",
    "actual_cost",
    "expected_cost",
    "cost_change",
    "cost_per_gpu_hour",
    "previous_cost_per_gpu_hour",
    "cause_class",
)
OVERRUN_COLUMNS = (
    "billing_month",
    "as_of_date",
    "grain",
    "provider_name",
    "team",
    "billing_currency",
    "month_to_date_cost",
    "forecast_cost",
    "budget_amount",
    "projected_overrun",
    "budget_runout_date",
)


def alert_days() -> int:
    """GPU_FINOPS_ALERT_DAYS (default 1): anomalies on the last N judged charge days count as new."""
    return max(1, int(os.environ.get(ALERT_DAYS_ENV, "").strip() or 1))


def new_anomalies(con: duckdb.DuckDBPyConnection, days: int | None = None) -> list[dict[str, Any]]:
    """Flagged anomalies of the last `days` charge days, largest deviation first, each with its ranked drivers."""
    days = alert_days() if days is None else days
    recent = """
        is_anomaly
        and charge_date > (
            select max(charge_date) from marts.fct_gpu_spend_anomalies where is_judged
        ) - cast(? as integer)
    """
    anomalies = _rows(
        con,
        f"""
        select {", ".join(ANOMALY_COLUMNS)}
        from marts.fct_gpu_spend_anomalies
        where {recent}
        order by charge_date desc, abs(cost_deviation) desc, anomaly_key
        """,
        [days],
    )
    drivers = _rows(
        con,
        f"""
        select anomaly_key, {", ".join(DRIVER_COLUMNS)}
        from marts.fct_gpu_spend_anomaly_drivers
        where anomaly_key in (select anomaly_key from marts.fct_gpu_spend_anomalies where {recent})
        order by anomaly_key, driver_rank
        """,
        [days],
    )
    by_anomaly: dict[str, list[dict[str, Any]]] = {}
    for driver in drivers:
        by_anomaly.setdefault(driver.pop("anomaly_key"), []).append(driver)
    for anomaly in anomalies:
        anomaly["drivers"] = by_anomaly.get(anomaly["anomaly_key"], [])
    return anomalies


def projected_overruns(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Budgets of the latest budgeted month that its forecast projects to overrun, largest overrun first."""
    return _rows(
        con,
        f"""
        select {", ".join(OVERRUN_COLUMNS)}
        from marts.fct_gpu_spend_forecast
        where is_projected_over_budget
            and billing_month = (
                select max(billing_month) from marts.fct_gpu_spend_forecast where budget_amount is not null
            )
        order by projected_overrun desc, grain, provider_name, team
        """,
    )


@dataclass(frozen=True)
class WebhookOutcome:
    """What happened to a notification, safe to show: never the URL."""

    sent: bool
    detail: str


def notify(kind: str, items: list[dict[str, Any]], *, client: HttpClient | None = None) -> WebhookOutcome:
    """POST {"kind", "count", "items"} as JSON to the webhook when one is configured and there is something to say."""
    url = os.environ.get(WEBHOOK_ENV, "").strip()
    if not url:
        return WebhookOutcome(False, f"no webhook ({WEBHOOK_ENV} not set)")
    if not items:
        return WebhookOutcome(False, "nothing to notify")
    client = client or HttpClient("alert webhook", secrets=(url,))
    body = {"kind": kind, "count": len(items), "items": [_json_ready(item) for item in items]}
    try:
        response = client.post(url, json=body)
    except FetchError as error:
        return WebhookOutcome(False, f"webhook failed: {error.reason}")
    return WebhookOutcome(True, f"webhook answered HTTP {response.status_code}")


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    relation = con.execute(sql, params or [])
    names = [column[0] for column in relation.description]
    return [dict(zip(names, row, strict=True)) for row in relation.fetchall()]


def _json_ready(value: Any) -> Any:
    """Decimals as exact strings, dates as ISO text, recursively."""
    if isinstance(value, dict):
        return {key: _json_ready(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json_ready(item) for item in value]
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, date):
        return value.isoformat()
    return value
