"""`python -m synthetic_data.cli.demo_organisation OUT_DIR`: the demo organisation's exports and expected totals."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from synthetic_data.demo_organisation import (
    DEFAULT_MONTHS,
    DEFAULT_START_MONTH,
    EXPECTED_TOTALS_FILE,
    write_demo_organisation,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m synthetic_data.cli.demo_organisation",
        description="Write the demo organisation's billing exports (every source) and expected_totals.json.",
    )
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--months", type=int, default=DEFAULT_MONTHS)
    parser.add_argument("--start-month", default=DEFAULT_START_MONTH, help="first billing month, YYYY-MM")
    args = parser.parse_args(argv)
    try:
        deliveries = write_demo_organisation(
            args.out_dir, seed=args.seed, start_month=args.start_month, months=args.months
        )
    except ValueError as exc:
        parser.error(str(exc))
    for delivery in deliveries:
        print(f"{delivery.source}\t{delivery.path}")
    print(f"expected\t{args.out_dir / EXPECTED_TOTALS_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
