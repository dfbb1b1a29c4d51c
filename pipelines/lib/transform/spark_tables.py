"""Spark's tables, readable in DuckDB: after a build on Spark, the CLI, the report and `gpu-finops sql` read them.

On `FINOPS_ENGINE=spark` the models are built as Parquet tables in Spark's warehouse folder
(`<schema>.db/<table>/`, partition folders `key=value` below it for incremental models). DuckDB gets a view per
table over those files, in the schema of the same name, so everything that reads the warehouse reads Spark's
results with no second copy. Views of the dbt project have no files on Spark and are not published; the loader's
raw and audit views already read the lake.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import duckdb

from pipelines.lib.warehouse.warehouse import quote_identifier

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
        con.execute(f"CREATE OR REPLACE VIEW {relation} AS {_utc_wall_clock(con, scan)}")
    con.commit()
    return missing


def _utc_wall_clock(con: duckdb.DuckDBPyConnection, scan: str) -> str:
    """`SELECT` of the scan with Spark's UTC instants as the plain UTC timestamps the DuckDB build holds.

    Spark writes its TIMESTAMP as a Parquet instant, which DuckDB reads as TIMESTAMP WITH TIME ZONE.
    """
    instants = [
        name
        for name, kind, *_ in con.execute(f"DESCRIBE SELECT * FROM {scan}").fetchall()
        if kind == "TIMESTAMP WITH TIME ZONE"
    ]
    if not instants:
        return f"SELECT * FROM {scan}"
    replaced = ", ".join(f"timezone('UTC', {quote_identifier(name)}) AS {quote_identifier(name)}" for name in instants)
    return f"SELECT * REPLACE ({replaced}) FROM {scan}"
