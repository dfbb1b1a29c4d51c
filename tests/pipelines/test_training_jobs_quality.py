"""The training jobs' exports through the landing zone and their quality suites: the test fixtures and the demo's
files load and pass, a bad export goes to quarantine with its reason, the same file twice is one load, and a row the
reader cannot see is wrong (a job ending before it starts) fails the suite."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from pipelines.lib.catalog.training_jobs import SKYPILOT, SLURM
from pipelines.lib.ingest.landing import register
from pipelines.lib.ingest.training_jobs import ingest_skypilot_reports, ingest_slurm_exports
from pipelines.lib.quality.suite import check_pending_loads
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.tables import recover_and_ensure_tables
from synthetic_data.demo_training import write_demo_training
from tests.support import FIXTURES_ROOT
from tests.support.home_helpers import isolated_home
from tests.support.warehouse_helpers import query

log = logging.getLogger(__name__)
FIXTURES = FIXTURES_ROOT / "training_jobs"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FinopsHome:
    return isolated_home(tmp_path, monkeypatch).create_folders()


def load_all(home: FinopsHome):
    with connect(home.warehouse) as con:
        recover_and_ensure_tables(con, SLURM.raw_table)
        recover_and_ensure_tables(con, SKYPILOT.raw_table)
        slurm = ingest_slurm_exports(home, con, timezone="UTC", log=log)
        skypilot = ingest_skypilot_reports(home, con, log=log)
    return slurm, skypilot


def suites(home: FinopsHome):
    with connect(home.warehouse) as con:
        return {
            entry.name: check_pending_loads(
                con, entry.raw_table, entry.quality, source=entry.name, load_source=entry.load_source
            )
            for entry in (SLURM, SKYPILOT)
        }


def test_the_fixtures_and_the_demo_files_load_and_pass_their_suites(home: FinopsHome, tmp_path: Path):
    demo = write_demo_training(tmp_path / "demo", start_month="2026-09", months=2)
    register(home, SLURM.name, FIXTURES / "sacct-h100-cluster.txt")
    register(home, SLURM.name, demo["slurm"])
    register(home, SKYPILOT.name, FIXTURES / "sky-cost-report__1792497600.txt")
    register(home, SKYPILOT.name, demo["skypilot"])
    slurm, skypilot = load_all(home)
    assert [r.status for r in slurm] == ["loaded", "loaded"] and [r.status for r in skypilot] == ["loaded", "loaded"]
    for name, report in suites(home).items():
        assert len(report.checked_loads) == 2, name
        assert report.passed, (name, [(f.description, f.observed_value) for f in report.failures])
    assert query(home.warehouse, "select count(*) from raw.slurm_jobs") == [(11,)]
    # the same file again is one load; a new export under the same name replaces that file's rows only
    register(home, SLURM.name, demo["slurm"])
    again, _ = load_all(home)
    assert {r.status for r in again} == {"duplicate"}
    restated = demo["slurm"].read_text(encoding="utf-8").splitlines()[:-1]  # the last job left out
    demo["slurm"].write_text("\n".join(restated) + "\n", encoding="utf-8")
    register(home, SLURM.name, demo["slurm"])
    restate, _ = load_all(home)
    assert sorted(r.status for r in restate) == ["duplicate", "duplicate", "duplicate", "loaded"]
    assert query(home.warehouse, "select count(*) from raw.slurm_jobs") == [(10,)]


def test_a_bad_export_is_quarantined_with_file_row_and_column(home: FinopsHome, tmp_path: Path):
    bad = tmp_path / "sacct-bad.txt"
    lines = (FIXTURES / "sacct-h100-cluster.txt").read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].replace("|3600|", "|1h|")
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    register(home, SLURM.name, bad)
    (result,), _ = load_all(home)
    assert result.status == "rejected"
    assert "sacct-bad.txt, row 4, column ElapsedRaw: ElapsedRaw is not a whole number of seconds" in result.reason
    (reason,) = list((home.quarantine / SLURM.name).glob("*.reason.txt"))
    assert "row: 4\ncolumn: ElapsedRaw\n" in reason.read_text(encoding="utf-8")


def test_a_job_that_ends_before_it_starts_fails_the_suite(home: FinopsHome, tmp_path: Path):
    backwards = tmp_path / "sacct-backwards.txt"
    lines = (FIXTURES / "sacct-h100-cluster.txt").read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace("|2026-09-16T21:00:00|", "|2026-09-13T21:00:00|")
    backwards.write_text("\n".join(lines) + "\n", encoding="utf-8")
    register(home, SLURM.name, backwards)
    (result,), _ = load_all(home)
    assert result.status == "loaded"  # the reader reads values; the suite judges the rows
    report = suites(home)[SLURM.name]
    assert not report.passed
    assert [(f.description, f.unexpected_count) for f in report.failures] == [("ended_at is not before started_at", 1)]
