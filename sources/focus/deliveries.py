"""A FOCUS delivery: the files its manifest lists, read by DuckDB when they are Parquet it types exactly, else polars.

File-level reading is `sources.focus.reader` (CSV and Parquet, polars) and `sources.focus.parquet` (Parquet,
DuckDB, the same rows and rejections); this module chooses between them and applies the delivery's row rules.
"""

from __future__ import annotations

from pathlib import Path

from sources.common.delivery import Delivery, ParsedDelivery
from sources.common.errors import RejectedInput
from sources.common.manifests import listed_data_files
from sources.common.row_checks import check_rows
from sources.focus import parquet
from sources.focus.reader import ROW_RULES, read_focus_files


def parse_focus_delivery(delivery: Delivery) -> ParsedDelivery:
    """The connector entry point: a FOCUS delivery's data files, typed.

    When the delivery carries an export manifest (AWS Data Exports `FOCUS_1_2_AWS`, Azure
    FocusCost), exactly the files it lists are read; otherwise every data file of the delivery.
    """
    files = delivered_files(delivery)
    names = [delivery.display_name(file) for file in files]
    parts = parquet.exact_parts(files, names)
    if parts is not None:
        return parquet.parse_focus_parquet(parts)
    return parse_with_polars(files, names)


def delivered_files(delivery: Delivery) -> list[Path]:
    listed = listed_data_files(delivery)
    files = delivery.files() if listed is None else listed
    if not files:
        raise RejectedInput(delivery.name, "holds no CSV, CSV.gz or Parquet files")
    return files


def parse_with_polars(files: list[Path], names: list[str]) -> ParsedDelivery:
    """Every file read by `read_focus_file` into one frame, then the delivery's row rules."""
    parsed = read_focus_files(list(zip(files, names, strict=True)))
    check_rows(parsed.frame, ROW_RULES)
    return ParsedDelivery(frame=parsed.frame, format_version=f"FOCUS {parsed.focus_version}")
