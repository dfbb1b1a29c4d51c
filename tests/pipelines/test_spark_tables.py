"""Spark's tables read back in DuckDB: files laid out and typed as Spark writes them, without a Spark run."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.lib.transform.spark_tables import SparkTable, publish_spark_tables


def write_spark_partition(folder: Path, rows: list[dict]) -> None:
    """One part file as Spark writes it: timestamps as UTC instants, money as DECIMAL(38,12)."""
    folder.mkdir(parents=True)
    schema = pa.schema([("built_at", pa.timestamp("us", tz="UTC")), ("cost", pa.decimal128(38, 12))])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / "part-00000.snappy.parquet")


def test_a_partitioned_spark_table_reads_with_the_types_of_the_duckdb_build(tmp_path: Path):
    table = tmp_path / "warehouse" / "marts.db" / "fct_cost_daily"
    built = datetime(2026, 9, 30, 23, 15, tzinfo=UTC)
    # Spark's partition folders: key=value, with ':' escaped as %3A.
    write_spark_partition(
        table / "x_source=aws_cur" / "billing_period_start=2026-09-01 00%3A00%3A00",
        [{"built_at": built, "cost": Decimal("1.25")}],
    )
    write_spark_partition(
        table / "x_source=focus" / "billing_period_start=2026-10-01 00%3A00%3A00",
        [{"built_at": built, "cost": Decimal("0.000000000001")}],
    )
    with duckdb.connect(str(tmp_path / "warehouse.duckdb")) as con:
        con.execute("CREATE SCHEMA marts")
        con.execute("CREATE TABLE marts.fct_cost_daily AS SELECT 1 AS left_by_a_duckdb_build")
        missing = publish_spark_tables(
            con, [SparkTable("marts", "fct_cost_daily", table), SparkTable("marts", "never_built", tmp_path / "none")]
        )
        assert [t.name for t in missing] == ["never_built"]
        types = dict(
            con.execute(
                "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'fct_cost_daily'"
            ).fetchall()
        )
        rows = con.execute(
            "SELECT x_source, billing_period_start, built_at, cost FROM marts.fct_cost_daily ORDER BY x_source"
        ).fetchall()
    assert types == {
        "built_at": "TIMESTAMP",
        "cost": "DECIMAL(38,12)",
        "x_source": "VARCHAR",
        "billing_period_start": "TIMESTAMP",
    }
    wall_clock = datetime(2026, 9, 30, 23, 15)
    assert rows == [
        ("aws_cur", datetime(2026, 9, 1), wall_clock, Decimal("1.25")),
        ("focus", datetime(2026, 10, 1), wall_clock, Decimal("0.000000000001")),
    ]
