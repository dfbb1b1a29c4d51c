"""`python -m synthetic_data.cli.focus_samples OUT_DIR`: the synthetic FOCUS billing files and their totals."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from synthetic_data.focus_samples import EXPECTED_TOTALS_FILE, write_focus_samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m synthetic_data.cli.focus_samples",
        description="Write deterministic synthetic FOCUS billing files with GPU rows.",
    )
    parser.add_argument("out_dir", type=Path, help="folder to write <provider>/<provider>-focus-YYYY-MM.* into")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--months", type=int, default=2)
    parser.add_argument("--start-month", default="2026-09", help="first billing month, YYYY-MM")
    args = parser.parse_args(argv)
    try:
        paths = write_focus_samples(args.out_dir, seed=args.seed, start_month=args.start_month, months=args.months)
    except ValueError as exc:
        parser.error(str(exc))
    for path in paths:
        print(path)
    print(args.out_dir / EXPECTED_TOTALS_FILE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
