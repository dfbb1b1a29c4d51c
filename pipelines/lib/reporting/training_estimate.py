"""What a training run costs, for `gpu-finops estimate training` without a warehouse.

The same arithmetic as dbt's `fct_training_cost_estimates` (gpu-metrics reference section 10), in the same
order and with the same rounding, so one run gives the same answer in both; a test checks them on one case.
FLOPs = 6·N·T and GPU-hours = FLOPs / (peak dense BF16 FLOP/s × MFU × 3600) are binary floating point (not
money); GPU-hours are then rounded to 6 decimals and every amount after that is an exact Decimal.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from pipelines.lib.settings import DBT_PROJECT_DIR

GPU_SPECS_SEED = DBT_PROJECT_DIR / "seeds" / "gpu_specs.csv"
"""Peak throughput per GPU model: the dbt seed the mart reads, so both use one table."""

GPU_HOURS_DECIMALS = Decimal("0.000001")
COST_DECIMALS = Decimal("0.000000000001")
DAYS_DECIMALS = Decimal("0.01")
MFU_GUARDRAIL = (Decimal("0.15"), Decimal("0.60"))
"""Implied or planned MFU outside this band is suspicious for dense LLM training (reference section 10)."""


@dataclass(frozen=True)
class TrainingEstimate:
    gpu_model: str
    parameters: float
    tokens: float
    peak_bf16_tflops: Decimal
    mfu: Decimal
    overhead: Decimal
    training_flops: float
    compute_gpu_hours: Decimal
    gpu_hours: Decimal
    price_per_gpu_hour: Decimal | None
    compute_cost: Decimal | None
    cost: Decimal | None
    gpus: int | None
    wall_clock_days: Decimal | None

    @property
    def mfu_outside_typical_range(self) -> bool:
        low, high = MFU_GUARDRAIL
        return not low <= self.mfu <= high


def peak_bf16_tflops(gpu_model: str, specs: Path = GPU_SPECS_SEED) -> tuple[str, Decimal]:
    """The model's name as the seed spells it and its dense BF16 TFLOPS; ValueError when unknown or without BF16."""
    with specs.open(newline="", encoding="utf-8") as handle:
        rows = {row["gpu_model"].lower(): row for row in csv.DictReader(handle)}
    row = rows.get(gpu_model.strip().lower())
    if row is None:
        known = ", ".join(sorted(row["gpu_model"] for row in rows.values()))
        raise ValueError(f"unknown GPU model {gpu_model!r}; seed gpu_specs knows: {known}")
    if not row["bf16_dense_tflops"]:
        raise ValueError(f"{row['gpu_model']} has no dense BF16 throughput in seed gpu_specs")
    return row["gpu_model"], Decimal(row["bf16_dense_tflops"])


def estimate_training(
    *,
    gpu_model: str,
    parameters: float,
    tokens: float,
    peak_tflops: Decimal,
    mfu: Decimal,
    overhead: Decimal,
    price_per_gpu_hour: Decimal | None = None,
    gpus: int | None = None,
) -> TrainingEstimate:
    if parameters <= 0 or tokens <= 0:
        raise ValueError("parameters and tokens must be positive")
    if not Decimal(0) < mfu <= Decimal(1):
        raise ValueError(f"MFU must be above 0 and at most 1, got {mfu}")
    if overhead < 0:
        raise ValueError(f"overhead must not be negative, got {overhead}")
    if gpus is not None and gpus <= 0:
        raise ValueError(f"GPUs must be positive, got {gpus}")
    # the same floating-point operations, in the same order, as the dbt model
    training_flops = 6 * float(parameters) * float(tokens)
    peak_flops_per_second = float(peak_tflops) * 1e12
    hours = training_flops / (peak_flops_per_second * float(mfu) * 3600)
    compute_gpu_hours = Decimal(hours).quantize(GPU_HOURS_DECIMALS, ROUND_HALF_UP)
    gpu_hours = (compute_gpu_hours * (1 + overhead)).quantize(GPU_HOURS_DECIMALS, ROUND_HALF_UP)
    compute_cost = cost = None
    if price_per_gpu_hour is not None:
        compute_cost = (compute_gpu_hours * price_per_gpu_hour).quantize(COST_DECIMALS, ROUND_HALF_UP)
        cost = (gpu_hours * price_per_gpu_hour).quantize(COST_DECIMALS, ROUND_HALF_UP)
    wall_clock_days = (gpu_hours / (gpus * 24)).quantize(DAYS_DECIMALS, ROUND_HALF_UP) if gpus else None
    return TrainingEstimate(
        gpu_model=gpu_model,
        parameters=float(parameters),
        tokens=float(tokens),
        peak_bf16_tflops=peak_tflops,
        mfu=mfu,
        overhead=overhead,
        training_flops=training_flops,
        compute_gpu_hours=compute_gpu_hours,
        gpu_hours=gpu_hours,
        price_per_gpu_hour=price_per_gpu_hour,
        compute_cost=compute_cost,
        cost=cost,
        gpus=gpus,
        wall_clock_days=wall_clock_days,
    )
