"""A CUR delivery: the files its manifests list, Parquet typed by DuckDB and CSV by polars.

Each format has one reader: `sources.aws.cur_parquet` (Parquet, DuckDB) and `sources.aws.cur` (the CSV
flavours, polars), with the same names, rules and messages; this module chooses by the files' contents and
applies the delivery's row rules.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from sources.aws import cur_parquet
from sources.aws.columns import FORMAT_TITLES
from sources.aws.cur import CUR_DATA_SUFFIXES, ROW_RULES, read_cur_csv
from sources.common.delivery import Delivery, ParsedDelivery
from sources.common.errors import RejectedInput
from sources.common.manifests import AWS_CUR, listed_data_files
from sources.common.row_checks import check_rows
from sources.common.typed_parts import is_parquet

_STATUS_TABLE_FOLDER = "cost_and_usage_data_status"
"""The Athena flavour's report-status table, delivered beside the data: not billing lines."""


def parse_cur_delivery(delivery: Delivery) -> ParsedDelivery:
    """The connector entry point: the files the delivery's manifests list (else all of them), typed.

    A Parquet delivery is typed by DuckDB, part by part, in one query the loader streams; CSV flavours
    (and a delivery that mixes formats) are read file by file into one polars frame.
    """
    files = delivered_files(delivery)
    names = [delivery.display_name(file) for file in files]
    parts = cur_parquet.parquet_parts(files, names)
    if parts is not None:
        return cur_parquet.parse_cur_parquet(parts)
    return parse_file_by_file(files, names)


def read_cur_file(path: Path, *, source_file: str | None = None) -> pl.DataFrame:
    """One CUR data file in `cur.output_schema()`, by the reader of its format; RejectedInput names file,
    row and column. `source_file` is the name recorded for lineage and used in messages (defaults to the path).
    """
    name = source_file or str(path)
    if is_parquet(path, name):
        return cur_parquet.read_cur_parquet(path, name)
    return read_cur_csv(path, source_file=name)


def delivered_files(delivery: Delivery) -> list[Path]:
    """The CUR data files of a delivery: those its manifests list, else every data file it holds."""
    listed = listed_data_files(delivery, AWS_CUR)
    files = listed if listed is not None else _data_files(delivery)
    if not files:
        raise RejectedInput(delivery.name, "holds no CUR data files (CSV, CSV.gz or Parquet)")
    return files


def parse_file_by_file(files: list[Path], names: list[str]) -> ParsedDelivery:
    """Every file read by `read_cur_file` into one frame, then the delivery's row rules."""
    frame = pl.concat([read_cur_file(file, source_file=name) for file, name in zip(files, names, strict=True)])
    check_rows(frame, ROW_RULES)
    formats = sorted(set(frame["_cur_format"].unique().to_list()))
    return ParsedDelivery(frame=frame, format_version=", ".join(FORMAT_TITLES[f] for f in formats))


def _data_files(delivery: Delivery) -> list[Path]:
    files = []
    for file in delivery.files():
        if _STATUS_TABLE_FOLDER in file.relative_to(delivery.path.parent).parts:
            continue
        if not file.name.lower().endswith(CUR_DATA_SUFFIXES):
            raise RejectedInput(delivery.display_name(file), "is not a CUR data file (CSV, CSV.gz or Parquet)")
        files.append(file)
    return files
