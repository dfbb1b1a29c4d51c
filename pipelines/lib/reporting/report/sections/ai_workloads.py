"""AI workloads: what a million tokens of our own serving costs, what a euro of GPU buys, the API alternative and its
break-even volume, what we spend on AI APIs per model and team, and training runs against their estimate."""

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
        "says which team used a model, the bill's cost of it is split by the teams' tokens, else it stays with the "
        "bill's team tag. Training runs are the jobs of Slurm, SkyPilot and Kubernetes priced at the bill's "
        "effective rate per GPU-hour; a run named in the plan shows its estimate beside, and the model FLOPs "
        "utilization it actually reached."
    ),
    (
        "rpt_inference_cost_by_model",
        "rpt_inference_performance_by_gpu",
        "fct_inference_buy_vs_api",
        "rpt_ai_api_spend",
        "fct_training_runs",
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
            _training_runs(con),
        )
        if table is not None
    ]
    return HEADING.drawn(_chart(con), *tables)


def _serving_cost(con: duckdb.DuckDBPyConnection) -> Table | None:
    if not has_rows(con, "rpt_inference_cost_by_model"):
        return None
    rows = query(
        con,
        "select * from marts.rpt_inference_cost_by_model order by billing_currency, allocation_cost desc, model_name",
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
                number_cell(row["total_tokens"], 0),
                money_cell(row["allocation_cost"], row["billing_currency"]),
                *(
                    money_cell(row[column], row["billing_currency"], places=4)
                    for column in (
                        "cost_per_million_tokens",
                        "usage_cost_per_million_tokens",
                        "input_cost_per_million_tokens",
                        "output_cost_per_million_tokens",
                    )
                ),
            ]
            for row in rows
        ],
    )


def _performance_per_euro(con: duckdb.DuckDBPyConnection) -> Table | None:
    if not has_rows(con, "rpt_inference_performance_by_gpu"):
        return None
    rows = query(
        con, "select * from marts.rpt_inference_performance_by_gpu order by gpu_model, provider_class, model_name"
    )
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
                number_cell(row["tokens_per_gpu_second"], 1),
                money_cell(row["eur_per_gpu_hour"], "EUR", places=4),
                number_cell(row["tokens_per_second_per_eur"], 1),
                number_cell(row["market_tokens_per_second_per_eur"], 1),
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
        return f"{millions} M at {percent(option['break_even_utilization'])}"

    return Table(
        (
            f"Self-host or API, {rows[0]['usage_month']:%B %Y} ({currency}; break-even: million tokens a month, at the "
            "GPU activity it needs)"
        ),
        [
            "Model",
            "GPU",
            "API model",
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
                Cell(
                    f"{found['row']['api_provider']} {found['row']['api_model']}"
                    + (" (same model)" if found["row"]["comparison"] == "same_model" else "")
                ),
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
    if not has_rows(con, "rpt_ai_api_spend"):
        return None
    rows = query(
        con,
        """
        select * from marts.rpt_ai_api_spend
        order by billing_currency, effective_cost desc, provider_name, model, token_type, team
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
                Cell(row["team"] or "unassigned"),
                number_cell(row["tokens"], 0),
                money_cell(row["effective_cost"], row["billing_currency"]),
                money_cell(row["effective_cost_per_million_tokens"], row["billing_currency"], places=4),
            ]
            for row in rows
        ],
    )


def _training_runs(con: duckdb.DuckDBPyConnection) -> Table | None:
    if not has_rows(con, "fct_training_runs"):
        return None
    rows = query(
        con,
        """
        select run_name, run_source, gpu_model, provider_name, gpus, gpu_hours, estimated_gpu_hours, currency,
               actual_cost, estimated_cost, cost_difference, realized_mfu, planned_mfu
        from marts.fct_training_runs
        order by is_planned_run desc, actual_cost desc nulls last, run_name
        limit 25
        """,
    )
    return Table(
        "Training runs, planned ones first, then the costliest (at most 25)",
        [
            "Run",
            "Source",
            "GPU",
            "GPU-hours",
            "Estimated GPU-hours",
            "Cost",
            "Estimated cost",
            "Over the estimate",
            "MFU reached (planned)",
        ],
        [
            [
                Cell(row["run_name"]),
                Cell(row["run_source"]),
                Cell(f"{number(row['gpus'], 0)} × {row['gpu_model']}" if row["gpu_model"] else "-"),
                number_cell(row["gpu_hours"], 1),
                number_cell(row["estimated_gpu_hours"], 1),
                money_cell(row["actual_cost"], row["currency"]),
                money_cell(row["estimated_cost"], row["currency"]),
                money_cell(row["cost_difference"], row["currency"]),
                Cell(
                    "-"
                    if row["realized_mfu"] is None
                    else f"{percent(row['realized_mfu'])} ({percent(row['planned_mfu'])})"
                ),
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
            x=alt.X("price:Q", title=f"{currency} per million tokens"),
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
        .properties(width=CHART_WIDTH - 240, height=alt.Step(18))
        .facet(
            row=alt.Facet("model:N", title=None, header=alt.Header(labelAngle=0, labelOrient="top", labelAlign="left"))
        )
        .resolve_scale(y="independent")
        .properties(title=f"Cost per million tokens, {rows[0]['usage_month']:%B %Y}: self-hosted against the APIs")
        .to_dict()
    )
