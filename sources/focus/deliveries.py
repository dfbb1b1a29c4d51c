"""A FOCUS delivery: the files its manifest lists, Parquet typed by DuckDB and CSV by polars.

Each format has one reader: `sources.focus.parquet` (Parquet, DuckDB) and `sources.focus.reader` (CSV,
polars), with the same names, rules and messages; this module chooses by the files' contents and applies the
delivery's row rules.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import polars as pl

from sources.common.delivery import Delivery, DeliveryWarning, ParsedDelivery, TypedQuery
from sources.common.errors import RejectedInput
from sources.common.manifests import listed_data_files
from sources.common.row_checks import Flag, check_rows, flag_rows_in_duckdb
from sources.common.typed_parts import is_parquet
from sources.common.typed_sql import ordered_files_sql, typing_connection
from sources.focus import parquet
from sources.focus.reader import ROW_RULES, FocusFile, read_focus_csv

_COMMITTED_USAGE = "ChargeCategory = 'Usage' AND CommitmentDiscountId IS NOT NULL"
DERIVED_VALUES = (
    Flag(
        "PricingCategory",
        f"{_COMMITTED_USAGE} AND lower(trim(coalesce(PricingCategory, ''))) <> 'committed'",
        "PricingCategory derived as Committed",
        "a usage line naming the commitment discount that applied to it (CommitmentDiscountId) gives another"
        " PricingCategory or none: read as Committed, as FOCUS requires",
    ),
    Flag(
        "CommitmentDiscountStatus",
        f"{_COMMITTED_USAGE} AND CommitmentDiscountStatus IS NULL",
        "CommitmentDiscountStatus derived",
        "a usage line naming a commitment discount has no CommitmentDiscountStatus: read as Unused where its"
        " ResourceId is the commitment's own id (FOCUS's mark of a commitment's unused part), else Used",
    ),
)
"""The values int_focus__cost_lines derives where a file leaves them out, as the reader records them."""


def parse_focus_delivery(delivery: Delivery) -> ParsedDelivery:
    """The connector entry point: a FOCUS delivery's data files, typed.

    When the delivery carries an export manifest (AWS Data Exports `FOCUS_1_2_AWS`, Azure
    FocusCost), exactly the files it lists are read; otherwise every data file of the delivery.
    """
    files = delivered_files(delivery)
    names = [delivery.display_name(file) for file in files]
    parts = parquet.parquet_parts(files, names)
    parsed = parquet.parse_focus_parquet(parts) if parts is not None else parse_file_by_file(files, names)
    return replace(parsed, warnings=parsed.warnings + derived_value_warnings(parsed, names))


def delivered_files(delivery: Delivery) -> list[Path]:
    listed = listed_data_files(delivery)
    files = delivery.files() if listed is None else listed
    if not files:
        raise RejectedInput(delivery.name, "holds no CSV, CSV.gz or Parquet files")
    return files


def read_focus_file(path: Path, *, source_file: str | None = None, require_mandatory: bool = True) -> FocusFile:
    """Parse and validate one FOCUS file by the reader of its format.

    `source_file` is the name recorded for lineage and used in messages (defaults to the path).
    `require_mandatory=False` accepts partial files such as the spec's worked examples; the
    values present are still typed and checked.
    Raises RejectedInput naming the file, and where there is one the row and column.
    """
    name = source_file or str(path)
    if is_parquet(path, name):
        return parquet.read_focus_parquet(path, name, require_mandatory=require_mandatory)
    return read_focus_csv(path, source_file=name, require_mandatory=require_mandatory)


def read_focus_files(files: list[tuple[Path, str]], *, require_mandatory: bool = True) -> FocusFile:
    """Parse the files of one delivery (path, name for lineage) into one frame."""
    if not files:
        raise ValueError("read_focus_files needs at least one file")
    parsed = [read_focus_file(path, source_file=name, require_mandatory=require_mandatory) for path, name in files]
    return FocusFile(
        frame=pl.concat([part.frame for part in parsed], how="vertical"),
        focus_version=",".join(sorted({part.focus_version for part in parsed})),
    )


def parse_file_by_file(files: list[Path], names: list[str]) -> ParsedDelivery:
    """Every file read by `read_focus_file` into one frame, then the delivery's row rules."""
    parsed = read_focus_files(list(zip(files, names, strict=True)))
    check_rows(parsed.frame, ROW_RULES)
    return ParsedDelivery(frame=parsed.frame, format_version=f"FOCUS {parsed.focus_version}")


def derived_value_warnings(parsed: ParsedDelivery, names: list[str]) -> tuple[DeliveryWarning, ...]:
    """The rows whose values the models derive (DERIVED_VALUES), counted in DuckDB whichever reader typed them."""
    with typing_connection() as con:
        if isinstance(parsed.frame, TypedQuery):
            relation = parsed.frame.sql
        else:
            con.register("parsed_rows", parsed.frame)
            relation = "SELECT * FROM parsed_rows"
        return flag_rows_in_duckdb(con, relation, DERIVED_VALUES, order=ordered_files_sql(names))
