"""GPU cloud usage CSV: the one layout this project asks specialized GPU clouds' usage to be delivered in.

Lambda, CoreWeave, RunPod, Vast.ai and the like publish no common billing export, so
`docs/gpu-cloud-usage-contract.md` defines one: a row per resource and usage period, with the GPU model
and count, hours, price and cost. This module reads and validates it (the rules are listed in that
document) and adds what the loader needs: a billing account key (provider and account together, since
account ids of different clouds may collide) and the billing period (the UTC calendar month of
usage_start).
"""

from __future__ import annotations

from decimal import Decimal

import polars as pl

from sources.common.currencies import CODE_SHAPE
from sources.common.delivery import Delivery, ParsedDelivery
from sources.common.errors import RejectedInput
from sources.common.rejects import plain
from sources.common.row_checks import Check, RowRules, check_rows, check_values, ordered
from sources.common.tabular import WORDING, Column, read_contract_file, schema_of
from sources.common.types import DECIMAL, TIMESTAMP, Kind

FORMAT_VERSION = "GPU cloud usage 1.0"
PRICING_MODELS = ("on_demand", "spot", "reserved")
COST_TOLERANCE = Decimal("0.01")
"""unit_price × usage_hours may differ from cost by at most a cent (providers round the cost)."""

COLUMNS: tuple[Column, ...] = (
    Column("provider", Kind.STRING, required=True),
    Column("account_id", Kind.STRING, required=True),
    Column("account_name", Kind.STRING),
    Column("resource_id", Kind.STRING, required=True),
    Column("resource_name", Kind.STRING),
    Column("region", Kind.STRING),
    Column("gpu_model", Kind.STRING, required=True),
    Column("gpu_count", Kind.DECIMAL, required=True),
    Column("pricing_model", Kind.STRING, required=True),
    Column("usage_start", Kind.DATETIME, required=True),
    Column("usage_end", Kind.DATETIME, required=True),
    Column("usage_hours", Kind.DECIMAL, required=True),
    Column("unit_price", Kind.DECIMAL),
    Column("list_unit_price", Kind.DECIMAL),
    Column("cost", Kind.DECIMAL, required=True),
    Column("currency", Kind.STRING, required=True),
    Column("description", Kind.STRING),
    Column("tags", Kind.JSON),
)

DERIVED_COLUMNS = {"billing_account_key": pl.String(), "billing_period_start": TIMESTAMP}


def output_schema() -> dict[str, pl.DataType]:
    """The raw table's columns: the contract's, the derived restatement key, `_extra`, lineage."""
    typed = schema_of(COLUMNS)
    contract = {column.name: typed[column.name] for column in COLUMNS}
    rest = {name: dtype for name, dtype in typed.items() if name not in contract}
    return contract | DERIVED_COLUMNS | rest


def read_usage_file(path, name: str) -> pl.DataFrame:
    """Parse and validate one usage file; raises RejectedInput naming the file, row and column."""
    frame = read_contract_file(path, name, COLUMNS)
    frame = frame.with_columns(
        pl.col("pricing_model").str.to_lowercase(),
        pl.col("currency").str.to_uppercase(),
    )
    _check_rows(frame, name)
    return frame.with_columns(
        (pl.col("provider") + pl.lit("/") + pl.col("account_id")).alias("billing_account_key"),
        pl.col("usage_start").dt.truncate("1mo").alias("billing_period_start"),
    ).select(output_schema().keys())


# Compared in microseconds, so no division (and no rounding) is involved.
_USAGE_MICROSECONDS = pl.col("usage_hours") * pl.lit(3_600_000_000).cast(DECIMAL)
_PERIOD_MICROSECONDS = (pl.col("usage_end") - pl.col("usage_start")).dt.total_microseconds().cast(DECIMAL)
FILE_RULES = RowRules(
    values=(
        Check(
            "pricing_model",
            ~pl.col("pricing_model").is_in(PRICING_MODELS),
            f"must be one of {' | '.join(PRICING_MODELS)}",
        ),
        Check("currency", ~pl.col("currency").str.contains(CODE_SHAPE), "must be an ISO 4217 code such as USD"),
        Check("gpu_count", pl.col("gpu_count") <= 0, "must be more than 0"),
        ordered("usage_end", "usage_start", "must be after usage_start (the end is exclusive)", exclusive=True),
        Check("usage_hours", pl.col("usage_hours") < 0, "must not be negative"),
        Check(
            "usage_hours", _USAGE_MICROSECONDS > _PERIOD_MICROSECONDS, "exceeds the hours from usage_start to usage_end"
        ),
        Check("cost", pl.col("cost") < 0, "must not be negative"),
        Check("unit_price", pl.col("unit_price") < 0, "must not be negative"),
        Check("list_unit_price", pl.col("list_unit_price") < 0, "must not be negative"),
    ),
    wording=WORDING,
)
"""Checked on each file as it is read, after the contract's required values."""


def _check_rows(frame: pl.DataFrame, name: str) -> None:
    check_values(frame, FILE_RULES)
    mismatch = (pl.col("unit_price") * pl.col("usage_hours") - pl.col("cost")).abs() > pl.lit(COST_TOLERANCE).cast(
        DECIMAL
    )
    _reject_cost_mismatch(frame, name, mismatch)


def _reject_cost_mismatch(frame: pl.DataFrame, name: str, mismatch: pl.Expr) -> None:
    """unit_price × usage_hours must be the cost to the cent; the message shows all three numbers."""
    failed = frame.select(mismatch.fill_null(False)).to_series()
    if not failed.any():
        return
    row = int(failed.arg_true()[0])
    count = int(failed.sum())
    unit_price, hours, cost = (frame[column][row] for column in ("unit_price", "usage_hours", "cost"))
    more = f" ({count - 1} more row(s) like it)" if count > 1 else ""
    raise RejectedInput(
        name,
        f"cost {plain(cost)} is not unit_price {plain(unit_price)} × usage_hours {plain(hours)} "
        f"= {plain(unit_price * hours)} (to within {COST_TOLERANCE}){more}",
        row=row + 1,
        column="cost",
    )


ROW_RULES = RowRules(line_item_key=("provider", "account_id", "resource_id", "usage_start"))
"""A resource's usage period starting twice in one delivery would count its cost twice.
(usage_hours, cost and prices are checked not negative per file, with the contract's other rules.)"""


def parse_gpu_cloud_usage(delivery: Delivery) -> ParsedDelivery:
    """The connector entry point: every data file of a delivery, as one frame."""
    files = delivery.files()
    if not files:
        raise RejectedInput(delivery.name, "holds no CSV, CSV.gz or Parquet files")
    frames = [read_usage_file(file, delivery.display_name(file)) for file in files]
    frame = pl.concat(frames, how="vertical")
    check_rows(frame, ROW_RULES)
    return ParsedDelivery(frame=frame, format_version=FORMAT_VERSION)
