"""`gpu-finops generate`: billing files of any size for benchmarks."""

from __future__ import annotations

import argparse

from pipelines.lib.settings import Settings


def generate(settings: Settings, args: argparse.Namespace) -> int:
    from synthetic_data.cli.scale import generate as write_files

    for written in write_files(args):
        print(f"{written.source}\t{written.billing_period}\t{written.rows}\t{written.path}")
    return 0
