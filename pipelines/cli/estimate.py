"""`gpu-finops estimate training`: GPU-hours and cost of one training run."""

from __future__ import annotations

import argparse
from decimal import Decimal

from pipelines.cli._output import money
from pipelines.lib.settings import FinopsHome, Settings
from pipelines.lib.warehouse.connection import connect


def estimate_training(settings: Settings, args: argparse.Namespace) -> int:
    """The formula of fct_training_cost_estimates for one run; the price defaults to our own rate."""
    home = settings.home
    from pipelines.lib.reporting.training_estimate import estimate_training as estimate_run
    from pipelines.lib.reporting.training_estimate import peak_bf16_tflops

    gpu_model, peak = peak_bf16_tflops(args.gpu)
    price, price_source = args.price, "given"
    if price is None:
        price, price_source = _our_effective_rate(home, gpu_model)
    estimate = estimate_run(
        gpu_model=gpu_model,
        parameters=args.params,
        tokens=args.tokens,
        peak_tflops=peak,
        mfu=args.mfu,
        overhead=args.overhead,
        price_per_gpu_hour=price,
        gpus=args.gpus,
    )
    overhead = f"{(estimate.overhead * 100).normalize():f}%"
    print(f"Training {estimate.parameters:.3g} parameters on {estimate.tokens:.3g} tokens on {gpu_model}")
    print(f"  compute      {estimate.training_flops:.4g} FLOPs (6 × parameters × tokens)")
    print(f"  throughput   {peak:g} TFLOPS peak dense BF16 (seed gpu_specs) at MFU {estimate.mfu:g}")
    if estimate.mfu_outside_typical_range:
        print("               (MFU outside 0.15-0.60: dense LLM training usually reaches 0.35-0.45)")
    print(
        f"  GPU-hours    {estimate.compute_gpu_hours:,.2f} compute only; "
        f"{estimate.gpu_hours:,.2f} with {overhead} overhead"
    )
    if estimate.wall_clock_days is not None:
        print(f"  wall clock   {estimate.wall_clock_days:,.2f} days on {estimate.gpus} GPUs")
    if estimate.cost is None:
        print("  cost         no price: pass --price (no effective rate for this GPU in the warehouse)")
    else:
        print(
            f"  cost         {money(estimate.compute_cost)} compute only; {money(estimate.cost)} with {overhead} "
            f"overhead, at {estimate.price_per_gpu_hour:g} per GPU-hour ({price_source})"
        )
    return 0


def _our_effective_rate(home: FinopsHome, gpu_model: str) -> tuple[Decimal | None, str]:
    """Our effective rate for the GPU as the finance marts compute it, when the warehouse has one."""
    import duckdb

    if not home.warehouse.exists():
        return None, "none"
    try:
        with connect(home.warehouse, read_only=True) as con:
            row = con.execute(
                "select effective_rate_per_gpu_hour, currency, window_start, window_end "
                "from marts.rpt_gpu_effective_rate where gpu_model = ?",
                [gpu_model],
            ).fetchone()
    except duckdb.CatalogException:
        return None, "none"
    if row is None or row[0] is None:
        return None, "none"
    rate, currency, first, last = row
    return rate, f"our effective rate, {currency}, {first} to {last}"
