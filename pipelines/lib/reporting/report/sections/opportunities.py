"""The largest savings opportunities, ranked within each currency."""

from __future__ import annotations

import duckdb

from pipelines.lib.reporting.report.formatting import money_cell
from pipelines.lib.reporting.report.marts import has_rows, no_data, query
from pipelines.lib.reporting.report.render import Cell, Section, Table

HEADING = Section(
    "opportunities",
    "Largest savings opportunities",
    (
        "The largest amounts we could have saved over the whole history in the warehouse, ranked within each "
        "currency: paying the median market price where we paid more (market benchmark), running on-demand "
        "GPU-hours on spot after the cost of interruptions (spot savings), GPU-hours paid for while the GPU sat "
        "idle (utilization), and commitments paid for but not used (commitment coverage). The last column names "
        "the mart each figure comes from; they overlap (an idle on-demand hour also counts as forgone spot "
        "savings), so do not add them up."
    ),
    ("rpt_savings_opportunities",),
)


def section(con: duckdb.DuckDBPyConnection) -> Section:
    if not has_rows(con, "rpt_savings_opportunities"):
        return no_data(HEADING)
    ranked = [
        [
            Cell(str(row["opportunity_rank"])),
            Cell(row["opportunity"]),
            Cell(row["scope"] or "-"),
            money_cell(row["amount"], row["currency"]),
            Cell(row["source_mart"]),
        ]
        for row in query(
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
    return HEADING.drawn(None, table)
