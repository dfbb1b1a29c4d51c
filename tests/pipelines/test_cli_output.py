"""What the `gpu-finops` command shows and leaves behind: quiet output, its log file, its version and help,
a price refresh that ends with the price marts built, landing copies that the sensor never sees half-made,
and old dbt run folders cleaned."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
import tomllib
from collections import Counter
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from pipelines.cli import _parser
from pipelines.lib.ingest.landing import pending_deliveries, register
from pipelines.lib.operations.scheduling import landing_snapshot
from pipelines.lib.settings import PROJECT_ROOT, FinopsHome
from pipelines.lib.transform.dbt import prune_run_targets
from tests.support.aws_fixtures import LEGACY_OCT_HEADER, LEGACY_OCT_ROWS, csv_text
from tests.support.cli import run_cli
from tests.support.warehouse_helpers import query

SNAPSHOTS = PROJECT_ROOT / "sources" / "prices" / "snapshots"


def test_version_is_the_packages_version():
    version = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]["version"]
    result = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "--version"], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == f"gpu-finops {version}"


def test_every_argument_of_every_command_has_help_text():
    missing = []

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for choice, sub in action.choices.items():
                    walk(sub, f"{name} {choice}")
            elif not action.help:
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")

    walk(_parser(), "gpu-finops")
    assert missing == []


def test_a_command_on_a_missing_warehouse_names_the_command_to_run_first(tmp_path: Path):
    result = run_cli(tmp_path / "home", "report")
    assert result.returncode == 2
    assert "run `gpu-finops demo` or `gpu-finops ingest PATH` first" in result.stderr
    assert "Traceback" not in result.stderr


def test_sql_writes_booleans_as_duckdb_and_postgresql_do(tmp_path: Path):
    home = FinopsHome(tmp_path / "home").create_folders()
    duckdb.connect(str(home.warehouse)).close()
    query = "select true as covered, false as spot, null::boolean as unknown"
    csv_out = run_cli(home.root, "sql", query, "--format", "csv")
    assert (csv_out.returncode, csv_out.stdout) == (0, "covered,spot,unknown\ntrue,false,\n"), csv_out.stderr
    table_out = run_cli(home.root, "sql", query)
    assert table_out.stdout.splitlines()[2].split() == ["true", "false"], table_out.stdout
    json_out = run_cli(home.root, "sql", query, "--format", "json")
    assert json.loads(json_out.stdout) == [{"covered": True, "spot": False, "unknown": None}]


def test_ingest_without_a_path_asks_for_one_or_rebuild(tmp_path: Path):
    result = run_cli(tmp_path / "home", "ingest")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "error: give a PATH to load, --retry LOAD_ID to load a withheld delivery again, or --rebuild to rebuild the "
        "models from what is loaded"
    )


RESERVATION_COLUMNS = [
    "reservation/UnusedAmortizedUpfrontFeeForBillingPeriod",
    "reservation/UnusedRecurringFee",
]
RI_ARN = "arn:aws:ec2:us-east-2:111122223333:reserved-instances/ri-p4d-0001"
RESERVED_MONTH = [
    LEGACY_OCT_ROWS[0],  # 2 h of p5 on demand: 196.64
    LEGACY_OCT_ROWS[0]
    | {  # 24 h of p4d covered by the reservation: nothing unblended, 464.28 amortized
        "identity/LineItemId": "legacy-oct-p4d-ri",
        "lineItem/LineItemType": "DiscountedUsage",
        "lineItem/UsageType": "USE2-BoxUsage:p4d.24xlarge",
        "lineItem/UsageAmount": "24.0",
        "lineItem/UnblendedRate": "0.0",
        "lineItem/UnblendedCost": "0.0",
        "product/instanceType": "p4d.24xlarge",
        "pricing/term": "Reserved",
        "reservation/ReservationARN": RI_ARN,
        "reservation/EffectiveCost": "464.28",
    },
    LEGACY_OCT_ROWS[0]
    | {  # the reservation's monthly fee: 720 h x 19.22, of which 696 h went unused
        "identity/LineItemId": "legacy-oct-p4d-ri-fee",
        "lineItem/LineItemType": "RIFee",
        "lineItem/UsageType": "USE2-HeavyUsage:p4d.24xlarge",
        "lineItem/UsageAmount": "720.0",
        "lineItem/UnblendedRate": "19.22",
        "lineItem/UnblendedCost": "13838.4",
        "product/instanceType": "p4d.24xlarge",
        "pricing/term": "Reserved",
        "reservation/ReservationARN": RI_ARN,
        "reservation/UnusedAmortizedUpfrontFeeForBillingPeriod": "87.0",
        "reservation/UnusedRecurringFee": "13377.12",
    },
]


def _amortized(row: dict[str, str]) -> Decimal:
    """AWS's amortized cost of a legacy CUR line (the CID summary view's formula, ../shared billing-exports 2.7)."""
    kind = row["lineItem/LineItemType"]
    if kind == "DiscountedUsage":
        return Decimal(row["reservation/EffectiveCost"])
    if kind == "RIFee":
        return sum(Decimal(row[column]) for column in RESERVATION_COLUMNS)
    return Decimal(row["lineItem/UnblendedCost"])


def test_ingest_prints_each_delivery_as_the_models_hold_it_not_the_files_unblended_sum(tmp_path: Path):
    """A legacy CUR month with a reservation: the file's unblended sum is not what the month cost once amortized."""
    month = tmp_path / "cur-2026-10.csv"
    month.write_bytes(csv_text(LEGACY_OCT_HEADER + RESERVATION_COLUMNS, RESERVED_MONTH))
    billed = sum(Decimal(row["lineItem/UnblendedCost"]) for row in RESERVED_MONTH)
    effective = sum(_amortized(row) for row in RESERVED_MONTH)
    assert (billed, effective) == (Decimal("14035.04"), Decimal("14125.04"))

    result = run_cli(tmp_path / "home", "ingest", str(month), "--source", "aws_cur")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"USD billed {billed:,.2f} effective {effective:,.2f}" in result.stdout
    assert "(the file's totals" not in result.stdout


def test_prices_refresh_on_a_new_home_builds_the_price_index_quietly(tmp_path: Path):
    """One offline refresh of 31 October 2026 into an empty FINOPS_HOME, output not a terminal (as under cron).

    The cheapest specialized-cloud H100-hour on demand that day is Lambda's, read here from the bundled capture
    (price_cents_per_hour / GPUs); by hand, RunPod also lists 2.69, Lambda's 1× is 2.99 and CoreWeave's 5.98,
    so the median of the four offers is (2.69 + 2.99) / 2 = 2.84.
    """
    home = tmp_path / "home"
    result = run_cli(home, "prices", "refresh", "--offline", "--date", "2026-10-31")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    lines = output.splitlines()

    # One line per step: no status line, no line twice, none of Dagster's or dbt's own log lines.
    assert not any("\r" in line for line in lines), output
    assert [line for line, times in Counter(lines).items() if times > 1] == [], output
    assert not [line for line in lines if " - dagster - " in line or "Running with dbt" in line], output
    assert len(lines) <= 20, output
    assert "Models built." in lines

    # Dagster's and dbt's logs are in the command's log file, which the output names.
    (log,) = (home / "logs").glob("*-prices-refresh.log")
    assert f"Details (Dagster's and dbt's logs): {log}" in lines
    text = log.read_text()
    assert " - dagster - INFO - " in text and " - DEBUG - " not in text
    assert "Finished running" in text  # dbt's own closing line of the build, which dagster-dbt echoes
    # dbt's 187 source tests are asset checks now; only the 5 on audit.loads (a source no model reads, so no
    # Dagster asset) are still observations, where every one of the ~190 used to be.
    assert text.count("This test was not included in Dagster's asset check selection") <= 5

    lambda_capture = json.loads((SNAPSHOTS / "lambda" / "2026-10-31" / "instance-types.json").read_text())
    lambda_h100 = [
        Decimal(item["instance_type"]["price_cents_per_hour"]) / 100 / item["instance_type"]["specs"]["gpus"]
        for item in lambda_capture["data"].values()
        if item["instance_type"]["gpu_description"].startswith("H100")
    ]
    index = query(
        home / "warehouse.duckdb",
        "select price_date::varchar, min_price_per_gpu_hour_usd, median_price_per_gpu_hour_usd "
        "from marts.fct_gpu_price_index "
        "where gpu_model = 'H100' and pricing_model = 'on_demand' and provider_class = 'specialized'",
    )
    assert index == [("2026-10-31", min(lambda_h100), Decimal("2.84"))]


def test_landing_copies_appear_whole_and_the_sensor_skips_hidden_names(tmp_path: Path, monkeypatch):
    """A watcher lists the landing folder while a 300-file delivery is copied in: every delivery it sees under a
    visible name already has all its files. A hidden staging copy is no delivery to the sensor."""
    from tests.support.home_helpers import isolated_home

    home: FinopsHome = isolated_home(tmp_path, monkeypatch)
    source = tmp_path / "export"
    source.mkdir()
    for number in range(300):
        (source / f"part-{number:03}.csv").write_text("x" * 4096)
    landing = home.landing_for("focus")
    landing.mkdir(parents=True)
    seen: list[int] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            for entry in landing.iterdir():
                if not entry.name.startswith("."):
                    seen.append(len(list(entry.iterdir())))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        delivery = register(home, "focus", source)
        time.sleep(0.05)
    finally:
        done.set()
        watcher.join()
    assert seen and set(seen) == {300}
    assert [entry.name for entry in landing.iterdir()] == [delivery.path.name]

    # A staging copy (of this process: alive) stays hidden from the sensor and the loader.
    staging = landing / f".20990101T000000000000Z__late.{os.getpid()}.tmp"
    staging.mkdir()
    (staging / "part-000.csv").write_text("x")
    assert [d.path for d in pending_deliveries(home, "focus")] == [delivery.path]
    assert [d.delivery.path for d in landing_snapshot(home, ["focus"])] == [delivery.path]

    # One left by a process that died is removed by the next copy.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    leftover = landing / f".20990101T000000000000Z__dead.{dead.stdout.strip()}.tmp"
    leftover.mkdir()
    register(home, "focus", source / "part-000.csv")
    assert not leftover.exists() and staging.exists()


def test_old_dbt_run_targets_are_pruned_to_the_newest_five(tmp_path: Path):
    target = tmp_path / "target"
    target.mkdir()
    (target / "manifest.json").write_text("{}")
    (target / "compiled").mkdir()  # not a dagster-dbt run folder: never touched
    now = time.time()
    runs = []
    for age_hours in range(2, 10):  # eight runs, two to nine hours old
        run = target / f"gpu_finops_dbt_models-{age_hours:07x}-abcdef{age_hours}"
        (run / "run").mkdir(parents=True)
        (run / "run" / "model.sql").write_text("select 1")
        for path in (run / "run" / "model.sql", run / "run", run):
            os.utime(path, (now - age_hours * 3600, now - age_hours * 3600))
        runs.append(run)
    docs_run = target / "1a2b3c4"  # a run without a context (docs generate): four and a half hours old
    docs_run.mkdir()
    os.utime(docs_run, (now - 4.5 * 3600, now - 4.5 * 3600))

    deleted = prune_run_targets(target, keep=5)

    # Newest first: 2h, 3h, 4h, the docs run (4.5h), 5h are kept; 6h to 9h go.
    assert sorted(deleted) == sorted(runs[4:])
    assert sorted(path.name for path in target.iterdir()) == sorted(
        ["manifest.json", "compiled", docs_run.name, *(run.name for run in runs[:4])]
    )


def test_recent_dbt_run_targets_are_kept_whatever_their_number(tmp_path: Path):
    """A folder written to in the last hour may be another process's build in progress."""
    target = tmp_path / "target"
    for number in range(8):
        (target / f"gpu_finops_dbt_models-{number:07x}-{number:07x}").mkdir(parents=True)
    assert prune_run_targets(target, keep=5) == []
    assert len(list(target.iterdir())) == 8


@pytest.mark.parametrize("name", ["gpu_finops_dbt_models-0a6eed4-d19a193", "098c1d9"])
def test_the_run_folder_names_dagster_dbt_makes_are_recognised(tmp_path: Path, name: str):
    run = tmp_path / "target" / name
    run.mkdir(parents=True)
    os.utime(run, (time.time() - 7200, time.time() - 7200))
    assert prune_run_targets(tmp_path / "target", keep=0) == [run]


def test_the_docs_page_keeps_the_dbt_logo_bound():
    """dbt 1.11's docs template already binds its logo with ng-src; rewriting it again made `ng-ng-src`, an image
    without a source (the broken logo). The browser check is in the demo's docs test (tests/e2e)."""
    from dbt.task.docs import DOCS_INDEX_FILE_PATH

    from pipelines.cli.docs import _bind_template_urls

    page = _bind_template_urls(Path(DOCS_INDEX_FILE_PATH).read_text(encoding="utf-8"))
    assert "ng-ng-src" not in page
    assert page.count('ng-src="{{ logo }}"') == 1 and ' src="{{ logo }}"' not in page


def test_warnings_of_one_kind_are_printed_once_with_their_count(capsys: pytest.CaptureFixture[str]):
    """As a run's event log delivers them: one warning per partition day, one repeated verbatim, one info."""
    import logging

    from dagster import EventLogEntry

    from pipelines.cli.console import RunProgress

    progress = RunProgress("test")

    def log(level: int, message: str) -> None:
        progress.on_event(
            EventLogEntry(
                error_info=None,
                level=level,
                user_message=message,
                run_id="r",
                timestamp=time.time(),
                dagster_event=None,
            )
        )

    for day in range(1, 32):
        log(logging.WARNING, f"2026-10-{day:02}: no GPU metrics for host 'gpu-{day % 3}'\nTraceback: …")
    for _ in range(3):
        log(logging.WARNING, "the ECB snapshot is 5 days old")
    log(logging.INFO, "loaded 6 query_range answers")
    progress.report_warnings()
    assert capsys.readouterr().err.splitlines() == [
        "warning: 2026-10-01: no GPU metrics for host 'gpu-1' (and 30 more like it; details in the log file)",
        "warning: the ECB snapshot is 5 days old (3 times; details in the log file)",
    ]
