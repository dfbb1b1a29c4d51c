"""CUR Parquet deliveries (CUR 2.0 and legacy Athena) typed and checked by DuckDB, straight from the part files.

The same rows, types and rejections as `sources.aws.cur.read_cur_file`, which stays the reader of CSV
flavours and of Parquet files with a column DuckDB cannot type exactly as polars does
(`sources.common.typed_sql`). A delivery becomes one query: per part file a SELECT that types its
columns, the parts in delivery order. The reader checks it (per file one counting scan for values that
do not parse and the format's file rules, then one scan of the delivery for its row rules and duplicate
line items) and hands the query to the loader, which streams it into the lake.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from sources.aws import cur
from sources.aws.columns import FORMAT_TITLES, JSON_COLUMNS, PINNED_COLUMNS
from sources.common.delivery import ParsedDelivery, TypedQuery
from sources.common.errors import RejectedInput
from sources.common.files import PARQUET_MAGIC, first_line, magic_bytes
from sources.common.rejects import shorten
from sources.common.row_checks import (
    SqlRule,
    check_rows_in_duckdb,
    reject_first_in_duckdb,
    value_rules_in_duckdb,
)
from sources.common.sql import quote_identifier, sql_text
from sources.common.typed_sql import (
    UNICODE_WHITESPACE,
    json_member_sql,
    map_json_sql,
    ordered_files_sql,
    parquet_scan,
    parquet_schema,
    present_text,
    text_sql,
    typed_sql,
    typing_connection,
)
from sources.common.types import Kind, sql_type

LENGTHS = {column: f"__length_{column}" for column, kind in PINNED_COLUMNS.items() if kind is Kind.STRING}
"""The pinned text columns whose size check reads the stored value's length, under these aliases."""


class _Plan:
    """How one Parquet file becomes the reader's columns: its select list and the checks on its values."""

    def __init__(self, part: Path, name: str, schema: dict[str, str]):
        self.part, self.name = part, name
        cleaned = {column.lstrip("\ufeff").strip(): column for column in schema}
        self.flavour = cur._flavour(list(cleaned))
        self.canonical = cur._canonical_names(list(cleaned), self.flavour, name)
        cur._check_required_columns(self.canonical, self.flavour, name)
        self.header_of = {target: header for header, target in self.canonical.items()}
        self.stored = {header: cleaned[header] for header in cleaned}
        self.types = {header: schema[cleaned[header]] for header in cleaned}
        self.typed: dict[str, str | None] = {}
        self.present: dict[str, str] = {}
        """Values as the file holds them (blanks null), under an alias, for the checks of values that do not parse."""
        self.unparsed: list[SqlRule] = []
        for header, target in self.canonical.items():
            if target not in PINNED_COLUMNS:
                continue
            kind = PINNED_COLUMNS[target]
            self.typed[target] = typed_sql(self.stored[header], self.types[header], kind)
            if kind is not Kind.STRING:
                present = self._present(header)
                self.unparsed.append(self._unparsed_rule(header, present, f"{quote_identifier(target)} IS NULL", kind))
        self.objects = {bucket: self._json_object(bucket) for bucket in JSON_COLUMNS}

    @property
    def exact(self) -> bool:
        """Whether DuckDB types every column of this file exactly as the polars reader does."""
        return all(expression is not None for expression in self.typed.values()) and all(
            expression is not None for expression in self.objects.values()
        )

    def _present(self, header: str) -> str:
        """The header's value as the file holds it, as a column of the checked select."""
        column = self.stored[header]
        alias = f"__present_{len(self.present)}"
        self.present[alias] = present_text(column) if self.types[header] == "VARCHAR" else quote_identifier(column)
        return quote_identifier(alias)

    @staticmethod
    def _unparsed_rule(header: str, present: str, unparsed: str, kind: Kind) -> SqlRule:
        """A value present in the file for which `unparsed` holds rejects it, quoting the value as found."""
        expected = cur._EXPECTED[kind]
        return SqlRule(
            header,
            f"{present} IS NOT NULL AND {unparsed}",
            lambda found: f"{shorten(found)!r} is not {expected}",
            value=present,
        )

    def _json_object(self, bucket: str) -> str | None:
        """`cur._json_object` in SQL: the MAP column's members and the per-key columns', in header order."""
        objects: list[str] = []
        """Each source of members as a JSON object (null when it has none), merged below."""
        map_header = self.header_of.get(bucket)
        if map_header is not None:
            if self.types[map_header] == "VARCHAR":
                present = self._present(map_header)
                trimmed = f"trim({present_text(self.stored[map_header])}, {sql_text(UNICODE_WHITESPACE)})"
                checked = f"trim({present}, {sql_text(UNICODE_WHITESPACE)})"
                not_object = f"NOT coalesce(json_valid({checked}) AND starts_with({checked}, '{{'), false)"
                self.unparsed.append(self._unparsed_rule(map_header, present, not_object, Kind.JSON))
                inner = f"nullif(trim({trimmed}[2:-2], {sql_text(UNICODE_WHITESPACE)}), '')"
                objects.append(f"('{{' || {inner} || '}}')")
            else:
                stored = map_json_sql(self.stored[map_header], self.types[map_header])
                if stored is None:
                    return None
                objects.append(stored)
        prefix = f"{bucket}_"
        keys: dict[str, list[str]] = {}
        for header, target in self.canonical.items():
            if target.startswith(prefix) and target not in PINNED_COLUMNS and len(target) > len(prefix):
                keys.setdefault(target[len(prefix) :], []).append(header)
        for key, headers in keys.items():
            texts = [text_sql(self.stored[header], self.types[header]) for header in headers]
            if any(text is None for text in texts):
                return None
            member = json_member_sql(key, "coalesce(" + ", ".join(texts) + ")")
            objects.append(f"('{{' || {member} || '}}')")
        if not objects:
            return "CAST(NULL AS VARCHAR)"
        if len(objects) == 1:
            return objects[0]
        members = ", ".join(f"{one}[2:-2]" for one in objects)
        return f"('{{' || nullif(concat_ws(',', {members}), '') || '}}')"

    def select(self, *, checked: bool = False, lengths: bool = False) -> str:
        """The file's rows as `cur.output_schema()` with their lineage; `checked` adds the values as present in
        the file, which the typing checks compare with the typed ones, `lengths` the byte length of each text
        column stored as text (`LENGTHS`): a value over the size limit is never blank, so it is typed as stored."""
        columns = []
        for column, dtype in cur.output_schema().items():
            if column in self.typed:
                expression = self.typed[column]
            elif column in JSON_COLUMNS:
                expression = self.objects[column]
            elif column == "_cur_format":
                expression = sql_text(self.flavour)
            elif column == "_source_file":
                expression = sql_text(self.name)
            elif column == "_source_row":
                expression = "file_row_number + 1"
            else:
                expression = "NULL"
            columns.append(f"CAST({expression} AS {sql_type(dtype)}) AS {quote_identifier(column)}")
        if checked:
            columns += [f"{present} AS {quote_identifier(alias)}" for alias, present in self.present.items()]
        if lengths:
            for column in LENGTHS:
                header = self.header_of.get(column)
                stored = f"strlen({quote_identifier(self.stored[header])})" if header else "NULL"
                if header and self.types[header] != "VARCHAR":
                    stored = f"strlen({self.typed[column]})"
                columns.append(f"{stored} AS {quote_identifier(LENGTHS[column])}")
        return f"SELECT {', '.join(columns)} FROM {parquet_scan(self.part, row_numbers=True)}"

    def check(self, con: duckdb.DuckDBPyConnection) -> None:
        """Reject the file as `read_cur_file` would: its first value that does not parse, column by column, then
        the format's file rules, rule by rule; one counting scan for all of them."""
        rules = [*self.unparsed, *value_rules_in_duckdb(cur.FILE_RULES, headers=self.header_of)]
        reject_first_in_duckdb(con, self.select(checked=True), rules, order="_source_row")


def exact_plans(files: list[Path], names: list[str]) -> list[_Plan] | None:
    """A typing plan per file when every file is Parquet that DuckDB types exactly; None: keep the polars reader.

    A file the plan cannot even start on (unreadable, no rows, a required column missing) also leaves the
    delivery to the polars reader, which rejects it in its own words and order.
    """
    plans = []
    with duckdb.connect() as con:
        for part, name in zip(files, names, strict=True):
            try:
                if not magic_bytes(part, name).startswith(PARQUET_MAGIC):
                    return None
                schema = parquet_schema(con, part)
                if not con.execute(f"SELECT count(*) FROM {parquet_scan(part)}").fetchall()[0][0]:
                    return None
                plan = _Plan(part, name, schema)
            except (duckdb.Error, RejectedInput):
                return None
            if not plan.exact:
                return None
            plans.append(plan)
    return plans


def parse_cur_parquet(plans: list[_Plan]) -> ParsedDelivery:
    """Check every part file, then the delivery's rows; the query that types them is what the loader reads."""
    typed = " UNION ALL ".join(f"({plan.select()})" for plan in plans)
    with typing_connection() as con:
        current = plans[0]
        try:
            for current in plans:
                current.check(con)
            types = {column: sql_type(dtype) for column, dtype in cur.output_schema().items()}
            order = ordered_files_sql([plan.name for plan in plans])
            with_lengths = " UNION ALL ".join(f"({plan.select(lengths=True)})" for plan in plans)
            check_rows_in_duckdb(con, with_lengths, types, cur.ROW_RULES, order=order, lengths=LENGTHS)
            rows = con.execute(f"SELECT count(*) FROM ({typed})").fetchall()[0][0]
        except duckdb.Error as exc:
            raise RejectedInput(current.name, f"is not a readable Parquet file: {first_line(exc)}") from exc
    formats = sorted({plan.flavour for plan in plans})
    return ParsedDelivery(
        frame=TypedQuery(sql=typed, rows=rows),
        format_version=", ".join(FORMAT_TITLES[flavour] for flavour in formats),
    )
