"""Write the warehouse's FOCUS 1.2 dataset (`marts.focus_cost_and_usage`) as Parquet and CSV.

The dbt model decides the content (FOCUS columns, then `x_` columns; see its docs); this module only
writes it, streaming through Arrow batches:

- Columns whose names start with `_` are the model's build bookkeeping (incremental runs), not FOCUS data:
  they are left out.
- Parquet keeps every type: exact decimals, timestamps as UTC instants (`timestamp[us, tz=UTC]`).
- CSV writes timestamps as ISO 8601 UTC (`2026-09-01T00:00:00Z`) and is made safe to open in a
  spreadsheet: a text value starting with `=`, `+`, `-`, `@`, a tab or a carriage return would run as
  a formula there (a tag value such as `=HYPERLINK(...)`), so it is written with a leading `'`.
  Numeric columns are never changed, so negative amounts stay numbers. The Parquet file is
  the exact copy for programs; the CSV file is the one for people.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from pipelines.lib.foundation.atomic_files import replaced_atomically
from pipelines.lib.reporting.csv_safety import neutralise_sql
from pipelines.lib.warehouse.connection import connect
from sources.common.sql import quote_identifier

FOCUS_SCHEMA = "marts"
FOCUS_TABLE = "focus_cost_and_usage"
BATCH_ROWS = 100_000

_ORDER = '"BillingPeriodStart", "ChargePeriodStart", "x_SourceFile", "x_SourceRow", "x_RowOrigin"'


def export_focus(warehouse: Path, directory: Path) -> list[tuple[Path, int]]:
    """Write focus_cost_and_usage.parquet and .csv into `directory`; returns each path and its row count."""
    directory.mkdir(parents=True, exist_ok=True)
    with connect(warehouse, read_only=True) as con:
        columns = con.execute(
            "select column_name, data_type from information_schema.columns "
            "where table_schema = ? and table_name = ? and not starts_with(column_name, '_') "
            "order by ordinal_position",
            [FOCUS_SCHEMA, FOCUS_TABLE],
        ).fetchall()
        if not columns:
            raise FileNotFoundError(f"{FOCUS_SCHEMA}.{FOCUS_TABLE} does not exist yet: load data first")
        # Arrow takes the time zone of TIMESTAMPTZ values from the session: make it UTC.
        con.execute("set TimeZone = 'UTC'")
        table = f"{quote_identifier(FOCUS_SCHEMA)}.{quote_identifier(FOCUS_TABLE)}"
        parquet_path = directory / f"{FOCUS_TABLE}.parquet"
        csv_path = directory / f"{FOCUS_TABLE}.csv"
        typed = ", ".join(_parquet_column(name, data_type) for name, data_type in columns)
        as_text = ", ".join(_csv_column(name, data_type) for name, data_type in columns)
        # Both files are replaced together, or neither: a killed export leaves the previous pair.
        with replaced_atomically(parquet_path, csv_path) as (parquet_tmp, csv_tmp):
            rows = _write(con.sql(f"select {typed} from {table} order by {_ORDER}"), parquet_tmp, parquet=True)
            _write(con.sql(f"select {as_text} from {table} order by {_ORDER}"), csv_tmp, parquet=False)
    return [(parquet_path, rows), (csv_path, rows)]


def _parquet_column(name: str, data_type: str) -> str:
    """Timestamps in the warehouse are UTC without a zone: mark them as UTC instants."""
    column = quote_identifier(name)
    if data_type == "TIMESTAMP":
        return f"timezone('UTC', {column}) as {column}"
    return column


def _csv_column(name: str, data_type: str) -> str:
    column = quote_identifier(name)
    if data_type == "TIMESTAMP":
        return f"strftime({column}, '%Y-%m-%dT%H:%M:%SZ') as {column}"
    if data_type == "VARCHAR":
        return f"{neutralise_sql(column)} as {column}"
    return column


def _write(relation, path: Path, *, parquet: bool) -> int:
    reader = relation.to_arrow_reader(BATCH_ROWS)
    rows = 0
    writer_cls = pq.ParquetWriter if parquet else pa_csv.CSVWriter
    with writer_cls(str(path), reader.schema) as writer:
        for batch in reader:
            writer.write_batch(batch)
            rows += batch.num_rows
    return rows
