"""A columnar delivery typed and checked by DuckDB: one query per part file, the parts in delivery order.

A format's reader describes each Parquet part file as a `PartTyping`: the SQL of every output column
(`sources.common.typed_sql`, value for value what its polars reader gives) and the rules that refuse the
file, in the order its polars reader applies them. `parse_parts` then checks each part (one counting scan
for its values that do not parse and its file rules), the delivery's rows (one scan for the rules every
source shares, `sources.common.row_checks`) and returns the union query, which the loader streams into
the lake: no delivery is ever held whole in memory, and no Python touches a row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

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


class PartTyping:
    """One Parquet part file: its typed columns (`outputs`) and the rules that refuse it (`unparsed`, then the
    format's `file_rules`). A subclass fills both from the file's stored columns and types (`stored`)."""

    def __init__(self, part: Path, name: str, stored: Mapping[str, str], output_schema: Mapping[str, pl.DataType]):
        self.part, self.name, self.stored, self.output_schema = part, name, dict(stored), dict(output_schema)
        self.outputs: dict[str, str | None] = {"_source_file": sql_text(name), "_source_row": "file_row_number + 1"}
        """Output column -> its SQL; None where DuckDB cannot give what the polars reader gives (`exact`)."""
        self.present: dict[str, str] = {}
        """Alias -> a stored value as the polars reader sees it, for the rules on values that do not parse."""
        self.unparsed: list[SqlRule] = []
        self.stored_lengths: dict[str, str] = {}
        """Output text column -> the byte length of the stored text it is (blanks aside), cheaper to read."""

    @property
    def exact(self) -> bool:
        """Whether DuckDB types every column of this file exactly as the polars reader does."""
        return all(expression is not None for expression in self.outputs.values())

    def file_rules(self) -> list[SqlRule]:
        """The format's per-file rules over the typed columns, in its polars reader's order."""
        return []

    def present_value(self, column: str, *, blanks_are_null: bool = True) -> str:
        """Stored `column` as the polars reader quotes it, as a column of the checked select (its quoted alias)."""
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


def exact_parts(
    files: Sequence[Path], names: Sequence[str], typing: Callable[[Path, str, dict[str, str]], P]
) -> list[P] | None:
    """Every file's `typing` when all are Parquet that DuckDB types exactly; None: keep the polars reader.

    A file whose typing cannot even start (unreadable, no rows, a required column missing) also leaves the
    delivery to the polars reader, which rejects it in its own words and order.
    """
    parts = []
    with duckdb.connect() as con:
        for part, name in zip(files, names, strict=True):
            try:
                if not magic_bytes(part, name).startswith(PARQUET_MAGIC):
                    return None
                stored = parquet_schema(con, part)
                if not con.execute(f"SELECT count(*) FROM {parquet_scan(part)}").fetchall()[0][0]:
                    return None
                typed = typing(part, name, stored)
            except (duckdb.Error, RejectedInput):
                return None
            if not typed.exact:
                return None
            parts.append(typed)
    return parts


def text_columns(output_schema: Mapping[str, pl.DataType]) -> list[str]:
    return [column for column, dtype in output_schema.items() if dtype == pl.String and not column.startswith("_")]


def length_alias(column: str) -> str:
    return f"__length_{column}"


def parse_parts(parts: Sequence[PartTyping], row_rules: RowRules, format_version: str) -> ParsedDelivery:
    """Check every part file, then the delivery's rows; the query that types them is what the loader reads."""
    schema = parts[0].output_schema
    typed = " UNION ALL ".join(f"({part.select()})" for part in parts)
    with typing_connection() as con:
        current = parts[0]
        try:
            for current in parts:
                current.check(con)
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
    return ParsedDelivery(frame=TypedQuery(sql=typed, rows=rows), format_version=format_version)
