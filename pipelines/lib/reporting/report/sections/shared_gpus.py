"""Shared GPUs: the chargeback of MIG slices and time-sliced GPUs per team, with the idle slices as the owner's."""

from __future__ import annotations

import duckdb

from pipelines.lib.reporting.report.formatting import money_cell, number_cell, percent
from pipelines.lib.reporting.report.marts import has_rows, no_data, query
from pipelines.lib.reporting.report.render import Cell, Section, Table

RULES = {
    "mig_compute_share": "MIG slice, g/7 of the GPU",
    "mig_memory_share": "MIG slice, its memory share",
    "mig_unpartitioned": "MIG GPU, no slice",
    "time_sliced_equal": "time-sliced, split evenly",
}
HEADING = Section(
    "shared-gpus",
    "Shared GPUs: MIG slices and time-sliced GPUs per team",
    (
        "GPUs several pods share, and what each team pays for its part. A pod on a MIG slice pays the slice's share "
        "of its GPU (a 3g.40gb slice is 3 of the GPU's 7 compute slices) for every hour it held it; pods "
        "time-slicing a GPU split each shared hour evenly. MIG slices no pod held, and the part of a MIG GPU no slice "
        "covers, are idle: the node's owning team pays them, on rows of their own. Every row is priced at the bill's "
        "cost of one GPU-hour on its node that day and rounded to the cent; a time-sliced GPU's hours no pod held "
        "are in the chargeback's unallocated row. Active share is how busy the slice or GPU was while held."
    ),
    ("rpt_shared_gpu_chargeback",),
)


def section(con: duckdb.DuckDBPyConnection) -> Section:
    if not has_rows(con, "rpt_shared_gpu_chargeback"):
        return no_data(HEADING)
    rows = [
        [
            Cell(row["billing_currency"]),
            Cell(row["team"] or "unassigned"),
            Cell(("idle: " if row["allocation_type"] == "idle_mig_slice" else "") + RULES[row["allocation_rule"]]),
            Cell(row["mig_profile"] or "-"),
            number_cell(row["pods"], 0),
            number_cell(row["gpu_hours"], 1),
            Cell(percent(row["active_share"])),
            money_cell(row["allocated_cost"], row["billing_currency"]),
            Cell(percent(row["cost_share"])),
        ]
        for row in query(
            con,
            """
            select * from marts.rpt_shared_gpu_chargeback
            order by billing_currency, allocation_type = 'idle_mig_slice', allocated_cost desc, team, mig_profile
            """,
        )
    ]
    table = Table(
        "Shared GPU cost per team, rule and slice profile, whole history, per billing currency",
        ["Billing currency", "Team", "Rule", "MIG profile", "Pods", "GPU-hours", "Active share", "Cost", "Share"],
        rows,
    )
    return HEADING.drawn(None, table)
