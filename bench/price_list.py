"""The price-list target: one region's AWS EC2 price list CSV parsed with memory under 1 GB.

A real region file (us-east-1) is a few hundred MB: millions of rows, of which a few hundred are GPU
instance prices. `write_region_csv` writes one of that shape: the five metadata lines and header of the
bundled snapshot, its real GPU price rows, and filler rows with the same columns for CPU instance types
(what most of the real file is), which the parser must scan and drop. `python -m bench.price_list parse FILE`
parses it as the price feed does (`sources.prices.aws.price_list.parse`) and prints the offers it found;
each runs in its own process, so the harness measures the parse alone.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from sources.prices.aws.price_list import METADATA_LINES, parse
from sources.prices.offers import Payload

SNAPSHOT = Path(__file__).resolve().parents[1] / "sources/prices/snapshots/aws_price_list/2026-10-31/us-east-1.csv"
SOURCE_URL = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.csv"
CPU_FAMILIES = ("m5", "m6i", "m7i", "c5", "c6i", "c7g", "r5", "r6i", "t3", "i4i")
SIZES = ("large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge")
SYSTEMS = ("Linux", "Windows", "RHEL", "SUSE")


def write_region_csv(path: Path, filler_rows: int) -> int:
    """The snapshot's GPU rows plus `filler_rows` CPU price rows, as one region file; returns its data rows."""
    lines = SNAPSHOT.read_text(encoding="utf-8").splitlines(keepends=True)
    real = pl.read_csv(SNAPSHOT, skip_rows=METADATA_LINES, infer_schema=False)
    template = real.row(0, named=True)
    index = pl.int_range(filler_rows, dtype=pl.Int64)
    instance_type = pl.format(
        "{}.{}",
        pl.lit(pl.Series(CPU_FAMILIES)).gather(index % len(CPU_FAMILIES)),
        pl.lit(pl.Series(SIZES)).gather(index // len(CPU_FAMILIES) % len(SIZES)),
    )
    system = pl.lit(pl.Series(SYSTEMS)).gather(index % len(SYSTEMS))
    price = (index % 5000 / 1000).cast(pl.String)
    overrides = {
        "SKU": pl.format("FILLER{}", index),
        "RateCode": pl.format("FILLER{}.JRTCKXETXF.6YS6EN2CT7", index),
        "PriceDescription": pl.format("${} per On Demand {} {} Instance Hour", price, system, instance_type),
        "Instance Type": instance_type,
        "Instance Family": pl.lit("General purpose"),
        "GPU": pl.lit(""),
        "GPU Memory": pl.lit("NA"),
        "Operating System": system,
        "PricePerUnit": price,
        "usageType": pl.format("USE1-BoxUsage:{}", instance_type),
    }
    filler = pl.select(
        overrides[column].alias(column) if column in overrides else pl.lit(template[column]).alias(column)
        for column in real.columns
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        handle.writelines(lines[:METADATA_LINES])
        pl.concat([real, filler]).write_csv(handle, quote_style="always")
    return real.height + filler_rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.price_list")
    commands = parser.add_subparsers(dest="command", required=True)
    write = commands.add_parser("write", help="write a region file with N filler rows")
    write.add_argument("file", type=Path)
    write.add_argument("--filler-rows", type=int, required=True)
    read = commands.add_parser("parse", help="parse a region file as the price feed does")
    read.add_argument("file", type=Path)
    args = parser.parse_args(argv)
    if args.command == "write":
        result = {"rows": write_region_csv(args.file, args.filler_rows)}
    else:
        result = {"offers": parse([Payload(args.file, SOURCE_URL)], datetime.now(UTC)).height}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
