"""The host → billed resource mapping file a user maintains (docs/gpu-telemetry.md).

Telemetry names a machine by its host name; bills name it by a resource id (EC2 instance id, Azure
VM resource id, GCP instance, on-prem asset id). When the metric labels carry no resource id, this
CSV says which host was which resource, optionally only between two days (host names get reused):

    host,resource_id,provider_name,valid_from,valid_to
    vision-ocr-01,i-0a1b2c3d4e5f60718,AWS,,
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from sources.common.errors import RejectedInput
from sources.common.tabular import Column, read_contract_file
from sources.common.types import Kind

COLUMNS = (
    Column("host", Kind.STRING, required=True),
    Column("resource_id", Kind.STRING, required=True),
    Column("provider_name", Kind.STRING),
    Column("valid_from", Kind.DATE),
    Column("valid_to", Kind.DATE),
)
HOST_MAP_SCHEMA: dict[str, pl.DataType] = {
    "mapping": pl.String(),
    "host": pl.String(),
    "resource_id": pl.String(),
    "provider_name": pl.String(),
    "valid_from": pl.Date(),
    "valid_to": pl.Date(),
    "source_file": pl.String(),
    "source_row": pl.Int64(),
}
"""`mapping` is always `host_map_file`: the key a new file replaces whole. `valid_to` is exclusive."""


def read_host_map(path: Path, *, name: str | None = None) -> pl.DataFrame:
    name = name or path.name
    typed = read_contract_file(path, name, COLUMNS)
    frame = typed.select(
        mapping=pl.lit("host_map_file"),
        host=pl.col("host").str.strip_chars(),
        resource_id=pl.col("resource_id").str.strip_chars(),
        provider_name=pl.col("provider_name"),
        valid_from=pl.col("valid_from").dt.date(),
        valid_to=pl.col("valid_to").dt.date(),
        source_file=pl.col("_source_file"),
        source_row=pl.col("_source_row"),
    )
    backwards = frame.filter(pl.col("valid_to") <= pl.col("valid_from"))
    if backwards.height:
        raise RejectedInput(
            name, "valid_to must be after valid_from", row=int(backwards["source_row"][0]), column="valid_to"
        )
    overlapping = frame.join(frame, on="host", suffix="_other").filter(
        (pl.col("source_row") < pl.col("source_row_other"))
        & (pl.col("valid_from").fill_null(pl.date(1, 1, 1)) < pl.col("valid_to_other").fill_null(pl.date(9999, 1, 1)))
        & (pl.col("valid_from_other").fill_null(pl.date(1, 1, 1)) < pl.col("valid_to").fill_null(pl.date(9999, 1, 1)))
    )
    if overlapping.height:
        row = overlapping.row(0, named=True)
        raise RejectedInput(
            name,
            f"host {row['host']!r} maps to two resources at once "
            f"(rows {row['source_row']} and {row['source_row_other']})",
            row=int(row["source_row_other"]),
            column="host",
        )
    return frame.select([pl.col(column).cast(dtype) for column, dtype in HOST_MAP_SCHEMA.items()])
