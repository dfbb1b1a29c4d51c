"""Load AI gateway usage exports (LiteLLM's spend log) from the landing zone into `raw.litellm_spend_logs`.

A delivery is one exported file, or a folder of them; it replaces the UTC days it holds (`usage_date`), so a
re-export of a month after late requests were logged restates that month. A file that breaks the layout is
quarantined with the file, row and column.
"""

from __future__ import annotations

import logging

import duckdb
import polars as pl

from pipelines.lib.catalog.ai_gateway import LITELLM, LITELLM_SPEND_LOGS
from pipelines.lib.ingest.telemetry import TelemetryDelivery, ingest_reference_deliveries
from pipelines.lib.settings import FinopsHome
from sources.ai_gateway import litellm
from sources.common.delivery import Delivery
from sources.common.errors import RejectedInput


def ingest_litellm_spend_logs(
    home: FinopsHome, con: duckdb.DuckDBPyConnection, *, log: logging.Logger
) -> list[TelemetryDelivery]:
    """Spend log exports waiting in landing/litellm_spend_logs, oldest first."""

    def parse(delivery: Delivery) -> pl.DataFrame:
        frames = [litellm.read_spend_logs(path, name=delivery.display_name(path)) for path in delivery.all_files()]
        if not frames:
            raise RejectedInput(delivery.name, "no spend log files in the delivery")
        frame = pl.concat(frames)
        repeated = frame.filter(pl.col("request_id").is_duplicated())
        if repeated.height:
            row = repeated.sort("source_file", "source_row").row(-1, named=True)
            raise RejectedInput(
                row["source_file"],
                f"request_id {row['request_id']!r} is logged in two files of the delivery",
                row=row["source_row"],
                column="request_id",
            )
        return frame

    return ingest_reference_deliveries(home, con, LITELLM.name, LITELLM_SPEND_LOGS, parse, litellm.FORMAT_VERSION, log)
