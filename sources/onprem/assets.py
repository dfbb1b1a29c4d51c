"""Owned GPU servers: the inventory CSV from which on-premises GPU cost is computed.

There is no bill for a server you own. What it costs per day (depreciation, energy, colocation,
maintenance) follows from its purchase and running-cost facts, which this inventory lists, one row per
asset. Each delivery is the whole inventory and replaces the previous one (a snapshot raw table); the
daily cost lines are computed in dbt (`int_onprem__daily_cost_lines`). The layout and rules are in
`docs/gpu-cloud-usage-contract.md` (section "Owned GPU servers").
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from sources.common.currencies import CODE_SHAPE
from sources.common.delivery import Delivery, ParsedDelivery
from sources.common.errors import RejectedInput
from sources.common.row_checks import Check, RowRules, check_rows, check_values, ordered
from sources.common.tabular import WORDING, Column, read_contract_file, schema_of
from sources.common.types import TIMESTAMP, Kind

FORMAT_VERSION = "On-premises GPU inventory 1.0"

COLUMNS: tuple[Column, ...] = (
    Column("asset_id", Kind.STRING, required=True),
    Column("site", Kind.STRING, required=True),
    Column("hostname", Kind.STRING),
    Column("gpu_model", Kind.STRING, required=True),
    Column("gpu_count", Kind.INTEGER, required=True),
    Column("purchase_date", Kind.DATE, required=True),
    Column("purchase_price", Kind.DECIMAL, required=True),
    Column("currency", Kind.STRING, required=True),
    Column("depreciation_years", Kind.DECIMAL, required=True),
    Column("residual_value", Kind.DECIMAL),
    Column("power_draw_kw", Kind.DECIMAL),
    Column("pue", Kind.DECIMAL),
    Column("electricity_price_per_kwh", Kind.DECIMAL),
    Column("colocation_price_per_kw_month", Kind.DECIMAL),
    Column("maintenance_per_year", Kind.DECIMAL),
    Column("team", Kind.STRING),
    Column("project", Kind.STRING),
    Column("retired_date", Kind.DATE),
)

DERIVED_COLUMNS = {"tags": pl.String(), "billing_period_start": TIMESTAMP}
"""`tags`: team and project as a FOCUS Tags JSON object. `billing_period_start`: the purchase month, the
period the purchase price is audited under (each delivery still replaces the whole table)."""

_NOT_NEGATIVE = (
    "purchase_price",
    "residual_value",
    "power_draw_kw",
    "electricity_price_per_kwh",
    "colocation_price_per_kw_month",
    "maintenance_per_year",
)


def output_schema() -> dict[str, pl.DataType]:
    """The raw table's columns: the inventory's, the derived ones, `_extra`, lineage."""
    typed = schema_of(COLUMNS)
    inventory = {column.name: typed[column.name] for column in COLUMNS}
    rest = {name: dtype for name, dtype in typed.items() if name not in inventory}
    return inventory | DERIVED_COLUMNS | rest


def read_inventory_file(path: Path, name: str) -> pl.DataFrame:
    """Parse and validate one inventory file; raises RejectedInput naming the file, row and column."""
    frame = read_contract_file(path, name, COLUMNS).with_columns(pl.col("currency").str.to_uppercase())
    check_values(frame, FILE_RULES)
    tags = pl.struct("team", "project").struct.json_encode()
    return frame.with_columns(
        pl.when(pl.col("team").is_null() & pl.col("project").is_null()).then(None).otherwise(tags).alias("tags"),
        pl.col("purchase_date").dt.truncate("1mo").alias("billing_period_start"),
    ).select(output_schema().keys())


def _repeated_asset_id() -> pl.Expr:
    """True on the second and later rows of an asset id, so the message points at the repeat."""
    return pl.int_range(pl.len()).over("asset_id") > 0


FILE_RULES = RowRules(
    values=(
        Check("asset_id", _repeated_asset_id(), "appears on an earlier row too: asset ids must be unique"),
        Check("currency", ~pl.col("currency").str.contains(CODE_SHAPE), "must be an ISO 4217 code such as EUR"),
        Check("gpu_count", pl.col("gpu_count") <= 0, "must be more than 0"),
        Check("depreciation_years", pl.col("depreciation_years") <= 0, "must be more than 0"),
        *(Check(column, pl.col(column) < 0, "must not be negative") for column in _NOT_NEGATIVE),
        Check("residual_value", pl.col("residual_value") > pl.col("purchase_price"), "must not exceed purchase_price"),
        Check("pue", pl.col("pue") < 1, "must be at least 1 (power usage effectiveness: facility power / IT power)"),
        ordered("retired_date", "purchase_date", "must not be before purchase_date"),
    ),
    wording=WORDING,
)
"""Checked on each file as it is read, after the inventory's required values."""


def parse_onprem_gpu_assets(delivery: Delivery) -> ParsedDelivery:
    """The connector entry point: the whole inventory, from one file or several (asset ids unique across all)."""
    files = delivery.files()
    if not files:
        raise RejectedInput(delivery.name, "holds no CSV, CSV.gz or Parquet files")
    frame = pl.concat([read_inventory_file(file, delivery.display_name(file)) for file in files], how="vertical")
    repeated = frame.select(_repeated_asset_id()).to_series()
    if repeated.any():
        row = int(repeated.arg_true()[0])
        raise RejectedInput(
            frame["_source_file"][row],
            f"asset_id appears in another file of this delivery too (found {frame['asset_id'][row]!r})",
            row=int(frame["_source_row"][row]),
            column="asset_id",
        )
    check_rows(frame)
    return ParsedDelivery(frame=frame, format_version=FORMAT_VERSION)
