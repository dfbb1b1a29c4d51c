"""Spot savings per billing month: realized, forgone, and forgone after interruptions."""

from __future__ import annotations

import altair as alt
import duckdb

from pipelines.lib.reporting.report.formatting import coordinate, money, money_cell
from pipelines.lib.reporting.report.marts import has_rows, no_data, query, reporting_currency
from pipelines.lib.reporting.report.render import CHART_WIDTH, Cell, Section, Table

HEADING = Section(
    "spot-savings",
    "Spot savings: realized and forgone",
    (
        "Realized savings: what our spot GPU-hours would have cost on demand, minus what they cost. Forgone "
        "savings: what our on-demand GPU-hours would have saved at the month's market spot price; the "
        "interruption-adjusted figure takes off the work lost to reclaims (checkpoint model, Spot Advisor band). "
        "Bars are per billing month in the reporting currency."
    ),
    ("rpt_spot_savings_monthly",),
)


def section(con: duckdb.DuckDBPyConnection) -> Section:
    if not has_rows(con, "rpt_spot_savings_monthly"):
        return no_data(HEADING)
    currency = reporting_currency(con, "rpt_spot_savings_monthly")
    months = query(
        con,
        """
        select billing_month as month, realized_savings as realized, forgone_savings as forgone,
               forgone_savings_interruption_adjusted as adjusted
        from marts.rpt_spot_savings_monthly order by billing_month
        """,
    )
    kinds = (
        ("realized", "realized"),
        ("forgone", "forgone (market spot price)"),
        ("adjusted", "forgone, interruption-adjusted"),
    )
    values = [
        {
            "month": row["month"].isoformat(),
            "kind": label,
            "amount": coordinate(row[key]),
            "text": money(row[key], currency),
        }
        for row in months
        for key, label in kinds
    ]
    chart = (
        alt.Chart(alt.Data(values=values))
        .mark_bar()
        .encode(
            x=alt.X("yearmonth(month):O", title="Billing month"),
            xOffset=alt.XOffset("kind:N"),
            y=alt.Y("amount:Q", title=f"Savings ({currency})"),
            color=alt.Color("kind:N", title="Savings", legend=alt.Legend(orient="bottom", labelLimit=0)),
            tooltip=[
                alt.Tooltip("yearmonth(month):O", title="Month"),
                alt.Tooltip("kind:N", title="Savings"),
                alt.Tooltip("text:N", title="Amount"),
            ],
        )
        .properties(width=CHART_WIDTH, height=260, title=f"Spot savings per month ({currency})")
        .to_dict()
    )
    rows = [
        [Cell(row["month"].strftime("%Y-%m"))] + [money_cell(row[key], currency) for key, _ in kinds] for row in months
    ]
    table = Table(
        f"Spot savings per billing month ({currency})",
        ["Month", "Realized", "Forgone", "Forgone, interruption-adjusted"],
        rows,
    )
    return HEADING.drawn(chart, table)
