"""The one shape every telemetry source returns: one row per GPU, metric and sample.

Both sources speak DCGM metric names (nvidia-smi's `utilization.gpu` becomes `DCGM_FI_DEV_GPU_UTIL`),
and values stay in the metric's own unit (GPU_UTIL 0–100 %, PROF_* 0–1, FB_USED MiB, POWER_USAGE W):
the dbt staging model normalises, so a raw row always reads exactly what the source said.
Under MIG the exporter writes one series per GPU instance (slice), labelled with the parent GPU's `UUID` and the
slice's `GPU_I_ID` and `GPU_I_PROFILE`: a sample's identity is the GPU *and* its instance (`gpu_instance_id`, null
for a whole GPU and for the device-level metrics DCGM reports for the parent: power, energy).
DCGM writes a sentinel for a value it cannot read (`DCGM_INT64_BLANK` 9223372036854775792 and the codes above it:
not found, not supported, not permissioned; `DCGM_FI_DEV_GPU_UTIL` reads 9223372036854775794 on a MIG GPU):
such a value is no reading, so it is loaded as null with `value_invalid` true, never as a number. A GPU_UTIL
outside 0–100 (another sentinel) and a GPU_UTIL on a slice's series (not valid under MIG, NVIDIA/DCGM #80) are
treated the same way: the active ratio of a slice is its `DCGM_FI_PROF_GR_ENGINE_ACTIVE`.
A sample at `sampled_at` describes the `sample_seconds` before it (DCGM's and nvidia-smi's own
convention: "over the past sample period"), so `sample_date` is the UTC day that interval starts in.
"""

from __future__ import annotations

import re

import polars as pl

from sources.common.types import DECIMAL, DECIMAL_PRECISION, DECIMAL_SCALE, TIMESTAMP

MAX_ABS_VALUE = 10 ** (DECIMAL_PRECISION - DECIMAL_SCALE)

SM_ACTIVE = "DCGM_FI_PROF_SM_ACTIVE"
GR_ENGINE_ACTIVE = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"
TENSOR_ACTIVE = "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"
FB_USED = "DCGM_FI_DEV_FB_USED"
POWER_USAGE = "DCGM_FI_DEV_POWER_USAGE"
TOTAL_ENERGY = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
METRICS = (SM_ACTIVE, GR_ENGINE_ACTIVE, GPU_UTIL, TENSOR_ACTIVE, FB_USED, POWER_USAGE, TOTAL_ENERGY)

DCGM_INT64_BLANK = 9_223_372_036_854_775_792
"""DCGM's first blank value (0x7ffffffffffffff0); every value from it up to 2^63 − 1 is a code, not a reading."""
MIG_PROFILE = re.compile(r"^[0-9]+g\.[0-9]+gb(\+[a-z0-9]+)*$")
"""A GPU instance profile as DCGM labels it: `<compute slices>g.<memory>gb`, an optional `+me` (media extensions)."""

SOURCE_PROMETHEUS = "dcgm_prometheus"
SOURCE_NVIDIA_SMI = "nvidia_smi"

SAMPLE_SCHEMA: dict[str, pl.DataType] = {
    "sample_date": pl.Date(),
    "sampled_at": TIMESTAMP,
    "sample_seconds": pl.Int64(),
    "source": pl.String(),
    "host": pl.String(),
    "gpu_uuid": pl.String(),
    "gpu_index": pl.Int64(),
    "gpu_model_name": pl.String(),
    "metric": pl.String(),
    "value": DECIMAL,
    "namespace": pl.String(),
    "pod": pl.String(),
    "container": pl.String(),
    "resource_id": pl.String(),
    "gpu_instance_id": pl.String(),
    "gpu_instance_profile": pl.String(),
    "value_invalid": pl.Boolean(),
    "promql": pl.String(),
    "source_ref": pl.String(),
    "source_row": pl.Int64(),
}
"""`sampled_at` is naive UTC; `value` is null for NaN, Inf, `[N/A]`, `[Not Supported]` and DCGM's sentinels (then
`value_invalid` is true for a sentinel; NaN and `[N/A]` are simply missing). `gpu_instance_id` and
`gpu_instance_profile` are the MIG slice's (`GPU_I_ID`, `GPU_I_PROFILE`), null for a whole GPU. `promql` is the
expression the value answers (Prometheus; null for nvidia-smi and for Prometheus rows loaded before the column
existed, whose energy values were all `increase(…)`s). `source_ref` is the query URL (Prometheus) or the log's file
name (nvidia-smi, whose `source_row` is the line number)."""


def invalid_reading(metric: pl.Expr, value: pl.Expr, gpu_instance_id: pl.Expr) -> pl.Expr:
    """True where a number is a DCGM sentinel rather than a reading: ≥ DCGM_INT64_BLANK, or a GPU_UTIL outside
    0–100 or on a MIG slice's series (not valid under MIG). `value` is the number as a float."""
    util = metric == GPU_UTIL
    return (
        (value >= DCGM_INT64_BLANK)
        | (util & ((value < 0) | (value > 100)))
        | (util & gpu_instance_id.is_not_null() & value.is_not_null())
    ).fill_null(False)


def with_sample_date(frame: pl.DataFrame) -> pl.DataFrame:
    """Fill `sample_date` from the start of each sample's interval and put columns in schema order; a source
    without MIG labels or a PromQL expression (nvidia-smi) gets them null, and no sentinel flag unless it set one."""
    start = pl.col("sampled_at") - pl.duration(seconds=pl.col("sample_seconds"))
    absent = {
        name: pl.lit(False) if name == "value_invalid" else pl.lit(None, dtype=pl.String)
        for name in ("gpu_instance_id", "gpu_instance_profile", "value_invalid", "promql")
        if name not in frame.columns
    }
    return frame.with_columns(sample_date=start.dt.date(), **absent).select(
        [pl.col(name).cast(dtype) for name, dtype in SAMPLE_SCHEMA.items()]
    )


def empty_samples() -> pl.DataFrame:
    return pl.DataFrame(schema=SAMPLE_SCHEMA)
