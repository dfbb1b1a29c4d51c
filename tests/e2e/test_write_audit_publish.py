"""Write, audit, publish, end to end: a delivery the quality gate accepts but a model rule refuses is withheld alone.

The rule is an organisation's own (a copy of the dbt project with one more row rule on the FOCUS cost lines,
through FINOPS_DBT_PROJECT_DIR), so the test does not depend on a gap in the bundled rules that a later fix
closes. Each command is the real CLI in its own process; the expected sums are the CSV rows', added up here.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from pipelines.lib.settings import DBT_PROJECT_DIR
from tests.support import FIXTURES_ROOT
from tests.support.focus_fixtures import focus_rows, write_csv
from tests.support.focus_ingest import OCTOBER, SEPTEMBER
from tests.support.warehouse_helpers import query

pytestmark = pytest.mark.slow

RULE = "house_rule_no_line_over_10000"
RULES_YAML = Path("models") / "intermediate" / "focus" / "_focus__models.yml"
ANCHOR = "              billing_period_end_after_start: BillingPeriodEnd > BillingPeriodStart\n"
LAMBDA = FIXTURES_ROOT / "gpu_clouds" / "usage-2026-09" / "lambda.csv"


def project_with_rule(folder: Path, limit: int) -> Path:
    """The bundled dbt project with one more rule on int_focus__cost_lines: no line bills over `limit`."""
    if not folder.exists():
        shutil.copytree(DBT_PROJECT_DIR, folder, ignore=shutil.ignore_patterns("target", "logs"))
    original = (DBT_PROJECT_DIR / RULES_YAML).read_text()
    assert ANCHOR in original
    rule = f"              {RULE}: BilledCost <= {limit}\n"
    (folder / RULES_YAML).write_text(original.replace(ANCHOR, ANCHOR + rule, 1))
    return folder


def gpu_finops(home: Path, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key not in ("DAGSTER_HOME", "FINOPS_WAREHOUSE")}
    env |= {"FINOPS_HOME": str(home), "FINOPS_DBT_PROJECT_DIR": str(project)}
    return subprocess.run(
        [str(Path(sys.executable).parent / "gpu-finops"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def mart_totals(home: Path) -> dict[tuple[str, str], Decimal]:
    """Billed cost per provider and billing month in the daily cost mart."""
    rows = query(
        home / "warehouse.duckdb",
        "select provider_name, strftime(billing_period_start, '%Y-%m'), sum(billed_cost) "
        "from marts.fct_cost_daily group by all",
    )
    return {(provider, month): total for provider, month, total in rows}


def sep(*costs: str) -> list[dict[str, str]]:
    return focus_rows(*(SEPTEMBER | {"BilledCost": cost, "EffectiveCost": cost} for cost in costs))


def oct_(*costs: str) -> list[dict[str, str]]:
    return focus_rows(*(OCTOBER | {"BilledCost": cost, "EffectiveCost": cost} for cost in costs))


def test_a_delivery_breaking_a_model_rule_is_withheld_and_everything_else_publishes(tmp_path: Path):
    home, project = tmp_path / "finops", project_with_rule(tmp_path / "dbt_project", 10000)
    lambda_billed = sum(Decimal(row["cost"]) for row in csv.DictReader(LAMBDA.open()))

    first = gpu_finops(home, project, "ingest", str(write_csv(tmp_path / "sep-v1.csv", sep("1", "2"))))
    assert first.returncode == 0, first.stderr
    assert mart_totals(home) == {("AWS", "2026-09"): Decimal("3")}
    # The build accepted the load: nothing is kept to withdraw it.
    assert list((home / "lake" / "_unpublished").iterdir()) == []

    # One command: September restated with a line the rule refuses, October of the same source, another source.
    bad = write_csv(tmp_path / "sep-v2.csv", sep("5", "12000"))
    october = write_csv(tmp_path / "oct.csv", oct_("4", "6"))
    second = gpu_finops(home, project, "ingest", str(bad), str(october), str(LAMBDA))
    assert second.returncode == 1, second.stdout + second.stderr
    (bad_name,) = [p.name for p in (home / "quarantine" / "focus").iterdir() if p.name.endswith("sep-v2.csv")]
    assert (
        f"REJECTED  {bad_name} by model rule {RULE} (int_focus__cost_lines): 1 row(s), first at {bad_name} row 2"
        in second.stdout
    )
    # The other deliveries print the models' figures: October's 4 + 6.
    assert "USD billed 10.00 effective 10.00" in second.stdout
    # September is back to the published 1 + 2, October and Lambda reached the marts in the same commands.
    assert mart_totals(home) == {
        ("AWS", "2026-09"): Decimal("3"),
        ("AWS", "2026-10"): Decimal("10"),
        ("Lambda", "2026-09"): lambda_billed,
    }
    reason = (home / "quarantine" / "focus" / f"{bad_name}.reason.txt").read_text()
    assert "row: 2\n" in reason and f"REJECTED by model rule {RULE}" in reason
    warehouse = home / "warehouse.duckdb"
    ((withheld_load, rule, row),) = query(warehouse, "select load_id, rule, example_row from audit.withheld_loads")
    assert (rule, row) == (RULE, 2)
    assert query(warehouse, f"select status from audit.loads where load_id = '{withheld_load}'") == [("withheld",)]
    ((status, why),) = query(warehouse, "select status, why from audit.source_status where source = 'focus'")
    assert status == "stale" and bad_name in why and RULE in why
    report = gpu_finops(home, project, "report", "--output", str(tmp_path / "report.html"))
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "report.html").read_text()
    assert "Deliveries withheld by a model rule" in page and bad_name in page

    # A corrected delivery publishes, and the source is no longer stale.
    fixed = gpu_finops(home, project, "ingest", str(write_csv(tmp_path / "sep-v3.csv", sep("5", "7"))))
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert mart_totals(home)[("AWS", "2026-09")] == Decimal("12")
    assert query(warehouse, "select status from audit.source_status where source = 'focus'") == [("ok",)]

    # After a fix of the rule, --retry loads the withheld delivery from quarantine again, and it publishes.
    project_with_rule(project, 20000)
    retried = gpu_finops(home, project, "ingest", "--retry", withheld_load)
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert f"loaded  {bad_name}" in retried.stdout
    assert mart_totals(home)[("AWS", "2026-09")] == Decimal("12005")
    assert not (home / "quarantine" / "focus" / bad_name).exists()


DAGSTER_RUNS = """
import json, sys
import dagster as dg
from pipelines.lib.settings import Settings
from pipelines.lib.transform.dbt import parse_project_if_changed

# What `make ui`/`make serve` do before Dagster loads the project's copy: parse it, so its manifest exists.
parse_project_if_changed()
from pipelines.definitions import defs
from pipelines.defs.automation.sensors import landing_sensor

definitions = defs()
runs = []
with dg.DagsterInstance.ephemeral() as instance:
    if sys.argv[1] == "sensor":
        context = dg.build_sensor_context(
            cursor=None, instance=instance, resources={"settings": Settings.from_environment()}
        )
        requests = landing_sensor(context).run_requests
        # A load job loads its source's whole landing zone: the first run of each job takes every delivery waiting.
        jobs = list({request.job_name: (request.job_name, request.tags) for request in reversed(requests)}.values())
    else:
        jobs = [("daily_refresh", {})]
    for name, tags in jobs:
        result = definitions.resolve_job_def(name).execute_in_process(
            instance=instance, tags=tags, raise_on_error=False
        )
        checks = {
            f"{c.asset_key.path[-1]}:{c.check_name}": c.passed
            for c in result.get_asset_check_evaluations()
            if c.check_name == "deliveries_are_published"
        }
        runs.append({"job": name, "success": result.success, "published_checks": checks})
print(json.dumps(runs))
"""


def dagster_runs(home: Path, project: Path, how: str) -> list[dict]:
    """The landing sensor's runs (`sensor`) or the daily job (`daily`), executed in a process of their own."""
    env = {key: value for key, value in os.environ.items() if key not in ("DAGSTER_HOME", "FINOPS_WAREHOUSE")}
    env |= {"FINOPS_HOME": str(home), "DAGSTER_HOME": str(home / "dagster"), "FINOPS_DBT_PROJECT_DIR": str(project)}
    (home / "dagster").mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-c", DAGSTER_RUNS, how], env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_landing_sensor_and_the_daily_job_withhold_the_same_way(tmp_path: Path):
    home, project = tmp_path / "finops", project_with_rule(tmp_path / "dbt_project", 10000)
    landing = home / "landing"
    (landing / "focus").mkdir(parents=True)
    (landing / "gpu_cloud_usage").mkdir(parents=True)
    write_csv(landing / "focus" / "a-sep.csv", sep("1", "2"))
    write_csv(landing / "focus" / "b-oct.csv", oct_("4", "12000"))
    shutil.copy(LAMBDA, landing / "gpu_cloud_usage" / "lambda.csv")
    lambda_billed = sum(Decimal(row["cost"]) for row in csv.DictReader(LAMBDA.open()))

    # The sensor's load jobs build every model. Both runs succeed, the check on the focus source says a delivery
    # was withheld, and everything else is in the marts.
    runs = dagster_runs(home, project, "sensor")
    assert sorted(run["job"] for run in runs) == ["load_focus", "load_gpu_cloud_usage"]
    assert all(run["success"] for run in runs), runs
    (focus_run,) = [run for run in runs if run["job"] == "load_focus"]
    assert focus_run["published_checks"] == {"focus_cost_and_usage:deliveries_are_published": False}
    assert mart_totals(home) == {("AWS", "2026-09"): Decimal("3"), ("Lambda", "2026-09"): lambda_billed}
    assert not (landing / "focus" / "b-oct.csv").exists()
    assert (home / "quarantine" / "focus" / "b-oct.csv.reason.txt").exists()

    # The daily run loads a corrected October: published, and the check passes again.
    write_csv(landing / "focus" / "c-oct.csv", oct_("4", "6"))
    (daily,) = dagster_runs(home, project, "daily")
    assert daily["success"] and daily["published_checks"]["focus_cost_and_usage:deliveries_are_published"]
    assert mart_totals(home)[("AWS", "2026-10")] == Decimal("10")
