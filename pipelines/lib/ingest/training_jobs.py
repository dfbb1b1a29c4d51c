"""Load training-job exports from the landing zone: Slurm `sacct` exports and SkyPilot `sky cost-report` captures.

| table | replaced by a load of | fed by |
|---|---|---|
| `raw.slurm_jobs` | the same export file name | `ingest_slurm_exports` (landing/slurm_sacct) |
| `raw.skypilot_clusters` | the same capture file name | `ingest_skypilot_reports` (landing/skypilot_cost_report) |

A delivery is a file or a folder of files; a bad one is moved to quarantine with the reason (file, row,
column); the same bytes twice change nothing (docs/ai-workloads.md "Training runs").
"""

from __future__ import annotations

import logging

import duckdb
import polars as pl

from pipelines.lib.catalog.training_jobs import SKYPILOT_CLUSTERS, SKYPILOT_SOURCE, SLURM_JOBS, SLURM_SOURCE
from pipelines.lib.ingest.telemetry import TelemetryDelivery, ingest_reference_deliveries
from pipelines.lib.settings import FinopsHome
from sources.common.delivery import Delivery
from sources.common.errors import RejectedInput
from sources.training_jobs import skypilot, slurm


def ingest_slurm_exports(
    home: FinopsHome, con: duckdb.DuckDBPyConnection, *, timezone: str, log: logging.Logger
) -> list[TelemetryDelivery]:
    """Every sacct export waiting in landing/slurm_sacct, each file replacing its own rows."""

    def parse(delivery: Delivery) -> pl.DataFrame:
        frames = [
            slurm.read_sacct_export(path, name=delivery.display_name(path), timezone=timezone)
            for path in delivery.all_files()
        ]
        if not frames:
            raise RejectedInput(delivery.name, "no sacct export in the delivery")
        return pl.concat(frames)

    return ingest_reference_deliveries(home, con, SLURM_SOURCE, SLURM_JOBS, parse, slurm.FORMAT_VERSION, log)


def ingest_skypilot_reports(
    home: FinopsHome, con: duckdb.DuckDBPyConnection, *, log: logging.Logger
) -> list[TelemetryDelivery]:
    """Every `sky cost-report` capture waiting in landing/skypilot_cost_report, each replacing its own rows."""

    def parse(delivery: Delivery) -> pl.DataFrame:
        frames = [skypilot.read_cost_report(path, name=delivery.display_name(path)) for path in delivery.all_files()]
        if not frames:
            raise RejectedInput(delivery.name, "no cost-report capture in the delivery")
        return pl.concat(frames)

    return ingest_reference_deliveries(
        home, con, SKYPILOT_SOURCE, SKYPILOT_CLUSTERS, parse, skypilot.FORMAT_VERSION, log
    )
