"""Buy vs rent: the owned cost per used GPU-hour across utilizations against rental prices."""

from __future__ import annotations

import altair as alt
import duckdb

from pipelines.lib.reporting.report.formatting import coordinate, money, money_cell, number_cell, percent
from pipelines.lib.reporting.report.marts import has_rows, no_data, query
from pipelines.lib.reporting.report.render import CHART_WIDTH, Cell, Section, Table

HEADING = Section(
    "buy-vs-rent",
    "Buy vs rent: the break-even curve",
    (
        "The falling curve is what one GPU-hour we actually use costs on a server we own (depreciation, energy, "
        "colocation and maintenance spread over the hours used) at each utilization from 30% to 100%; the flat "
        "lines are rental prices (our own rate and the market's). Where the curve drops below a rental line, "
        "owning is cheaper at that utilization. The table shows, from our own usage, how long a purchase takes "
        "to pay back and the net present value of owning minus renting (positive: owning saves money)."
    ),
    ("fct_buy_vs_rent_scenarios", "fct_buy_vs_rent"),
)


def section(con: duckdb.DuckDBPyConnection) -> Section:
    if not has_rows(con, "fct_buy_vs_rent_scenarios"):
        return no_data(HEADING)
    grid = query(
        con,
        """
        select gpu_model, currency, utilization, rental_price_source, rental_price_per_gpu_hour,
               owned_cost_per_utilized_gpu_hour
        from marts.fct_buy_vs_rent_scenarios order by gpu_model, rental_price_source, utilization
        """,
    )
    owned = {
        (row["gpu_model"], row["currency"], row["utilization"]): row["owned_cost_per_utilized_gpu_hour"] for row in grid
    }
    values = [
        {
            "gpu_model": f"{model} ({currency})",
            "utilization": coordinate(utilization),
            "series": "owned, per used GPU-hour",
            "price": coordinate(price),
            "text": money(price, currency, places=4),
        }
        for (model, currency, utilization), price in owned.items()
        if price is not None
    ]
    values += [
        {
            "gpu_model": f"{row['gpu_model']} ({row['currency']})",
            "utilization": coordinate(row["utilization"]),
            # one line per price: the fixed prices of the dbt var share one source name
            "series": f"rent, {row['rental_price_source'].replace('_', ' ')}: "
            f"{money(row['rental_price_per_gpu_hour'], row['currency'])}",
            "price": coordinate(row["rental_price_per_gpu_hour"]),
            "text": money(row["rental_price_per_gpu_hour"], row["currency"], places=4),
        }
        for row in grid
        if row["rental_price_per_gpu_hour"] is not None
    ]
    chart = (
        alt.Chart(alt.Data(values=values))
        .mark_line()
        .encode(
            x=alt.X("utilization:Q", title="Utilization of the owned server", axis=alt.Axis(format="%")),
            strokeDash=alt.condition(
                "datum.series === 'owned, per used GPU-hour'", alt.value([1, 0]), alt.value([4, 3])
            ),
            y=alt.Y("price:Q", title="Price per GPU-hour (currency in the panel title)"),
            color=alt.Color("series:N", title=None, legend=alt.Legend(labelLimit=0)),
            tooltip=[
                alt.Tooltip("gpu_model:N", title="GPU"),
                alt.Tooltip("series:N", title="Series"),
                alt.Tooltip("utilization:Q", title="Utilization", format=".0%"),
                alt.Tooltip("text:N", title="Per GPU-hour"),
            ],
        )
        .properties(width=CHART_WIDTH // 2 - 40, height=240)
        .facet(facet=alt.Facet("gpu_model:N", title="GPU model (currency)"), columns=2)
        .resolve_scale(y="independent")
        .properties(title="Owned cost per used GPU-hour against rental prices")
        .to_dict()
    )
    tables: list[Table] = []
    if has_rows(con, "fct_buy_vs_rent"):
        rows = [
            [
                Cell(row["gpu_model"]),
                number_cell(row["avg_concurrent_gpus"], 1),
                money_cell(row["effective_rate_per_gpu_hour"], row["currency"], places=4),
                money_cell(row["owned_cost_per_utilized_gpu_hour"], row["currency"], places=4),
                Cell(percent(row["break_even_utilization"])),
                Cell("-" if row["break_even_months"] is None else f"{row['break_even_months']:,.1f}"),
                money_cell(row["npv_own_minus_rent"], row["currency"]),
            ]
            for row in query(
                con,
                """
                select gpu_model, currency, avg_concurrent_gpus, effective_rate_per_gpu_hour,
                       owned_cost_per_utilized_gpu_hour, break_even_utilization, break_even_months, npv_own_minus_rent
                from marts.fct_buy_vs_rent order by gpu_model
                """,
            )
        ]
        tables.append(
            Table(
                "From our own usage (fct_buy_vs_rent)",
                [
                    "GPU model",
                    "GPUs busy on average",
                    "Our rental rate",
                    "Owned, per used GPU-hour",
                    "Break-even utilization",
                    "Break-even months",
                    "NPV own − rent",
                ],
                rows,
            )
        )
    return HEADING.drawn(chart, *tables)
