"""The hourly roll-up and the join to billing, as dbt unit tests on a real DuckDB (the session's one dbt build)."""

from __future__ import annotations

import subprocess

from tests.support.dbt_helpers import passed_unit_tests

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
    # two pods time-slicing one GPU split its shared samples: 0.75 + 0.25 GPU-hour, the device's active ratio
    "int_gpu_allocation__pod_hourly_time_slicing_splits_the_gpu_hour",
    # pods pay 10 / 24 per GPU-hour rounded to the cent (2.92, 0.21, 0.83); the unallocated row takes 6.04, the
    # remainder, and an unused commitment; a namespace without a team, one mapped by the override var
    "fct_gpu_cost_allocation_daily_allocates_the_bill_to_the_cent",
)


def test_hourly_rollup_and_billing_join_unit_tests_pass(dbt_unit_test_build: subprocess.CompletedProcess[str]):
    assert dbt_unit_test_build.returncode == 0, dbt_unit_test_build.stdout[-4000:]
    assert set(UNIT_TESTS) <= passed_unit_tests(dbt_unit_test_build.stdout)
