"""`nvidia-smi --query-gpu=… --format=csv -l N` logs, as the long frame of `sources.telemetry.samples`.

What such a log looks like (units in the header and in every value, local time without a zone):

    timestamp, name, uuid, utilization.gpu [%], memory.used [MiB], power.draw [W]
    2026/10/05 10:00:00.000, NVIDIA H100 80GB HBM3, GPU-1f0c…, 95 %, 7650 MiB, 312.41 W

Conventions (docs/gpu-telemetry.md): one host per file, named `<host>.csv` or `<host>--<anything>.csv`
(gzip allowed); timestamps are read in `timezone` (default UTC); the sampling interval is the median
gap between a GPU's consecutive samples; `[N/A]` and `[Not Supported]` are null. Rejections name the
file's line number (the header is line 1). Only the query
fields that have a DCGM equivalent are kept; the header may repeat (a restarted logger appends).
"""

from __future__ import annotations

import gzip
import io
import re
from pathlib import Path

import polars as pl

from sources.common.errors import RejectedInput
from sources.common.row_checks import EARLIEST, LATEST, MAX_FIELD_BYTES
from sources.common.types import TIMESTAMP
from sources.telemetry import samples

# nvidia-smi query field -> the DCGM metric that measures the same thing, in the same unit.
FIELD_METRICS = {
    "utilization.gpu": samples.GPU_UTIL,
    "memory.used": samples.FB_USED,
    "power.draw": samples.POWER_USAGE,
}
NOT_AVAILABLE = ("[N/A]", "[Not Supported]", "N/A", "[Unknown Error]")
_STAMP_PREFIX = re.compile(r"^\d{8}T\d{6}\d*Z__")
_UNIT_SUFFIX = re.compile(r"\s*(%|MiB|W|MHz|C)$")
_TIMESTAMP_FORMAT = "%Y/%m/%d %H:%M:%S%.f"


def host_of(path: Path) -> str:
    """The host a log belongs to: its file name up to `--` (landing-zone arrival stamps and .csv/.gz removed)."""
    name = _STAMP_PREFIX.sub("", path.name)
    for suffix in (".gz", ".csv", ".log", ".txt"):
        name = name.removesuffix(suffix)
    host = name.split("--", 1)[0].strip()
    if not host:
        raise RejectedInput(path.name, "file name does not start with a host name (<host>.csv or <host>--….csv)")
    return host


def is_time_zone(timezone: str) -> bool:
    """Whether the log's local timestamps can be read in `timezone`: what polars reads (IANA names, `utc`, fixed
    offsets), so a setting is checked where it is read in by the same rule the reader applies."""
    try:
        pl.Series([], dtype=TIMESTAMP).dt.replace_time_zone(timezone)
    except pl.exceptions.ComputeError:
        return False
    return True


def read_nvidia_smi_log(path: Path, *, name: str | None = None, timezone: str = "UTC") -> pl.DataFrame:
    """One log file as long rows; RejectedInput naming file, line and column for anything unreadable."""
    name = name or path.name
    host = host_of(path)
    try:
        raw_bytes = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
        text = raw_bytes.decode("utf-8-sig")
    except (OSError, EOFError, gzip.BadGzipFile) as error:
        raise RejectedInput(name, f"cannot read the file ({error})") from None
    except UnicodeDecodeError:
        raise RejectedInput(name, "not UTF-8 text") from None
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise RejectedInput(name, "empty file: expected an nvidia-smi --format=csv header line", row=1)
    header = [_field_name(cell) for cell in lines[0].split(",")]
    for required in ("timestamp", "uuid"):
        if required not in header:
            raise RejectedInput(
                name, f"header has no {required} field (query with --query-gpu=timestamp,name,uuid,…)", row=1
            )
    metrics = [field for field in header if field in FIELD_METRICS]
    if not metrics:
        raise RejectedInput(name, f"header has none of {', '.join(FIELD_METRICS)}", row=1)
    raw = pl.read_csv(
        io.StringIO(text),
        has_header=False,
        new_columns=header,
        infer_schema=False,
        truncate_ragged_lines=False,
        skip_rows=0,
    ).with_columns(pl.all().str.strip_chars(), _line=pl.int_range(1, pl.len() + 1, dtype=pl.Int64))
    # a restarted logger writes its header again: drop every header line
    raw = raw.filter(pl.col("timestamp") != "timestamp")
    if raw.is_empty():
        raise RejectedInput(name, "no samples after the header")
    for column in header:
        too_long = pl.col(column).str.len_bytes() > MAX_FIELD_BYTES
        _reject_first(raw, name, column, too_long, f"is longer than {MAX_FIELD_BYTES:,} bytes (a broken log?)")
    at = pl.col("timestamp").str.strptime(TIMESTAMP, _TIMESTAMP_FORMAT, strict=False)
    _reject_first(raw, name, "timestamp", at.is_null(), "is not a YYYY/MM/DD HH:MM:SS.mmm timestamp")
    implausible = (at < EARLIEST) | (at >= LATEST)
    _reject_first(raw, name, "timestamp", implausible, f"is outside {EARLIEST.year}–{LATEST.year - 1}")
    _reject_first(raw, name, "uuid", pl.col("uuid").is_null() | (pl.col("uuid") == ""), "must not be empty")
    try:
        utc = at.dt.replace_time_zone(timezone, ambiguous="earliest", non_existent="null").dt.convert_time_zone("UTC")
        frame = raw.with_columns(sampled_at=utc.dt.replace_time_zone(None))
    except pl.exceptions.ComputeError as error:
        raise RejectedInput(name, f"time zone {timezone!r} is not an IANA time zone ({error})") from None
    _reject_first(frame, name, "timestamp", pl.col("sampled_at").is_null(), f"does not exist in {timezone}")
    long_frames = []
    for field in metrics:
        text_value = pl.col(field)
        missing = text_value.is_null() | text_value.is_in(NOT_AVAILABLE)
        number = text_value.str.replace(_UNIT_SUFFIX.pattern, "").cast(samples.DECIMAL, strict=False)
        _reject_first(frame, name, field, ~missing & number.is_null(), "is not a number (or [N/A])")
        long_frames.append(
            frame.select(
                "sampled_at",
                "_line",
                gpu_uuid=pl.col("uuid"),
                gpu_model_name=pl.col("name") if "name" in header else pl.lit(None, dtype=pl.String),
                gpu_index=pl.col("index").cast(pl.Int64, strict=False) if "index" in header else pl.lit(None),
                metric=pl.lit(FIELD_METRICS[field]),
                value=pl.when(missing).then(None).otherwise(number),
            )
        )
    long = pl.concat(long_frames)
    intervals = _sampling_intervals(frame, name)
    long = long.join(intervals, on="gpu_uuid", how="left").with_columns(
        source=pl.lit(samples.SOURCE_NVIDIA_SMI),
        host=pl.lit(host),
        namespace=pl.lit(None, dtype=pl.String),
        pod=pl.lit(None, dtype=pl.String),
        container=pl.lit(None, dtype=pl.String),
        resource_id=pl.lit(None, dtype=pl.String),
        # the log file as the user named it: a re-delivery of it replaces its rows per day and host
        source_ref=pl.lit(_STAMP_PREFIX.sub("", Path(name).name)),
        source_row=pl.col("_line"),
    )
    return samples.with_sample_date(long).sort("sampled_at", "gpu_uuid", "metric")


def _sampling_intervals(frame: pl.DataFrame, name: str) -> pl.DataFrame:
    """Per GPU, the median gap between consecutive samples in whole seconds: what `-l N` was."""
    gaps = (
        frame.select(gpu_uuid=pl.col("uuid"), sampled_at="sampled_at")
        .unique()
        .sort("gpu_uuid", "sampled_at")
        .with_columns(gap=pl.col("sampled_at").diff().over("gpu_uuid").dt.total_milliseconds())
        .group_by("gpu_uuid")
        .agg(gap=pl.col("gap").filter(pl.col("gap") > 0).median())
    )
    lonely = gaps.filter(pl.col("gap").is_null())
    if lonely.height:
        raise RejectedInput(
            name, f"GPU {lonely['gpu_uuid'][0]} has a single sample: the sampling interval (-l N) cannot be known"
        )
    return gaps.select("gpu_uuid", sample_seconds=(pl.col("gap") / 1000).round().cast(pl.Int64).clip(1, None))


def _reject_first(frame: pl.DataFrame, name: str, column: str, failed: pl.Expr, reason: str) -> None:
    bad = frame.filter(failed.fill_null(False))
    if bad.height:
        more = f" ({bad.height - 1} more row(s) like it)" if bad.height > 1 else ""
        raise RejectedInput(
            name, f"{column} {reason} (found {bad[column][0]!r}){more}", row=int(bad["_line"][0]), column=column
        )


def _field_name(cell: str) -> str:
    """`utilization.gpu [%]` → `utilization.gpu`."""
    return re.sub(r"\s*\[[^\]]*\]\s*$", "", cell.strip()).strip()
