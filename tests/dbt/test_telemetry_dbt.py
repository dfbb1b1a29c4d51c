"""The hourly roll-up and the join to billing, as dbt unit tests on a real DuckDB (one dbt build)."""

from __future__ import annotations

from pathlib import Path

from tests.support.dbt_helpers import dbt_on_empty_warehouse

UNIT_TESTS = (
    # g1: 0.5 for 30 minutes then 1.0 for 30 minutes averages 0.75; g2: 10 minutes of samples cover 1/6 of the
    # hour; g3: SM_ACTIVE 1.08 is clamped to 1 and flagged, its resource comes from the host map
    "int_telemetry__gpu_hourly_weighted_ratios_and_coverage",
    # 80 GPU-hours for 400.00 with 60 observed, 45 active, 30 effective: idle cost 75.00, 13.333333 per
    # utilized GPU-hour; a resource billed without telemetry and telemetry without a bill are kept
    "fct_gpu_utilization_daily_joins_telemetry_to_billing",
    # 192 GPU-hours for 960.00 and 120.00 of the reservation unused on the same VM: the unused part is its own,
    # the rest splits at 5.00 per GPU-hour; unused hours that name no resource stay under the reservation's id
    "fct_gpu_utilization_daily_unused_commitment_is_its_own_part",
)


def test_hourly_rollup_and_billing_join_unit_tests_pass(tmp_path: Path):
    # --empty builds the parents with no rows, so the unit tests know their inputs' column types.
    result = dbt_on_empty_warehouse(
        tmp_path, "build", "--empty", "--select", "+fct_gpu_utilization_daily", "--exclude", "test_type:data"
    )
    assert result.returncode == 0, result.stdout[-4000:]
    for name in UNIT_TESTS:
        assert any(name in line and "PASS" in line for line in result.stdout.splitlines()), name
