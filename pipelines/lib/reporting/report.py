"""`gpu-finops report`: one self-contained HTML page of charts and tables that finance can open offline.

The numbers come from the marts over a read-only connection: every total, ratio, share and ranking is a dbt
reporting model (`marts.rpt_*`, models/marts/reporting), which this module only selects, formats and draws, so
the CLI summary and ad-hoc SQL read the same figures. Charts are Vega-Lite specs built with
Altair and drawn by the Vega JavaScript that vl-convert bundles, inlined once in the page (no CDN, no
network). Amounts stay Decimal: tables and tooltips show them formatted from the exact value, and only chart
coordinates are floats. Every value from the warehouse is escaped (HTML text with `html.escape`, chart data
as JSON with `<`, `>` and `&` escaped so no text can close the script that carries it).
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import altair as alt
import duckdb

from pipelines.lib.foundation.atomic_files import replaced_atomically
from pipelines.lib.quality.quality import live_warnings
from pipelines.lib.warehouse.warehouse import connect

REPORT_FILE = "gpu-finops-report.html"
CHART_WIDTH = 760
# The parts of fct_gpu_utilization_daily's spend: on every billed row they add up to effective_cost.
FUNNEL_COST_PARTS = (
    ("active_cost", "Active"),
    ("idle_cost", "Idle"),
    ("unobserved_cost", "Without telemetry"),
    ("unused_commitment_cost", "Unused commitments"),
)


@dataclass(frozen=True)
class Table:
    caption: str
    header: Sequence[str]
    rows: Sequence[Sequence[Cell]]


@dataclass(frozen=True)
class Cell:
    """One table cell: the text shown, and for amounts the exact decimal (kept in a data attribute)."""

    text: str
    exact: Decimal | None = None


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    how_to_read: str
    marts: Sequence[str]
    chart: dict[str, Any] | None = None
    tables: Sequence[Table] = field(default_factory=tuple)
    empty: str | None = None


@dataclass(frozen=True)
class Report:
    path: Path
    sections: Sequence[Section]

    @property
    def charts(self) -> int:
        return sum(section.chart is not None for section in self.sections)


def write_report(warehouse: Path, output: Path) -> Report:
    """Query the marts and write the page to `output` (its folder is created)."""
    with connect(warehouse, read_only=True) as con:
        sections = [
            _gpu_spend(con),
            _utilization(con),
            _cost_allocation(con),
            _spot_savings(con),
            _market(con),
            _buy_vs_rent(con),
            _commitments(con),
            _opportunities(con),
            _anomalies(con),
            _forecast(con),
            _data_quality(con),
        ]
    with replaced_atomically(output) as (temporary,):
        temporary.write_text(render(sections, generated_at=datetime.now(UTC)), encoding="utf-8")
    return Report(output, sections)


# --- queries and charts, one function per section -------------------------------------------------


def _gpu_spend(con: duckdb.DuckDBPyConnection) -> Section:
    how = (
        "Each bar is one week of GPU spend (effective cost: what the GPUs cost after discounts, with commitment "
        "fees spread over the hours they paid for), converted to the reporting currency at the European Central "
        "Bank rate of each charge day. The upper chart splits the week by provider, the lower by GPU model; hover "
        "a bar for the exact amount. The table gives the totals in each billing currency as invoiced, and the "
        "GPU share of the whole cloud bill."
    )
    base = Section(
        "gpu-spend",
        "GPU spend over time, by provider and GPU model",
        how,
        ("rpt_gpu_spend_weekly", "rpt_gpu_share_of_bill", "rpt_gpu_spend_in_reporting_currency"),
    )
    if not all(_has_rows(con, mart) for mart in ("rpt_gpu_spend_weekly", "rpt_gpu_share_of_bill")):
        return _no_data(base)
    currency = _reporting_currency(con, "rpt_gpu_spend_weekly")
    charts = [
        _weekly_bars(
            _query(
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
    totals = _query(
        con,
        """
        select * from marts.rpt_gpu_share_of_bill where gpu_effective_cost is not null order by billing_currency
        """,
    )
    rows = [
        [
            Cell(row["billing_currency"]),
            _money_cell(row["gpu_effective_cost"], row["billing_currency"]),
            _money_cell(row["gpu_billed_cost"], row["billing_currency"]),
            _number_cell(row["gpu_hours"], 1),
            _money_cell(row["cost_per_gpu_hour"], row["billing_currency"]),
            Cell(_percent(row["gpu_share_of_bill"])),
        ]
        for row in totals
    ]
    reporting = _query(con, "select * from marts.rpt_gpu_spend_in_reporting_currency")[0]
    amount, missing_rows = reporting["effective_cost_reporting"], reporting["rows_without_exchange_rate"]
    missing = f" ({missing_rows} rows without an exchange rate are left out)" if missing_rows else ""
    table = Table(
        f"GPU spend per billing currency; all of it in {currency}: {_money(amount, currency)}{missing}",
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
    return Section(base.key, base.title, base.how_to_read, base.marts, chart, (table,))


def _utilization(con: duckdb.DuckDBPyConnection) -> Section:
    how = (
        "Of the GPU-hours we paid for (provisioned), how many did our telemetry see, how many was the GPU busy "
        "(active) and how many did its streaming multiprocessors actually compute (effective)? The gap between "
        "observed and active hours is idle time; the table prices it at what each GPU-hour cost, in the billing "
        "currency. Unused commitments are reservations, savings plans and committed use discounts paid for but "
        "used by no GPU-hour: idle money with no hours behind it. The lower chart splits each billing currency's "
        "GPU spend into active, idle, unobserved (no telemetry) and unused commitment cost, which add up to it. A "
        "low effective share means each useful GPU-hour costs more than the list price suggests."
    )
    base = Section(
        "utilization",
        "Utilization funnel: provisioned → active → effective GPU-hours",
        how,
        ("rpt_utilization_funnel", "rpt_utilization_cost"),
    )
    if not _has_rows(con, "fct_gpu_utilization_daily") or not _exists(con, "rpt_utilization_cost"):
        return _no_data(base)
    stages = _query(
        con,
        """
        select provisioned_gpu_hours as provisioned, telemetry_gpu_hours as observed,
               active_gpu_hours as active, effective_gpu_hours as effective
        from marts.rpt_utilization_funnel
        """,
    )[0]
    funnel = [
        {"stage": label, "order": order, "gpu_hours": _float(stages[key]), "text": _number(stages[key], 1)}
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
    per_currency = _query(
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
            "amount": _float(row[key]),
            "text": _money(row[key], row["billing_currency"]),
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
            _money_cell(row["spend"], row["billing_currency"]),
            _money_cell(row["active_cost"], row["billing_currency"]),
            _money_cell(row["idle_cost"], row["billing_currency"]),
            _number_cell(row["idle_hours"], 1),
            _money_cell(row["unobserved_cost"], row["billing_currency"]),
            _money_cell(row["unused_commitment_cost"], row["billing_currency"]),
            _money_cell(row["cost_per_effective_gpu_hour"], row["billing_currency"]),
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
    return Section(base.key, base.title, base.how_to_read, base.marts, chart, (table,))


def _cost_allocation(con: duckdb.DuckDBPyConnection) -> Section:
    how = (
        "Who used the Kubernetes GPUs we paid for. Each pod is charged the bill's own cost of one GPU-hour on its "
        "node that day for every GPU-hour it held a GPU (pods sharing a GPU by time-slicing split it), rounded to "
        "the cent. What no pod held (idle GPUs, GPUs the exporter did not map to a pod, unused commitments and the "
        "rounding) is the unallocated row, so each currency's rows add up to the nodes' GPU spend exactly. Active "
        "share is how busy the GPUs were while held: a team with a low one pays for GPUs it holds but barely "
        "uses. A namespace without a team in the seed kubernetes_namespace_teams shows as unassigned."
    )
    base = Section("chargeback", "Kubernetes GPU chargeback per namespace and team", how, ("rpt_gpu_cost_allocation",))
    if not _has_rows(con, "rpt_gpu_cost_allocation"):
        return _no_data(base)
    rows = [
        [
            Cell(row["billing_currency"]),
            Cell("-" if row["allocation_type"] == "unallocated" else row["team"] or "unassigned"),
            Cell("unallocated (no pod held the GPUs)" if row["allocation_type"] == "unallocated" else row["namespace"]),
            _number_cell(row["gpu_hours"], 1),
            Cell(_percent(row["active_share"])),
            _money_cell(row["allocated_cost"], row["billing_currency"]),
            Cell(_percent(row["cost_share"])),
        ]
        for row in _query(
            con,
            """
            select * from marts.rpt_gpu_cost_allocation
            order by billing_currency, allocation_type = 'unallocated', allocated_cost desc, namespace
            """,
        )
    ]
    table = Table(
        "GPU cost per namespace, whole history, per billing currency",
        ["Billing currency", "Team", "Namespace", "GPU-hours held", "Active share", "Cost", "Share of the nodes' cost"],
        rows,
    )
    return Section(base.key, base.title, base.how_to_read, base.marts, None, (table,))


def _spot_savings(con: duckdb.DuckDBPyConnection) -> Section:
    how = (
        "Realized savings: what our spot GPU-hours would have cost on demand, minus what they cost. Forgone "
        "savings: what our on-demand GPU-hours would have saved at the month's market spot price; the "
        "interruption-adjusted figure takes off the work lost to reclaims (checkpoint model, Spot Advisor band). "
        "Bars are per billing month in the reporting currency."
    )
    base = Section("spot-savings", "Spot savings: realized and forgone", how, ("rpt_spot_savings_monthly",))
    if not _has_rows(con, "rpt_spot_savings_monthly"):
        return _no_data(base)
    currency = _reporting_currency(con, "rpt_spot_savings_monthly")
    months = _query(
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
            "amount": _float(row[key]),
            "text": _money(row[key], currency),
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
        [Cell(row["month"].strftime("%Y-%m"))] + [_money_cell(row[key], currency) for key, _ in kinds] for row in months
    ]
    table = Table(
        f"Spot savings per billing month ({currency})",
        ["Month", "Realized", "Forgone", "Forgone, interruption-adjusted"],
        rows,
    )
    return Section(base.key, base.title, base.how_to_read, base.marts, chart, (table,))


def _market(con: duckdb.DuckDBPyConnection) -> Section:
    how = (
        "For each GPU model we rent, the lines are the market's on-demand price of one GPU-hour each day "
        "(cheapest and median offer over every provider we track, hyperscalers and GPU clouds), and the dots are "
        "what we paid per GPU-hour that day (effective cost over GPU-hours, all pricing models). Dots above the "
        "median line mean we pay more than the typical market price. All prices in the reporting currency."
    )
    base = Section(
        "market", "Market price index and our effective rate", how, ("rpt_market_rate_daily", "rpt_market_rate_by_gpu")
    )
    if not (_has_rows(con, "rpt_market_rate_daily") and _has_rows(con, "rpt_market_rate_by_gpu")):
        return _no_data(base)
    currency = _reporting_currency(con, "rpt_market_rate_by_gpu")
    daily = _query(
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
        return _no_data(base)
    values = [
        {
            "day": row["day"].isoformat(),
            "gpu_model": row["gpu_model"],
            "series": series,
            "price": _float(row[key]),
            "text": _money(row[key], currency, places=4),
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
            "price": _float(row["ours"]),
            "text": _money(row["ours"], currency, places=4),
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
    benchmark = _query(
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
            _number_cell(row["hours"], 1),
            _money_cell(row["rate"], currency, places=4),
            _money_cell(row["to_median"], currency),
            _money_cell(row["to_cheapest"], currency),
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
    return Section(base.key, base.title, base.how_to_read, base.marts, chart, (table,))


def _buy_vs_rent(con: duckdb.DuckDBPyConnection) -> Section:
    how = (
        "The falling curve is what one GPU-hour we actually use costs on a server we own (depreciation, energy, "
        "colocation and maintenance spread over the hours used) at each utilization from 30% to 100%; the flat "
        "lines are rental prices (our own rate and the market's). Where the curve drops below a rental line, "
        "owning is cheaper at that utilization. The table shows, from our own usage, how long a purchase takes "
        "to pay back and the net present value of owning minus renting (positive: owning saves money)."
    )
    base = Section(
        "buy-vs-rent", "Buy vs rent: the break-even curve", how, ("fct_buy_vs_rent_scenarios", "fct_buy_vs_rent")
    )
    if not _has_rows(con, "fct_buy_vs_rent_scenarios"):
        return _no_data(base)
    grid = _query(
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
            "utilization": _float(utilization),
            "series": "owned, per used GPU-hour",
            "price": _float(price),
            "text": _money(price, currency, places=4),
        }
        for (model, currency, utilization), price in owned.items()
        if price is not None
    ]
    values += [
        {
            "gpu_model": f"{row['gpu_model']} ({row['currency']})",
            "utilization": _float(row["utilization"]),
            # one line per price: the fixed prices of the dbt var share one source name
            "series": f"rent, {row['rental_price_source'].replace('_', ' ')}: "
            f"{_money(row['rental_price_per_gpu_hour'], row['currency'])}",
            "price": _float(row["rental_price_per_gpu_hour"]),
            "text": _money(row["rental_price_per_gpu_hour"], row["currency"], places=4),
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
    if _has_rows(con, "fct_buy_vs_rent"):
        rows = [
            [
                Cell(row["gpu_model"]),
                _number_cell(row["avg_concurrent_gpus"], 1),
                _money_cell(row["effective_rate_per_gpu_hour"], row["currency"], places=4),
                _money_cell(row["owned_cost_per_utilized_gpu_hour"], row["currency"], places=4),
                Cell(_percent(row["break_even_utilization"])),
                Cell("-" if row["break_even_months"] is None else f"{row['break_even_months']:,.1f}"),
                _money_cell(row["npv_own_minus_rent"], row["currency"]),
            ]
            for row in _query(
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
    return Section(base.key, base.title, base.how_to_read, base.marts, chart, tuple(tables))


def _commitments(con: duckdb.DuckDBPyConnection) -> Section:
    how = (
        "What to commit to, from our own hourly GPU usage of the last weeks. For each provider, GPU model and region "
        "the steady baseline is the number of GPUs we ran in at least 90% of the hours (the usage profile below shows "
        "it beside the median, busy hours and peak). The bars are what that baseline costs a year under each option "
        "the data can price: on demand, the provider's 1- and 3-year commitments, the cheapest GPU cloud, spot with "
        "the extra hours interruptions cost, and owning servers; the black tick is what it costs at the rate we pay "
        "now. The table names the cheapest option, what it saves a year, the month it has paid for itself, and the "
        'risk: how busy the committed GPUs must stay to beat paying on demand; "current" means nothing costs less '
        "than what we pay now. Amounts are in the billing currency."
    )
    base = Section(
        "commitments",
        "Commitment recommendations",
        how,
        ("fct_gpu_commitment_recommendations", "fct_gpu_usage_profile"),
    )
    if not _has_rows(con, "fct_gpu_commitment_recommendations"):
        return _no_data(base)
    options = _query(
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
                "cost": _float(row["cost_per_year"]),
                "current": _float(row["current_cost_per_year"]),
                "text": _money(row["cost_per_year"], row["billing_currency"]),
                "savings": _money(row["savings_per_year"], row["billing_currency"]),
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
            _money_cell(row["cost_per_year"], row["billing_currency"]),
            _money_cell(row["current_cost_per_year"], row["billing_currency"]),
            _money_cell(row["savings_per_year"], row["billing_currency"]),
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
    if _has_rows(con, "fct_gpu_usage_profile"):
        profile = [
            [
                Cell(scope(row)),
                # the window ends at midnight, exclusive: its last day is the day before
                Cell(f"{row['window_start']:%Y-%m-%d} – {row['window_end'] - timedelta(hours=1):%Y-%m-%d}"),
                Cell(f"{row['hours_observed']:,}"),
                *(_number_cell(row[column], 1) for column in ("p10_gpus", "p50_gpus", "p90_gpus", "max_gpus")),
                Cell(str(row["baseline_gpus"])),
                Cell(_percent(row["baseline_busy_share"])),
                _money_cell(row["effective_rate_per_gpu_hour"], row["billing_currency"], places=4),
            ]
            for row in _query(
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
    return Section(base.key, base.title, base.how_to_read, base.marts, chart, tuple(tables))


def _opportunities(con: duckdb.DuckDBPyConnection) -> Section:
    how = (
        "The largest amounts we could have saved over the whole history in the warehouse, ranked within each "
        "currency: paying the median market price where we paid more (market benchmark), running on-demand "
        "GPU-hours on spot after the cost of interruptions (spot savings), GPU-hours paid for while the GPU sat "
        "idle (utilization), and commitments paid for but not used (commitment coverage). The last column names "
        "the mart each figure comes from; they overlap (an idle on-demand hour also counts as forgone spot "
        "savings), so do not add them up."
    )
    base = Section("opportunities", "Largest savings opportunities", how, ("rpt_savings_opportunities",))
    if not _has_rows(con, "rpt_savings_opportunities"):
        return _no_data(base)
    ranked = [
        [
            Cell(str(row["opportunity_rank"])),
            Cell(row["opportunity"]),
            Cell(row["scope"] or "-"),
            _money_cell(row["amount"], row["currency"]),
            Cell(row["source_mart"]),
        ]
        for row in _query(
            con,
            """
            select * from marts.rpt_savings_opportunities where opportunity_rank <= 15
            order by currency, opportunity_rank
            """,
        )
    ]
    table = Table(
        "Top 15 per currency", ["Rank", "Opportunity", "Where (provider · GPU · …)", "Amount", "From mart"], ranked
    )
    return Section(base.key, base.title, base.how_to_read, base.marts, None, (table,))


def _anomalies(con: duckdb.DuckDBPyConnection) -> Section:
    how = (
        "The line is each day's GPU spend (effective cost) in its billing currency, all providers and teams together; "
        "the grey line is what that weekday usually costs (the median of the same weekday over the previous four "
        "weeks). A red dot marks a day on which some provider, GPU model and team spent far outside its normal range: "
        "a forgotten node, spot falling back to on-demand, a price change, a commitment running out, a lost export. "
        "Hover a dot for what moved. The table lists each anomaly's drivers: the resources whose cost changed most "
        "and why (cause), from their own bills."
    )
    base = Section(
        "anomalies",
        "GPU spend anomalies and their causes",
        how,
        ("fct_gpu_spend_anomalies", "fct_gpu_spend_anomaly_drivers"),
    )
    if not _has_rows(con, "fct_gpu_spend_anomalies"):
        return _no_data(base)
    totals = _query(
        con,
        """
        select charge_date, billing_currency, actual_cost, case when is_judged then expected_cost end as expected_cost
        from marts.fct_gpu_spend_anomalies where grain = 'total' order by billing_currency, charge_date
        """,
    )
    flagged = _query(
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
            "amount": _float(row[key]),
        }
        for row in totals
        for key, kind in (("actual_cost", "actual"), ("expected_cost", "usual for the weekday"))
        if row[key] is not None
    ]
    markers = [
        {
            "day": row["charge_date"].isoformat(),
            "currency": row["billing_currency"],
            "amount": _float(row["day_total"]),
            "series": _anomaly_series(row),
            "deviation": _money(row["cost_deviation"], row["billing_currency"]),
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
    drivers = _query(
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
            Cell(_anomaly_series(row)),
            Cell(row["direction"]),
            _money_cell(row["cost_deviation"], row["billing_currency"]),
            Cell(f"{row['driver_rank']}. {row['resource']}"),
            _money_cell(row["cost_change"], row["billing_currency"]),
            Cell(row["cause_class"]),
        ]
        for row in drivers
    ]
    table = Table(
        "Drivers of each anomaly, newest first (at most 60 rows)",
        ["Day", "Series", "Spike or drop", "Off the usual by", "Driver", "Its change", "Cause"],
        rows,
    )
    return Section(base.key, base.title, base.how_to_read, base.marts, chart, (table,))


def _anomaly_series(row: dict[str, Any]) -> str:
    if row["grain"] == "total":
        return f"all GPU spend in {row['billing_currency']}"
    return f"{row['provider_name']} · {row['gpu_model']} · {row['team']}"


def _forecast(con: duckdb.DuckDBPyConnection) -> Section:
    how = (
        "For the latest month with budgets: what each team has spent so far, where the month will land if it keeps "
        "spending at the rate of its last seven days (the bar; the thin line is the range between its cheapest and "
        "dearest of those days), and its budget (the black tick). A team whose forecast passes its budget is "
        "projected over budget; the run-out day is when its budget was or will be used up at that rate. Amounts are "
        "in each budget's billing currency."
    )
    base = Section("forecast", "Month-end forecast against budget, per team", how, ("fct_gpu_spend_forecast",))
    if not _exists(con, "fct_gpu_spend_forecast"):
        return _no_data(base)
    teams = _query(
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
        return _no_data(base)
    values = [
        {
            "team": f"{row['team']} ({row['billing_currency']})",
            "forecast": _float(row["forecast_cost"]),
            "low": _float(row["forecast_low"]),
            "high": _float(row["forecast_high"]),
            "budget": _float(row["budget_amount"]),
            "status": "over budget" if row["is_projected_over_budget"] else "within budget",
            "text": _money(row["forecast_cost"], row["billing_currency"]),
            "budget_text": _money(row["budget_amount"], row["billing_currency"]),
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
            _money_cell(row["month_to_date_cost"], row["billing_currency"]),
            _money_cell(row["burn_rate_per_day"], row["billing_currency"]),
            _money_cell(row["forecast_cost"], row["billing_currency"]),
            Cell(" – ".join(_money(row[key], row["billing_currency"]) for key in ("forecast_low", "forecast_high"))),
            _money_cell(row["budget_amount"], row["billing_currency"]),
            Cell(_percent(row["budget_used_share"])),
            _money_cell(row["projected_overrun"], row["billing_currency"]),
            Cell(row["budget_runout_date"].isoformat() if row["budget_runout_date"] else "-"),
        ]
        for row in teams
    ]
    table = Table(
        f"{month}, as of {teams[0]['as_of_date'].isoformat()} (overrun: forecast minus budget; negative is headroom)",
        ["Team", "Month to date", "Per day", "Forecast", "Range", "Budget", "Used", "Overrun", "Runs out"],
        rows,
    )
    return Section(base.key, base.title, base.how_to_read, base.marts, chart, (table,))


def _data_quality(con: duckdb.DuckDBPyConnection) -> Section:
    how = (
        "Whether each source's data is current and clean. A delivery that breaks a rule the FOCUS spec or its "
        "provider forbids never reaches the warehouse (it waits in the quarantine folder with its reason); one "
        "that is unusual but allowed (a usage reversal, late usage billed in a later period, a value derived "
        "because the layout lacks it) is loaded and listed here with the rows concerned. A delivery that passed "
        "those checks but broke a model rule is withheld: its rows leave the warehouse, every other delivery is "
        "published, and its source is stale until a corrected delivery arrives. docs/data-quality.md lists every "
        "rule and its action."
    )
    base = Section("data-quality", "Data quality", how, ("audit.source_status", "audit.quality_results"))
    audit_tables = {
        name
        for (name,) in con.execute(
            "select table_name from information_schema.tables where table_schema = 'audit' "
            "and table_name in ('source_status', 'quality_results', 'loads', 'withheld_loads')"
        ).fetchall()
    }
    if not {"source_status", "quality_results", "loads"} <= audit_tables:
        return _no_data(base)
    statuses = _query(con, "select * from audit.source_status where live_loads > 0 or status <> 'never delivered'")
    warnings = live_warnings(con)
    withheld = (
        _query(con, "select * from audit.withheld_loads order by withheld_at desc")
        if "withheld_loads" in audit_tables
        else []
    )
    tables = [
        Table(
            "Sources",
            ["Source", "Status", "Why", "Loads in raw", "Loads with warnings"],
            [
                [
                    Cell(row["source"]),
                    Cell(row["status"]),
                    Cell(row["why"] or "-"),
                    Cell(str(row["live_loads"])),
                    Cell(str(row["loads_with_warnings"])),
                ]
                for row in statuses
            ],
        ),
        Table(
            "Warnings on the rows in the warehouse now",
            ["Source", "Delivery", "Rule", "Rows", "First at"],
            [
                [
                    Cell(warning.source),
                    Cell(warning.delivery),
                    Cell(warning.rule),
                    Cell("-" if warning.rows is None else str(warning.rows)),
                    Cell(warning.example or "-"),
                ]
                for warning in warnings
            ]
            or [
                [
                    Cell("-"),
                    Cell("-"),
                    Cell("No warnings: every delivery in the warehouse is clean."),
                    Cell("-"),
                    Cell("-"),
                ]
            ],
        ),
    ]
    if withheld:
        tables.append(
            Table(
                "Deliveries withheld by a model rule",
                ["Source", "Delivery", "Withheld at (UTC)", "Rejected by model rule"],
                [
                    [
                        Cell(row["source"]),
                        Cell(row["delivery"]),
                        Cell(f"{row['withheld_at']:%Y-%m-%d %H:%M}"),
                        Cell(row["message"]),
                    ]
                    for row in withheld
                ],
            )
        )
    return Section(base.key, base.title, base.how_to_read, base.marts, None, tuple(tables))


def _weekly_bars(rows: list[dict[str, Any]], legend: str, currency: str) -> alt.Chart:
    phrase = "provider" if legend == "Provider" else legend
    values = [
        {
            "week": row["week"].isoformat(),
            "series": row["series"] or "(unknown)",
            "amount": _float(row["amount"]),
            "text": _money(row["amount"], currency),
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


# --- SQL helpers ----------------------------------------------------------------------------------


def _exists(con: duckdb.DuckDBPyConnection, mart: str) -> bool:
    return bool(
        con.execute(
            "select count(*) from information_schema.tables where table_schema = 'marts' and table_name = ?", [mart]
        ).fetchone()[0]
    )


def _has_rows(con: duckdb.DuckDBPyConnection, mart: str) -> bool:
    # `mart` is one of this module's own names, never user input
    return _exists(con, mart) and con.execute(f"select exists (select 1 from marts.{mart})").fetchone()[0]


def _query(con: duckdb.DuckDBPyConnection, sql: str, parameters: list[Any] | None = None) -> list[dict[str, Any]]:
    cursor = con.execute(sql, parameters or [])
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _reporting_currency(con: duckdb.DuckDBPyConnection, mart: str) -> str:
    found = con.execute(f"select any_value(reporting_currency) from marts.{mart}").fetchone()[0]
    return found or "reporting currency"


def _no_data(section: Section) -> Section:
    marts = ", ".join(section.marts)
    message = (
        f"No data yet: {marts} has no rows. It fills once bills (and, where needed, market prices and GPU "
        "telemetry) are loaded: run `gpu-finops demo` or `gpu-finops ingest`, then build this report again."
    )
    return Section(section.key, section.title, section.how_to_read, section.marts, None, (), message)


# --- formatting -----------------------------------------------------------------------------------


def _float(value: Decimal | None) -> float | None:
    """Chart coordinates only: amounts shown as text keep their exact decimal value."""
    return None if value is None else float(value)


def _money(value: Decimal | None, currency: str, places: int = 2) -> str:
    """Rounded half up at `places` (as an invoice would), from the exact decimal."""
    if value is None:
        return "-"
    return f"{currency} {_round(value, places):,.{places}f}"


def _round(value: Decimal, places: int) -> Decimal:
    return Decimal(value).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def _money_cell(value: Decimal | None, currency: str, places: int = 2) -> Cell:
    return Cell(_money(value, currency, places), None if value is None else Decimal(value))


def _number(value: Decimal | None, places: int) -> str:
    return "-" if value is None else f"{_round(value, places):,.{places}f}"


def _number_cell(value: Decimal | None, places: int) -> Cell:
    return Cell(_number(value, places), None if value is None else Decimal(value))


def _percent(value: Decimal | None) -> str:
    return "-" if value is None else f"{Decimal(value) * 100:,.1f}%"


# --- the page -------------------------------------------------------------------------------------


def _script_json(value: Any) -> str:
    """JSON that is safe inside <script>: no text in it can end the element or open a comment."""
    text = json.dumps(value, separators=(",", ":"), default=_json_default)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, date | datetime):
        return value.isoformat()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def _vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script (from vl-convert, so no network is needed)."""
    import vl_convert
    from altair.utils._importers import vl_version_for_vl_convert

    bundle = vl_convert.javascript_bundle(vl_version=vl_version_for_vl_convert())
    return bundle.replace("</script", "<\\/script")


def _render_table(table: Table) -> str:
    head = "".join(f"<th>{html.escape(name)}</th>" for name in table.header)
    body = []
    for row in table.rows:
        cells = []
        for cell in row:
            exact = (
                f' data-exact="{html.escape(format(cell.exact, "f"))}" class="num"' if cell.exact is not None else ""
            )
            cells.append(f"<td{exact}>{html.escape(cell.text)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (
        f"<table><caption>{html.escape(table.caption)}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _render_section(section: Section) -> str:
    marts = ", ".join(f"<code>{html.escape(mart if '.' in mart else f'marts.{mart}')}</code>" for mart in section.marts)
    parts = [
        f'<section id="{html.escape(section.key)}">',
        f"<h2>{html.escape(section.title)}</h2>",
        f'<p class="how"><strong>How to read this.</strong> {html.escape(section.how_to_read)}</p>',
        f'<p class="source">From {marts}.</p>',
    ]
    if section.empty is not None:
        parts.append(f'<p class="empty">{html.escape(section.empty)}</p>')
    if section.chart is not None:
        key = html.escape(section.key)
        parts.append(
            f'<div class="chart" id="chart-{key}"></div>'
            f'<script type="application/json" id="spec-{key}">{_script_json(section.chart)}</script>'
        )
    parts.extend(_render_table(table) for table in section.tables)
    parts.append("</section>")
    return "\n".join(parts)


def render(sections: Sequence[Section], *, generated_at: datetime) -> str:
    charts = [section.key for section in sections if section.chart is not None]
    contents = "".join(
        f'<li><a href="#{html.escape(section.key)}">{html.escape(section.title)}</a></li>' for section in sections
    )
    body = "\n".join(_render_section(section) for section in sections)
    script = (
        "const charts = " + _script_json(charts) + ";\n"
        "window.chartsRendered = Promise.all(charts.map((key) => {\n"
        "  const spec = JSON.parse(document.getElementById('spec-' + key).textContent);\n"
        "  return vegaEmbed('#chart-' + key, spec, {renderer: 'svg', actions: false});\n"
        "}));\n"
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>GPU FinOps report</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1040px; color: #1d2430; padding: 0 1rem; }}
h1 {{ margin-bottom: 0.2rem; }}
section {{ margin: 2.5rem 0; }}
p.how {{ background: #f3f6fa; padding: 0.6rem 0.8rem; border-left: 4px solid #4c78a8; }}
p.source, p.generated {{ color: #5b6675; font-size: 0.9rem; }}
p.empty {{ font-style: italic; color: #8a5a00; }}
table {{ border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; }}
caption {{ text-align: left; font-weight: 600; padding-bottom: 0.3rem; }}
th, td {{ border-bottom: 1px solid #dde3ea; padding: 0.3rem 0.6rem; text-align: left; }}
td.num {{ text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }}
</style>
<script>
{_vega_bundle()}
</script>
</head>
<body>
<h1>GPU FinOps report</h1>
<p class="generated">Generated {html.escape(generated_at.strftime("%Y-%m-%d %H:%M UTC"))} from the warehouse's marts.
Amounts in tables are exact to the cent; charts round them for drawing. Effective cost is what was paid after
discounts, with commitment fees spread over the hours they covered.</p>
<ol>{contents}</ol>
{body}
<script>
{script}</script>
</body>
</html>
"""
