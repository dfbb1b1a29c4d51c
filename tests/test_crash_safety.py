"""A load killed with SIGKILL mid-transaction, a second writer while the warehouse is busy, restatement audit.

The load runs in a child process that the loader's test hook (FINOPS_TEST_PAUSE_BEFORE_COMMIT) holds
just before COMMIT: the old rows are deleted and the new ones inserted, inside the open transaction.
Killing it there is the worst moment; the warehouse must come back exactly as it was.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import pytest

from pipelines.lib.billing_sources import FOCUS
from pipelines.lib.ingest import ingest_landing_zone
from pipelines.lib.landing import register
from pipelines.lib.settings import PROJECT_ROOT, FinopsHome
from pipelines.lib.warehouse import PAUSE_BEFORE_COMMIT_ENV, WarehouseBusy, connect
from tests.focus_fixtures import focus_rows, write_csv
from tests.warehouse_helpers import query, table_fingerprint

SEP = {"BillingPeriodStart": "2026-09-01T00:00:00Z", "BillingPeriodEnd": "2026-10-01T00:00:00Z"}
OCT = {
    "BillingPeriodStart": "2026-10-01T00:00:00Z",
    "BillingPeriodEnd": "2026-11-01T00:00:00Z",
    "ChargePeriodStart": "2026-10-01T00:00:00Z",
    "ChargePeriodEnd": "2026-10-02T00:00:00Z",
}
CHILD = """
import logging, sys
from pathlib import Path
from pipelines.lib.billing_sources import FOCUS
from pipelines.lib.ingest import ingest_landing_zone
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse import connect

home = FinopsHome(Path(sys.argv[1]))
with connect(home.warehouse) as con:
    ingest_landing_zone(home, con, FOCUS, log=logging.getLogger())
"""
log = logging.getLogger("test_crash_safety")


@pytest.fixture
def home(tmp_path: Path) -> FinopsHome:
    return FinopsHome(tmp_path / "home").ensure()


def run_ingest(home: FinopsHome):
    with connect(home.warehouse) as con:
        return ingest_landing_zone(home, con, FOCUS, log=log)


def billed_by_period(home: FinopsHome) -> dict[str, Decimal]:
    sql = "select strftime(BillingPeriodStart, '%Y-%m'), sum(BilledCost) from raw.focus_cost_and_usage group by 1"
    return dict(query(home.warehouse, sql))


def start_paused_load(home: FinopsHome, marker: Path) -> subprocess.Popen:
    """A child process loading the landing zone, held inside its transaction until killed."""
    env = os.environ | {PAUSE_BEFORE_COMMIT_ENV: str(marker)}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(home.root)], cwd=PROJECT_ROOT, env=env)
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert child.poll() is None, "the loader exited before reaching its commit"
        assert time.monotonic() < deadline, "the loader never reached its commit"
        time.sleep(0.05)
    return child


def test_sigkill_inside_the_transaction_leaves_the_warehouse_as_it_was(home: FinopsHome, tmp_path: Path):
    register(home, "focus", write_csv(tmp_path / "sep.csv", focus_rows(SEP | {"BilledCost": "1"})))
    assert [r.status for r in run_ingest(home)] == ["loaded"]
    before = table_fingerprint(home.warehouse)

    # A restatement of September plus October: the killed transaction had deleted and inserted rows.
    restated = write_csv(
        tmp_path / "sep-oct.csv",
        focus_rows(SEP | {"BilledCost": "5"}, SEP | {"BilledCost": "6"}, OCT | {"BilledCost": "7"}),
    )
    register(home, "focus", restated)
    child = start_paused_load(home, tmp_path / "inside-transaction")

    # While the child holds the warehouse, a second writer is refused with a plain message naming the file.
    with pytest.raises(WarehouseBusy) as busy, connect(home.warehouse):
        pass
    assert str(home.warehouse) in str(busy.value) and "locked by another process" in str(busy.value)

    os.kill(child.pid, signal.SIGKILL)
    assert child.wait(timeout=30) == -signal.SIGKILL

    assert table_fingerprint(home.warehouse) == before
    assert billed_by_period(home) == {"2026-09": Decimal(1)}

    # Rerun: the delivery (still in the landing zone) loads exactly once.
    assert [r.status for r in run_ingest(home)] == ["duplicate", "loaded"]
    assert billed_by_period(home) == {"2026-09": Decimal(11), "2026-10": Decimal(7)}
    assert query(home.warehouse, "select count(*) from raw.focus_cost_and_usage") == [(3,)]
    after_rerun = table_fingerprint(home.warehouse)
    assert [r.status for r in run_ingest(home)] == ["duplicate", "duplicate"]
    assert table_fingerprint(home.warehouse) == after_rerun
    loads = query(home.warehouse, "select status, row_count from audit.loads order by loaded_at")
    assert loads == [("superseded", 1), ("loaded", 3)]


def test_cli_reports_a_busy_warehouse_plainly(home: FinopsHome, tmp_path: Path):
    register(home, "focus", write_csv(tmp_path / "sep.csv", focus_rows(SEP)))
    child = start_paused_load(home, tmp_path / "inside-transaction")
    try:
        env = os.environ | {"FINOPS_HOME": str(home.root)}
        env.pop(PAUSE_BEFORE_COMMIT_ENV, None)
        cli = subprocess.run(
            [sys.executable, "-m", "pipelines.cli", "sql", "select 1"],
            cwd=PROJECT_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    assert cli.returncode == 2
    assert cli.stderr.startswith(f"error: the warehouse {home.warehouse} is locked by another process")
    assert "Traceback" not in cli.stderr


def test_restatement_records_rows_and_cost_before_and_after(home: FinopsHome, tmp_path: Path):
    register(
        home,
        "focus",
        write_csv(tmp_path / "v1.csv", focus_rows(SEP | {"BilledCost": "1.25"}, OCT | {"BilledCost": "2"})),
    )
    (first,) = run_ingest(home)
    assert query(home.warehouse, "select count(*) from audit.restatements") == [(0,)]

    register(
        home,
        "focus",
        write_csv(tmp_path / "v2.csv", focus_rows(SEP | {"BilledCost": "5"}, SEP | {"BilledCost": "6.5"})),
    )
    second = run_ingest(home)[-1]
    rows = query(
        home.warehouse,
        "select load_id, billing_account_id, strftime(billing_period_start, '%Y-%m'), billing_currency, "
        "replaced_load_ids, rows_before, billed_cost_before, rows_after, billed_cost_after from audit.restatements",
    )
    # Only September was restated: one row before (1.25), two after (5 + 6.5 = 11.5). October is untouched.
    assert rows == [
        (second.load_id, "111122223333", "2026-09", "USD", first.load_id, 1, Decimal("1.25"), 2, Decimal("11.5"))
    ]
    effective = query(home.warehouse, "select effective_cost_before, effective_cost_after from audit.restatements")
    assert effective == [(Decimal("98.32"), Decimal("196.64"))]
