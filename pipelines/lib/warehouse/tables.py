"""The raw and audit tables: DuckDB views over the lake's Parquet files, created when missing.

A table kept inside the DuckDB file by an older version is moved into the lake the first time it is ensured.
"""

from __future__ import annotations

import duckdb

from pipelines.lib.catalog.tables import RawTable, ReferenceTable
from pipelines.lib.warehouse.lake import (
    LOAD_FILE,
    Lake,
    ensure_schema_file,
    ensure_view,
    files_view_sql,
    folder_name,
    is_table,
    lake_of,
    recover,
    sql_text,
    warehouse_path,
    write_parquet,
)
from sources.common.sql import quote_identifier
from sources.common.types import DECIMAL_PRECISION, DECIMAL_SCALE, sql_type

MONEY_SQL_TYPE = f"DECIMAL({DECIMAL_PRECISION}, {DECIMAL_SCALE})"


_READY: set[tuple[str, str, str, tuple[tuple[str, str], ...]]] = set()
"""(warehouse file, lake, table, columns) whose schema file and view this process has checked: once per
process, since catalog lookups cost milliseconds each and every writer step calls `recover_and_ensure_tables`."""


AUDIT_COLUMNS: dict[str, dict[str, str]] = {
    "audit.loads": {
        "load_id": "VARCHAR",
        "source": "VARCHAR",
        "raw_table": "VARCHAR",
        "delivery": "VARCHAR",
        "sha256": "VARCHAR",
        "row_count": "BIGINT",
        "replaced_row_count": "BIGINT",
        "billing_periods": "VARCHAR",
        "cost_totals": "VARCHAR",
        "format_version": "VARCHAR",
        "loaded_at": "TIMESTAMP",
        "replaced_load_ids": "VARCHAR",
    },
    "audit.restatements": {
        "load_id": "VARCHAR",
        "raw_table": "VARCHAR",
        "billing_account_id": "VARCHAR",
        "billing_period_start": "TIMESTAMP",
        "billing_currency": "VARCHAR",
        "replaced_load_ids": "VARCHAR",
        "rows_before": "BIGINT",
        "billed_cost_before": MONEY_SQL_TYPE,
        "effective_cost_before": MONEY_SQL_TYPE,
        "rows_after": "BIGINT",
        "billed_cost_after": MONEY_SQL_TYPE,
        "effective_cost_after": MONEY_SQL_TYPE,
        "restated_at": "TIMESTAMP",
    },
    "audit.load_totals": {
        "load_id": "VARCHAR",
        "billing_account_id": "VARCHAR",
        "billing_period_start": "TIMESTAMP",
        "billing_currency": "VARCHAR",
        "row_count": "BIGINT",
        "billed_cost": MONEY_SQL_TYPE,
        "effective_cost": MONEY_SQL_TYPE,
    },
    "audit.withheld_loads": {
        "load_id": "VARCHAR",
        "source": "VARCHAR",
        "delivery": "VARCHAR",
        "model": "VARCHAR",
        "test": "VARCHAR",
        "rule": "VARCHAR",
        "failing_rows": "BIGINT",
        "example_file": "VARCHAR",
        "example_row": "BIGINT",
        "example_column": "VARCHAR",
        "message": "VARCHAR",
        "withheld_at": "TIMESTAMP",
    },
}
"""The lake's audit records, append-only: one file per load and table (a load's status is derived, see
`_loads_view_sql`)."""


def lake_columns(table: RawTable | ReferenceTable) -> dict[str, str]:
    """Every column of a raw table's files with its SQL type, the loader's two included."""
    return {name: sql_type(dtype) for name, dtype in table.columns.items()} | {
        "_load_id": "VARCHAR",
        "_ingested_at": "TIMESTAMP",
    }


def _loads_view_sql(lake: Lake) -> str:
    """audit.loads: the append-only records, with `status` and `superseded_by` derived from the lake.

    A load with rows is `superseded` once no data file of it is left (restatements replaced every key it
    carried); `superseded_by` is the latest load that replaced rows of it. A load the models refused is
    `withheld` (audit.withheld_loads says why): its rows left raw, and what it had replaced came back.
    """
    records = files_view_sql(lake.files_glob("audit.loads"))
    withheld = files_view_sql(lake.files_glob("audit.withheld_loads"))
    every_raw_file = sql_text(f"{lake.root}/raw/*/**/*.parquet")
    current = f"SELECT DISTINCT regexp_extract(file, {sql_text(LOAD_FILE)}, 1) AS load_id FROM glob({every_raw_file})"
    return f"""WITH records AS ({records}),
current_loads AS ({current}),
withheld AS ({withheld}),
replacing AS (
    SELECT unnest(string_split(replaced_load_ids, ',')) AS replaced_id, load_id AS by_load, loaded_at
    FROM records WHERE replaced_load_ids <> '' AND load_id NOT IN (SELECT load_id FROM withheld)
),
derived AS (
    SELECT r.*, CASE WHEN r.load_id IN (SELECT load_id FROM withheld) THEN 'withheld'
                     WHEN r.row_count > 0 AND r.load_id NOT IN (SELECT load_id FROM current_loads)
                     THEN 'superseded' ELSE 'loaded' END AS status
    FROM records AS r
)
SELECT d.load_id, d.source, d.raw_table, d.delivery, d.sha256, d.status, d.row_count, d.replaced_row_count,
       d.billing_periods, d.cost_totals, d.format_version, d.loaded_at,
       CASE WHEN d.status = 'superseded'
            THEN (SELECT arg_max(x.by_load, x.loaded_at) FROM replacing AS x WHERE x.replaced_id = d.load_id)
       END AS superseded_by
FROM derived AS d"""


def recover_and_ensure_tables(con: duckdb.DuckDBPyConnection, table: RawTable | ReferenceTable) -> Lake:
    """Recover, then ensure: finish or discard a load a crash interrupted, move a table of a warehouse from before
    the lake into it, and write the table's and the audit tables' schema files in the lake and their views in DuckDB.

    Every writer calls this before it loads or builds, so recovery always comes before anything reads the tables.
    """
    lake = lake_of(con)
    recover(con, lake)
    warehouse = warehouse_path(con)
    # audit.loads last: its view reads the other audit tables' files (audit.withheld_loads).
    audit_tables = sorted(AUDIT_COLUMNS.items(), key=lambda item: item[0] == "audit.loads")
    for name, columns in ((table.name, lake_columns(table)), *audit_tables):
        ready = (warehouse or "", str(lake.root), name, tuple(columns.items()))
        if warehouse and ready in _READY:
            continue
        if is_table(con, name):
            if name == table.name:
                _move_raw_table_to_lake(con, lake, table)
            else:
                _move_audit_table_to_lake(con, lake, name, columns)
        ensure_schema_file(con, lake, name, columns)
        ensure_view(
            con, name, _loads_view_sql(lake) if name == "audit.loads" else files_view_sql(lake.files_glob(name))
        )
        _READY.add(ready)
    return lake


def _move_raw_table_to_lake(con: duckdb.DuckDBPyConnection, lake: Lake, table: RawTable | ReferenceTable) -> None:
    """A raw table of a warehouse from before the lake, written to the lake's layout (a file per partition and
    load) and dropped; a crash midway rewrites the same files on the next start."""
    by = table.restatement_key if isinstance(table, RawTable) else table.partition_columns
    match = " AND ".join(f"{quote_identifier(c)} IS NOT DISTINCT FROM ?" for c in by)
    selected = ", ".join(
        f"CAST({quote_identifier(n)} AS {t}) AS {quote_identifier(n)}" for n, t in lake_columns(table).items()
    )
    groups = con.execute(f"SELECT DISTINCT {', '.join(quote_identifier(c) for c in by)}, _load_id FROM {table.name}")
    for *values, load_id in groups.fetchall():
        folder = lake.folder(table.name).joinpath(*(folder_name(value) for value in values))
        write_parquet(
            con,
            f"SELECT {selected} FROM {table.name} WHERE {match} AND _load_id = ?",
            folder / f"{load_id}.parquet",
            [*values, load_id],
        )
    con.execute(f"DROP TABLE {table.name}")


def _move_audit_table_to_lake(con: duckdb.DuckDBPyConnection, lake: Lake, name: str, columns: dict[str, str]) -> None:
    """An audit table from before the lake as one file of records; audit.loads' `superseded_by` becomes the
    superseding load's `replaced_load_ids`, from which the view derives both again."""
    stored = {n: f"CAST({quote_identifier(n)} AS {t}) AS {quote_identifier(n)}" for n, t in columns.items()}
    if name == "audit.loads":
        stored["replaced_load_ids"] = (
            "coalesce((SELECT string_agg(o.load_id, ',' ORDER BY o.load_id) FROM audit.loads AS o "
            "WHERE o.superseded_by = l.load_id), '') AS replaced_load_ids"
        )
    selected = ", ".join(stored.values())
    write_parquet(con, f"SELECT {selected} FROM {name} AS l", lake.folder(name) / "before-the-lake.parquet")
    con.execute(f"DROP TABLE {name}")
