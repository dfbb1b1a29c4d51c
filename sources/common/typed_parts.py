"""Parquet files typed and checked by DuckDB: one query per part file, the parts in delivery order.

A format's reader describes each Parquet part file as a `PartTyping`: the SQL of every output column
(`sources.common.typed_sql`) and the rules that refuse the file, in the order its text reader applies them
to a CSV file. `parse_parts` then checks each part (one counting scan for its values that do not parse and
its file rules), the delivery's rows (one scan for the rules every source shares, `sources.common.row_checks`)
and returns the union query, which the loader streams into the lake: no delivery is ever held whole in
memory, and no Python touches a row. `read_part` gives one file's typed rows as a frame, for a delivery
that mixes Parquet and CSV files.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

import duckdb
import polars as pl

from sources.common.delivery import ParsedDelivery, TypedQuery
from sources.common.errors import RejectedInput
from sources.common.files import PARQUET_MAGIC, first_line, magic_bytes
from sources.common.rejects import shorten
from sources.common.row_checks import RowRules, SqlRule, check_rows_in_duckdb, reject_first_in_duckdb
from sources.common.sql import quote_identifier, sql_text
from sources.common.typed_sql import ordered_files_sql, parquet_scan, parquet_schema, present_text, typing_connection
from sources.common.types import sql_type

P = TypeVar("P", bound="PartTyping")


class Part(Protocol):
    name: str

    def check(self, con: duckdb.DuckDBPyConnection) -> None: ...

    def select(self, *, checked: bool = False, lengths: bool = False) -> str: ...


class PartTyping:
    """One Parquet part file: its typed columns (`outputs`) and the rules that refuse it (`unparsed`, then the
    format's `file_rules`). A subclass fills both from the file's stored columns and types (`stored`)."""

    def __init__(self, part: Path, name: str, stored: Mapping[str, str], output_schema: Mapping[str, pl.DataType]):
        self.part, self.name, self.stored, self.output_schema = part, name, dict(stored), dict(output_schema)
        self.outputs: dict[str, str] = {"_source_file": sql_text(name), "_source_row": "file_row_number + 1"}
        """Output column -> its SQL; a column the file lacks is null."""
        self.present: dict[str, str] = {}
        """Alias -> a stored value as the file holds it, for the rules on values that do not parse."""
        self.unparsed: list[SqlRule] = []
        self.stored_lengths: dict[str, str] = {}
        """Output text column -> the byte length of the stored text it is (blanks aside), cheaper to read."""

    def file_rules(self) -> list[SqlRule]:
        """The format's per-file rules over the typed columns, in the order its text reader applies them."""
        return []

    def present_value(self, column: str, *, blanks_are_null: bool = True) -> str:
        """Stored `column` as a rejection quotes it, as a column of the checked select (its quoted alias)."""
        alias = f"__present_{len(self.present)}"
        if self.stored[column] == "VARCHAR":
            value = present_text(column, blanks_are_null=blanks_are_null)
        else:
            value = quote_identifier(column)
        self.present[alias] = value
        return quote_identifier(alias)

    def reject_unparsed(self, named: str, present: str, unparsed: str, expected: str) -> None:
        """A value present in the file for which `unparsed` holds rejects it, quoting the value as found."""
        self.unparsed.append(
            SqlRule(
                named,
                f"{present} IS NOT NULL AND {unparsed}",
                lambda found: f"{shorten(found)!r} is not {expected}",
                value=present,
            )
        )

    def select(self, *, checked: bool = False, lengths: bool = False) -> str:
        """The file's rows in the output schema. `checked` adds the stored values the typing rules compare;
        `lengths` adds each text column's byte length as `__length_<column>`, from the stored text where it
        is one (a value over the size limit is never blank, so it is typed as stored)."""
        columns = [
            f"CAST({self.outputs.get(column) or 'NULL'} AS {sql_type(dtype)}) AS {quote_identifier(column)}"
            for column, dtype in self.output_schema.items()
        ]
        if checked:
            columns += [f"{value} AS {quote_identifier(alias)}" for alias, value in self.present.items()]
        if lengths:
            for column in text_columns(self.output_schema):
                length = self.stored_lengths.get(column) or f"strlen({self.outputs.get(column) or 'NULL'})"
                columns.append(f"{length} AS {quote_identifier(length_alias(column))}")
        return f"SELECT {', '.join(columns)} FROM {parquet_scan(self.part, row_numbers=True)}"

    def check(self, con: duckdb.DuckDBPyConnection) -> None:
        """Reject the file at its first value that does not parse, then at its first row breaking a file rule:
        one counting scan for all of them."""
        reject_first_in_duckdb(
            con, self.select(checked=True), [*self.unparsed, *self.file_rules()], order="_source_row"
        )


class RefusedPart:
    """A file refused before its values are read (unreadable, no rows, a required column missing): refused
    when its turn comes, so the files before it are checked first, in delivery order."""

    def __init__(self, name: str, refusal: RejectedInput):
        self.name, self.refusal = name, refusal

    def check(self, con: duckdb.DuckDBPyConnection) -> None:
        raise self.refusal

    def select(self, *, checked: bool = False, lengths: bool = False) -> str:
        raise self.refusal


def is_parquet(path: Path, name: str) -> bool:
    return magic_bytes(path, name).startswith(PARQUET_MAGIC)


def parquet_parts(
    files: Sequence[Path], names: Sequence[str], typing: Callable[[Path, str, dict[str, str]], P]
) -> list[P | RefusedPart] | None:
    """Every file's `typing` when all are Parquet; None when one is not (a CSV delivery, read file by file)."""
    if not all(is_parquet(part, name) for part, name in zip(files, names, strict=True)):
        return None
    return [parquet_part(part, name, typing) for part, name in zip(files, names, strict=True)]


def parquet_part(part: Path, name: str, typing: Callable[[Path, str, dict[str, str]], P]) -> P | RefusedPart:
    """One Parquet file's `typing` from its stored columns, or the refusal of a file with nothing to type."""
    try:
        with duckdb.connect() as con:
            try:
                stored = parquet_schema(con, part)
                rows = con.execute(f"SELECT count(*) FROM {parquet_scan(part)}").fetchall()[0][0]
            except duckdb.Error as exc:
                raise RejectedInput(name, f"is not a readable Parquet file: {first_line(exc)}") from exc
        if not rows:
            raise RejectedInput(name, "the file has a header but no data rows")
        return typing(part, name, stored)
    except RejectedInput as refusal:
        return RefusedPart(name, refusal)


def read_part(part: Part) -> pl.DataFrame:
    """One Parquet file's typed rows, checked by its part's rules (not the delivery's row rules)."""
    with typing_connection() as con:
        try:
            part.check(con)
            return con.sql(part.select()).pl()
        except duckdb.Error as exc:
            raise RejectedInput(part.name, f"is not a readable Parquet file: {first_line(exc)}") from exc


def text_columns(output_schema: Mapping[str, pl.DataType]) -> list[str]:
    return [column for column, dtype in output_schema.items() if dtype == pl.String and not column.startswith("_")]


def length_alias(column: str) -> str:
    return f"__length_{column}"


def parse_parts(
    parts: Sequence[Part], row_rules: RowRules, format_version: Callable[[], str], schema: Mapping[str, pl.DataType]
) -> ParsedDelivery:
    """Check every part file, then the delivery's rows; the query that types them is what the loader reads.

    `format_version` is asked once every file has passed its checks (a refused file has none).
    """
    with typing_connection() as con:
        current = parts[0]
        try:
            for current in parts:
                current.check(con)
            typed = " UNION ALL ".join(f"({part.select()})" for part in parts)
            with_lengths = " UNION ALL ".join(f"({part.select(lengths=True)})" for part in parts)
            check_rows_in_duckdb(
                con,
                with_lengths,
                {column: sql_type(dtype) for column, dtype in schema.items()},
                row_rules,
                order=ordered_files_sql([part.name for part in parts]),
                lengths={column: quote_identifier(length_alias(column)) for column in text_columns(schema)},
            )
            rows = con.execute(f"SELECT count(*) FROM ({typed})").fetchall()[0][0]
        except duckdb.Error as exc:
            raise RejectedInput(current.name, f"is not a readable Parquet file: {first_line(exc)}") from exc
    return ParsedDelivery(frame=TypedQuery(sql=typed, rows=rows), format_version=format_version())
