"""Finance marts: commitments, buy vs rent, training-run estimates.

The formulas are checked by dbt unit tests (models/marts/finance/_finance__unit_tests.yml and
models/intermediate/finance/_finance__unit_tests.yml) against hand-computed cases, the reference cases of the
gpu-metrics reference included; tests/test_dbt_unit_tests.py runs them with every other unit test. The Python
estimate behind `gpu-finops estimate training` is checked by hand and against the dbt unit test's own case, so
both agree.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from pipelines.cli import main
from pipelines.lib.reporting.training_estimate import estimate_training, peak_bf16_tflops
from pipelines.lib.settings import DBT_PROJECT_DIR

FINANCE_UNIT_TESTS = {
    "fct_commitment_coverage_monthly_hand_computed_kpis",
    "fct_buy_vs_rent_reference_dgx_h100_pays_back_in_under_two_years",
    "fct_buy_vs_rent_scenarios_reproduce_the_worked_example",
    "fct_buy_vs_rent_scenarios_price_every_source",
    "fct_training_cost_estimates_reference_cases",
    "int_finance__gpu_rates_trailing_window_of_rented_gpus",
    "int_finance__owned_server_costs_defaults_overrides_and_currency",
}
FINANCE_MARTS = (
    "fct_commitment_coverage_monthly",
    "fct_buy_vs_rent",
    "fct_buy_vs_rent_scenarios",
    "fct_training_cost_estimates",
)
MART_UNIT_TESTS = DBT_PROJECT_DIR / "models" / "marts" / "finance" / "_finance__unit_tests.yml"


def test_seven_billion_parameters_on_a_trillion_tokens_by_hand():
    """6 × 7e9 × 1e12 = 4.2e22 FLOPs. At 990 TFLOPS and MFU 1 (the reference's rounding): 4.2e22 / (990e12 × 3600)
    = 11,784.511785 GPU-hours, × $1.50 = $17,676.77 (the reference's "about 11,800 hours, about $17,700").
    At 30% overhead: 11,784.511785 × 1.3 = 15,319.865321 GPU-hours, $22,979.80; on 64 GPUs 15,319.865321 / 1,536
    = 9.97 days."""
    estimate = estimate_training(
        gpu_model="H100",
        parameters=7e9,
        tokens=1e12,
        peak_tflops=Decimal(990),
        mfu=Decimal(1),
        overhead=Decimal("0.3"),
        price_per_gpu_hour=Decimal("1.50"),
        gpus=64,
    )
    assert estimate.training_flops == pytest.approx(4.2e22, rel=1e-15)
    assert estimate.compute_gpu_hours == Decimal("11784.511785")
    assert estimate.compute_cost == Decimal("17676.7676775")
    assert estimate.gpu_hours == Decimal("15319.865321")
    assert estimate.cost == Decimal("22979.7979815")
    assert estimate.wall_clock_days == Decimal("9.97")
    assert estimate.mfu_outside_typical_range


def test_llama_405b_published_hours_imply_about_35_percent_mfu():
    """6 × 405e9 × 15.6e12 = 3.7908e25 FLOPs over 30.84M H100-hours at 989 TFLOPS peak: 3.7908e25 / (30.84e6 ×
    989e12 × 3600) = 0.3452 (the reference: 34.5% including downtime). Planned at that MFU the estimate gives
    back the published hours."""
    _, peak = peak_bf16_tflops("H100")
    assert peak == Decimal(989)
    implied = 6 * 405e9 * 15.6e12 / (30.84e6 * 989e12 * 3600)
    assert 0.34 < implied < 0.35
    estimate = estimate_training(
        gpu_model="H100",
        parameters=405e9,
        tokens=15.6e12,
        peak_tflops=peak,
        mfu=Decimal("0.3452"),
        overhead=Decimal(0),
    )
    # MFU rounded to 4 decimals moves the hours by at most 0.00005 / 0.3452, about 0.015%
    assert abs(estimate.gpu_hours - Decimal(30_840_000)) < Decimal(30_840_000) * Decimal("0.00015")
    assert not estimate.mfu_outside_typical_range


def test_python_estimate_matches_the_dbt_unit_test_case():
    """The Python estimate, fed the inputs of the dbt unit test of fct_training_cost_estimates, returns the very
    numbers that test expects of the SQL: one formula, two implementations, one answer."""
    tests = yaml.safe_load(MART_UNIT_TESTS.read_text(encoding="utf-8"))["unit_tests"]
    case = next(test for test in tests if test["name"] == "fct_training_cost_estimates_reference_cases")
    inputs = {given["input"]: given["rows"] for given in case["given"]}
    peaks = {row["gpu_model"]: Decimal(str(row["bf16_dense_tflops"])) for row in inputs["ref('gpu_specs')"]}
    rates = {
        row["gpu_model"]: Decimal(str(row["effective_rate_per_gpu_hour"]))
        for row in inputs["ref('int_finance__gpu_rates')"]
    }
    expected = {row["run_name"]: row for row in case["expect"]["rows"]}
    runs = inputs["ref('planned_training_runs')"]
    assert {run["run_name"] for run in runs} == set(expected)
    for run in runs:
        estimate = estimate_training(
            gpu_model=run["gpu_model"],
            parameters=run["parameters"],
            tokens=run["tokens"],
            peak_tflops=peaks[run["gpu_model"]],
            mfu=Decimal(str(run["mfu"])),
            overhead=Decimal(str(run["overhead_fraction"])),
            price_per_gpu_hour=rates[run["gpu_model"]],
            gpus=run["planned_gpus"],
        )
        want = expected[run["run_name"]]
        assert estimate.training_flops == float(want["training_flops"])
        assert estimate.compute_gpu_hours == Decimal(str(want["compute_gpu_hours"]))
        assert estimate.gpu_hours == Decimal(str(want["gpu_hours"]))
        assert estimate.compute_cost == Decimal(str(want["compute_cost_at_effective_rate"]))
        assert estimate.cost == Decimal(str(want["cost_at_effective_rate"]))
        days = want["wall_clock_days"]
        assert estimate.wall_clock_days == (None if days is None else Decimal(str(days)))
        assert estimate.mfu_outside_typical_range == want["mfu_outside_typical_range"]


def test_estimate_training_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """7e9 × 1e12 on H100 (989 TFLOPS) at MFU 0.4: 4.2e22 / (989e12 × 0.4 × 3600) = 29,491.07 GPU-hours, × 1.3 =
    38,338.39; at $1.50: $44,236.60 compute only, $57,507.58 with overhead; 38,338.39 / (16 × 24) = 99.84 days."""
    monkeypatch.setenv("FINOPS_HOME", str(tmp_path / "home"))
    argv = ["estimate", "training", "--params", "7e9", "--tokens", "1e12", "--gpu", "H100", "--price", "1.5"]
    assert main([*argv, "--mfu", "0.4", "--overhead", "0.3", "--gpus", "16"]) == 0
    out = capsys.readouterr().out
    assert "4.2e+22 FLOPs" in out
    assert "29,491.07 compute only; 38,338.39 with 30% overhead" in out
    assert "44,236.60 compute only; 57,507.58 with 30% overhead, at 1.5 per GPU-hour" in out
    assert "99.84 days on 16 GPUs" in out

    assert main(["estimate", "training", "--params", "7e9", "--tokens", "1e12", "--gpu", "h100"]) == 0
    assert "no price: pass --price" in capsys.readouterr().out

    assert main(["estimate", "training", "--params", "7e9", "--tokens", "1e12", "--gpu", "TPU v5"]) == 2
    assert "unknown GPU model 'TPU v5'" in capsys.readouterr().err
