"""Data quality: each source's status, the warnings on the rows loaded now, the withheld deliveries."""

from __future__ import annotations

import duckdb

from pipelines.lib.quality.results import live_warnings
from pipelines.lib.reporting.report.marts import no_data, query
from pipelines.lib.reporting.report.render import Cell, Section, Table

HEADING = Section(
    "data-quality",
    "Data quality",
    (
        "Whether each source's data is current and clean. A delivery that breaks a rule the FOCUS spec or its "
        "provider forbids never reaches the warehouse (it waits in the quarantine folder with its reason); one "
        "that is unusual but allowed (a usage reversal, late usage billed in a later period, a value derived "
        "because the layout lacks it) is loaded and listed here with the rows concerned. A delivery that passed "
        "those checks but broke a model rule is withheld: its rows leave the warehouse, every other delivery is "
        "published, and its source is stale until a corrected delivery arrives. docs/data-quality.md lists every "
        "rule and its action."
    ),
    ("audit.source_status", "audit.quality_results"),
)


def section(con: duckdb.DuckDBPyConnection) -> Section:
    audit_tables = {
        name
        for (name,) in con.execute(
            "select table_name from information_schema.tables where table_schema = 'audit' "
            "and table_name in ('source_status', 'quality_results', 'loads', 'withheld_loads')"
        ).fetchall()
    }
    if not {"source_status", "quality_results", "loads"} <= audit_tables:
        return no_data(HEADING)
    statuses = query(con, "select * from audit.source_status where live_loads > 0 or status <> 'never delivered'")
    warnings = live_warnings(con)
    withheld = (
        query(con, "select * from audit.withheld_loads order by withheld_at desc")
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
    return HEADING.drawn(None, *tables)
