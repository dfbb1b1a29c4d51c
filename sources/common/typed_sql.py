"""Typing Parquet columns by `Kind` in DuckDB: the one implementation of the typing contract for Parquet.

CUR and FOCUS Parquet files are typed here, straight from `read_parquet`, in queries that stream the part
files: memory follows the part, not the month, and no Python touches a row. Text files (CSV) are typed by
polars (`sources.common.typed`), the better tool for text that has just been read; both follow the contract
of `sources.common.types` (DECIMAL(38, 12) never through a binary float, naive UTC timestamps in the
spellings of `DATETIME_FORMATS`, `NULL` literals and blanks as null) and share its constants, not its code.
Every Parquet type has an expression: a value with no meaning as `kind` (a boolean where money belongs)
becomes null, and the reader rejects the file at the first such value.
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
from sources.common.types import DATETIME_FORMATS, DECIMAL_PRECISION, DECIMAL_SCALE, Kind, polars_type, sql_type

UNICODE_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + ("\u2028\u2029\u202f\u205f\u3000")
)
"""What polars' `strip_chars()` removes (Unicode White_Space), for DuckDB's `trim` to remove the same."""

DECIMAL_SQL = f"DECIMAL({DECIMAL_PRECISION}, {DECIMAL_SCALE})"
_INTEGER = re.compile(r"U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)")
_TIMESTAMP = re.compile(r"TIMESTAMP(_S|_MS|_NS)?|DATE")
_NESTED = re.compile(r"(MAP|STRUCT)\(.*\)|.*\[\d*\]")
"""A map, a struct, a list or an array: written as its JSON."""
_OBJECT = re.compile(r"(MAP|STRUCT)\(.*\)")
"""A nested type whose JSON is an object."""
DATETIME_FORMATS_SQL = [spelling.replace("%.f", ".%n") for spelling in DATETIME_FORMATS]
"""`DATETIME_FORMATS` in DuckDB's `strptime` spelling: chrono's `%.f` (a dot and 1 to 9 digits) is `.%n`."""
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


def text_sql(column: str, stored_type: str, *, blanks_are_null: bool = True) -> str:
    """Any column as text: VARCHAR as `present_text`, a map, struct or list as its JSON (an empty map `{}`),
    anything else as DuckDB writes it."""
    name = quote_identifier(column)
    if stored_type == "VARCHAR":
        return present_text(column, blanks_are_null=blanks_are_null)
    if stored_type == '"NULL"':
        return "CAST(NULL AS VARCHAR)"
    if _NESTED.fullmatch(stored_type):
        return f"CAST(to_json({name}) AS VARCHAR)"
    return f"CAST({name} AS VARCHAR)"


def trimmed_sql(column: str, stored_type: str) -> str:
    """Any column as text (`text_sql`), surrounding Unicode white space dropped."""
    return f"trim({text_sql(column, stored_type)}, {sql_text(UNICODE_WHITESPACE)})"


def parsed_timestamp_sql(text: str) -> str:
    """Text (SQL) in the first of `DATETIME_FORMATS` it matches, as naive UTC; null where none does.

    One `try_strptime` per format: given the list at once, DuckDB 2.0.1 applies a row's UTC offset to the rows
    after it that have none (`…04:00+02:00` then `…03:00Z` read 01:00). `%n` parses to nanoseconds: whole
    microseconds are kept, the rest dropped, as chrono's `%.f` does into microseconds.
    """
    parsed = ", ".join(f"epoch_ns(try_strptime({text}, {sql_text(spelling)}))" for spelling in DATETIME_FORMATS_SQL)
    return f"make_timestamp(coalesce({parsed}) // 1000)"


def typed_sql(column: str, stored_type: str, kind: Kind) -> str:
    """`column` of Parquet type `stored_type` as `kind`; null where a value does not parse as `kind`."""
    name = quote_identifier(column)
    if stored_type == '"NULL"':
        return f"CAST(NULL AS {sql_type(polars_type(kind))})"
    if kind is Kind.DECIMAL:
        if stored_type in ("DOUBLE", "FLOAT"):
            # Through the shortest decimal text of the double: 0.1 stays 0.1, not 0.1000000000000000055.
            return f"TRY_CAST(CAST({name} AS VARCHAR) AS {DECIMAL_SQL})"
        if _INTEGER.fullmatch(stored_type) or stored_type.startswith("DECIMAL"):
            return f"TRY_CAST({name} AS {DECIMAL_SQL})"
        trimmed = trimmed_sql(column, stored_type)
        # DuckDB also reads `1_000`; a money column should not.
        return f"CASE WHEN contains({trimmed}, '_') THEN NULL ELSE TRY_CAST({trimmed} AS {DECIMAL_SQL}) END"
    if kind in (Kind.DATETIME, Kind.DATE):
        if stored_type == "TIMESTAMP WITH TIME ZONE":
            # Its UTC wall time through the epoch: a CAST would give the wall time in the session's time zone.
            return f"make_timestamp(epoch_us({name}))"
        if _TIMESTAMP.fullmatch(stored_type):
            return f"CAST({name} AS TIMESTAMP)"
        return parsed_timestamp_sql(trimmed_sql(column, stored_type))
    if kind is Kind.INTEGER:
        if _INTEGER.fullmatch(stored_type):
            return f"TRY_CAST({name} AS BIGINT)"
        return f"TRY_CAST({trimmed_sql(column, stored_type)} AS BIGINT)"
    return text_sql(column, stored_type)


def map_json_sql(column: str, stored_type: str) -> str | None:
    """A map or struct column as its JSON object, null when empty; None: not a type whose JSON is an object.

    DuckDB writes JSON compactly: no space to trim.
    """
    name = quote_identifier(column)
    if stored_type.startswith("MAP("):
        return f"CASE WHEN cardinality({name}) = 0 THEN NULL ELSE to_json({name}) END"
    return f"to_json({name})" if _OBJECT.fullmatch(stored_type) else None


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
