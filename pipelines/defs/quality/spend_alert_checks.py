"""Non-blocking checks after each build: new GPU spend anomalies and budgets projected to overrun, each optionally sent
to a webhook (GPU_FINOPS_ALERT_WEBHOOK_URL). A warning, never a reason to stop the run: the numbers are right, they are
news."""

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.lib.quality.spend_alerts import new_anomalies, notify, projected_overruns
from pipelines.lib.settings import DUCKDB_WRITER_POOL

ANOMALY_SUMMARY = (
    "charge_date",
    "provider_name",
    "gpu_model",
    "team",
    "billing_currency",
    "cost_deviation",
    "cause_class",
)


def _table(items: list[dict], columns: tuple[str, ...]) -> dg.MetadataValue:
    if not items:
        return dg.MetadataValue.md("none")
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(item.get(column, "")) for column in columns) + " |" for item in items[:20]]
    return dg.MetadataValue.md("\n".join(lines))


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
    outcome = notify("gpu_spend_anomalies", anomalies)
    return dg.AssetCheckResult(
        passed=not anomalies,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "new_anomalies": len(anomalies),
            "anomalies": _table(
                anomalies,
                (
                    "charge_date",
                    "provider_name",
                    "gpu_model",
                    "team",
                    "billing_currency",
                    "cost_deviation",
                    "cause_class",
                ),
            ),
            "webhook": outcome.detail,
        },
    )


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
    outcome = notify("gpu_budget_overruns", overruns)
    return dg.AssetCheckResult(
        passed=not overruns,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "projected_overruns": len(overruns),
            "overruns": _table(
                overruns, ("billing_month", "grain", "provider_name", "team", "forecast_cost", "budget_amount")
            ),
            "webhook": outcome.detail,
        },
    )


defs = dg.Definitions(asset_checks=[no_new_spend_anomalies, no_projected_budget_overrun])
