"""The market price index per GPU model against our effective rate, and what paying the market would save."""

from __future__ import annotations

import altair as alt
import duckdb

from pipelines.lib.reporting.report.formatting import coordinate, money, money_cell, number_cell
from pipelines.lib.reporting.report.marts import has_rows, no_data, query, reporting_currency
from pipelines.lib.reporting.report.render import CHART_WIDTH, Cell, Section, Table

HEADING = Section(
    "market",
    "Market price index and our effective rate",
    (
        "For each GPU model we rent, the lines are the market's on-demand price of one GPU-hour each day "
        "(cheapest and median offer over every provider we track, hyperscalers and GPU clouds), and the dots are "
        "what we paid per GPU-hour that day (effective cost over GPU-hours, all pricing models). Dots above the "
        "median line mean we pay more than the typical market price. All prices in the reporting currency."
    ),
    ("rpt_market_rate_daily", "rpt_market_rate_by_gpu"),
)


def section(con: duckdb.DuckDBPyConnection) -> Section:
    if not (has_rows(con, "rpt_market_rate_daily") and has_rows(con, "rpt_market_rate_by_gpu")):
        return no_data(HEADING)
    currency = reporting_currency(con, "rpt_market_rate_by_gpu")
    daily = query(
        con,
        """
        select rate_date as day, gpu_model, effective_rate_per_gpu_hour as ours,
               market_cheapest_per_gpu_hour as cheapest, market_median_per_gpu_hour as median
        from marts.rpt_market_rate_daily order by rate_date, gpu_model
        """,
    )
    ours = [row for row in daily if row["ours"] is not None]
    market = [row for row in daily if row["cheapest"] is not None or row["median"] is not None]
    if not ours or not market:
        return no_data(HEADING)
    values = [
        {
            "day": row["day"].isoformat(),
            "gpu_model": row["gpu_model"],
            "series": series,
            "price": coordinate(row[key]),
            "text": money(row[key], currency, places=4),
        }
        for row in market
        for key, series in (("cheapest", "market cheapest"), ("median", "market median"))
        if row[key] is not None
    ]
    values += [
        {
            "day": row["day"].isoformat(),
            "gpu_model": row["gpu_model"],
            "series": "our effective rate",
            "price": coordinate(row["ours"]),
            "text": money(row["ours"], currency, places=4),
        }
        for row in ours
    ]
    color = alt.Color(
        "series:N",
        title=None,
        scale=alt.Scale(domain=["market cheapest", "market median", "our effective rate"]),
    )
    tooltip = [
        alt.Tooltip("gpu_model:N", title="GPU"),
        alt.Tooltip("day:T", title="Day"),
        alt.Tooltip("series:N", title="Series"),
        alt.Tooltip("text:N", title=f"{currency} per GPU-hour"),
    ]
    x = alt.X("day:T", title="Day")
    y = alt.Y("price:Q", title=f"{currency} per GPU-hour")
    lines = (
        alt.Chart()
        .mark_line()
        .encode(x=x, y=y, color=color, tooltip=tooltip)
        .transform_filter("datum.series !== 'our effective rate'")
    )
    dots = (
        alt.Chart()
        .mark_circle(size=28)
        .encode(x=x, y=y, color=color, tooltip=tooltip)
        .transform_filter("datum.series === 'our effective rate'")
    )
    chart = (
        alt.layer(lines, dots, data=alt.Data(values=values))
        .properties(width=CHART_WIDTH // 2 - 40, height=220)
        .facet(facet=alt.Facet("gpu_model:N", title="GPU model"), columns=2)
        .resolve_scale(y="independent")
        .properties(title=f"On-demand market price and our rate ({currency} per GPU-hour)")
        .to_dict()
    )
    benchmark = query(
        con,
        """
        select gpu_model, pricing_category, gpu_hours as hours, effective_rate_per_gpu_hour as rate,
               savings_moving_to_median as to_median, savings_moving_to_cheapest as to_cheapest
        from marts.rpt_market_rate_by_gpu order by effective_cost_reporting desc nulls last, gpu_model, pricing_category
        """,
    )
    rows = [
        [
            Cell(row["gpu_model"]),
            Cell(row["pricing_category"]),
            number_cell(row["hours"], 1),
            money_cell(row["rate"], currency, places=4),
            money_cell(row["to_median"], currency),
            money_cell(row["to_cheapest"], currency),
        ]
        for row in benchmark
    ]
    table = Table(
        f"Our GPU-hours against the market, whole history ({currency})",
        [
            "GPU model",
            "Pricing",
            "GPU-hours",
            "Our rate per GPU-hour",
            "Saved at the median price",
            "Saved at the cheapest",
        ],
        rows,
    )
    return HEADING.drawn(chart, table)
