"""The report's sections in page order, queried over one read-only connection and written as one page."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pipelines.lib.reporting.report.render import Section, write_page
from pipelines.lib.reporting.report.sections import (
    ai_workloads,
    anomalies,
    buy_vs_rent,
    chargeback,
    commitments,
    data_quality,
    energy_carbon,
    forecast,
    gpu_spend,
    market,
    opportunities,
    shared_gpus,
    spot_savings,
    utilization,
)
from pipelines.lib.warehouse.connection import connect

REPORT_FILE = "gpu-finops-report.html"
SECTIONS = (
    gpu_spend,
    utilization,
    chargeback,
    shared_gpus,
    spot_savings,
    market,
    buy_vs_rent,
    ai_workloads,
    energy_carbon,
    commitments,
    opportunities,
    anomalies,
    forecast,
    data_quality,
)


@dataclass(frozen=True)
class Report:
    path: Path
    sections: Sequence[Section]

    @property
    def charts(self) -> int:
        return sum(section.chart is not None for section in self.sections)


def write_report(warehouse: Path, output: Path) -> Report:
    """Query the marts and write the page to `output` (its folder is created)."""
    with connect(warehouse, read_only=True) as con:
        sections = [module.section(con) for module in SECTIONS]
    write_page(output, sections, generated_at=datetime.now(UTC))
    return Report(output, sections)
