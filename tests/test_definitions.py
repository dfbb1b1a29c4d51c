"""The Dagster code location loads, and wires what the design promises."""

from __future__ import annotations

import dagster as dg

from pipelines.definitions import defs
from pipelines.lib.settings import DUCKDB_WRITER_POOL


def test_definitions_load_with_ingest_dbt_checks_and_schedule():
    definitions = defs()
    graph = definitions.resolve_asset_graph()
    keys = {key.to_user_string() for key in graph.get_all_asset_keys()}
    assert {
        "raw/focus_cost_and_usage",
        "staging/stg_focus__cost_and_usage",
        "intermediate/int_billing__cost_lines",
        "marts/fct_cost_daily",
        "marts/fct_gpu_spend_daily",
    } <= keys
    # dbt models read the raw table the ingest asset writes.
    staging = dg.AssetKey(["staging", "stg_focus__cost_and_usage"])
    assert dg.AssetKey(["raw", "focus_cost_and_usage"]) in graph.get(staging).parent_keys
    assert definitions.get_schedule_def("daily_refresh_schedule").cron_schedule == "0 6 * * *"
    # The reporting models are assets of the marts group, downstream of the marts they rank.
    opportunities = dg.AssetKey(["marts", "rpt_savings_opportunities"])
    assert graph.get(opportunities).group_name == "marts"
    assert dg.AssetKey(["marts", "fct_market_benchmark"]) in graph.get(opportunities).parent_keys
    check_names = {check.name for check in graph.asset_check_keys}
    assert "raw_matches_audited_deliveries" in check_names


def test_every_warehouse_writer_is_in_the_single_writer_pool():
    definitions = defs()
    job = definitions.resolve_implicit_global_asset_job_def()
    pools = {node.name: node.definition.pool for node in job.graph.node_dict.values()}
    assert pools, "the job has no steps"
    assert set(pools.values()) == {DUCKDB_WRITER_POOL}, pools
