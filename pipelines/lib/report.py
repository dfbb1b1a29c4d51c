"""`gpu-finops report`: one self-contained HTML page of charts and tables that finance can open offline.

The numbers come from the marts by SQL over a read-only connection; charts are Vega-Lite specs built with
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
from datetime import UTC, date, datetime
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import altair as alt
import duckdb

from pipelines.lib.quality.quality import live_warnings
from pipelines.lib.reporting.atomic_files import replaced_atomically
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
            _spot_savings(con),
            _market(con),
            _buy_vs_rent(con),
            _opportunities(con),
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
        "gpu-spend", "GPU spend over time, by provider and GPU model", how, ("fct_gpu_spend_daily", "fct_cost_daily")
    )
    if not _has_rows(con, "fct_gpu_spend_daily"):
        return _no_data(base)
    currency = _reporting_currency(con, "fct_gpu_spend_daily")
    by_provider = _query(
        con,
        """
        select cast(date_trunc('week', charge_date) as date) as week, provider_name as series,
               sum(effective_cost_reporting) as amount
        from marts.fct_gpu_spend_daily group by all order by all
        """,
    )
    by_model = _query(
        con,
        """
        select cast(date_trunc('week', charge_date) as date) as week, gpu_model as series,
               sum(effective_cost_reporting) as amount
        from marts.fct_gpu_spend_daily group by all order by all
        """,
    )
    charts = [
        _weekly_bars(rows, legend, currency) for rows, legend in ((by_provider, "Provider"), (by_model, "GPU model"))
    ]
    chart = alt.vconcat(*charts).resolve_scale(color="independent").to_dict()
    totals = _query(
        con,
        """
        with gpu as (
            select billing_currency, sum(effective_cost) as gpu_cost, sum(billed_cost) as gpu_billed,
                   sum(gpu_hours) as gpu_hours
            from marts.fct_gpu_spend_daily group by billing_currency
        ), bill as (
            select billing_currency, sum(effective_cost) as bill_cost
            from marts.fct_cost_daily group by billing_currency
        )
        select gpu.*, bill.bill_cost from gpu left join bill using (billing_currency) order by billing_currency
        """,
    )
    rows = [
        [
            Cell(row["billing_currency"]),
            _money_cell(row["gpu_cost"], row["billing_currency"]),
            _money_cell(row["gpu_billed"], row["billing_currency"]),
            _number_cell(row["gpu_hours"], 1),
            _money_cell(_ratio(row["gpu_cost"], row["gpu_hours"]), row["billing_currency"]),
            Cell(_percent(_ratio(row["gpu_cost"], row["bill_cost"]))),
        ]
        for row in totals
    ]
    reporting = _query(
        con,
        """
        select sum(effective_cost_reporting) as amount,
               count(*) filter (where effective_cost_reporting is null) as missing
        from marts.fct_gpu_spend_daily
        """,
    )[0]
    missing = f" ({reporting['missing']} rows without an exchange rate are left out)" if reporting["missing"] else ""
    table = Table(
        f"GPU spend per billing currency; all of it in {currency}: {_money(reporting['amount'], currency)}{missing}",
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
        ("fct_gpu_utilization_daily",),
    )
    if not _has_rows(con, "fct_gpu_utilization_daily"):
        return _no_data(base)
    stages = _query(
        con,
        """
        select sum(provisioned_gpu_hours) as provisioned, sum(telemetry_gpu_hours) as observed,
               sum(active_gpu_hours) as active, sum(effective_gpu_hours) as effective
        from marts.fct_gpu_utilization_daily
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
        select billing_currency, sum(effective_cost) as spend, sum(active_cost) as active_cost,
               sum(idle_cost) as idle_cost, sum(unobserved_cost) as unobserved_cost,
               sum(unused_commitment_cost) as unused_commitment_cost,
               sum(idle_gpu_hours) as idle_hours, sum(effective_gpu_hours) as effective_hours
        from marts.fct_gpu_utilization_daily where billing_currency is not null
        group by billing_currency order by billing_currency
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
            _money_cell(_ratio(row["spend"], row["effective_hours"]), row["billing_currency"]),
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


def _spot_savings(con: duckdb.DuckDBPyConnection) -> Section:
    how = (
        "Realized savings: what our spot GPU-hours would have cost on demand, minus what they cost. Forgone "
        "savings: what our on-demand GPU-hours would have saved at the month's market spot price; the "
        "interruption-adjusted figure takes off the work lost to reclaims (checkpoint model, Spot Advisor band). "
        "Bars are per billing month in the reporting currency."
    )
    base = Section("spot-savings", "Spot savings: realized and forgone", how, ("fct_spot_savings_monthly",))
    if not _has_rows(con, "fct_spot_savings_monthly"):
        return _no_data(base)
    currency = _reporting_currency(con, "fct_spot_savings_monthly")
    months = _query(
        con,
        """
        select cast(billing_period_start as date) as month, sum(realized_savings) as realized,
               sum(forgone_savings) as forgone, sum(forgone_savings_interruption_adjusted) as adjusted
        from marts.fct_spot_savings_monthly group by all order by all
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
        "market", "Market price index and our effective rate", how, ("fct_gpu_price_index", "fct_market_benchmark")
    )
    if not (_has_rows(con, "fct_gpu_price_index") and _has_rows(con, "fct_market_benchmark")):
        return _no_data(base)
    currency = _reporting_currency(con, "fct_market_benchmark")
    ours = _query(
        con,
        """
        with top as (
            select gpu_model from marts.fct_market_benchmark where gpu_hours > 0
            group by gpu_model order by sum(gpu_hours) desc, gpu_model limit 4
        )
        select charge_date as day, gpu_model, sum(effective_cost_reporting) as cost, sum(gpu_hours) as hours
        from marts.fct_market_benchmark inner join top using (gpu_model)
        where gpu_hours > 0 and effective_cost_reporting is not null
        group by all order by all
        """,
    )
    models = sorted({row["gpu_model"] for row in ours})
    market = _query(
        con,
        """
        select price_date as day, gpu_model, min(min_price_per_gpu_hour_reporting) as cheapest,
               median(median_price_per_gpu_hour_reporting) as median
        from marts.fct_gpu_price_index
        where pricing_model = 'on_demand' and gpu_model in (select unnest(?))
        group by all order by all
        """,
        [models],
    )
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
            "price": _float(row["cost"] / row["hours"]),
            "text": _money(row["cost"] / row["hours"], currency, places=4),
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
        select gpu_model, pricing_category, sum(gpu_hours) as hours, sum(effective_cost_reporting) as cost,
               sum(savings_moving_to_median) as to_median, sum(savings_moving_to_cheapest) as to_cheapest
        from marts.fct_market_benchmark where gpu_hours > 0
        group by all order by cost desc nulls last
        """,
    )
    rows = [
        [
            Cell(row["gpu_model"]),
            Cell(row["pricing_category"]),
            _number_cell(row["hours"], 1),
            _money_cell(_ratio(row["cost"], row["hours"]), currency, places=4),
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


OPPORTUNITIES_SQL = """
with market as (
    select 'Market overpay (vs median price)' as opportunity, 'fct_market_benchmark' as mart,
           provider_name || ' · ' || gpu_model || ' · ' || pricing_category as scope,
           reporting_currency as currency, sum(savings_moving_to_median) as amount
    from marts.fct_market_benchmark group by all
), spot as (
    select 'Forgone spot savings', 'fct_spot_savings_monthly',
           provider_name || ' · ' || gpu_model, reporting_currency, sum(forgone_savings_interruption_adjusted)
    from marts.fct_spot_savings_monthly group by all
), idle as (
    select 'Idle GPU-hours', 'fct_gpu_utilization_daily',
           provider_name || ' · ' || gpu_model || ' · team ' || coalesce(team, '(untagged)'), billing_currency,
           sum(idle_cost)
    from marts.fct_gpu_utilization_daily group by all
), unused as (
    select 'Unused commitment', 'fct_commitment_coverage_monthly',
           provider_name || ' · ' || coalesce(commitment_discount_name, commitment_discount_id),
           billing_currency, sum(unused_commitment_cost)
    from marts.fct_commitment_coverage_monthly where commitment_discount_id is not null group by all
)
select * from (
    select * from market union all select * from spot union all select * from idle union all select * from unused
) where amount > 0 and currency is not null
order by currency, amount desc, opportunity, scope
"""

OPPORTUNITY_MARTS = (
    "fct_market_benchmark",
    "fct_spot_savings_monthly",
    "fct_gpu_utilization_daily",
    "fct_commitment_coverage_monthly",
)


def _opportunities(con: duckdb.DuckDBPyConnection) -> Section:
    how = (
        "The largest amounts we could have saved over the whole history in the warehouse, ranked within each "
        "currency: paying the median market price where we paid more (market benchmark), running on-demand "
        "GPU-hours on spot after the cost of interruptions (spot savings), GPU-hours paid for while the GPU sat "
        "idle (utilization), and commitments paid for but not used (commitment coverage). The last column names "
        "the mart each figure comes from; they overlap (an idle on-demand hour also counts as forgone spot "
        "savings), so do not add them up."
    )
    base = Section("opportunities", "Largest savings opportunities", how, OPPORTUNITY_MARTS)
    if not all(_exists(con, mart) for mart in OPPORTUNITY_MARTS):
        return _no_data(base)
    found = _query(con, OPPORTUNITIES_SQL)
    if not found:
        return _no_data(base)
    ranked: list[list[Cell]] = []
    rank: dict[str, int] = {}
    for row in found:
        rank[row["currency"]] = rank.get(row["currency"], 0) + 1
        if rank[row["currency"]] > 15:
            continue
        ranked.append(
            [
                Cell(str(rank[row["currency"]])),
                Cell(row["opportunity"]),
                Cell(row["scope"] or "-"),
                _money_cell(row["amount"], row["currency"]),
                Cell(row["mart"]),
            ]
        )
    table = Table(
        "Top 15 per currency", ["Rank", "Opportunity", "Where (provider · GPU · …)", "Amount", "From mart"], ranked
    )
    return Section(base.key, base.title, base.how_to_read, base.marts, None, (table,))


def _data_quality(con: duckdb.DuckDBPyConnection) -> Section:
    how = (
        "Whether each source's data is current and clean. A delivery that breaks a rule the FOCUS spec or its "
        "provider forbids never reaches the warehouse (it waits in the quarantine folder with its reason); one "
        "that is unusual but allowed (a usage reversal, late usage billed in a later period, a value derived "
        "because the layout lacks it) is loaded and listed here with the rows concerned. docs/data-quality.md "
        "lists every rule and its action."
    )
    base = Section("data-quality", "Data quality", how, ("audit.source_status", "audit.quality_results"))
    has_status = con.execute(
        "select count(*) from information_schema.tables where table_schema = 'audit' "
        "and table_name in ('source_status', 'quality_results', 'loads')"
    ).fetchone()[0]
    if has_status < 3:
        return _no_data(base)
    statuses = _query(con, "select * from audit.source_status where live_loads > 0 or status <> 'never delivered'")
    warnings = live_warnings(con)
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


def _ratio(numerator: Decimal | None, denominator: Decimal | None) -> Decimal | None:
    if numerator is None or not denominator:
        return None
    return numerator / denominator


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
