"""Spark's tables, readable in DuckDB: after a build on Spark, the CLI, the report and `gpu-finops sql` read them.

On `FINOPS_ENGINE=spark` the models are built as Parquet tables in Spark's warehouse folder
(`<schema>.db/<table>/`, partition folders `key=value` below it for incremental models). DuckDB gets a view per
table over those files, in the schema of the same name, so everything that reads the warehouse reads Spark's
results with no second copy. Views of the dbt project have no files on Spark and are not published; the loader's
raw and audit views already read the lake.

The folders follow Spark's rule for managed tables of the session catalog (`spark.sql.warehouse.dir`, which the
`spark` profile sets to FINOPS_HOME/spark/warehouse), derived here from dbt's manifest rather than asked of the
catalog (`DESCRIBE TABLE EXTENDED … Location`), which would cost a JVM start per build. A table whose folder is
elsewhere (an external location, another catalog) has no files at the derived path and is reported as missing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import duckdb

from sources.common.sql import quote_identifier

PUBLISHED_MATERIALIZATIONS = frozenset({"table", "incremental", "seed"})


@dataclass(frozen=True)
class SparkTable:
    schema: str
    name: str
    folder: Path


def spark_tables(manifest_path: Path, warehouse: Path) -> list[SparkTable]:
    """Every table and seed of the dbt project that Spark wrote under `warehouse`, from dbt's manifest."""
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    tables = []
    for node in manifest["nodes"].values():
        if node["resource_type"] not in {"model", "seed"}:
            continue
        materialized = "seed" if node["resource_type"] == "seed" else node["config"].get("materialized")
        if materialized not in PUBLISHED_MATERIALIZATIONS:
            continue
        name = node.get("alias") or node["name"]
        tables.append(SparkTable(node["schema"], name, warehouse / f"{node['schema']}.db" / name))
    return sorted(tables, key=lambda table: (table.schema, table.name))


def publish_spark_tables(con: duckdb.DuckDBPyConnection, tables: list[SparkTable]) -> list[SparkTable]:
    """Create or replace one DuckDB view per Spark table that has files; the tables without files, returned.

    A table of the same name left by an earlier DuckDB build is dropped first: the engine that built last wins.
    """
    missing = []
    con.begin()
    for table in tables:
        if not any(table.folder.glob("**/*.parquet")):
            missing.append(table)
            continue
        relation = f"{quote_identifier(table.schema)}.{quote_identifier(table.name)}"
        files = str(table.folder / "**" / "*.parquet").replace("'", "''")
        scan = f"read_parquet('{files}', hive_partitioning = true, union_by_name = true)"
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {quote_identifier(table.schema)}")
        kind = con.execute(
            "SELECT table_type FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
            [table.schema, table.name],
        ).fetchall()
        if kind and kind[0][0] == "BASE TABLE":
            con.execute(f"DROP TABLE {relation}")
        con.execute(f"CREATE OR REPLACE VIEW {relation} AS {_typed_as_duckdb_builds_them(con, scan, table.folder)}")
    con.commit()
    return missing


def _typed_as_duckdb_builds_them(con: duckdb.DuckDBPyConnection, scan: str, folder: Path) -> str:
    """`SELECT` of the scan with timestamps typed as the DuckDB build types them (plain UTC `TIMESTAMP`).

    Spark writes its TIMESTAMP as a Parquet instant, which DuckDB reads as TIMESTAMP WITH TIME ZONE; and an
    incremental model's partition column lives in its folder names (`BillingPeriodStart=2026-09-01 00%3A00%3A00`),
    which DuckDB reads as text: such a column becomes a TIMESTAMP when every value is one.
    """
    partition_columns = {path.name.split("=", 1)[0] for path in folder.rglob("*=*") if path.is_dir()}
    replaced = []
    for name, kind, *_ in con.execute(f"DESCRIBE SELECT * FROM {scan}").fetchall():
        column = quote_identifier(name)
        if kind == "TIMESTAMP WITH TIME ZONE":
            replaced.append(f"timezone('UTC', {column}) AS {column}")
        elif kind == "VARCHAR" and name in partition_columns and _all_timestamps(con, scan, column):
            replaced.append(f"CAST({column} AS TIMESTAMP) AS {column}")
    if not replaced:
        return f"SELECT * FROM {scan}"
    return f"SELECT * REPLACE ({', '.join(replaced)}) FROM {scan}"


def _all_timestamps(con: duckdb.DuckDBPyConnection, scan: str, column: str) -> bool:
    return con.execute(
        f"SELECT count(*) > 0 AND count(*) = count(TRY_CAST({column} AS TIMESTAMP)) FROM {scan} "
        f"WHERE {column} IS NOT NULL"
    ).fetchall()[0][0]
