"""A daily build that covers only what changed leaves every table equal to a full refresh of the same raw data.

A real warehouse of several sources (generated CUR 2.0 Parquet, the GPU cloud fixture, a bundled price capture,
the ECB snapshot, an nvidia-smi log), built in full; then a day's deliveries: AWS re-delivers September and
October to date (a restatement and a new period), a later price capture, another telemetry day and another GPU
cloud file. The build the dbt asset plans (bench.phases.build, the plan and dbt on it, as `make bench` runs it)
covers only what those changed; a copy of the same warehouse is then rebuilt from scratch with
`dbt build --full-refresh`. Every table of the intermediate and mart layers must be equal, Decimal for Decimal,
but the columns that stamp when a row was built. A plan that missed a model would leave it as the first build
made it, and the comparison fails.
"""

from __future__ import annotations

import logging
import re
import shutil
from datetime import date, timedelta
from pathlib import Path

import pytest

from bench.phases import build, ingest
from pipelines.lib.catalog.prices import FEEDS_BY_NAME
from pipelines.lib.ingest.landing import register
from pipelines.lib.prices.fx_rates import refresh_fx_rates
from pipelines.lib.prices.market_prices import refresh_price_feed
from pipelines.lib.settings import FinopsHome
from pipelines.lib.transform.dbt import dbt_project
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from synthetic_data.scale import write_cur2
from tests.dbt.test_incremental_billing import _load_telemetry, _nvidia_smi_log
from tests.support.dbt_helpers import run_dbt
from tests.support.warehouse_helpers import warehouse_contents

USAGE = Path(__file__).parents[1] / "fixtures" / "gpu_clouds" / "usage-2026-09"
LOG = logging.getLogger(__name__)


def _load_prices(home: FinopsHome, day: date) -> None:
    with connect(home.warehouse) as con:
        refresh_price_feed(home, con, FEEDS_BY_NAME["aws_spot"], [day], offline=True, log=LOG)
        refresh_fx_rates(home, con, day, offline=True, log=LOG)


def _aws(tmp_path: Path, home: FinopsHome, name: str, days: int) -> None:
    for written in write_cur2(tmp_path / name, rows=60 * days, seed=7, start=date(2026, 9, 1), days=days):
        register(home, "aws_cur", written.path)
    ingest(home, "aws_cur")


def _tables(home: FinopsHome) -> dict[str, list[tuple]]:
    """Every table of the intermediate and mart layers, without the columns that stamp a build."""
    contents = warehouse_contents(home.warehouse)
    return {name: rows for name, rows in contents.items() if name.split(".")[0] in ("intermediate", "marts")}


@pytest.mark.slow
def test_a_daily_build_of_what_changed_equals_a_full_refresh(tmp_path: Path):
    home = FinopsHome(tmp_path / "home")
    home.root.mkdir()
    with connect(home.warehouse) as con:
        recover_and_ensure_raw_tables(con)
    _aws(tmp_path, home, "first", days=40)
    register(home, "gpu_cloud_usage", USAGE / "lambda.csv")
    ingest(home, "gpu_cloud_usage")
    _load_prices(home, date(2026, 9, 1))
    days = [date(2026, 9, 1) + timedelta(days=offset) for offset in range(2)]
    _load_telemetry(home, ("nvidia_smi", _nvidia_smi_log(tmp_path / "smi", "first.csv", days, 60)))
    target = tmp_path / "target"
    target.mkdir()
    shutil.copy(dbt_project.manifest_path, target / "manifest.json")
    assert build(home, target, [])["scope"] == "full"

    # A day's deliveries.
    _aws(tmp_path, home, "next", days=45)
    register(home, "gpu_cloud_usage", USAGE / "runpod.csv")
    ingest(home, "gpu_cloud_usage")
    _load_prices(home, date(2026, 10, 31))
    _load_telemetry(home, ("nvidia_smi", _nvidia_smi_log(tmp_path / "smi", "next.csv", [date(2026, 9, 3)], 40)))
    daily = build(home, target, [])
    assert daily["scope"] == "changed"
    assert set(daily["changed_tables"]) == {
        "raw.aws_cur_line_items",
        "raw.gpu_cloud_usage",
        "raw.price_observations",
        "raw.ecb_fx_rates",
        "raw.nvidia_smi_gpu_samples",
    }
    # The views are left as they are, yet their tests read only the cost lines this build rewrote.
    for test in ("int_billing__focus_lines_column_rules", "focus_cost_and_usage_column_rules"):
        compiled = next((target / "run").rglob(f"{test}.sql")).read_text(encoding="utf-8")
        assert re.search(r"built_at = cast\('[^']+' as timestamp\)", compiled), f"{test} reads every line"
    assert build(home, target, [])["scope"] == "nothing"
    planned = _tables(home)

    refreshed = FinopsHome(tmp_path / "refreshed")
    shutil.copytree(home.root, refreshed.root)
    completed = run_dbt(
        refreshed.root,
        tmp_path / "refresh-target",
        *("build", "--full-refresh", "--exclude-resource-type", "unit_test", "--quiet"),
    )
    assert completed.returncode == 0, completed.stdout[-4000:]
    full = _tables(refreshed)
    assert planned.keys() == full.keys()
    assert len(planned) > 50
    different = sorted(name for name in full if planned[name] != full[name])
    assert different == []
    # The comparison has rows to compare: the marts the deliveries reach are not empty.
    assert planned["marts.fct_gpu_spend_daily"] and planned["marts.fct_cost_daily"]
