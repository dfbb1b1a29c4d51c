"""`gpu-finops report`: the static HTML report (pipelines/lib/reporting/report/ draws it)."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipelines.lib.settings import FinopsHome, Settings


def report(settings: Settings, args: argparse.Namespace) -> int:
    home = settings.home
    path = write_report_file(home, args.output)
    print(f"Report: {path}")
    return 0


def write_report_file(home: FinopsHome, output: Path | None) -> Path:
    """The static HTML report of the marts; opens offline in any browser."""
    from pipelines.lib.reporting.report import REPORT_FILE, write_report

    return write_report(home.warehouse, output or home.reports / REPORT_FILE).path
