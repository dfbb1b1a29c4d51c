"""Every raw table dbt reads, created empty when missing.

dbt's sources must exist even for providers an organisation does not use (no Azure, no prices
fetched yet): an empty table contributes nothing to the marts, a missing one fails the build.
"""

from __future__ import annotations

import duckdb

from pipelines.lib.catalog.registry import RAW_TABLES
from pipelines.lib.warehouse.tables import recover_and_ensure_tables


def recover_and_ensure_raw_tables(con: duckdb.DuckDBPyConnection) -> None:
    for table in RAW_TABLES:
        recover_and_ensure_tables(con, table)
