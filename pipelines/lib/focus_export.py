"""Write the warehouse's canonical cost lines as a FOCUS 1.2 dataset (Parquet and CSV)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from pipelines.lib.warehouse import connect
from sources.focus.columns import FOCUS_1_3_ONLY, FOCUS_COLUMNS, Kind

CANONICAL_TABLE = "intermediate.int_billing__cost_lines"
BATCH_ROWS = 100_000


def export_focus(warehouse: Path, directory: Path) -> list[tuple[Path, int]]:
    """FOCUS 1.2 columns first, then the project's `x_` columns; timestamps as ISO 8601 UTC in CSV."""
    directory.mkdir(parents=True, exist_ok=True)
    with connect(warehouse, read_only=True) as con:
        present = [
            row[0]
            for row in con.execute(
                "select column_name from information_schema.columns "
                "where table_schema = 'intermediate' and table_name = 'int_billing__cost_lines' "
                "order by ordinal_position"
            ).fetchall()
        ]
        if not present:
            raise FileNotFoundError(f"{CANONICAL_TABLE} does not exist yet: load data first")
        focus = [name for name in FOCUS_COLUMNS if name not in FOCUS_1_3_ONLY and name in present]
        extensions = [name for name in present if name.startswith("x_")]
        typed = [f'"{name}"' for name in focus + extensions]
        as_text = [
            f'strftime("{name}", \'%Y-%m-%dT%H:%M:%SZ\') as "{name}"'
            if FOCUS_COLUMNS.get(name) is Kind.DATETIME
            else f'"{name}"'
            for name in focus + extensions
        ]
        order = '"BillingPeriodStart", "ChargePeriodStart", "x_source_file", "x_source_row"'
        parquet_path = directory / "focus_cost_and_usage.parquet"
        csv_path = directory / "focus_cost_and_usage.csv"
        rows = _write(con.sql(f"select {', '.join(typed)} from {CANONICAL_TABLE} order by {order}"), parquet_path)
        _write(con.sql(f"select {', '.join(as_text)} from {CANONICAL_TABLE} order by {order}"), csv_path)
    return [(parquet_path, rows), (csv_path, rows)]


def _write(relation, path: Path) -> int:
    reader = relation.to_arrow_reader(BATCH_ROWS)
    rows = 0
    writer_cls = pq.ParquetWriter if path.suffix == ".parquet" else pa_csv.CSVWriter
    with writer_cls(str(path), reader.schema) as writer:
        for batch in reader:
            writer.write_batch(batch)
            rows += batch.num_rows
    return rows
