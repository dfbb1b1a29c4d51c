"""Peak memory of parsing a large AWS EC2 price list CSV (a real region's file is a few hundred MB).

Not part of the test suite (it writes ~300 MB and takes a minute): run it by hand after changing the
price list parser, e.g. `python scripts/measure_aws_price_list_memory.py --mb 300`.

It writes a synthetic per-region CSV in the real layout (5 metadata lines, a ~90-column header, one
row per price dimension, ~5% of them GPU instances), gzip-compresses it as `PayloadStore.save_stream`
stores downloads, then parses it in a fresh child process and reports the child's peak resident set
size (VmHWM) before and after parsing.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIXED = [
    "SKU",
    "OfferTermCode",
    "RateCode",
    "TermType",
    "PriceDescription",
    "EffectiveDate",
    "StartingRange",
    "EndingRange",
    "Unit",
    "PricePerUnit",
    "Currency",
    "RelatedTo",
    "LeaseContractLength",
    "PurchaseOption",
    "OfferingClass",
    "Product Family",
    "serviceCode",
    "Location",
    "Location Type",
    "Instance Type",
    "Current Generation",
    "Instance Family",
    "vCPU",
    "Memory",
    "Tenancy",
    "Operating System",
    "License Model",
    "usageType",
    "operation",
    "CapacityStatus",
    "GPU",
    "GPU Memory",
    "MarketOption",
    "Pre Installed S/W",
    "Region Code",
]
FILLER = [f"Attribute {n}" for n in range(55)]
HEADER = FIXED + FILLER
GPU_TYPES = ["p5.48xlarge", "p4d.24xlarge", "g5.xlarge", "g6e.2xlarge", "g4dn.xlarge", "trn1.32xlarge"]
OTHER_TYPES = [f"{family}.{size}" for family in ("m6i", "c7i", "r7g", "t3", "x2idn") for size in ("large", "xlarge")]
SYSTEMS = ["Linux", "Windows", "RHEL", "SUSE"]
TENANCIES = ["Shared", "Dedicated", "Host"]


def write_csv(path: Path, target_bytes: int) -> int:
    """Write rows until the uncompressed size reaches `target_bytes`; returns the number of data rows."""
    rows = 0
    draw = random.Random(0)
    with gzip.open(path, "wt", compresslevel=6, newline="") as out:
        writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
        for line in (
            ["FormatVersion", "v1.0"],
            ["Disclaimer", "This pricing list is for informational purposes only."],
            ["Publication Date", "2026-10-29T22:41:37Z"],
            ["Version", "20261029224137"],
            ["OfferCode", "AmazonEC2"],
            HEADER,
        ):
            writer.writerow(line)
        written = 0
        filler = ["NA"] * len(FILLER)
        while written < target_bytes:
            gpu = draw.random() < 0.05
            itype = draw.choice(GPU_TYPES if gpu else OTHER_TYPES)
            os_name = draw.choice(SYSTEMS)
            tenancy = draw.choice(TENANCIES)
            sku = f"SKU{rows:013d}"
            row = [
                sku,
                "JRTCKXETXF",
                f"{sku}.JRTCKXETXF.6YS6EN2CT7",
                "OnDemand",
                f"$1.234 per On Demand {os_name} {itype} Instance Hour",
                "2026-10-01",
                "0",
                "Inf",
                "Hrs",
                f"{1 + rows % 97 / 10:.10f}",
                "USD",
                "",
                "",
                "",
                "",
                "Compute Instance",
                "AmazonEC2",
                "US East (N. Virginia)",
                "AWS Region",
                itype,
                "Yes",
                "GPU instance" if gpu else "General purpose",
                "8",
                "32 GiB",
                tenancy,
                os_name,
                "No License required",
                f"USE1-BoxUsage:{itype}",
                "RunInstances" if os_name == "Linux" else "RunInstances:0002",
                "Used" if draw.random() < 0.8 else "UnusedCapacityReservation",
                "8" if gpu and itype.startswith("p") else ("1" if gpu else ""),
                "NA",
                "OnDemand",
                "NA",
                "us-east-1",
                *filler,
            ]
            writer.writerow(row)
            written += sum(len(value) + 3 for value in row)
            rows += 1
    return rows


def child(path: Path) -> None:
    """Parse one stored CSV and print peak RSS (MiB) before and after, and the offers kept."""
    from datetime import datetime

    from sources.prices.aws import price_list
    from sources.prices.offers import Payload

    before = _peak_rss_mib()
    started = time.monotonic()
    frame = price_list.parse([Payload(path, "file://" + str(path))], datetime(2026, 10, 31))
    seconds = time.monotonic() - started
    print(f"{before:.0f} {_peak_rss_mib():.0f} {frame.height} {seconds:.1f}")


def _peak_rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status (Linux only)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=300, help="uncompressed size of the synthetic CSV")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    with tempfile.TemporaryDirectory(prefix="aws-price-list-") as tmp:
        path = Path(tmp) / "us-east-1.csv.gz"
        started = time.monotonic()
        rows = write_csv(path, args.mb * 1_000_000)
        print(
            f"wrote {rows:,} rows (~{args.mb} MB uncompressed, {path.stat().st_size / 1e6:.0f} MB gzip) "
            f"in {time.monotonic() - started:.0f} s"
        )
        result = subprocess.run([sys.executable, __file__, "--child", str(path)], capture_output=True, text=True)
        if result.returncode:
            raise SystemExit(f"parsing failed:\n{result.stderr[-3000:]}")
        before, after, offers, seconds = result.stdout.split()
        print(
            f"parsed in {seconds} s: {offers} GPU offers kept; "
            f"peak RSS {before} MiB after imports, {after} MiB after parsing"
        )


if __name__ == "__main__":
    main()
