"""Typing Parquet columns in DuckDB, value for value as the polars readers type them (`sources.common.typed`).

Columnar deliveries (CUR 2.0 and legacy CUR Parquet) are typed by DuckDB straight from `read_parquet`, in
queries that stream the part files: memory follows the part, not the month, and no Python touches a row.
Each expression here gives what `typed_column` gives for the same Parquet type. Where DuckDB has no exact
twin of the polars conversion (a date-time held as text, a nested column that is not a map, numbers turned
into text) `typed_sql` returns None and the reader keeps its polars path for the delivery. Two differences
remain, both documented in docs/benchmarks.md: a decimal whose 13th decimal digit is a tie (…5 exactly)
rounds half away from zero here and half to even in polars, and map values that are numbers of 16 or more
integer digits print without an exponent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from sources.common.files import NULL_LITERALS
from sources.common.sql import quote_identifier, sql_text, sql_text_list
from sources.common.types import DECIMAL_PRECISION, DECIMAL_SCALE, Kind, polars_type, sql_type

UNICODE_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + ("\u2028\u2029\u202f\u205f\u3000")
)
"""What polars' `strip_chars()` removes (Unicode White_Space), for DuckDB's `trim` to remove the same."""

DECIMAL_SQL = f"DECIMAL({DECIMAL_PRECISION}, {DECIMAL_SCALE})"
_INTEGER = re.compile(r"U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)")
_TIMESTAMP = re.compile(r"TIMESTAMP(_S|_MS|_NS)?|DATE")
_TEXT_MAP = re.compile(r"MAP\(VARCHAR, (VARCHAR|DOUBLE|FLOAT|BIGINT|INTEGER|BOOLEAN)\)")
READER_MEMORY_LIMIT = "1GB"
"""The reader's own DuckDB: its checks stream the part files; only the duplicate line item check holds a hash
table of a delivery's keys."""


@contextmanager
def typing_connection() -> Iterator[duckdb.DuckDBPyConnection]:
    """An in-memory DuckDB for a reader's typing and checks, closed when they are done."""
    con = duckdb.connect(config={"memory_limit": READER_MEMORY_LIMIT})
    try:
        yield con
    finally:
        con.close()


def parquet_schema(con: duckdb.DuckDBPyConnection, part: Path) -> dict[str, str]:
    """A Parquet file's columns and DuckDB types, as stored (hive folders in its path are not columns)."""
    described = con.execute(f"DESCRIBE SELECT * FROM {parquet_scan(part)}").fetchall()
    return {row[0]: row[1] for row in described}


def parquet_scan(part: Path, *, row_numbers: bool = False) -> str:
    """`read_parquet` of one file as the polars reader sees it: no hive columns, optionally its row numbers."""
    extra = ", file_row_number = true" if row_numbers else ""
    return f"read_parquet({sql_text(str(part))}, hive_partitioning = false{extra})"


def present_text(column: str, *, blanks_are_null: bool = True) -> str:
    """A VARCHAR column with `NULL` literals as null, and blank values too unless `blanks_are_null` is False.

    A value that starts with a printable ASCII character is not blank, so only the rest are trimmed: CASE
    evaluates each branch on the rows left by the ones before, which makes this 4x cheaper than trimming all.
    """
    name = quote_identifier(column)
    literals = ", ".join(map(sql_text, NULL_LITERALS))
    if not blanks_are_null:
        return f"CASE WHEN {name} IN ({literals}) THEN NULL ELSE {name} END"
    return (
        f"CASE WHEN {name} IN ({literals}, '') THEN NULL WHEN unicode({name}) BETWEEN 33 AND 126 THEN {name} "
        f"WHEN trim({name}, {sql_text(UNICODE_WHITESPACE)}) = '' THEN NULL ELSE {name} END"
    )


def text_sql(column: str, stored_type: str, *, blanks_are_null: bool = True) -> str | None:
    """Any column as the polars reader's text (`cast(pl.String)`); None where DuckDB's text would differ.

    A map becomes its JSON object (an empty map `{}`), as polars encodes a nested value.
    """
    if stored_type == "VARCHAR":
        return present_text(column, blanks_are_null=blanks_are_null)
    if stored_type == '"NULL"':
        return "CAST(NULL AS VARCHAR)"
    if stored_type == "BOOLEAN" or _INTEGER.fullmatch(stored_type):
        return f"CAST({quote_identifier(column)} AS VARCHAR)"
    if _TEXT_MAP.fullmatch(stored_type):
        return f"CAST(to_json({quote_identifier(column)}) AS VARCHAR)"
    return None


def typed_sql(column: str, stored_type: str, kind: Kind) -> str | None:
    """`column` of Parquet type `stored_type` as `kind`, null where it does not parse; None: no exact twin here."""
    name = quote_identifier(column)
    if stored_type == '"NULL"':
        return f"CAST(NULL AS {sql_type(polars_type(kind))})"
    if kind is Kind.DECIMAL:
        if stored_type in ("DOUBLE", "FLOAT"):
            # Through the shortest decimal text of the double, as the polars reader does: 0.1 stays 0.1.
            return f"TRY_CAST(CAST({name} AS VARCHAR) AS {DECIMAL_SQL})"
        if stored_type == "VARCHAR":
            trimmed = f"trim({present_text(column)}, {sql_text(UNICODE_WHITESPACE)})"
            # DuckDB also reads `1_000`; polars does not, and neither should a money column.
            return f"CASE WHEN contains({trimmed}, '_') THEN NULL ELSE TRY_CAST({trimmed} AS {DECIMAL_SQL}) END"
        if _INTEGER.fullmatch(stored_type) or stored_type.startswith("DECIMAL"):
            return f"TRY_CAST({name} AS {DECIMAL_SQL})"
        return None
    if kind in (Kind.DATETIME, Kind.DATE):
        if stored_type == "TIMESTAMP WITH TIME ZONE":
            # Its UTC wall time through the epoch: a CAST would give the wall time in the session's time zone.
            return f"make_timestamp(epoch_us({name}))"
        return f"CAST({name} AS TIMESTAMP)" if _TIMESTAMP.fullmatch(stored_type) else None
    if kind is Kind.INTEGER:
        return f"TRY_CAST({name} AS BIGINT)" if _INTEGER.fullmatch(stored_type) else None
    return text_sql(column, stored_type)


def map_json_sql(column: str, stored_type: str) -> str | None:
    """A MAP column as its JSON object, null when empty; None: not a map of text, numbers or booleans.

    DuckDB writes JSON compactly, as polars does: no space to trim, the same string escapes.
    """
    if not _TEXT_MAP.fullmatch(stored_type):
        return None
    name = quote_identifier(column)
    return f"CASE WHEN cardinality({name}) = 0 THEN NULL ELSE to_json({name}) END"


def not_json_object_sql(text: str) -> str:
    """True where the text `text` (SQL) holds is present but not a JSON object (`typed.not_json_object`)."""
    trimmed = f"trim({text}, {sql_text(UNICODE_WHITESPACE)})"
    return f"{text} IS NOT NULL AND NOT coalesce(json_valid({trimmed}) AND starts_with({trimmed}, '{{'), false)"


def json_member_sql(key: str, value: str) -> str:
    """`"key":"value"` with the value as a JSON string; null when the value is null."""
    return f"({sql_text(json.dumps(key) + ':')} || to_json({value}))"


def ordered_files_sql(names: list[str]) -> str:
    """Sorts rows as the delivery holds them: by the position of their file in `names`, then their row."""
    return f"(list_position({sql_text_list(names)}, _source_file)::BIGINT << 40) + _source_row"
