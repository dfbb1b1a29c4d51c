"""Non-blocking checks after each build: new GPU spend anomalies and budgets projected to overrun, each optionally sent
to a webhook (GPU_FINOPS_ALERT_WEBHOOK_URL). A warning, never a reason to stop the run: the numbers are right, they are
news."""

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.lib.quality.spend_alerts import new_anomalies, notify, projected_overruns
from pipelines.lib.settings import DUCKDB_WRITER_POOL

ANOMALY_COLUMNS = (
    "charge_date",
    "provider_name",
    "gpu_model",
    "team",
    "billing_currency",
    "cost_deviation",
    "cause_class",
)
OVERRUN_COLUMNS = ("billing_month", "grain", "provider_name", "team", "forecast_cost", "budget_amount")


def _alert_result(kind: str, items: list[dict], columns: tuple[str, ...]) -> dg.AssetCheckResult:
    """Passed when there is nothing to tell; otherwise a warning listing the items, which are also sent to the
    webhook when one is configured."""
    outcome = notify(kind, items)
    table = dg.MetadataValue.md("none")
    if items:
        lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        lines += ["| " + " | ".join(str(item.get(column, "")) for column in columns) + " |" for item in items[:20]]
        table = dg.MetadataValue.md("\n".join(lines))
    return dg.AssetCheckResult(
        passed=not items,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"count": len(items), kind: table, "webhook": outcome.detail},
    )


@dg.asset_check(
    asset=dg.AssetKey(["marts", "fct_gpu_spend_anomalies"]),
    name="no_new_spend_anomalies",
    blocking=False,
    pool=DUCKDB_WRITER_POOL,
    description=(
        "No GPU spend anomaly on the latest judged charge days (GPU_FINOPS_ALERT_DAYS, default 1); any found is "
        "listed with its cause and sent with its drivers to GPU_FINOPS_ALERT_WEBHOOK_URL when set."
    ),
)
def no_new_spend_anomalies(duckdb: DuckDBResource) -> dg.AssetCheckResult:
    with duckdb.get_connection() as con:
        anomalies = new_anomalies(con)
    return _alert_result("gpu_spend_anomalies", anomalies, ANOMALY_COLUMNS)


@dg.asset_check(
    asset=dg.AssetKey(["marts", "fct_gpu_spend_forecast"]),
    name="no_projected_budget_overrun",
    blocking=False,
    pool=DUCKDB_WRITER_POOL,
    description=(
        "No team or provider budget of the latest month is projected to overrun at the current burn rate; overruns "
        "are listed and sent to GPU_FINOPS_ALERT_WEBHOOK_URL when set."
    ),
)
def no_projected_budget_overrun(duckdb: DuckDBResource) -> dg.AssetCheckResult:
    with duckdb.get_connection() as con:
        overruns = projected_overruns(con)
    return _alert_result("gpu_budget_overruns", overruns, OVERRUN_COLUMNS)
