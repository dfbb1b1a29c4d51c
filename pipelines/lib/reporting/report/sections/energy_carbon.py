"""Energy and carbon: the GPUs' facility energy and location-based emissions by team and GPU model, per training
run, per million tokens of our own serving, and the owned servers' energy cost from measured kWh."""

from __future__ import annotations

import altair as alt
import duckdb

from pipelines.lib.reporting.report.formatting import coordinate, money_cell, number, number_cell
from pipelines.lib.reporting.report.marts import has_rows, no_data, query
from pipelines.lib.reporting.report.render import CHART_WIDTH, Cell, Section, Table

SOURCES = {"measured_counter": "energy counter", "power_integrated": "power × time", "estimated": "estimated"}
HEADING = Section(
    "energy-carbon",
    "Energy and carbon by team, GPU model and training run",
    (
        "What our GPUs drew and what it emitted. Measured energy is the DCGM energy counter's increases (a reboot's "
        "reset handled), or power × time where only power is recorded; GPU-hours billed without telemetry are "
        "estimated from the GPU model's idle and maximum power at an assumed utilization, and labelled so. Facility "
        "energy adds the rest of the server (CPUs, memory, fans: Epoch AI's chip-to-server factor) and the data "
        "centre's PUE. kgCO2e is location-based: facility kWh × the grid's average gCO2e/kWh for the region and year "
        "(seed grid_carbon_intensity: published per-region figures, each row naming its source). Owned "
        "servers' energy cost is set from measured kWh beside the inventory's assumption, which the FOCUS lines keep."
    ),
    (
        "rpt_energy_by_team",
        "fct_training_run_energy",
        "fct_inference_energy_per_million_tokens",
        "fct_owned_server_energy_daily",
    ),
)


def section(con: duckdb.DuckDBPyConnection) -> Section:
    if not any(has_rows(con, mart) for mart in HEADING.marts):
        return no_data(HEADING)
    tables = [
        table
        for table in (_by_team(con), _training_runs(con), _per_million_tokens(con), _owned_servers(con))
        if table is not None
    ]
    return HEADING.drawn(_chart(con), *tables)


def _by_team(con: duckdb.DuckDBPyConnection) -> Table | None:
    if not has_rows(con, "rpt_energy_by_team"):
        return None
    rows = query(con, "select * from marts.rpt_energy_by_team order by facility_kwh desc nulls last, team, gpu_model")
    return Table(
        "GPU energy and carbon per team, GPU model and how it was known, whole history",
        [
            "Team",
            "GPU",
            "Energy from",
            "GPU-hours",
            "Facility kWh",
            "kgCO2e",
            "kWh per GPU-hour",
            "kgCO2e per GPU-hour",
        ],
        [
            [
                Cell(row["team"] or "unassigned"),
                Cell(row["gpu_model"] or "-"),
                Cell(SOURCES[row["energy_source"]]),
                number_cell(row["gpu_hours"], 1),
                number_cell(row["facility_kwh"], 1),
                number_cell(row["kgco2e"], 1),
                number_cell(row["facility_kwh_per_gpu_hour"], 3),
                number_cell(row["kgco2e_per_gpu_hour"], 3),
            ]
            for row in rows
        ],
    )


def _training_runs(con: duckdb.DuckDBPyConnection) -> Table | None:
    if not has_rows(con, "fct_training_run_energy"):
        return None
    rows = query(
        con,
        """
        select * from marts.fct_training_run_energy
        order by facility_kwh desc nulls last, run_name
        limit 25
        """,
    )
    return Table(
        "Training runs' energy and carbon, the most energy first (at most 25)",
        ["Run", "Source", "GPU", "GPU-hours", "Energy from", "Facility kWh", "kgCO2e", "kWh per GPU-hour"],
        [
            [
                Cell(row["run_name"]),
                Cell(row["run_source"]),
                Cell(row["gpu_model"] or "-"),
                number_cell(row["gpu_hours"], 1),
                Cell(row["energy_rule"].replace("_", " ")),
                number_cell(row["facility_kwh"], 1),
                number_cell(row["kgco2e"], 1),
                number_cell(row["facility_kwh_per_gpu_hour"], 3),
            ]
            for row in rows
        ],
    )


def _per_million_tokens(con: duckdb.DuckDBPyConnection) -> Table | None:
    if not has_rows(con, "fct_inference_energy_per_million_tokens"):
        return None
    rows = query(
        con,
        """
        select model_name, gpu_model, provider_name, sum(total_tokens) as total_tokens,
               sum(facility_kwh) as facility_kwh, sum(kgco2e) as kgco2e,
               sum(case when facility_kwh is not null then total_tokens end) as measured_tokens,
               sum(case when kgco2e is not null then total_tokens end) as carbon_tokens
        from marts.fct_inference_energy_per_million_tokens
        group by model_name, gpu_model, provider_name
        order by model_name, gpu_model, provider_name
        """,
    )

    def per_million(amount: object, tokens: object) -> Cell:
        if amount is None or not tokens:
            return Cell("-")
        return number_cell(amount * 1_000_000 / tokens, 4)

    return Table(
        "Our own serving: energy and carbon per million tokens per model and GPU, whole history",
        ["Model", "GPU", "Provider", "Tokens", "Facility kWh", "kWh per million tokens", "kgCO2e per million tokens"],
        [
            [
                Cell(row["model_name"]),
                Cell(row["gpu_model"] or "-"),
                Cell(row["provider_name"] or "-"),
                number_cell(row["total_tokens"], 0),
                number_cell(row["facility_kwh"], 1),
                per_million(row["facility_kwh"], row["measured_tokens"]),
                per_million(row["kgco2e"], row["carbon_tokens"]),
            ]
            for row in rows
        ],
    )


def _owned_servers(con: duckdb.DuckDBPyConnection) -> Table | None:
    if not has_rows(con, "fct_owned_server_energy_daily"):
        return None
    rows = query(
        con,
        """
        select resource_id, hostname, currency, count(*) as days,
               sum(case when energy_basis <> 'assumed' then 1 else 0 end) as measured_days,
               sum(assumed_kwh) as assumed_kwh, sum(energy_kwh) as energy_kwh,
               sum(assumed_energy_cost) as assumed_energy_cost, sum(energy_cost) as energy_cost
        from marts.fct_owned_server_energy_daily
        group by resource_id, hostname, currency
        order by resource_id
        """,
    )
    return Table(
        "Owned servers' energy: measured where their GPUs have telemetry, against the inventory's assumption",
        ["Server", "Days (measured)", "Assumed kWh", "kWh", "Assumed cost", "Cost from measured kWh"],
        [
            [
                Cell(f"{row['resource_id']} ({row['hostname']})" if row["hostname"] else row["resource_id"]),
                Cell(f"{row['days']} ({row['measured_days']})"),
                number_cell(row["assumed_kwh"], 1),
                number_cell(row["energy_kwh"], 1),
                money_cell(row["assumed_energy_cost"], row["currency"]),
                money_cell(row["energy_cost"], row["currency"]),
            ]
            for row in rows
        ],
    )


def _chart(con: duckdb.DuckDBPyConnection) -> dict | None:
    """Facility kWh per team, stacked by GPU model, with kgCO2e in the tooltip."""
    if not has_rows(con, "rpt_energy_by_team"):
        return None
    rows = query(
        con,
        """
        select coalesce(team, 'unassigned') as team, coalesce(gpu_model, '-') as gpu_model,
               sum(facility_kwh) as facility_kwh, sum(kgco2e) as kgco2e
        from marts.rpt_energy_by_team
        group by coalesce(team, 'unassigned'), coalesce(gpu_model, '-')
        having sum(facility_kwh) is not null
        """,
    )
    values = [
        {
            "team": row["team"],
            "gpu_model": row["gpu_model"],
            "kwh": coordinate(row["facility_kwh"]),
            "kwh_text": number(row["facility_kwh"], 1),
            "kg_text": number(row["kgco2e"], 1),
        }
        for row in rows
    ]
    if not values:
        return None
    return (
        alt.Chart(alt.Data(values=values))
        .mark_bar()
        .encode(
            x=alt.X("kwh:Q", title="Facility kWh, whole history", stack="zero"),
            y=alt.Y("team:N", title=None, sort="-x"),
            color=alt.Color("gpu_model:N", title="GPU model"),
            tooltip=[
                alt.Tooltip("team:N", title="Team"),
                alt.Tooltip("gpu_model:N", title="GPU"),
                alt.Tooltip("kwh_text:N", title="Facility kWh"),
                alt.Tooltip("kg_text:N", title="kgCO2e"),
            ],
        )
        .properties(width=CHART_WIDTH - 200, height=alt.Step(22), title="GPU facility energy by team and GPU model")
        .to_dict()
    )
