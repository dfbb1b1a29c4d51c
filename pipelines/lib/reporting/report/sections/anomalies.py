"""GPU spend anomalies: the daily total against the usual for the weekday, and each anomaly's drivers."""

from __future__ import annotations

from typing import Any

import altair as alt
import duckdb

from pipelines.lib.reporting.report.formatting import coordinate, money, money_cell
from pipelines.lib.reporting.report.marts import has_rows, no_data, query
from pipelines.lib.reporting.report.render import CHART_WIDTH, Cell, Section, Table

HEADING = Section(
    "anomalies",
    "GPU spend anomalies and their causes",
    (
        "The line is each day's GPU spend (effective cost) in its billing currency, all providers and teams together; "
        "the grey line is what that weekday usually costs (the median of the same weekday over the previous four "
        "weeks). A red dot marks a day on which some provider, GPU model and team spent far outside its normal range: "
        "a forgotten node, spot falling back to on-demand, a price change, a commitment running out, a lost export. "
        "Hover a dot for what moved. The table lists each anomaly's drivers: the resources whose cost changed most "
        "and why (cause), from their own bills."
    ),
    ("fct_gpu_spend_anomalies", "fct_gpu_spend_anomaly_drivers"),
)


def section(con: duckdb.DuckDBPyConnection) -> Section:
    if not has_rows(con, "fct_gpu_spend_anomalies"):
        return no_data(HEADING)
    totals = query(
        con,
        """
        select charge_date, billing_currency, actual_cost, case when is_judged then expected_cost end as expected_cost
        from marts.fct_gpu_spend_anomalies where grain = 'total' order by billing_currency, charge_date
        """,
    )
    flagged = query(
        con,
        """
        select anomaly.charge_date, anomaly.billing_currency, anomaly.grain, anomaly.provider_name, anomaly.gpu_model,
               anomaly.team, anomaly.cost_deviation, anomaly.cause_class, total.actual_cost as day_total
        from marts.fct_gpu_spend_anomalies as anomaly
        inner join marts.fct_gpu_spend_anomalies as total
            on total.grain = 'total' and total.billing_currency = anomaly.billing_currency
            and total.charge_date = anomaly.charge_date
        where anomaly.is_anomaly
        order by anomaly.charge_date, anomaly.billing_currency, anomaly.grain, anomaly.provider_name, anomaly.team
        """,
    )
    lines = [
        {
            "day": row["charge_date"].isoformat(),
            "currency": row["billing_currency"],
            "kind": kind,
            "amount": coordinate(row[key]),
        }
        for row in totals
        for key, kind in (("actual_cost", "actual"), ("expected_cost", "usual for the weekday"))
        if row[key] is not None
    ]
    markers = [
        {
            "day": row["charge_date"].isoformat(),
            "currency": row["billing_currency"],
            "amount": coordinate(row["day_total"]),
            "series": _series_name(row),
            "deviation": money(row["cost_deviation"], row["billing_currency"]),
            "cause": row["cause_class"],
            "kind": "anomaly",
        }
        for row in flagged
    ]
    line = (
        alt.Chart()
        .transform_filter("datum.kind != 'anomaly'")
        .mark_line()
        .encode(
            x=alt.X("day:T", title="Charge day"),
            y=alt.Y("amount:Q", title="GPU spend per day"),
            color=alt.Color("kind:N", title="", scale=alt.Scale(range=["#4c78a8", "#b0b7c0"])),
        )
    )
    dots = (
        alt.Chart()
        .transform_filter("datum.kind == 'anomaly'")
        .mark_point(color="#d62728", filled=True, size=90)
        .encode(
            x="day:T",
            y="amount:Q",
            tooltip=[
                alt.Tooltip("day:T", title="Day"),
                alt.Tooltip("series:N", title="Series"),
                alt.Tooltip("deviation:N", title="Off the usual by"),
                alt.Tooltip("cause:N", title="Cause"),
            ],
        )
    )
    chart = (
        alt.layer(line, dots, data=alt.Data(values=lines + markers))
        .properties(width=CHART_WIDTH, height=180)
        .facet(row=alt.Row("currency:N", title="Billing currency"))
        .resolve_scale(y="independent")
        .to_dict()
    )
    drivers = query(
        con,
        """
        select driver.charge_date, driver.grain, driver.provider_name, driver.gpu_model, driver.team,
               driver.billing_currency, driver.direction, anomaly.cost_deviation, driver.driver_rank,
               coalesce(driver.resource_name, driver.resource_id) as resource, driver.cost_change, driver.cause_class
        from marts.fct_gpu_spend_anomaly_drivers as driver
        inner join marts.fct_gpu_spend_anomalies as anomaly on anomaly.anomaly_key = driver.anomaly_key
        order by driver.charge_date desc, driver.billing_currency, driver.grain, driver.provider_name, driver.team,
                 driver.driver_rank
        limit 60
        """,
    )
    rows = [
        [
            Cell(row["charge_date"].isoformat()),
            Cell(_series_name(row)),
            Cell(row["direction"]),
            money_cell(row["cost_deviation"], row["billing_currency"]),
            Cell(f"{row['driver_rank']}. {row['resource']}"),
            money_cell(row["cost_change"], row["billing_currency"]),
            Cell(row["cause_class"]),
        ]
        for row in drivers
    ]
    table = Table(
        "Drivers of each anomaly, newest first (at most 60 rows)",
        ["Day", "Series", "Spike or drop", "Off the usual by", "Driver", "Its change", "Cause"],
        rows,
    )
    return HEADING.drawn(chart, table)


def _series_name(row: dict[str, Any]) -> str:
    if row["grain"] == "total":
        return f"all GPU spend in {row['billing_currency']}"
    return f"{row['provider_name']} · {row['gpu_model']} · {row['team']}"
