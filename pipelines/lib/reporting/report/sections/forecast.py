"""The month-end forecast per team against its budget."""

from __future__ import annotations

import altair as alt
import duckdb

from pipelines.lib.reporting.report.formatting import coordinate, money, money_cell, percent
from pipelines.lib.reporting.report.marts import exists, no_data, query
from pipelines.lib.reporting.report.render import CHART_WIDTH, Cell, Section, Table

HEADING = Section(
    "forecast",
    "Month-end forecast against budget, per team",
    (
        "For the latest month with budgets: what each team has spent so far, where the month will land if it keeps "
        "spending at the rate of its last seven days (the bar; the thin line is the range between its cheapest and "
        "dearest of those days), and its budget (the black tick). A team whose forecast passes its budget is "
        "projected over budget; the run-out day is when its budget was or will be used up at that rate. Amounts are "
        "in each budget's billing currency."
    ),
    ("fct_gpu_spend_forecast",),
)


def section(con: duckdb.DuckDBPyConnection) -> Section:
    if not exists(con, "fct_gpu_spend_forecast"):
        return no_data(HEADING)
    teams = query(
        con,
        """
        select * from marts.fct_gpu_spend_forecast
        where grain = 'team' and budget_amount is not null
            and billing_month = (
                select max(billing_month) from marts.fct_gpu_spend_forecast where budget_amount is not null
            )
        order by billing_currency, team
        """,
    )
    if not teams:
        return no_data(HEADING)
    values = [
        {
            "team": f"{row['team']} ({row['billing_currency']})",
            "forecast": coordinate(row["forecast_cost"]),
            "low": coordinate(row["forecast_low"]),
            "high": coordinate(row["forecast_high"]),
            "budget": coordinate(row["budget_amount"]),
            "status": "over budget" if row["is_projected_over_budget"] else "within budget",
            "text": money(row["forecast_cost"], row["billing_currency"]),
            "budget_text": money(row["budget_amount"], row["billing_currency"]),
        }
        for row in teams
    ]
    data = alt.Data(values=values)
    y = alt.Y("team:N", title="Team (billing currency)")
    bars = (
        alt.Chart(data)
        .mark_bar()
        .encode(
            y=y,
            x=alt.X("forecast:Q", title="Month-end forecast"),
            color=alt.Color(
                "status:N",
                title="",
                scale=alt.Scale(domain=["within budget", "over budget"], range=["#4c78a8", "#d62728"]),
            ),
            tooltip=[
                alt.Tooltip("team:N", title="Team"),
                alt.Tooltip("text:N", title="Forecast"),
                alt.Tooltip("budget_text:N", title="Budget"),
            ],
        )
    )
    ranges = alt.Chart(data).mark_rule(color="#1d2430").encode(y=y, x="low:Q", x2="high:Q")
    ticks = alt.Chart(data).mark_tick(color="black", thickness=3, size=22).encode(y=y, x="budget:Q")
    chart = alt.layer(bars, ranges, ticks).properties(width=CHART_WIDTH, height=32 * len(values)).to_dict()
    month = teams[0]["billing_month"].strftime("%Y-%m")
    rows = [
        [
            Cell(row["team"]),
            money_cell(row["month_to_date_cost"], row["billing_currency"]),
            money_cell(row["burn_rate_per_day"], row["billing_currency"]),
            money_cell(row["forecast_cost"], row["billing_currency"]),
            Cell(" – ".join(money(row[key], row["billing_currency"]) for key in ("forecast_low", "forecast_high"))),
            money_cell(row["budget_amount"], row["billing_currency"]),
            Cell(percent(row["budget_used_share"])),
            money_cell(row["projected_overrun"], row["billing_currency"]),
            Cell(row["budget_runout_date"].isoformat() if row["budget_runout_date"] else "-"),
        ]
        for row in teams
    ]
    table = Table(
        f"{month}, as of {teams[0]['as_of_date'].isoformat()} (overrun: forecast minus budget; negative is headroom)",
        ["Team", "Month to date", "Per day", "Forecast", "Range", "Budget", "Used", "Overrun", "Runs out"],
        rows,
    )
    return HEADING.drawn(chart, table)
