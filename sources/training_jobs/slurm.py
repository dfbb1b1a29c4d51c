"""Slurm accounting exports: `sacct --parsable2 --allocations --format=…` text, one row per job allocation.

What such an export looks like (Slurm's sacct man page: `--parsable2` separates fields with `|` and ends a line
without one; `--parsable` adds a trailing `|`, also read; the header names the fields):

    JobID|JobName|User|Account|Partition|Submit|Start|End|Elapsed|ElapsedRaw|State|NNodes|NodeList|AllocTRES
    4101|pretrain-8b|alice|research|h100|2026-09-14T08:55:00|2026-09-14T09:00:00|2026-09-16T21:00:00|2-12:00:00|216000|COMPLETED|2|gpu-[01-02]|billing=128,cpu=128,gres/gpu=16,mem=1000G,node=2

Rules (docs/ai-workloads.md "Training runs"):

- GPUs held: `gres/gpu=N` in AllocTRES (the trackable resource, which the accounting records when
  `AccountingStorageTRES` includes `gres/gpu`); when only typed counts are there (`gres/gpu:h100=8`), their sum.
  The type (`h100`) is kept as `gpu_type`: the GPU model when the partition map does not name one.
- Time held: ElapsedRaw seconds (what Slurm accounts; a running job's so far). Start, End and Submit are the
  cluster's local time (sacct prints local time): read in `timezone` (default UTC), stored in UTC; `Unknown` and
  `None` are null (a job that never started, one still running).
- State: its first word (`CANCELLED by 1234` → `CANCELLED`), the whole text kept in `state_as_delivered`.
- Job steps (`4101.batch`, `4101.0`: an export without `--allocations`) are dropped, their allocation counts.
- NodeList is a Slurm host list (`gpu-[01-02,05],login1`): expanded into `hosts`, comma-separated.
- `Cluster` (from `sacct --clusters …`) is read when the export has it.

A value that does not parse rejects the file naming its line (the header is line 1) and column.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import polars as pl

from sources.common.errors import RejectedInput
from sources.common.row_checks import EARLIEST, LATEST
from sources.common.types import TIMESTAMP
from sources.training_jobs._common import read_text, reject_first, reject_long_fields, source_ref

FORMAT_VERSION = "sacct --parsable2 --allocations"
REQUIRED = ("JobID", "JobName", "User", "Account", "Partition", "Start", "End", "ElapsedRaw", "State", "NNodes")
OPTIONAL = ("Cluster", "Submit", "Elapsed", "NodeList", "AllocTRES")
UNKNOWN_TIMES = ("Unknown", "None", "")
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S"

SLURM_SCHEMA: dict[str, pl.DataType] = {
    "cluster": pl.String(),
    "job_id": pl.String(),
    "job_name": pl.String(),
    "user_name": pl.String(),
    "account": pl.String(),
    "partition": pl.String(),
    "submitted_at": TIMESTAMP,
    "started_at": TIMESTAMP,
    "ended_at": TIMESTAMP,
    "elapsed_seconds": pl.Int64(),
    "state": pl.String(),
    "state_as_delivered": pl.String(),
    "node_count": pl.Int64(),
    "node_list": pl.String(),
    "hosts": pl.String(),
    "gpus": pl.Int64(),
    "gpu_type": pl.String(),
    "alloc_tres": pl.String(),
    "source_ref": pl.String(),
    "source_row": pl.Int64(),
}
"""One row per job allocation. `source_ref` is the export's file name: a new delivery of it replaces its rows."""

_UNTYPED_GPUS = r"(?:^|,)gres/gpu=([^,]*)"
_TYPED_GPUS = r"(?:^|,)gres/gpu:([^=,]+)=([^,]*)"


def read_sacct_export(path: Path, *, name: str | None = None, timezone: str = "UTC") -> pl.DataFrame:
    """One export file as rows of SLURM_SCHEMA; RejectedInput naming file, line and column for a bad value."""
    name = name or path.name
    text = read_text(path, name)
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise RejectedInput(name, "empty file: expected a sacct --parsable2 header line", row=1)
    header = lines[0].rstrip("\r").split("|")
    if header and header[-1] == "":
        header = header[:-1]  # --parsable ends every line with the separator
    canonical = {field.lower(): field for field in (*REQUIRED, *OPTIONAL)}
    named = [canonical.get(cell.strip().lower(), cell.strip()) for cell in header]
    missing = [field for field in REQUIRED if field not in named]
    if missing:
        raise RejectedInput(
            name,
            f"header lacks {', '.join(missing)} (export with sacct --parsable2 --allocations "
            "--format=JobID,JobName,User,Account,Partition,Submit,Start,End,Elapsed,ElapsedRaw,State,NNodes,NodeList,"
            "AllocTRES)",
            row=1,
        )
    width = len(header)
    body = "\n".join(line[:-1] if line.endswith("|") and line.count("|") == width else line for line in lines[1:])
    if not body.strip():
        raise RejectedInput(name, "no jobs after the header")
    try:
        raw = pl.read_csv(
            io.StringIO(body),
            separator="|",
            has_header=False,
            new_columns=named,
            infer_schema=False,
            quote_char=None,
            truncate_ragged_lines=False,
        )
    except pl.exceptions.ComputeError as error:
        raise RejectedInput(name, f"a line does not have the header's {width} fields ({error})") from None
    raw = raw.with_columns(pl.col(column).str.strip_chars() for column in named).with_columns(
        _line=pl.int_range(2, pl.len() + 2, dtype=pl.Int64)
    )
    raw = raw.filter(pl.col("JobID").is_not_null() & (pl.col("JobID") != ""))
    for field in OPTIONAL:
        if field not in raw.columns:
            raw = raw.with_columns(pl.lit(None, dtype=pl.String).alias(field))
    reject_long_fields(raw, name, named)
    # job steps (4101.batch, 4101.0, 4101.extern): the allocation's row already counts their time
    raw = raw.filter(~pl.col("JobID").str.contains(r"\."))
    if raw.is_empty():
        raise RejectedInput(name, "no job allocations (only job steps)")
    times = {column: _local_time(column) for column in ("Submit", "Start", "End")}
    for column, parsed in times.items():
        unknown = pl.col(column).is_null() | pl.col(column).is_in(UNKNOWN_TIMES)
        reject_first(raw, name, column, ~unknown & parsed.is_null(), "is not a YYYY-MM-DDTHH:MM:SS time", shown=column)
        reject_first(
            raw,
            name,
            column,
            ~unknown & ((parsed < EARLIEST) | (parsed >= LATEST)),
            f"is outside {EARLIEST.year}–{LATEST.year - 1}",
            shown=column,
        )
    elapsed = pl.col("ElapsedRaw").cast(pl.Int64, strict=False)
    reject_first(
        raw,
        name,
        "ElapsedRaw",
        elapsed.is_null() | (elapsed < 0),
        "is not a whole number of seconds",
        shown="ElapsedRaw",
    )
    nodes = pl.col("NNodes").cast(pl.Int64, strict=False)
    reject_first(raw, name, "NNodes", nodes.is_null() | (nodes < 0), "is not a whole number of nodes", shown="NNodes")
    tres = pl.col("AllocTRES").fill_null("")
    untyped = tres.str.extract(_UNTYPED_GPUS, 1)
    typed = tres.str.extract_all(_TYPED_GPUS)
    raw = raw.with_columns(
        _untyped=untyped,
        _typed_counts=typed.list.eval(pl.element().str.extract(_TYPED_GPUS, 2)),
        _typed_names=typed.list.eval(pl.element().str.extract(_TYPED_GPUS, 1)),
    )
    bad_count = pl.col("_untyped").is_not_null() & pl.col("_untyped").cast(pl.Int64, strict=False).is_null()
    bad_typed = pl.col("_typed_counts").list.eval(pl.element().cast(pl.Int64, strict=False).is_null()).list.any()
    reject_first(
        raw,
        name,
        "AllocTRES",
        bad_count | bad_typed,
        "has a gres/gpu count that is not a whole number",
        shown="AllocTRES",
    )
    tz_error = None
    try:
        located = raw.with_columns(
            **{
                f"_{column.lower()}": parsed.dt.replace_time_zone(timezone, ambiguous="earliest", non_existent="null")
                .dt.convert_time_zone("UTC")
                .dt.replace_time_zone(None)
                for column, parsed in times.items()
            }
        )
    except pl.exceptions.ComputeError as error:
        tz_error = error
    if tz_error is not None:
        raise RejectedInput(name, f"time zone {timezone!r} is not an IANA time zone ({tz_error})")
    for column, parsed in times.items():
        reject_first(
            located,
            name,
            column,
            parsed.is_not_null() & pl.col(f"_{column.lower()}").is_null(),
            f"does not exist in {timezone}",
            shown=column,
        )
    hosts = _expanded_host_lists(located, name)
    frame = located.select(
        cluster=pl.col("Cluster"),
        job_id=pl.col("JobID"),
        job_name=pl.col("JobName"),
        user_name=pl.col("User"),
        account=pl.col("Account"),
        partition=pl.col("Partition"),
        submitted_at=pl.col("_submit"),
        started_at=pl.col("_start"),
        ended_at=pl.col("_end"),
        elapsed_seconds=elapsed,
        state=pl.col("State").str.extract(r"^([A-Z_]+)", 1).fill_null(pl.col("State")),
        state_as_delivered=pl.col("State"),
        node_count=nodes,
        node_list=pl.col("NodeList"),
        hosts=pl.col("NodeList").replace_strict(hosts, default=None, return_dtype=pl.String),
        gpus=pl.coalesce(
            pl.col("_untyped").cast(pl.Int64),
            pl.col("_typed_counts").list.eval(pl.element().cast(pl.Int64)).list.sum(),
        ).fill_null(0),
        gpu_type=pl.col("_typed_names").list.first(),
        alloc_tres=pl.col("AllocTRES"),
        source_ref=pl.lit(source_ref(name)),
        source_row=pl.col("_line"),
    )
    duplicated = frame.filter(pl.struct("cluster", "job_id").is_duplicated())
    if duplicated.height:
        raise RejectedInput(
            name, f"job {duplicated['job_id'][0]!r} appears twice", row=int(duplicated["source_row"][1]), column="JobID"
        )
    return frame.select([pl.col(column).cast(dtype) for column, dtype in SLURM_SCHEMA.items()])


def _local_time(column: str) -> pl.Expr:
    return pl.col(column).str.strptime(TIMESTAMP, _TIME_FORMAT, strict=False)


def _expanded_host_lists(frame: pl.DataFrame, name: str) -> dict[str, str]:
    """Each distinct NodeList expanded once (an export has few), as comma-separated host names."""
    expanded = {}
    for node_list in frame["NodeList"].drop_nulls().unique().to_list():
        try:
            hosts = expand_hostlist(node_list)
        except ValueError as error:
            row = frame.filter(pl.col("NodeList") == node_list)["_line"].min()
            raise RejectedInput(
                name, f"NodeList {error} (found {node_list!r})", row=int(row), column="NodeList"
            ) from None
        if hosts:
            expanded[node_list] = ",".join(hosts)
    return expanded


_ITEM = re.compile(r"[^,\[]+(?:\[[^\]]*\][^,\[]*)*")
_BRACKET = re.compile(r"\[([^\]]*)\]")


def expand_hostlist(node_list: str) -> list[str]:
    """A Slurm host list (`gpu-[01-03,07],login1`) as its host names; `None assigned` is none.

    Ranges keep their zero padding (`[08-10]` → 08, 09, 10), as `scontrol show hostnames` prints them.
    """
    if not node_list or node_list.lower().startswith("none"):
        return []
    hosts: list[str] = []
    for item in _ITEM.findall(node_list):
        names = [""]
        position = 0
        for bracket in _BRACKET.finditer(item):
            literal = item[position : bracket.start()]
            names = [prefix + literal + choice for prefix in names for choice in _range_choices(bracket[1])]
            position = bracket.end()
        hosts.extend(prefix + item[position:] for prefix in names)
    return hosts


def _range_choices(ranges: str) -> list[str]:
    choices = []
    for part in ranges.split(","):
        low, _, high = part.partition("-")
        if not low.isdigit() or (high and not high.isdigit()) or (high and int(high) < int(low)):
            raise ValueError(f"range [{ranges}] is not a Slurm host list range")
        if not high:
            choices.append(low)
            continue
        width = len(low)
        choices.extend(str(number).zfill(width) for number in range(int(low), int(high) + 1))
    return choices
