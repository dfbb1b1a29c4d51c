"""FOCUS Parquet deliveries typed and checked by DuckDB, straight from the part files.

The same rows, types and rejections as `sources.focus.reader.read_focus_file`, which stays the reader of
CSV files and of Parquet files with a column DuckDB cannot type exactly as polars does
(`sources.common.typed_sql`). How a part file is typed is described here; checking and streaming the
delivery is `sources.common.typed_parts`.
"""

from __future__ import annotations

from pathlib import Path

from sources.common import typed_parts
from sources.common.delivery import ParsedDelivery
from sources.common.row_checks import SqlRule, value_rules_in_duckdb
from sources.common.sql import quote_identifier, sql_text
from sources.common.typed_parts import PartTyping, parse_parts
from sources.common.typed_sql import not_json_object_sql, text_sql, typed_sql
from sources.common.types import Kind
from sources.focus import reader
from sources.focus.columns import EXTENSIONS_COLUMN, FOCUS_COLUMNS


class FocusPart(PartTyping):
    """One FOCUS Parquet part file: its FOCUS columns typed, every other column kept in `x_extensions`."""

    def __init__(self, part: Path, name: str, schema: dict[str, str]):
        super().__init__(part, name, schema, reader.output_schema())
        canonical = reader.canonical_names(list(schema), name)
        reader.check_mandatory_columns(list(canonical.values()), name)
        stored_as = {focus: stored for stored, focus in canonical.items()}
        self.focus_version = reader.detect_focus_version(list(stored_as))
        self.outputs["_focus_version"] = sql_text(self.focus_version)
        for column, kind in FOCUS_COLUMNS.items():
            stored = stored_as.get(column)
            if stored is None:
                continue
            self.outputs[column] = typed_sql(stored, schema[stored], kind)
            if kind is Kind.STRING and schema[stored] == "VARCHAR":
                self.stored_lengths[column] = f"strlen({quote_identifier(stored)})"
            # FOCUS files are not blank-cleaned before typing: a blank where a number belongs is refused.
            present = self.present_value(stored, blanks_are_null=False)
            typed = quote_identifier(column)
            if kind is Kind.JSON:
                self.reject_unparsed(column, present, not_json_object_sql(typed), reader._EXPECTED[kind])
            elif kind is not Kind.STRING:
                self.reject_unparsed(column, present, f"{typed} IS NULL", reader._EXPECTED[kind])
        extras = [stored for stored, focus in canonical.items() if focus not in FOCUS_COLUMNS]
        self.outputs[EXTENSIONS_COLUMN] = self._extensions(extras, canonical)

    def _extensions(self, extras: list[str], canonical: dict[str, str]) -> str | None:
        """Every column that is not FOCUS's as a JSON object of text, nulls included (`reader._typed_frame`)."""
        if not extras:
            return "CAST(NULL AS VARCHAR)"
        if len({canonical[stored].lower() for stored in extras}) < len(extras):
            return None  # DuckDB's struct field names ignore case; polars keeps both
        members = []
        for stored in extras:
            text = text_sql(stored, self.stored[stored], blanks_are_null=False)
            if text is None:
                return None
            members.append(f"{quote_identifier(canonical[stored])} := {text}")
        return f"CAST(to_json(struct_pack({', '.join(members)})) AS VARCHAR)"

    def file_rules(self) -> list[SqlRule]:
        return value_rules_in_duckdb(reader.FILE_RULES)


def exact_parts(files: list[Path], names: list[str]) -> list[FocusPart] | None:
    """Every part file's typing when DuckDB types them all exactly as `read_focus_file`; None: read with polars."""
    return typed_parts.exact_parts(files, names, FocusPart)


def parse_focus_parquet(parts: list[FocusPart]) -> ParsedDelivery:
    """Check the delivery's part files and rows in DuckDB; the typing query is what the loader reads."""
    versions = ",".join(sorted({part.focus_version for part in parts}))
    return parse_parts(parts, reader.ROW_RULES, f"FOCUS {versions}")
