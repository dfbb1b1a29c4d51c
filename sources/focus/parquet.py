"""FOCUS Parquet files typed and checked by DuckDB, straight from the part files.

The one reader of FOCUS Parquet; `sources.focus.reader` reads CSV with polars. Both share the column spec
(`sources.focus.columns`) and the names, rules and messages of `sources.focus.reader`, so a file says the
same in either format. How a part file is typed is described here; checking and streaming the delivery is
`sources.common.typed_parts`.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from sources.common import typed_parts
from sources.common.delivery import ParsedDelivery
from sources.common.row_checks import SqlRule, value_rules_in_duckdb
from sources.common.sql import quote_identifier, sql_text
from sources.common.typed_parts import PartTyping, RefusedPart, parse_parts
from sources.common.typed_sql import not_json_object_sql, text_sql, typed_sql
from sources.common.types import Kind
from sources.focus import reader
from sources.focus.columns import EXTENSIONS_COLUMN, FOCUS_COLUMNS
from sources.focus.reader import FocusFile


class FocusPart(PartTyping):
    """One FOCUS Parquet part file: its FOCUS columns typed, every other column kept in `x_extensions`."""

    def __init__(self, part: Path, name: str, schema: dict[str, str], *, require_mandatory: bool = True):
        super().__init__(part, name, schema, reader.output_schema())
        self.require_mandatory = require_mandatory
        canonical = reader.canonical_names(list(schema), name)
        if require_mandatory:
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

    def _extensions(self, extras: list[str], canonical: dict[str, str]) -> str:
        """Every column that is not FOCUS's as a JSON object of text, nulls included, in the file's order."""
        if not extras:
            return "CAST(NULL AS VARCHAR)"
        members = [
            f"{sql_text(canonical[stored])}, {text_sql(stored, self.stored[stored], blanks_are_null=False)}"
            for stored in extras
        ]
        return f"CAST(json_object({', '.join(members)}) AS VARCHAR)"

    def file_rules(self) -> list[SqlRule]:
        return value_rules_in_duckdb(reader.file_rules(require_mandatory=self.require_mandatory))


def parquet_parts(files: list[Path], names: list[str]) -> list[FocusPart | RefusedPart] | None:
    """Every part file's typing when all are Parquet; None: a CSV delivery, read file by file."""
    return typed_parts.parquet_parts(files, names, FocusPart)


def read_focus_parquet(path: Path, name: str, *, require_mandatory: bool = True) -> FocusFile:
    """One FOCUS Parquet file, checked by the file rules of `reader.read_focus_csv`."""
    part = typed_parts.parquet_part(path, name, partial(FocusPart, require_mandatory=require_mandatory))
    frame = typed_parts.read_part(part)
    return FocusFile(frame=frame, focus_version=part.focus_version)


def parse_focus_parquet(parts: list[FocusPart | RefusedPart]) -> ParsedDelivery:
    """Check the delivery's part files and rows in DuckDB; the typing query is what the loader reads."""

    def versions() -> str:
        return "FOCUS " + ",".join(sorted({part.focus_version for part in parts}))

    return parse_parts(parts, reader.ROW_RULES, versions, reader.output_schema())
