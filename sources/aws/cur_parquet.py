"""CUR Parquet deliveries (CUR 2.0 and legacy Athena) typed and checked by DuckDB, straight from the part files.

The same rows, types and rejections as `sources.aws.cur.read_cur_file`, which stays the reader of CSV
flavours and of Parquet files with a column DuckDB cannot type exactly as polars does
(`sources.common.typed_sql`). How a part file is typed is described here; checking and streaming the
delivery is `sources.common.typed_parts`.
"""

from __future__ import annotations

from pathlib import Path

from sources.aws import cur
from sources.aws.columns import FORMAT_TITLES, JSON_COLUMNS, PINNED_COLUMNS
from sources.common import typed_parts
from sources.common.delivery import ParsedDelivery
from sources.common.row_checks import SqlRule, value_rules_in_duckdb
from sources.common.sql import quote_identifier, sql_text
from sources.common.typed_parts import PartTyping, parse_parts
from sources.common.typed_sql import (
    UNICODE_WHITESPACE,
    json_member_sql,
    map_json_sql,
    not_json_object_sql,
    present_text,
    text_sql,
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

    def _json_object(self, bucket: str, canonical: dict[str, str]) -> str | None:
        """`cur._json_object` in SQL: the MAP column's members and the per-key columns', in header order."""
        objects: list[str] = []
        """Each source of members as a JSON object, null when it has none."""
        map_header = self.header_of.get(bucket)
        if map_header is not None:
            stored = self.stored_name[map_header]
            if self.stored[stored] == "VARCHAR":
                present = self.present_value(stored)
                self.reject_unparsed(map_header, present, not_json_object_sql(present), cur._EXPECTED[Kind.JSON])
                trimmed = f"trim({present_text(stored)}, {sql_text(UNICODE_WHITESPACE)})"
                inner = f"nullif(trim({trimmed}[2:-2], {sql_text(UNICODE_WHITESPACE)}), '')"
                objects.append(f"('{{' || {inner} || '}}')")
            else:
                objects.append(map_json_sql(stored, self.stored[stored]))
        for key, headers in cur.per_key_columns(canonical, bucket).items():
            stored = [self.stored_name[header] for header in headers]
            # polars cannot cast a nested column to text: a file with one stays with (and is refused by) polars
            texts = [None if self.stored[one].startswith("MAP") else text_sql(one, self.stored[one]) for one in stored]
            if None in texts:
                return None
            member = json_member_sql(key, "coalesce(" + ", ".join(texts) + ")")
            objects.append(f"('{{' || {member} || '}}')")
        if None in objects:
            return None
        if not objects:
            return "CAST(NULL AS VARCHAR)"
        if len(objects) == 1:
            return objects[0]
        members = ", ".join(f"{one}[2:-2]" for one in objects)
        return f"('{{' || nullif(concat_ws(',', {members}), '') || '}}')"

    def file_rules(self) -> list[SqlRule]:
        return value_rules_in_duckdb(cur.FILE_RULES, headers=self.header_of)


def exact_parts(files: list[Path], names: list[str]) -> list[CurPart] | None:
    """Every part file's typing when DuckDB types them all exactly as `read_cur_file`; None: read with polars."""
    return typed_parts.exact_parts(files, names, CurPart)


def parse_cur_parquet(parts: list[CurPart]) -> ParsedDelivery:
    """Check the delivery's part files and rows in DuckDB; the typing query is what the loader reads."""
    formats = sorted({part.flavour for part in parts})
    return parse_parts(parts, cur.ROW_RULES, ", ".join(FORMAT_TITLES[flavour] for flavour in formats))
