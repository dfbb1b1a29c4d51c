"""The Dagster UI as an operator sees it: `make serve` (the daemon and the webserver) on a free loopback port, a
FINOPS_HOME of the test's own, pages opened in headless Chromium.

One instance for the module (starting it takes about a minute): the asset graph with its groups, the schedules and
sensors running, a delivery dropped into the landing zone loaded by the sensor's run, and a price feed's partition
materialized through the webserver's GraphQL API with its asset checks shown. Expected names come from the asset
graph snapshot (tests/pipelines/snapshots/asset_graph.txt), expected amounts from the fixture file (csv + Decimal).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from pipelines.lib.ingest.landing import register
from pipelines.lib.settings import FinopsHome
from tests.conformance.cases import CASE_BY_ID, mart_totals
from tests.pipelines.test_asset_graph import SNAPSHOT
from tests.support.browser import open_url
from tests.support.processes import answers, free_port, graphql, start_group, stop_group, wait_for
from tests.support.warehouse_helpers import query

pytestmark = pytest.mark.slow

DELIVERY = CASE_BY_ID["azure-focuscost-1.2-eur-billed-usd-priced"]
"""A small FOCUS delivery (Microsoft FocusCost 1.2, EUR billed): its load runs every model after it."""
PRICE_ASSET = ("prices", "coreweave")
PRICE_DAY = "2026-10-31"
"""A day with a bundled capture (sources/prices/snapshots/coreweave/2026-10-31), read offline."""
LOCATION = "gpu_finops"
AUTOMATIONS = {
    "daily_refresh_schedule",
    "prices_daily_schedule",
    "restatement_window_schedule",
    "telemetry_daily_schedule",
    "landing_sensor",
    "run_failure_recorder",
}

RUNS = """
query Runs($filter: RunsFilter) {
  runsOrError(filter: $filter) { ... on Runs { results { runId jobName status tags { key value } } } }
}
"""
LAUNCH = """
mutation Launch($params: ExecutionParams!) {
  launchRun(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
    ... on InvalidSubsetError { message }
  }
}
"""


@dataclass(frozen=True)
class Dagster:
    url: str
    port: int
    home: FinopsHome
    log: Path
    price_run: str

    def runs(self, **filter: object) -> list[dict]:
        return graphql(self.port, RUNS, {"filter": filter})["runsOrError"]["results"]

    def finished(self, run_id: str, *, within: float) -> str:
        """The run's final status, once it has one."""

        def status() -> str | None:
            (run,) = self.runs(runIds=[run_id])
            return run["status"] if run["status"] in {"SUCCESS", "FAILURE", "CANCELED"} else None

        return wait_for(f"end of run {run_id}", status, within=within, log=self.log)


def snapshot_groups() -> dict[str, set[str]]:
    """Group → asset keys (`raw/focus_cost_and_usage`), as the asset graph snapshot records them."""
    groups: dict[str, set[str]] = defaultdict(set)
    for line in SNAPSHOT.read_text().splitlines():
        if line.startswith("asset "):
            _, key, group = line.split()
            groups[group.removeprefix("group=")].add(key)
    return groups


def start_runs(port: int, home: FinopsHome) -> str:
    """Drop the delivery and launch the price partition at once (their runs share the duckdb_writer pool); the
    price run's id."""
    register(home, DELIVERY.source, DELIVERY.path)
    params = {
        "selector": {
            "repositoryLocationName": LOCATION,
            "repositoryName": "__repository__",
            "jobName": "prices_daily",
            "assetSelection": [{"path": list(PRICE_ASSET)}],
        },
        "executionMetadata": {"tags": [{"key": "dagster/partition", "value": PRICE_DAY}]},
        "mode": "default",
    }
    answer = graphql(port, LAUNCH, {"params": params})["launchRun"]
    assert answer["__typename"] == "LaunchRunSuccess", answer
    return answer["run"]["runId"]


@pytest.fixture(scope="module")
def dagster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dagster]:
    root = tmp_path_factory.mktemp("dagster-ui")
    home = FinopsHome(root / "home")
    port = free_port()
    log = root / "serve.log"
    # Not the settings of the test's own environment, nor those of a `make` it runs under (`make test-all`).
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("DAGSTER_", "FINOPS_")) and name not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL"}
    }
    env |= {"FINOPS_HOME": str(home.root), "FINOPS_OFFLINE": "1", "DAGSTER_UI_PORT": str(port)}
    server = start_group(["make", "-s", "serve"], env, log)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for("webserver", lambda: answers(f"{url}/server_info"), within=300, log=log)
        # The runs start first and go on while the browser looks at the graph and the automations.
        yield Dagster(url=url, port=port, home=home, log=log, price_run=start_runs(port, home))
    finally:
        stop_group(server)


def skip_welcome(page) -> None:
    """Dagster's first-visit dialog (a newsletter sign-up) covers the page until it is skipped."""
    from playwright.sync_api import TimeoutError as NotShown

    skip = page.get_by_role("button", name="Skip")
    try:
        skip.wait_for(timeout=5000)
    except NotShown:  # skipped before, in this browser: nothing covers the page
        return
    skip.click()


def test_the_asset_graph_shows_every_group_with_its_assets(dagster: Dagster):
    expected = snapshot_groups()
    assert {"ingest", "prices", "telemetry", "staging", "intermediate", "marts"} <= expected.keys()
    with open_url(f"{dagster.url}/asset-groups", allowed=(dagster.url,), height=1200) as (page, log):
        skip_welcome(page)
        sidebar = page.get_by_text("Global asset lineage")
        sidebar.wait_for()
        for group in expected:
            page.get_by_text(group, exact=True).first.wait_for(timeout=60_000)
        for group, keys in expected.items():
            # Each group's list view: one row per asset, `raw / focus_cost_and_usage` (a long name is shown cut in
            # the middle; the row keeps it whole in an element that measures it). Tall enough to render every row.
            page.goto(f"{dagster.url}/locations/{LOCATION}/asset-groups/{group}/list")
            page.set_viewport_size({"width": 1600, "height": 400 + 90 * len(keys)})
            for key in sorted(keys):
                name = page.get_by_text(key.replace("/", " / "), exact=True).first
                name.wait_for(state="attached", timeout=60_000)
        assert log.network == [], f"the UI asked the network for {log.network}"
        assert log.page_errors == []


def test_the_schedules_and_sensors_are_running(dagster: Dagster):
    from playwright.sync_api import expect

    with open_url(f"{dagster.url}/automation", allowed=(dagster.url,), height=1200) as (page, log):
        skip_welcome(page)
        for name in sorted(AUTOMATIONS):
            # The list item: the nearest element around the name with both its checkboxes (select, then on/off).
            item = page.get_by_text(name, exact=True).locator(
                "xpath=ancestor::div[count(.//input[@type='checkbox']) = 2][1]"
            )
            item.wait_for(timeout=60_000)
            # The switch shows the instigator's state once the page has loaded it: wait for it to read "on".
            expect(item.locator("input[type=checkbox]").nth(1), f"{name} is not running").to_be_checked(timeout=60_000)
        assert log.network == []


def test_a_delivery_dropped_in_the_landing_zone_is_loaded_by_a_sensor_run(dagster: Dagster):
    def sensor_run() -> dict | None:
        runs = dagster.runs(tags=[{"key": "dagster/sensor_name", "value": "landing_sensor"}])
        return runs[0] if runs else None

    run = wait_for("run started by landing_sensor", sensor_run, within=120, log=dagster.log)
    assert run["jobName"] == f"load_{DELIVERY.source}"
    assert dagster.finished(run["runId"], within=900) == "SUCCESS"

    with open_url(f"{dagster.url}/runs/{run['runId']}", allowed=(dagster.url,)) as (page, log):
        skip_welcome(page)
        page.get_by_text("Success", exact=True).first.wait_for(timeout=60_000)
        page.get_by_text(f"load_{DELIVERY.source}", exact=True).first.wait_for()
        assert log.network == []

    # The delivery's money reached the marts, per billing currency, as the file states it.
    found = query(
        dagster.home.warehouse, "select billing_currency, sum(billed_cost) from marts.fct_cost_daily group by 1"
    )
    assert dict(found) == dict(mart_totals(DELIVERY).billed)
    assert sum(dict(found).values()) > Decimal(0)


def test_a_price_partition_materializes_and_its_checks_show(dagster: Dagster):
    assert dagster.finished(dagster.price_run, within=900) == "SUCCESS"

    with open_url(f"{dagster.url}/assets/{'/'.join(PRICE_ASSET)}?view=checks", allowed=(dagster.url,), height=1000) as (
        page,
        log,
    ):
        skip_welcome(page)
        # The freshness check compares the newest capture (made on PRICE_DAY) with today: a day this old is late, a
        # failure of WARN severity; the quality suite passes on the bundled capture.
        late = datetime.now(UTC).date().isoformat() > PRICE_DAY
        for check, status in (("delivery_is_fresh", "Failed" if late else "Succeeded"),
                              ("load_passes_quality_suite", "Succeeded")):  # fmt: skip
            name = page.get_by_text(check, exact=True).first
            name.wait_for(timeout=60_000)
            entry = name.locator("xpath=ancestor::div[contains(., 'Succeeded') or contains(., 'Failed')][1]")
            assert status in entry.inner_text(), entry.inner_text()

        page.goto(f"{dagster.url}/assets/{'/'.join(PRICE_ASSET)}?view=partitions&partition={PRICE_DAY}")
        page.get_by_text("Materialized (1)", exact=True).wait_for(timeout=60_000)
        page.get_by_text(dagster.price_run[:8]).first.wait_for(timeout=60_000)
        assert log.network == []
