"""CUR Parquet files (CUR 2.0 and legacy Athena) typed and checked by DuckDB, straight from the part files.

The one reader of CUR Parquet; `sources.aws.cur` reads the CSV flavours with polars. Both share the column
spec (`sources.aws.columns`), the names, the rules and the messages of `sources.aws.cur`, so a file says the
same in either format. How a part file is typed is described here; checking and streaming the delivery is
`sources.common.typed_parts`.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from sources.aws import cur
from sources.aws.columns import FORMAT_TITLES, JSON_COLUMNS, PINNED_COLUMNS
from sources.common import typed_parts
from sources.common.delivery import ParsedDelivery
from sources.common.row_checks import SqlRule, value_rules_in_duckdb
from sources.common.sql import quote_identifier, sql_text
from sources.common.typed_parts import PartTyping, RefusedPart, parse_parts
from sources.common.typed_sql import (
    UNICODE_WHITESPACE,
    json_member_sql,
    map_json_sql,
    not_json_object_sql,
    text_sql,
    trimmed_sql,
    typed_sql,
)
from sources.common.types import Kind


class CurPart(PartTyping):
    """One CUR Parquet part file: its pinned columns typed, tags and product attributes gathered into JSON."""

    def __init__(self, part: Path, name: str, schema: dict[str, str]):
        cleaned = {column.lstrip("\ufeff").strip(): column for column in schema}
        super().__init__(part, name, schema, cur.output_schema())
        self.flavour = cur._flavour(list(cleaned))
        canonical = cur._canonical_names(list(cleaned), self.flavour, name)
        cur._check_required_columns(canonical, self.flavour, name)
        self.header_of = {target: header for header, target in canonical.items()}
        self.stored_name = cleaned
        self.outputs["_cur_format"] = sql_text(self.flavour)
        for header, target in canonical.items():
            if target not in PINNED_COLUMNS:
                continue
            kind, stored = PINNED_COLUMNS[target], cleaned[header]
            self.outputs[target] = typed_sql(stored, schema[stored], kind)
            if kind is Kind.STRING and schema[stored] == "VARCHAR":
                self.stored_lengths[target] = f"strlen({quote_identifier(stored)})"
            if kind is not Kind.STRING:
                present = self.present_value(stored)
                self.reject_unparsed(header, present, f"{quote_identifier(target)} IS NULL", cur._EXPECTED[kind])
        for bucket in JSON_COLUMNS:
            self.outputs[bucket] = self._json_object(bucket, canonical)

    def _json_object(self, bucket: str, canonical: dict[str, str]) -> str:
        """The MAP column's members and the per-key columns', in header order (`cur._json_object` for CSV).

        A MAP or struct column is its JSON; any other column must hold a JSON object's text.
        """
        objects: list[str] = []
        """Each source of members as a JSON object, null when it has none."""
        map_header = self.header_of.get(bucket)
        if map_header is not None:
            stored = self.stored_name[map_header]
            as_json = map_json_sql(stored, self.stored[stored])
            if as_json is None:
                present = self.present_value(stored)
                self.reject_unparsed(map_header, present, not_json_object_sql(present), cur._EXPECTED[Kind.JSON])
                trimmed = trimmed_sql(stored, self.stored[stored])
                inner = f"nullif(trim({trimmed}[2:-2], {sql_text(UNICODE_WHITESPACE)}), '')"
                as_json = f"('{{' || {inner} || '}}')"
            objects.append(as_json)
        for key, headers in cur.per_key_columns(canonical, bucket).items():
            texts = [text_sql(stored, self.stored[stored]) for stored in map(self.stored_name.get, headers)]
            member = json_member_sql(key, "coalesce(" + ", ".join(texts) + ")")
            objects.append(f"('{{' || {member} || '}}')")
        if not objects:
            return "CAST(NULL AS VARCHAR)"
        if len(objects) == 1:
            return objects[0]
        members = ", ".join(f"{one}[2:-2]" for one in objects)
        return f"('{{' || nullif(concat_ws(',', {members}), '') || '}}')"

    def file_rules(self) -> list[SqlRule]:
        return value_rules_in_duckdb(cur.FILE_RULES, headers=self.header_of)


def parquet_parts(files: list[Path], names: list[str]) -> list[CurPart | RefusedPart] | None:
    """Every part file's typing when all are Parquet; None: a CSV delivery, read file by file."""
    return typed_parts.parquet_parts(files, names, CurPart)


def read_cur_parquet(path: Path, name: str) -> pl.DataFrame:
    """One CUR Parquet file in `cur.output_schema()`, checked by the file rules of `cur.read_cur_csv`."""
    return typed_parts.read_part(typed_parts.parquet_part(path, name, CurPart))


def parse_cur_parquet(parts: list[CurPart | RefusedPart]) -> ParsedDelivery:
    """Check the delivery's part files and rows in DuckDB; the typing query is what the loader reads."""

    def formats() -> str:
        return ", ".join(FORMAT_TITLES[flavour] for flavour in sorted({part.flavour for part in parts}))

    return parse_parts(parts, cur.ROW_RULES, formats, cur.output_schema())
