"""The one shape every telemetry source returns: one row per GPU, metric and sample.

Both sources speak DCGM metric names (nvidia-smi's `utilization.gpu` becomes `DCGM_FI_DEV_GPU_UTIL`),
and values stay in the metric's own unit (GPU_UTIL 0–100 %, PROF_* 0–1, FB_USED MiB, POWER_USAGE W):
the dbt staging model normalises, so a raw row always reads exactly what the source said.
A sample at `sampled_at` describes the `sample_seconds` before it (DCGM's and nvidia-smi's own
convention: "over the past sample period"), so `sample_date` is the UTC day that interval starts in.
"""

from __future__ import annotations

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
    "source_ref": pl.String(),
    "source_row": pl.Int64(),
}
"""`sampled_at` is naive UTC; `value` is null for NaN, Inf, `[N/A]` and `[Not Supported]`. `source_ref` is the
query URL (Prometheus) or the log's file name (nvidia-smi, whose `source_row` is the line number)."""


def with_sample_date(frame: pl.DataFrame) -> pl.DataFrame:
    """Fill `sample_date` from the start of each sample's interval and put columns in schema order."""
    start = pl.col("sampled_at") - pl.duration(seconds=pl.col("sample_seconds"))
    return frame.with_columns(sample_date=start.dt.date()).select(
        [pl.col(name).cast(dtype) for name, dtype in SAMPLE_SCHEMA.items()]
    )


def empty_samples() -> pl.DataFrame:
    return pl.DataFrame(schema=SAMPLE_SCHEMA)
