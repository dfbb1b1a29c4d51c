"""Compare the models of two gpu-finops warehouses table by table, value for value.

A refactoring of the dbt project must leave every mart as it was. Build the demo once with the old code
and once with the new, then:

    python scripts/compare_warehouses.py old/warehouse.duckdb new/warehouse.duckdb [--separate-loads]

Every table and view in the compared schemas (default: marts, intermediate) must exist in both files
with the same columns and types (a column that held only nulls may go), and hold the same rows as a
multiset (`EXCEPT ALL` both ways, so duplicates count and DECIMAL values compare exactly). Columns
that record when or by which run a row was built differ between any two builds and are left out
(`--ignore-column`, an ILIKE pattern).
Tables only the new warehouse holds are listed as added, not failed: a refactoring may add models.
Exit status 0 when equal, 1 when anything differs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

DEFAULT_SCHEMAS = ("marts", "intermediate")
BUILD_BOOKKEEPING = ("%built_at", "%fingerprint", "%checksum")
"""When a row was built, and the fingerprint of the inputs it was built from (which holds that time and a hash
each engine computes its own way): the same data, built twice or on another engine, differs here."""
LOAD_LINEAGE = ("%load_id", "%loadid", "%ingested_at", "%source_file", "%sourcefile")
"""Which load wrote a row, when, and its landing path (which carries the arrival time): the same files, loaded
twice (two `make demo` runs), differ here."""


@dataclass
class Comparison:
    equal: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def compare(
    old: Path, new: Path, schemas: Sequence[str], ignore: Sequence[str], only: set[str] | None = None
) -> Comparison:
    """`only`: compare just these `schema.table` names (e.g. the tables another engine built)."""
    con = duckdb.connect()
    try:
        con.execute(f"attach '{_quoted(old)}' as old_wh (read_only)")
        con.execute(f"attach '{_quoted(new)}' as new_wh (read_only)")
        old_tables = _columns(con, "old_wh", schemas, ignore)
        new_tables = _columns(con, "new_wh", schemas, ignore)
        if only is not None:
            old_tables = {name: columns for name, columns in old_tables.items() if name in only}
            new_tables = {name: columns for name, columns in new_tables.items() if name in only}
        result = Comparison(added=sorted(set(new_tables) - set(old_tables)))
        for name in sorted(old_tables):
            if name not in new_tables:
                result.problems.append(f"{name}: missing from {new}")
                continue
            problem = _columns_differ(con, name, old_tables[name], new_tables[name])
            if problem:
                result.problems.append(problem)
                continue
            shared = [column for column in old_tables[name] if column in new_tables[name]]
            problem = _rows_differ(con, name, [column for column, _ in shared])
            if problem:
                result.problems.append(problem)
            else:
                result.equal.append(name)
        return result
    finally:
        con.close()


def _columns(
    con: duckdb.DuckDBPyConnection, catalog: str, schemas: Sequence[str], ignore: Sequence[str]
) -> dict[str, list[tuple[str, str]]]:
    placeholders = ", ".join("?" for _ in schemas)
    ignored = " and ".join("column_name not ilike ?" for _ in ignore) or "true"
    rows = con.execute(
        f"""
        select table_schema || '.' || table_name, column_name, data_type
        from information_schema.columns
        where table_catalog = ? and table_schema in ({placeholders}) and {ignored}
        order by table_schema, table_name, ordinal_position
        """,
        [catalog, *schemas, *ignore],
    ).fetchall()
    tables: dict[str, list[tuple[str, str]]] = {}
    for table, column, data_type in rows:
        tables.setdefault(table, []).append((column, data_type))
    return tables


def _columns_differ(
    con: duckdb.DuckDBPyConnection, table: str, old: list[tuple[str, str]], new: list[tuple[str, str]]
) -> str | None:
    """Same columns and types, in any order; a column may only go when it held nothing but nulls (padding)."""
    added = [column for column in new if column not in old]
    dropped = [column for column in old if column not in new]
    if added:
        return f"{table}: columns added or retyped {added} (old {old})"
    for column, _ in dropped:
        if con.execute(f'select count("{column}") from old_wh.{table}').fetchall()[0][0]:
            return f"{table}: column {column} dropped though it held values"
    return None


def _rows_differ(con: duckdb.DuckDBPyConnection, table: str, columns: list[str]) -> str | None:
    selected = ", ".join(f'"{column}"' for column in columns)
    counts = []
    for first, second in (("old_wh", "new_wh"), ("new_wh", "old_wh")):
        counts.append(
            con.execute(
                f"select count(*) from (select {selected} from {first}.{table} "
                f"except all select {selected} from {second}.{table})"
            ).fetchall()[0][0]
        )
    totals = [
        con.execute(f"select count(*) from {catalog}.{table}").fetchall()[0][0] for catalog in ("old_wh", "new_wh")
    ]
    if counts == [0, 0] and totals[0] == totals[1]:
        return None
    return (
        f"{table}: rows differ (old {totals[0]} rows, new {totals[1]}; "
        f"{counts[0]} only in old, {counts[1]} only in new)"
    )


def _escaped(help_text: str) -> str:
    """argparse formats help with %: the patterns' own % signs are doubled."""
    return help_text.replace("%", "%%")


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="warehouse built with the old code")
    parser.add_argument("new", type=Path, help="warehouse built with the new code")
    parser.add_argument(
        "--schema", action="append", dest="schemas", help=f"schema to compare (repeatable; default {DEFAULT_SCHEMAS})"
    )
    parser.add_argument(
        "--ignore-column",
        action="append",
        dest="ignore",
        help=_escaped(f"column name ILIKE pattern to leave out (repeatable; default {BUILD_BOOKKEEPING})"),
    )
    parser.add_argument(
        "--separate-loads",
        action="store_true",
        help=_escaped(f"the two warehouses loaded the files separately: also leave out {LOAD_LINEAGE}"),
    )
    args = parser.parse_args(argv)
    for path in (args.old, args.new):
        if not path.is_file():
            parser.error(f"{path}: no such warehouse file")
    ignore = list(args.ignore or BUILD_BOOKKEEPING) + list(LOAD_LINEAGE if args.separate_loads else ())
    result = compare(args.old, args.new, args.schemas or DEFAULT_SCHEMAS, ignore)
    for table in result.added:
        print(f"added   {table}")
    for problem in result.problems:
        print(f"DIFFERS {problem}")
    print(f"{len(result.equal)} tables equal, {len(result.added)} added, {len(result.problems)} differ")
    return 1 if result.problems else 0


if __name__ == "__main__":
    sys.exit(main())
