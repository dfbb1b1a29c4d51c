"""`gpu-finops sql`: one read-only query against the warehouse, as a table, CSV or JSON."""

from __future__ import annotations

import argparse
import csv
import json
import sys

from pipelines.cli._output import csv_cell, json_value, table, text
from pipelines.lib.settings import Settings
from pipelines.lib.warehouse.connection import QueryRefused, query_connection, run_query


def sql(settings: Settings, args: argparse.Namespace) -> int:
    home = settings.home
    import duckdb

    with query_connection(home) as con:
        try:
            cursor = run_query(con, args.query)
        except (QueryRefused, duckdb.Error) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        if cursor.description is None:
            return 0
        header = [column[0] for column in cursor.description]
        rows = cursor.fetchall()
    if args.format == "json":
        print(json.dumps([dict(zip(header, row, strict=True)) for row in rows], default=json_value, indent=2))
    elif args.format == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(header)
        writer.writerows([[csv_cell(value) for value in row] for row in rows])
    else:
        print(table(header, [[text(value) for value in row] for row in rows]))
        print(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return 0
