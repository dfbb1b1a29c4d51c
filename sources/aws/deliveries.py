"""A CUR delivery: the files its manifests list, read by DuckDB when they are Parquet it types exactly, else by polars.

File-level reading is `sources.aws.cur` (every flavour, polars) and `sources.aws.cur_parquet` (Parquet, DuckDB,
the same rows and rejections); this module chooses between them and applies the delivery's row rules.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from sources.aws import cur_parquet
from sources.aws.columns import FORMAT_TITLES
from sources.aws.cur import CUR_DATA_SUFFIXES, ROW_RULES, read_cur_file
from sources.common.delivery import Delivery, ParsedDelivery
from sources.common.errors import RejectedInput
from sources.common.manifests import AWS_CUR, listed_data_files
from sources.common.row_checks import check_rows

_STATUS_TABLE_FOLDER = "cost_and_usage_data_status"
"""The Athena flavour's report-status table, delivered beside the data: not billing lines."""


def parse_cur_delivery(delivery: Delivery) -> ParsedDelivery:
    """The connector entry point: the files the delivery's manifests list (else all of them), typed.

    Parquet deliveries DuckDB can type exactly are typed there, part by part, in one query the loader
    streams; CSV flavours and the rest are read into one polars frame. Both give the same rows and
    rejections (tests/sources/aws/test_cur_parquet_in_duckdb.py).
    """
    files = delivered_files(delivery)
    names = [delivery.display_name(file) for file in files]
    parts = cur_parquet.exact_parts(files, names)
    if parts is not None:
        return cur_parquet.parse_cur_parquet(parts)
    return parse_with_polars(files, names)


def delivered_files(delivery: Delivery) -> list[Path]:
    """The CUR data files of a delivery: those its manifests list, else every data file it holds."""
    listed = listed_data_files(delivery, AWS_CUR)
    files = listed if listed is not None else _data_files(delivery)
    if not files:
        raise RejectedInput(delivery.name, "holds no CUR data files (CSV, CSV.gz or Parquet)")
    return files


def parse_with_polars(files: list[Path], names: list[str]) -> ParsedDelivery:
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
