"""`gpu-finops export focus`: warehouse data as FOCUS files."""

from __future__ import annotations

import argparse

from pipelines.lib.operations import signals
from pipelines.lib.settings import Settings


def export(settings: Settings, args: argparse.Namespace) -> int:
    home = settings.home
    from pipelines.lib.reporting.focus_export import export_focus

    signals.progress.start(f"FOCUS export to {args.directory} (files there are as they were)")
    written = export_focus(home.warehouse, args.directory)
    for path, rows in written:
        print(f"wrote {path} ({rows} rows)")
    return 0
