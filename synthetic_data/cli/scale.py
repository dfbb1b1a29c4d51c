"""`python -m synthetic_data.cli.scale --rows N --out DIR`: billing files of any size for benchmarks.

`add_arguments` and `generate` are also `gpu-finops generate`'s options and action.
"""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path

from synthetic_data.scale import DEFAULT_DAYS, DEFAULT_START, Written, write_azure, write_cur2, write_focus


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m synthetic_data.cli.scale",
        description="Write N billing line items per format (CUR 2.0 Parquet, FOCUS Parquet, Azure CSV) for benchmarks.",
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    for written in generate(args):
        print(f"{written.source}\t{written.billing_period}\t{written.rows}\t{written.path}")
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rows", type=int, required=True, help="line items per format")
    parser.add_argument("--out", type=Path, required=True, help="folder to write the deliveries into")
    parser.add_argument("--seed", type=int, default=42, help="the same seed writes the same rows (default 42)")
    parser.add_argument("--start", type=date.fromisoformat, default=DEFAULT_START, help="first usage day")
    parser.add_argument("--days", type=int, default=DEFAULT_DAYS, help="usage days the rows are spread over")
    parser.add_argument(
        "--last-month-only",
        action="store_true",
        help="write only the last billing month (the month-to-date re-delivery of a daily refresh)",
    )
    parser.add_argument(
        "--formats",
        default="cur2,focus,azure",
        help="comma-separated: cur2, focus, azure (default all three)",
    )


def generate(args: argparse.Namespace) -> list[Written]:
    writers = {"cur2": write_cur2, "focus": write_focus, "azure": write_azure}
    written: list[Written] = []
    for name in args.formats.split(","):
        if name not in writers:
            raise ValueError(f"unknown format {name!r}; choose from {', '.join(writers)}")
        written.extend(
            writers[name](
                args.out,
                rows=args.rows,
                seed=args.seed,
                start=args.start,
                days=args.days,
                last_month_only=args.last_month_only,
            )
        )
    return written


if __name__ == "__main__":
    sys.exit(main())
