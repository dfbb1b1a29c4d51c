"""Commitment recommendations: the yearly cost of the steady baseline under each option, and the usage profile."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import altair as alt
import duckdb

from pipelines.lib.reporting.report.formatting import coordinate, money, money_cell, number_cell, percent
from pipelines.lib.reporting.report.marts import has_rows, no_data, query
from pipelines.lib.reporting.report.render import CHART_WIDTH, Cell, Section, Table

HEADING = Section(
    "commitments",
    "Commitment recommendations",
    (
        "What to commit to, from our own hourly GPU usage of the last weeks. For each provider, GPU model and region "
        "the steady baseline is the number of GPUs we ran in at least 90% of the hours (the usage profile below shows "
        "it beside the median, busy hours and peak). The bars are what that baseline costs a year under each option "
        "the data can price: on demand, the provider's 1- and 3-year commitments, the cheapest GPU cloud, spot with "
        "the extra hours interruptions cost, and owning servers; the black tick is what it costs at the rate we pay "
        "now. The table names the cheapest option, what it saves a year, the month it has paid for itself, and the "
        'risk: how busy the committed GPUs must stay to beat paying on demand; "current" means nothing costs less '
        "than what we pay now. Amounts are in the billing currency."
    ),
    ("fct_gpu_commitment_recommendations", "fct_gpu_usage_profile"),
)


def section(con: duckdb.DuckDBPyConnection) -> Section:
    if not has_rows(con, "fct_gpu_commitment_recommendations"):
        return no_data(HEADING)
    options = query(
        con,
        """
        select provider_name, gpu_model, region_id, billing_currency, option_name, offer_provider, offer_pricing_model,
               baseline_gpus, cost_per_year, current_cost_per_year, savings_per_year, break_even_month, is_recommended,
               risk
        from marts.fct_gpu_commitment_recommendations
        order by billing_currency, provider_name, gpu_model, region_id, cost_per_year nulls first, option_name
        """,
    )

    def scope(row: dict[str, Any]) -> str:
        where = " · ".join(part for part in (row["provider_name"], row["gpu_model"], row["region_id"]) if part)
        return f"{where} ({row['billing_currency']})"

    # what we pay now is the tick, not a bar
    priced = [row for row in options if row["cost_per_year"] is not None and row["option_name"] != "current"]
    chart = None
    if priced:
        values = [
            {
                "scope": f"{scope(row)}, {row['baseline_gpus']} GPUs",
                "currency": row["billing_currency"],
                "option": row["option_name"].replace("_", " "),
                "cost": coordinate(row["cost_per_year"]),
                "current": coordinate(row["current_cost_per_year"]),
                "text": money(row["cost_per_year"], row["billing_currency"]),
                "savings": money(row["savings_per_year"], row["billing_currency"]),
                "recommended": "recommended" if row["is_recommended"] else "",
            }
            for row in priced
        ]
        y = alt.Y("scope:N", title=None, axis=alt.Axis(labelLimit=0))
        base_chart = alt.Chart()
        bars = base_chart.mark_bar().encode(
            y=y,
            yOffset=alt.YOffset("option:N"),
            x=alt.X("cost:Q", title="Cost per year of the baseline"),
            color=alt.Color("option:N", title="Option"),
            stroke=alt.condition("datum.recommended", alt.value("black"), alt.value(None)),
            tooltip=[
                alt.Tooltip("scope:N", title="Scope"),
                alt.Tooltip("option:N", title="Option"),
                alt.Tooltip("text:N", title="Per year"),
                alt.Tooltip("savings:N", title="Saves a year"),
                alt.Tooltip("recommended:N", title=" "),
            ],
        )
        ticks = base_chart.mark_tick(color="black", thickness=3).encode(y=y, x="current:Q")
        # one panel per billing currency (amounts of different currencies never share an axis), 9 px per bar
        chart = (
            alt.layer(bars, ticks, data=alt.Data(values=values))
            .properties(width=CHART_WIDTH - 320, height=alt.Step(9, **{"for": "offset"}))
            .facet(row=alt.Row("currency:N", title="Billing currency"))
            .resolve_scale(x="independent", y="independent")
            .to_dict()
        )
    recommended = [
        [
            Cell(scope(row)),
            Cell(str(row["baseline_gpus"])),
            Cell(
                row["option_name"].replace("_", " ")
                + (f" ({row['offer_provider']}, {row['offer_pricing_model']})" if row["offer_provider"] else "")
            ),
            money_cell(row["cost_per_year"], row["billing_currency"]),
            money_cell(row["current_cost_per_year"], row["billing_currency"]),
            money_cell(row["savings_per_year"], row["billing_currency"]),
            Cell("-" if row["break_even_month"] is None else str(row["break_even_month"])),
            Cell(row["risk"]),
        ]
        for row in options
        if row["is_recommended"] or row["cost_per_year"] is None
    ]
    tables = [
        Table(
            "The recommendation per scope (a scope without one says why)",
            ["Scope", "Baseline GPUs", "Option", "Per year", "Now, per year", "Saves a year", "Break-even month",
             "Risk"],
            recommended,
        )
    ]  # fmt: skip
    if has_rows(con, "fct_gpu_usage_profile"):
        profile = [
            [
                Cell(scope(row)),
                # the window ends at midnight, exclusive: its last day is the day before
                Cell(f"{row['window_start']:%Y-%m-%d} – {row['window_end'] - timedelta(hours=1):%Y-%m-%d}"),
                Cell(f"{row['hours_observed']:,}"),
                *(number_cell(row[column], 1) for column in ("p10_gpus", "p50_gpus", "p90_gpus", "max_gpus")),
                Cell(str(row["baseline_gpus"])),
                Cell(percent(row["baseline_busy_share"])),
                money_cell(row["effective_rate_per_gpu_hour"], row["billing_currency"], places=4),
            ]
            for row in query(
                con,
                """
                select * from marts.fct_gpu_usage_profile
                order by billing_currency, provider_name, gpu_model, region_id
                """,
            )
        ]
        tables.append(
            Table(
                "Usage profile: GPUs per hour over the window (fct_gpu_usage_profile)",
                ["Scope", "Window", "Hours", "p10", "Median", "p90", "Peak", "Baseline", "Baseline busy",
                 "Our rate per GPU-hour"],
                profile,
            )
        )  # fmt: skip
    return HEADING.drawn(chart, *tables)
