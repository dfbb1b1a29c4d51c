"""Kubernetes chargeback: the nodes' GPU cost per namespace and team, idle MIG slices and the unallocated rest apart."""

from __future__ import annotations

import duckdb

from pipelines.lib.reporting.report.formatting import money_cell, number_cell, percent
from pipelines.lib.reporting.report.marts import has_rows, no_data, query
from pipelines.lib.reporting.report.render import Cell, Section, Table

ROW_NAMES = {
    "unallocated": "unallocated (no pod held the GPUs)",
    "idle_mig_slice": "idle MIG slices (the nodes' owners)",
}
HEADING = Section(
    "chargeback",
    "Kubernetes GPU chargeback per namespace and team",
    (
        "Who used the Kubernetes GPUs we paid for. Each pod is charged the bill's own cost of one GPU-hour on its "
        "node that day for every GPU-hour it held a GPU (pods sharing a GPU by time-slicing split it, a MIG slice "
        "counts its share of the GPU), rounded to the cent. MIG slices no pod held are the nodes' owners' idle cost, "
        "on a row of their own. What no pod held otherwise (idle GPUs, GPUs the exporter did not map to a pod, unused "
        "commitments and the rounding) is the unallocated row, so each currency's rows add up to the nodes' GPU "
        "spend exactly. Active "
        "share is how busy the GPUs were while held: a team with a low one pays for GPUs it holds but barely "
        "uses. A namespace without a team in the seed kubernetes_namespace_teams shows as unassigned."
    ),
    ("rpt_gpu_cost_allocation",),
)


def section(con: duckdb.DuckDBPyConnection) -> Section:
    if not has_rows(con, "rpt_gpu_cost_allocation"):
        return no_data(HEADING)
    rows = [
        [
            Cell(row["billing_currency"]),
            Cell("-" if row["allocation_type"] != "pod" else row["team"] or "unassigned"),
            Cell(ROW_NAMES.get(row["allocation_type"], row["namespace"])),
            number_cell(row["gpu_hours"], 1),
            Cell(percent(row["active_share"])),
            money_cell(row["allocated_cost"], row["billing_currency"]),
            Cell(percent(row["cost_share"])),
        ]
        for row in query(
            con,
            """
            select * from marts.rpt_gpu_cost_allocation
            order by billing_currency, allocation_type <> 'pod', allocation_type = 'unallocated',
                allocated_cost desc, namespace
            """,
        )
    ]
    table = Table(
        "GPU cost per namespace, whole history, per billing currency",
        ["Billing currency", "Team", "Namespace", "GPU-hours held", "Active share", "Cost", "Share of the nodes' cost"],
        rows,
    )
    return HEADING.drawn(None, table)
