"""SkyPilot `sky cost-report` captures: the table the command prints, one row per cluster, saved as text.

What the command prints (sky/utils/cli_utils/status_utils.py `show_cost_report_table`: a borderless prettytable,
left-aligned, two spaces after each column; STATUS coloured with ANSI codes, TERMINATED for a cluster gone):

    Clusters
    NAME           LAUNCHED     DURATION    RESOURCES                           STATUS      COST/hr   COST (est.)
    ft-llama-8b    3 days ago   7h 30m 0s   2x AWS(p4d.24xlarge, {'A100': 8})   TERMINATED  $ 65.54   $ 491.55

Older and newer releases name the price columns HOURLY_PRICE and COST; both spellings are read. Controller
sections (a second header after a blank line) are read the same way.

Rules (docs/ai-workloads.md "Training runs"):

- LAUNCHED is relative to when the report was printed (`3 days ago`, `1 hr ago`, `a few secs ago`): the capture's
  file name carries that instant as Unix seconds, `<anything>__<unix seconds>.txt`, and the launch time is that
  instant minus the amount, only as precise as its unit (`launched_precision`). An absolute time
  (`2026-10-05 09:00:00`, UTC) is taken as it is (`exact`).
- DURATION (`1 day 7h 30m 0s`) is the time the cluster was up: the GPU-hours are nodes × accelerators per node ×
  duration.
- RESOURCES `<nodes>x <Cloud>(<instance type>, {'<accelerator>': <count per node>})` (or `gpus=<acc>:<count>`);
  a cluster without accelerators has none.
- COST/hr and COST (est.) are SkyPilot's own catalogue estimate in USD (`-` when none): kept as reported.

A value that does not parse rejects the file naming its line (the first line is 1) and column.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from sources.common.errors import RejectedInput
from sources.common.types import DECIMAL, TIMESTAMP
from sources.training_jobs._common import read_text, reject_first, reject_long_fields, source_ref

FORMAT_VERSION = "sky cost-report table"
CURRENCY = "USD"
COLUMNS = {
    "NAME": "name",
    "LAUNCHED": "launched",
    "DURATION": "duration",
    "RESOURCES": "resources",
    "STATUS": "status",
    "COST/hr": "hourly_price",
    "HOURLY_PRICE": "hourly_price",
    "COST (est.)": "cost",
    "COST": "cost",
}
REQUIRED = ("name", "launched", "duration", "resources", "status", "cost")

SKYPILOT_SCHEMA: dict[str, pl.DataType] = {
    "cluster_name": pl.String(),
    "launched_at": TIMESTAMP,
    "launched_precision": pl.String(),
    "captured_at": TIMESTAMP,
    "duration_seconds": pl.Int64(),
    "node_count": pl.Int64(),
    "cloud": pl.String(),
    "instance_type": pl.String(),
    "accelerator": pl.String(),
    "accelerators_per_node": DECIMAL,
    "resources": pl.String(),
    "status": pl.String(),
    "hourly_price": DECIMAL,
    "cost": DECIMAL,
    "currency": pl.String(),
    "source_ref": pl.String(),
    "source_row": pl.Int64(),
}
"""One row per cluster of the report. `source_ref` is the capture's file name: a new delivery of it replaces its
rows."""

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_HEADER = re.compile(r"^NAME\s+LAUNCHED\s+")
_HEADER_CELL = re.compile(r"COST \(est\.\)|COST/hr|HOURLY_PRICE|[A-Z_]+")
_CAPTURED = re.compile(r"__(?P<unix>\d{9,11})(\.[A-Za-z]+)*$")
_RELATIVE = r"^(?:(a|an|\d+)\s+(?:few\s+)?(sec|second|min|minute|hr|hour|day|week|month|year)s?\s+ago|just now)$"
_UNIT_SECONDS = {
    "sec": 1, "second": 1, "min": 60, "minute": 60, "hr": 3600, "hour": 3600,
    "day": 86_400, "week": 604_800, "month": 2_592_000, "year": 31_536_000,
}  # fmt: skip
_DURATION_PARTS = {
    r"(\d+)\s*(?:weeks?|w)\b": 604_800,
    r"(\d+)\s*(?:days?|d)\b": 86_400,
    r"(\d+)\s*(?:hours?|hrs?|h)\b": 3600,
    r"(\d+)\s*(?:minutes?|mins?|m)\b": 60,
    r"(\d+)\s*(?:seconds?|secs?|s)\b": 1,
}
_DURATION_SHAPE = r"^(?:\d+\s*(?:weeks?|w|days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\s*)+$"
_RESOURCES = r"^(\d+)x\s+([A-Za-z][A-Za-z0-9_-]*)\((.*)\)$"
_ACCELERATOR = r"(?:'([^']+)'\s*:\s*([0-9.]+))|(?:gpus=([^:,\s]+):([0-9.]+))"


def captured_at_of(name: str) -> datetime | None:
    """When the report was printed: the `__<unix seconds>` at the end of the capture's file name."""
    found = _CAPTURED.search(Path(name).name)
    return datetime.fromtimestamp(int(found["unix"]), UTC).replace(tzinfo=None) if found else None


def read_cost_report(path: Path, *, name: str | None = None) -> pl.DataFrame:
    """One capture as rows of SKYPILOT_SCHEMA; RejectedInput naming file, line and column for a bad value."""
    name = name or path.name
    text = _ANSI.sub("", read_text(path, name))
    lines = pl.DataFrame({"text": text.splitlines()}, schema={"text": pl.String()}).with_columns(
        _line=pl.int_range(1, pl.len() + 1, dtype=pl.Int64),
        _block=(pl.col("text").str.strip_chars() == "").cum_sum(),
    )
    headers = lines.filter(pl.col("text").str.contains(_HEADER.pattern))
    if headers.is_empty():
        raise RejectedInput(name, "no `sky cost-report` table: expected a header line NAME  LAUNCHED  DURATION …")
    tables = [_table(lines, header, name) for header in headers.iter_rows(named=True)]
    raw = pl.concat(tables)
    if raw.is_empty():
        raise RejectedInput(name, "no clusters in the report")
    reject_long_fields(raw, name, [column for column in raw.columns if column != "_line"])
    return _typed(raw, name)


def _table(lines: pl.DataFrame, header: dict, name: str) -> pl.DataFrame:
    """The rows under one header line, cut at the header's column starts (the table is left-aligned)."""
    cells = [(found.start(), found.group()) for found in _HEADER_CELL.finditer(header["text"])]
    unknown = [cell for _, cell in cells if cell not in COLUMNS]
    if unknown:
        raise RejectedInput(name, f"unknown report column {unknown[0]!r}", row=header["_line"], column=unknown[0])
    named = [COLUMNS[cell] for _, cell in cells]
    missing = [column for column in REQUIRED if column not in named]
    if missing:
        raise RejectedInput(name, f"the report has no {', '.join(missing)} column", row=header["_line"])
    rows = lines.filter(
        (pl.col("_block") == header["_block"])
        & (pl.col("_line") > header["_line"])
        & (pl.col("text").str.strip_chars() != "")
    )
    starts = [start for start, _ in cells]
    ends = [*starts[1:], None]
    return rows.select(
        "_line",
        *[
            pl.col("text").str.slice(start, None if end is None else end - start).str.strip_chars().alias(column)
            for start, end, column in zip(starts, ends, named, strict=True)
        ],
        *([] if "hourly_price" in named else [pl.lit(None, dtype=pl.String).alias("hourly_price")]),
    ).select("_line", "name", "launched", "duration", "resources", "status", "hourly_price", "cost")


def _typed(raw: pl.DataFrame, name: str) -> pl.DataFrame:
    captured = captured_at_of(name)
    launched = pl.col("launched")
    absolute = launched.str.strptime(TIMESTAMP, "%Y-%m-%d %H:%M:%S", strict=False).fill_null(
        launched.str.strptime(TIMESTAMP, "%Y-%m-%dT%H:%M:%S", strict=False)
    )
    relative = launched.str.to_lowercase().str.extract_groups(_RELATIVE)
    amount = relative.struct.field("1").replace({"a": "1", "an": "1"}).cast(pl.Int64, strict=False)
    unit = relative.struct.field("2")
    is_relative = launched.str.to_lowercase().str.contains(_RELATIVE)
    reject_first(
        raw, name, "LAUNCHED", absolute.is_null() & ~is_relative,
        "is neither a time nor a SkyPilot relative time (`3 days ago`)", shown="launched",
    )  # fmt: skip
    if captured is None:
        reject_first(
            raw, name, "LAUNCHED", is_relative,
            "is relative to when the report was printed: name the capture <anything>__<unix seconds>.txt",
            shown="launched",
        )  # fmt: skip
    seconds_ago = amount.fill_null(0) * unit.replace_strict(_UNIT_SECONDS, default=0, return_dtype=pl.Int64)
    few = launched.str.contains(r"few|just now")
    duration = pl.sum_horizontal(
        pl.col("duration").str.extract(pattern, 1).cast(pl.Int64).fill_null(0) * seconds
        for pattern, seconds in _DURATION_PARTS.items()
    )
    reject_first(
        raw, name, "DURATION", ~pl.col("duration").str.contains(_DURATION_SHAPE),
        "is not a SkyPilot duration (`1 day 7h 30m 0s`)", shown="duration",
    )  # fmt: skip
    resources = pl.col("resources").str.extract_groups(_RESOURCES)
    reject_first(
        raw, name, "RESOURCES", resources.struct.field("1").is_null(),
        "is not <nodes>x <Cloud>(<instance type>, …)", shown="resources",
    )  # fmt: skip
    inner = resources.struct.field("3")
    accelerator = inner.str.extract_groups(_ACCELERATOR)
    money = {column: _dollars(column) for column in ("hourly_price", "cost")}
    for column, parsed in money.items():
        shown_name = "COST/hr" if column == "hourly_price" else "COST (est.)"
        given = pl.col(column).is_not_null() & ~pl.col(column).is_in(["-", ""])
        reject_first(
            raw, name, shown_name, given & parsed.is_null(), "is not a dollar amount (`$ 65.54`)", shown=column
        )
    typed = raw.select(
        cluster_name=pl.col("name"),
        launched_at=pl.when(absolute.is_not_null())
        .then(absolute)
        .otherwise(pl.lit(captured, dtype=TIMESTAMP) - pl.duration(seconds=seconds_ago)),
        launched_precision=pl.when(absolute.is_not_null())
        .then(pl.lit("exact"))
        .when(few)
        .then(pl.lit("seconds"))
        .otherwise(unit.replace({"sec": "second", "min": "minute", "hr": "hour"})),
        captured_at=pl.lit(captured, dtype=TIMESTAMP),
        duration_seconds=duration,
        node_count=resources.struct.field("1").cast(pl.Int64),
        cloud=resources.struct.field("2"),
        instance_type=inner.str.extract(r"^\s*([^,{}\s]+)", 1),
        accelerator=pl.coalesce(accelerator.struct.field("1"), accelerator.struct.field("3")),
        accelerators_per_node=pl.coalesce(accelerator.struct.field("2"), accelerator.struct.field("4"))
        .cast(DECIMAL, strict=False)
        .fill_null(pl.lit(0).cast(DECIMAL)),
        resources=pl.col("resources"),
        status=pl.col("status"),
        hourly_price=money["hourly_price"],
        cost=money["cost"],
        currency=pl.lit(CURRENCY),
        source_ref=pl.lit(source_ref(name)),
        source_row=pl.col("_line"),
    )
    # a cluster name relaunched is listed once per launch; the same launch twice is a broken capture
    duplicated = typed.filter(pl.struct("cluster_name", "launched_at").is_duplicated())
    if duplicated.height:
        raise RejectedInput(
            name,
            f"cluster {duplicated['cluster_name'][0]!r} is listed twice with the same launch",
            row=int(duplicated["source_row"][1]),
            column="NAME",
        )
    return typed.select([pl.col(column).cast(dtype) for column, dtype in SKYPILOT_SCHEMA.items()])


def _dollars(column: str) -> pl.Expr:
    return pl.col(column).str.replace(r"^\$\s*", "").str.replace_all(",", "").cast(DECIMAL, strict=False)
