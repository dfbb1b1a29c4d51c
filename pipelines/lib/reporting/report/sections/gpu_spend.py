"""GPU spend over time: weekly bars by provider and by GPU model, totals per billing currency."""

from __future__ import annotations

from typing import Any

import altair as alt
import duckdb

from pipelines.lib.reporting.report.formatting import coordinate, money, money_cell, number_cell, percent
from pipelines.lib.reporting.report.marts import has_rows, no_data, query, reporting_currency
from pipelines.lib.reporting.report.render import CHART_WIDTH, Cell, Section, Table

HEADING = Section(
    "gpu-spend",
    "GPU spend over time, by provider and GPU model",
    (
        "Each bar is one week of GPU spend (effective cost: what the GPUs cost after discounts, with commitment "
        "fees spread over the hours they paid for), converted to the reporting currency at the European Central "
        "Bank rate of each charge day. The upper chart splits the week by provider, the lower by GPU model; hover "
        "a bar for the exact amount. The table gives the totals in each billing currency as invoiced, and the "
        "GPU share of the whole cloud bill."
    ),
    ("rpt_gpu_spend_weekly", "rpt_gpu_share_of_bill", "rpt_gpu_spend_in_reporting_currency"),
)


def section(con: duckdb.DuckDBPyConnection) -> Section:
    if not all(has_rows(con, mart) for mart in ("rpt_gpu_spend_weekly", "rpt_gpu_share_of_bill")):
        return no_data(HEADING)
    currency = reporting_currency(con, "rpt_gpu_spend_weekly")
    charts = [
        _weekly_bars(
            query(
                con,
                """
                select week_start as week, series, effective_cost_reporting as amount
                from marts.rpt_gpu_spend_weekly where breakdown = ? order by week_start, series
                """,
                [breakdown],
            ),
            legend,
            currency,
        )
        for breakdown, legend in (("provider", "Provider"), ("gpu_model", "GPU model"))
    ]
    chart = alt.vconcat(*charts).resolve_scale(color="independent").to_dict()
    totals = query(
        con,
        """
        select * from marts.rpt_gpu_share_of_bill where gpu_effective_cost is not null order by billing_currency
        """,
    )
    rows = [
        [
            Cell(row["billing_currency"]),
            money_cell(row["gpu_effective_cost"], row["billing_currency"]),
            money_cell(row["gpu_billed_cost"], row["billing_currency"]),
            number_cell(row["gpu_hours"], 1),
            money_cell(row["cost_per_gpu_hour"], row["billing_currency"]),
            Cell(percent(row["gpu_share_of_bill"])),
        ]
        for row in totals
    ]
    reporting = query(con, "select * from marts.rpt_gpu_spend_in_reporting_currency")[0]
    amount, missing_rows = reporting["effective_cost_reporting"], reporting["rows_without_exchange_rate"]
    missing = f" ({missing_rows} rows without an exchange rate are left out)" if missing_rows else ""
    table = Table(
        f"GPU spend per billing currency; all of it in {currency}: {money(amount, currency)}{missing}",
        [
            "Billing currency",
            "GPU spend (effective)",
            "GPU spend (billed)",
            "GPU-hours",
            "Per GPU-hour",
            "Share of bill",
        ],
        rows,
    )
    return HEADING.drawn(chart, table)


def _weekly_bars(rows: list[dict[str, Any]], legend: str, currency: str) -> alt.Chart:
    phrase = "provider" if legend == "Provider" else legend
    values = [
        {
            "week": row["week"].isoformat(),
            "series": row["series"] or "(unknown)",
            "amount": coordinate(row["amount"]),
            "text": money(row["amount"], currency),
        }
        for row in rows
        if row["amount"] is not None
    ]
    return (
        alt.Chart(alt.Data(values=values))
        .mark_bar()
        .encode(
            x=alt.X("week:O", title="Week starting (Monday)"),
            y=alt.Y("amount:Q", title=f"GPU spend ({currency})", stack="zero"),
            color=alt.Color("series:N", title=legend),
            tooltip=[
                alt.Tooltip("week:O", title="Week of"),
                alt.Tooltip("series:N", title=legend),
                alt.Tooltip("text:N", title="Effective cost"),
            ],
        )
        .properties(width=CHART_WIDTH, height=220, title=f"Weekly GPU spend by {phrase} ({currency})")
    )
