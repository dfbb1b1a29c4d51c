"""AI workloads: what a million tokens of our own serving costs, what a euro of GPU buys, the API alternative and its
break-even volume, and what we spend on AI APIs per model and team."""

from __future__ import annotations

from decimal import Decimal

import altair as alt
import duckdb

from pipelines.lib.reporting.report.formatting import coordinate, money, money_cell, number, number_cell, percent
from pipelines.lib.reporting.report.marts import has_rows, no_data, query, reporting_currency
from pipelines.lib.reporting.report.render import CHART_WIDTH, Cell, Section, Table

MILLION = Decimal(1_000_000)
GPU_OPTIONS = ("on_demand", "committed_1y", "owned")
HEADING = Section(
    "ai-workloads",
    "AI workloads: cost per million tokens, performance per euro, self-host or API",
    (
        "What our own model serving produces for its GPU cost. Cost per million tokens counts every GPU-hour the "
        "serving pods held, idle ones included (the allocation basis, which adds up to the Kubernetes chargeback); "
        "the usage basis counts only the GPU-hours measured active. Tokens per second per euro is the throughput one "
        "euro an hour of those GPUs bought, beside the same throughput on the market's cheapest on-demand offer of "
        "the GPU. Self-host or API sets our cost of the latest month against the list price of comparable API models "
        "for the same tokens, and gives the monthly volume at which self-hosting on each way of holding the GPUs "
        "breaks even, with the GPU activity that volume needs (above 100% it cannot break even on those GPUs). API "
        "spend is the AI API token lines of the bills per model, token type and team; where an AI gateway's log "
        "says which team used a model, the bill's cost of it is split by the teams' tokens (fct_ai_api_spend_by_team_"
        "daily), else it stays with the bill's team tag."
    ),
    (
        "fct_inference_cost_per_million_tokens",
        "fct_inference_performance_per_euro",
        "fct_inference_buy_vs_api",
        "fct_ai_api_token_spend_daily",
        "fct_ai_api_spend_by_team_daily",
    ),
)


def section(con: duckdb.DuckDBPyConnection) -> Section:
    if not any(has_rows(con, mart) for mart in HEADING.marts):
        return no_data(HEADING)
    tables = [
        table
        for table in (
            _serving_cost(con),
            _performance_per_euro(con),
            _self_host_or_api(con),
            _api_spend(con),
        )
        if table is not None
    ]
    return HEADING.drawn(_chart(con), *tables)


def _per_million(cost: Decimal | None, tokens: Decimal | None) -> Decimal | None:
    return None if cost is None or not tokens else cost / tokens * MILLION


def _serving_cost(con: duckdb.DuckDBPyConnection) -> Table | None:
    if not has_rows(con, "fct_inference_cost_per_million_tokens"):
        return None
    rows = query(
        con,
        """
        select model_name, gpu_model, provider_name, billing_currency,
               sum(prompt_tokens) as prompt_tokens, sum(generation_tokens) as generation_tokens,
               sum(total_tokens) as tokens, sum(allocation_cost) as cost, sum(usage_cost) as usage_cost,
               sum(input_cost) as input_cost, sum(output_cost) as output_cost
        from marts.fct_inference_cost_per_million_tokens
        where allocation_cost is not null
        group by all
        order by billing_currency, cost desc, model_name
        """,
    )
    return Table(
        "Our own serving per model and GPU, whole history (allocation basis unless said)",
        [
            "Model",
            "GPU",
            "Provider",
            "Tokens",
            "GPU cost",
            "Per million tokens",
            "Per million, usage basis",
            "Per million input",
            "Per million output",
        ],
        [
            [
                Cell(row["model_name"]),
                Cell(row["gpu_model"] or "-"),
                Cell(row["provider_name"] or "-"),
                number_cell(row["tokens"], 0),
                money_cell(row["cost"], row["billing_currency"]),
                money_cell(_per_million(row["cost"], row["tokens"]), row["billing_currency"], places=4),
                money_cell(_per_million(row["usage_cost"], row["tokens"]), row["billing_currency"], places=4),
                money_cell(_per_million(row["input_cost"], row["prompt_tokens"]), row["billing_currency"], places=4),
                money_cell(
                    _per_million(row["output_cost"], row["generation_tokens"]), row["billing_currency"], places=4
                ),
            ]
            for row in rows
        ],
    )


def _performance_per_euro(con: duckdb.DuckDBPyConnection) -> Table | None:
    if not has_rows(con, "fct_inference_performance_per_euro"):
        return None
    rows = query(
        con,
        """
        select gpu_model, provider_class, model_name, sum(total_tokens) as tokens, sum(gpu_hours) as gpu_hours,
               sum(cost_eur) as cost_eur, sum(market_cost_eur) as market_cost_eur,
               count(*) - count(market_cost_eur) as unpriced_months
        from marts.fct_inference_performance_per_euro
        group by all
        order by gpu_model, provider_class, model_name
        """,
    )

    def per_euro(tokens: Decimal, cost: Decimal | None) -> Decimal | None:
        return None if not cost else tokens / (cost * 3600)

    return Table(
        "Performance per euro by GPU model, provider class and model served, whole history",
        [
            "GPU",
            "Provider class",
            "Model",
            "Tokens per GPU-second",
            "EUR per GPU-hour",
            "Tokens per second per EUR",
            "On the cheapest on-demand offer",
        ],
        [
            [
                Cell(row["gpu_model"] or "-"),
                Cell(row["provider_class"]),
                Cell(row["model_name"]),
                number_cell(row["tokens"] / (row["gpu_hours"] * 3600) if row["gpu_hours"] else None, 1),
                money_cell(row["cost_eur"] / row["gpu_hours"] if row["gpu_hours"] else None, "EUR", places=4),
                number_cell(per_euro(row["tokens"], row["cost_eur"]), 1),
                number_cell(per_euro(row["tokens"], row["market_cost_eur"]) if not row["unpriced_months"] else None, 1),
            ]
            for row in rows
        ],
    )


def _latest_buy_vs_api(con: duckdb.DuckDBPyConnection) -> list[dict]:
    if not has_rows(con, "fct_inference_buy_vs_api"):
        return []
    return query(
        con,
        """
        select * from marts.fct_inference_buy_vs_api
        where usage_month = (select max(usage_month) from marts.fct_inference_buy_vs_api)
        order by model_name, gpu_model, api_cost_per_million_tokens, api_provider, api_model, gpu_option
        """,
    )


def _self_host_or_api(con: duckdb.DuckDBPyConnection) -> Table | None:
    rows = _latest_buy_vs_api(con)
    if not rows:
        return None
    currency = rows[0]["reporting_currency"]
    comparisons: dict[tuple, dict] = {}
    for row in rows:
        key = (row["model_name"], row["gpu_model"], row["api_provider"], row["api_model"], row["api_deployment_type"])
        comparisons.setdefault(key, {"row": row})[row["gpu_option"]] = row

    def break_even(option: dict | None) -> str:
        if option is None or option["break_even_tokens_per_month"] is None:
            return "-"
        millions = number(option["break_even_tokens_per_month"] / MILLION, 0)
        return f"{millions} M ({percent(option['break_even_utilization'])} active)"

    return Table(
        f"Self-host or API, {rows[0]['usage_month']:%B %Y} ({currency}; break-even in million tokens a month)",
        [
            "Model",
            "GPU",
            "API model",
            "Comparison",
            "Ours per million",
            "API per million",
            "Self-hosting saved",
            "Our tokens a month",
            *(f"Break-even {option.replace('_', ' ')}" for option in GPU_OPTIONS),
        ],
        [
            [
                Cell(found["row"]["model_name"]),
                Cell(found["row"]["gpu_model"] or "-"),
                Cell(f"{found['row']['api_provider']} {found['row']['api_model']}"),
                Cell(found["row"]["comparison"].replace("_", " ")),
                money_cell(found["row"]["self_hosted_cost_per_million_tokens"], currency, places=4),
                money_cell(found["row"]["api_cost_per_million_tokens"], currency, places=4),
                money_cell(found["row"]["self_hosting_saving"], currency),
                Cell(f"{number(found['row']['tokens_per_month'] / MILLION, 0)} M"),
                *(Cell(break_even(found.get(option))) for option in GPU_OPTIONS),
            ]
            for found in comparisons.values()
        ],
    )


def _api_spend(con: duckdb.DuckDBPyConnection) -> Table | None:
    """The bill's API spend with the teams the gateway's tokens give it (the bill's own team where it saw nothing)."""
    if not has_rows(con, "fct_ai_api_spend_by_team_daily"):
        return None
    rows = query(
        con,
        """
        select provider_name, model, token_type, coalesce(team, 'unassigned') as team, billing_currency,
               sum(tokens) as tokens, sum(effective_cost) as cost
        from marts.fct_ai_api_spend_by_team_daily
        group by all
        order by billing_currency, cost desc, provider_name, model, token_type, team
        """,
    )
    return Table(
        "AI API token spend per model, token type and team (teams from the gateway's tokens where it has them), "
        "whole history",
        ["Provider", "Model", "Token type", "Team", "Tokens", "Effective cost", "Per million tokens"],
        [
            [
                Cell(row["provider_name"] or "-"),
                Cell(row["model"] or "-"),
                Cell(row["token_type"]),
                Cell(row["team"]),
                number_cell(row["tokens"], 0),
                money_cell(row["cost"], row["billing_currency"]),
                money_cell(_per_million(row["cost"], row["tokens"]), row["billing_currency"], places=4),
            ]
            for row in rows
        ],
    )


def _chart(con: duckdb.DuckDBPyConnection) -> dict | None:
    """Per model served: our cost per million tokens (both bases) and each comparable API's at our mix."""
    rows = _latest_buy_vs_api(con)
    if not rows:
        return None
    currency = reporting_currency(con, "fct_inference_buy_vs_api")
    values: dict[tuple[str, str], dict] = {}
    for row in rows:
        model = row["model_name"]
        ours = row["self_hosted_cost_per_million_tokens"]
        api = row["api_cost_per_million_tokens"]
        for series, amount in (
            (f"self-hosted on {row['gpu_model']}", ours),
            (f"{row['api_provider']} {row['api_model']}", api),
        ):
            if amount is not None:
                values[(model, series)] = {
                    "model": model,
                    "series": series,
                    "price": coordinate(amount),
                    "text": money(amount, currency, places=4),
                }
    return (
        alt.Chart(alt.Data(values=list(values.values())))
        .mark_bar()
        .encode(
            x=alt.X("price:Q", title=f"{currency} per million tokens", scale=alt.Scale(type="symlog")),
            y=alt.Y("series:N", title=None, sort="x"),
            color=alt.condition(
                "indexof(datum.series, 'self-hosted') === 0", alt.value("#d62728"), alt.value("#1f77b4")
            ),
            tooltip=[
                alt.Tooltip("model:N", title="Model"),
                alt.Tooltip("series:N", title="Served by"),
                alt.Tooltip("text:N", title=f"{currency} per million tokens"),
            ],
        )
        .properties(width=CHART_WIDTH - 260, height=alt.Step(18))
        .facet(row=alt.Facet("model:N", title=None))
        .resolve_scale(y="independent")
        .properties(title=f"Cost per million tokens, {rows[0]['usage_month']:%B %Y}: self-hosted against the APIs")
        .to_dict()
    )
