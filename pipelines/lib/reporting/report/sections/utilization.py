"""The utilization funnel: provisioned, observed, active and effective GPU-hours, and what each part cost."""

from __future__ import annotations

import altair as alt
import duckdb

from pipelines.lib.reporting.report.formatting import coordinate, money, money_cell, number, number_cell
from pipelines.lib.reporting.report.marts import exists, has_rows, no_data, query
from pipelines.lib.reporting.report.render import CHART_WIDTH, Cell, Section, Table

# The parts of fct_gpu_utilization_daily's spend: on every billed row they add up to effective_cost.
FUNNEL_COST_PARTS = (
    ("active_cost", "Active"),
    ("idle_cost", "Idle"),
    ("unobserved_cost", "Without telemetry"),
    ("unused_commitment_cost", "Unused commitments"),
)
HEADING = Section(
    "utilization",
    "Utilization funnel: provisioned → active → effective GPU-hours",
    (
        "Of the GPU-hours we paid for (provisioned), how many did our telemetry see, how many was the GPU busy "
        "(active) and how many did its streaming multiprocessors actually compute (effective)? The gap between "
        "observed and active hours is idle time; the table prices it at what each GPU-hour cost, in the billing "
        "currency. Unused commitments are reservations, savings plans and committed use discounts paid for but "
        "used by no GPU-hour: idle money with no hours behind it. The lower chart splits each billing currency's "
        "GPU spend into active, idle, unobserved (no telemetry) and unused commitment cost, which add up to it. A "
        "low effective share means each useful GPU-hour costs more than the list price suggests."
    ),
    ("rpt_utilization_funnel", "rpt_utilization_cost"),
)


def section(con: duckdb.DuckDBPyConnection) -> Section:
    if not has_rows(con, "fct_gpu_utilization_daily") or not exists(con, "rpt_utilization_cost"):
        return no_data(HEADING)
    stages = query(
        con,
        """
        select provisioned_gpu_hours as provisioned, telemetry_gpu_hours as observed,
               active_gpu_hours as active, effective_gpu_hours as effective
        from marts.rpt_utilization_funnel
        """,
    )[0]
    funnel = [
        {"stage": label, "order": order, "gpu_hours": coordinate(stages[key]), "text": number(stages[key], 1)}
        for order, (key, label) in enumerate(
            (
                ("provisioned", "1 provisioned (billed)"),
                ("observed", "2 observed by telemetry"),
                ("active", "3 active"),
                ("effective", "4 effective (SM active)"),
            )
        )
    ]
    hours_chart = (
        alt.Chart(alt.Data(values=funnel))
        .mark_bar()
        .encode(
            y=alt.Y("stage:N", sort=alt.SortField("order"), title=None),
            x=alt.X("gpu_hours:Q", title="GPU-hours"),
            color=alt.Color("stage:N", legend=None),
            tooltip=[alt.Tooltip("stage:N", title="Stage"), alt.Tooltip("text:N", title="GPU-hours")],
        )
        .properties(width=CHART_WIDTH, height=180, title="GPU-hours at each stage, all providers")
    )
    per_currency = query(
        con,
        """
        select billing_currency, effective_cost as spend, active_cost, idle_cost, unobserved_cost,
               unused_commitment_cost, idle_gpu_hours as idle_hours, cost_per_effective_gpu_hour
        from marts.rpt_utilization_cost order by billing_currency
        """,
    )
    # Currencies are never added: each bar is one billing currency's spend, split into the parts that add up to it.
    parts = [
        {
            "currency": row["billing_currency"],
            "part": label,
            "order": order,
            "amount": coordinate(row[key]),
            "text": money(row[key], row["billing_currency"]),
        }
        for row in per_currency
        for order, (key, label) in enumerate(FUNNEL_COST_PARTS)
    ]
    cost_chart = (
        alt.Chart(alt.Data(values=parts))
        .mark_bar()
        .encode(
            y=alt.Y("currency:N", title=None),
            x=alt.X("amount:Q", stack="normalize", title="Share of GPU spend", axis=alt.Axis(format="%")),
            color=alt.Color(
                "part:N",
                sort=[label for _, label in FUNNEL_COST_PARTS],
                legend=alt.Legend(title=None, orient="bottom"),
            ),
            order=alt.Order("order:Q"),
            tooltip=[
                alt.Tooltip("currency:N", title="Billing currency"),
                alt.Tooltip("part:N", title="Part"),
                alt.Tooltip("text:N", title="Cost"),
            ],
        )
        .properties(width=CHART_WIDTH, title="Where the GPU spend went, per billing currency")
    )
    chart = alt.vconcat(hours_chart, cost_chart).resolve_scale(color="independent").to_dict()
    rows = [
        [
            Cell(row["billing_currency"]),
            money_cell(row["spend"], row["billing_currency"]),
            money_cell(row["active_cost"], row["billing_currency"]),
            money_cell(row["idle_cost"], row["billing_currency"]),
            number_cell(row["idle_hours"], 1),
            money_cell(row["unobserved_cost"], row["billing_currency"]),
            money_cell(row["unused_commitment_cost"], row["billing_currency"]),
            money_cell(row["cost_per_effective_gpu_hour"], row["billing_currency"]),
        ]
        for row in per_currency
    ]
    table = Table(
        "Cost of the funnel per billing currency",
        [
            "Billing currency",
            "GPU spend",
            "Active cost",
            "Idle cost",
            "Idle GPU-hours",
            "Cost without telemetry",
            "Unused commitments",
            "Per effective GPU-hour",
        ],
        rows,
    )
    return HEADING.drawn(chart, table)
