"""The hourly roll-up and the join to billing, as dbt unit tests on a real DuckDB (one dbt build)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pipelines.lib.raw_schema import ensure_raw_tables
from pipelines.lib.settings import DBT_PROJECT_DIR
from pipelines.lib.warehouse import connect

UNIT_TESTS = (
    # g1: 0.5 for 30 minutes then 1.0 for 30 minutes averages 0.75; g2: 10 minutes of samples cover 1/6 of the
    # hour; g3: SM_ACTIVE 1.08 is clamped to 1 and flagged, its resource comes from the host map
    "int_telemetry__gpu_hourly_weighted_ratios_and_coverage",
    # 80 GPU-hours for 400.00 with 60 observed, 45 active, 30 effective: idle cost 75.00, 13.333333 per
    # utilized GPU-hour; a resource billed without telemetry and telemetry without a bill are kept
    "fct_gpu_utilization_daily_joins_telemetry_to_billing",
)


def test_hourly_rollup_and_billing_join_unit_tests_pass(tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    with connect(home / "warehouse.duckdb") as con:
        ensure_raw_tables(con)
    dbt = Path(sys.executable).parent / "dbt"
    # --empty builds the parents with no rows, so the unit tests know their inputs' column types.
    result = subprocess.run(
        [
            str(dbt),
            "build",
            "--empty",
            "--select",
            "+fct_gpu_utilization_daily",
            "--exclude",
            "test_type:data",
            "--target-path",
            str(tmp_path / "target"),
        ],
        cwd=DBT_PROJECT_DIR,
        env=os.environ | {"FINOPS_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-4000:]
    for name in UNIT_TESTS:
        assert any(name in line and "PASS" in line for line in result.stdout.splitlines()), name
