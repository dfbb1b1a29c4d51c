"""The daily schedules, the landing sensor (cursor-based) and the run-failure recorder, evaluated directly."""

from __future__ import annotations

import json
import logging
import os
from datetime import UTC, date, datetime
from pathlib import Path

import dagster as dg
import pytest

from pipelines.defs.automation.daily import (
    RELOADABLE_DAILY_ASSETS,
    build_daily_refresh_schedule,
    build_restatement_window_schedule,
)
from pipelines.defs.automation.sensors import LOAD_JOBS, landing_sensor, run_failure_recorder
from pipelines.lib.catalog.billing import BILLING_SOURCES, FOCUS
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.ingest.landing import register
from pipelines.lib.operations.scheduling import restatement_window
from pipelines.lib.settings import FinopsHome, Settings
from pipelines.lib.warehouse.connection import connect
from tests.support.focus_fixtures import focus_rows, write_csv
from tests.support.warehouse_helpers import query


@pytest.mark.parametrize(
    ("today", "days", "window"),
    [
        # Early in October: September may still be restated, so it is re-loaded with October so far.
        (date(2026, 10, 5), 14, (date(2026, 9, 1), date(2026, 10, 4))),
        # The 14th day after the month ended is the last one that still includes September.
        (date(2026, 10, 14), 14, (date(2026, 9, 1), date(2026, 10, 13))),
        (date(2026, 10, 15), 14, (date(2026, 10, 1), date(2026, 10, 14))),
        # On the 1st the open period has no complete day: yesterday belongs to the previous period.
        (date(2026, 10, 1), 0, (date(2026, 9, 1), date(2026, 9, 30))),
        (date(2027, 1, 3), 14, (date(2026, 12, 1), date(2027, 1, 2))),
    ],
)
def test_restatement_window(today: date, days: int, window: tuple[date, date]):
    assert restatement_window(today, days) == window


def test_daily_refresh_schedule_runs_once_a_day_with_its_window(tmp_path: Path):
    daily_refresh_schedule = build_daily_refresh_schedule(Settings(home=FinopsHome(tmp_path)))
    context = dg.build_schedule_context(scheduled_execution_time=datetime(2026, 10, 5, 6, tzinfo=UTC))
    request = daily_refresh_schedule(context)
    assert request.run_key == "daily_refresh:2026-10-05"
    assert request.tags["finops/restatement_window"] == "2026-09-01..2026-10-04"
    assert daily_refresh_schedule.cron_schedule == "0 6 * * *"
    assert daily_refresh_schedule.execution_timezone == "UTC"


def test_restatement_window_schedule_reruns_only_the_missing_days(tmp_path: Path):
    restatement_window_schedule = build_restatement_window_schedule(Settings(home=FinopsHome(tmp_path)))
    window_days = [date(2026, 10, day) for day in range(1, 20)]
    gaps = {(RELOADABLE_DAILY_ASSETS[0], date(2026, 10, 2)), (RELOADABLE_DAILY_ASSETS[-1], date(2026, 10, 17))}
    (tmp_path / "dagster").mkdir()
    with dg.DagsterInstance.local_temp(str(tmp_path / "dagster")) as instance:
        # The reloadable assets have every day of the window (2026-10-01..2026-10-19) but two gaps.
        for key in RELOADABLE_DAILY_ASSETS:
            for day in window_days:
                if (key, day) not in gaps:
                    instance.report_runless_asset_event(
                        dg.AssetMaterialization(asset_key=key, partition=day.isoformat())
                    )
        at = datetime(2026, 10, 20, 6, tzinfo=UTC)
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=at) as context:
            request = restatement_window_schedule(context)
        # One run over 2026-10-02..2026-10-17 (the assets backfill a range in a single run).
        assert request.tags["dagster/asset_partition_range_start"] == "2026-10-02"
        assert request.tags["dagster/asset_partition_range_end"] == "2026-10-17"
        assert request.asset_selection == RELOADABLE_DAILY_ASSETS

        # The 17th filled: only the 2nd is missing, a single-partition run.
        for key in RELOADABLE_DAILY_ASSETS:
            instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=key, partition="2026-10-17"))
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=at) as context:
            single = restatement_window_schedule(context)
        assert single.partition_key == "2026-10-02"

        for key in RELOADABLE_DAILY_ASSETS:
            instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=key, partition="2026-10-02"))
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=at) as context:
            assert isinstance(restatement_window_schedule(context), dg.SkipReason)


def test_landing_sensor_starts_one_load_per_new_or_changed_delivery(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("FINOPS_HOME", str(tmp_path / "home"))
    home = FinopsHome(tmp_path / "home").create_folders()
    focus = home.landing_for("focus")
    focus.mkdir(parents=True)
    write_csv(focus / "a.csv", focus_rows({}))
    run_folder = home.landing_for("gpu_cloud_usage") / "run-1"
    run_folder.mkdir(parents=True)
    (run_folder / "lambda.csv").write_text("provider\nLambda\n")

    first = landing_sensor(dg.build_sensor_context(cursor=None, resources={"settings": Settings(home=home)}))
    assert sorted((r.job_name, r.tags["finops/delivery"]) for r in first.run_requests) == [
        ("load_focus", "focus/a.csv"),
        ("load_gpu_cloud_usage", "gpu_cloud_usage/run-1"),
    ]

    # Nothing new: no run, however often the sensor ticks.
    again = landing_sensor(dg.build_sensor_context(cursor=first.cursor, resources={"settings": Settings(home=home)}))
    assert again.run_requests == []

    # One delivery changes (a provider rewrote the month's file), one arrives: two runs, new run keys.
    write_csv(focus / "a.csv", focus_rows({}, {"BilledCost": "1"}))
    os.utime(focus / "a.csv", ns=(1, 2_000_000_000_000_000_000))
    write_csv(focus / "b.csv", focus_rows({}))
    changed = landing_sensor(dg.build_sensor_context(cursor=again.cursor, resources={"settings": Settings(home=home)}))
    assert sorted(r.tags["finops/delivery"] for r in changed.run_requests) == ["focus/a.csv", "focus/b.csv"]
    assert {r.run_key for r in changed.run_requests}.isdisjoint({r.run_key for r in first.run_requests})
    assert json.loads(changed.cursor).keys() == {"focus/a.csv", "focus/b.csv", "gpu_cloud_usage/run-1"}


def test_every_billing_source_has_a_load_job_with_its_ingest_asset_and_every_model():
    """On a new warehouse a load must build every model: dbt unit tests read the columns of their parents,
    among them other sources' staging models (a FOCUS-only load once failed on `stg_oci__cost_report`)."""
    from pipelines.definitions import defs

    definitions = defs()
    repository = definitions.get_repository_def()
    graph = definitions.resolve_asset_graph()
    ingest = {key for key in graph.get_all_asset_keys() if graph.get(key).group_name == "ingest"}
    models = {key for key in graph.get_all_asset_keys() if key.path[0] in {"staging", "intermediate", "marts"}}
    assert dg.AssetKey(["staging", "stg_oci__cost_report"]) in models
    for source in BILLING_SOURCES:
        keys = repository.get_job(LOAD_JOBS[source.name].name).asset_layer.executable_asset_keys
        assert keys & ingest == {dg.AssetKey(list(source.asset_key))}, source.name
        assert models <= keys, source.name


def test_run_failure_recorder_writes_audit_run_failures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("FINOPS_HOME", str(tmp_path / "home"))
    home = FinopsHome(tmp_path / "home").create_folders()

    @dg.op
    def breaks():
        raise ValueError("the landing zone is on fire")

    @dg.job
    def broken_job():
        breaks()

    with dg.DagsterInstance.ephemeral() as instance:
        result = broken_job.execute_in_process(instance=instance, raise_on_error=False)
        assert not result.success
        failure = next(event for event in result.all_events if event.event_type == dg.DagsterEventType.RUN_FAILURE)
        context = dg.build_run_status_sensor_context(
            sensor_name="run_failure_recorder",
            dagster_instance=instance,
            dagster_run=result.dagster_run,
            dagster_event=failure,
            resources={"settings": Settings(home=home)},
        ).for_run_failure()
        run_failure_recorder(context)
        run_failure_recorder(context)  # a retried tick replaces, never duplicates

    rows = query(home.warehouse, "select run_id, job_name, failed_steps, message from audit.run_failures")
    assert len(rows) == 1
    run_id, job_name, failed_steps, message = rows[0]
    assert (run_id, job_name, json.loads(failed_steps)) == (result.run_id, "broken_job", ["breaks"])
    assert "breaks" in message


def test_landing_sensor_skips_deliveries_already_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """What `gpu-finops ingest` or the daily run loaded already starts no second run."""
    monkeypatch.setenv("FINOPS_HOME", str(tmp_path / "home"))
    home = FinopsHome(tmp_path / "home").create_folders()
    register(home, "focus", write_csv(tmp_path / "loaded.csv", focus_rows({})))
    with connect(home.warehouse) as con:
        results = ingest_landing_zone(home, con, FOCUS, log=logging.getLogger("test"))
    assert [r.status for r in results] == ["loaded"]
    waiting = register(home, "focus", write_csv(tmp_path / "waiting.csv", focus_rows({"BilledCost": "2"})))

    result = landing_sensor(dg.build_sensor_context(cursor=None, resources={"settings": Settings(home=home)}))
    assert [r.tags["finops/delivery"] for r in result.run_requests] == [f"focus/{waiting.name}"]
