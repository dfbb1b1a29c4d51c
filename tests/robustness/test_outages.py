"""A price refresh during an outage: one line per failed feed, the feeds that answered loaded, details in a log.

Every feed points at localhost. ECB and Lambda answer from a local server with recorded payloads; every other
feed points at a port nobody listens on, so each of its requests fails to connect, as without network.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from pipelines.lib.catalog.prices import PRICE_FEEDS
from pipelines.lib.settings import PROJECT_ROOT
from sources.prices import ecb, lambda_cloud
from tests.support import FIXTURES_ROOT
from tests.support.local_http import Reply, local_server
from tests.support.warehouse_helpers import query

ECB_XML = (FIXTURES_ROOT / "prices" / "ecb" / "eurofxref-hist-90d.xml").read_bytes()
LAMBDA_JSON = PROJECT_ROOT / "sources" / "prices" / "snapshots" / "lambda" / "2026-10-31" / "instance-types.json"
ANSWERING = {"lambda"}
WITHOUT_KEY_SKIPPED = {feed.name for feed in PRICE_FEEDS if feed.credential_env and feed.name not in ANSWERING}


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_outage_is_one_line_per_failed_feed_and_the_answering_feeds_load(tmp_path: Path):
    home = tmp_path / "home"
    env = {key: value for key, value in os.environ.items() if not key.startswith(("FINOPS_", "DAGSTER_"))}
    env |= {"FINOPS_HOME": str(home), "FINOPS_HTTP_ATTEMPTS": "2", lambda_cloud.API_KEY_ENV: "test-key"}
    for credential in {feed.credential_env for feed in PRICE_FEEDS} - {lambda_cloud.API_KEY_ENV, None}:
        env.pop(credential, None)
    down = f"http://127.0.0.1:{closed_port()}"
    today = datetime.now(UTC).date()
    with local_server() as server:
        env |= {feed.base_url_env: down for feed in PRICE_FEEDS} | {
            lambda_cloud.BASE_URL_ENV: server.url,
            ecb.BASE_URL_ENV: server.url,
        }
        for path in ecb.FILES.values():
            server.route(path, Reply(ECB_XML))
        server.route(lambda_cloud.PATH, Reply(LAMBDA_JSON.read_bytes()))
        refresh = subprocess.run(
            # --no-build: the outage is the point here; the model build after a refresh is tested in test_cli_output.
            [sys.executable, "-m", "pipelines.cli", "prices", "refresh", "--date", today.isoformat(), "--no-build"],
            cwd=PROJECT_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    failing = sorted(feed.name for feed in PRICE_FEEDS if feed.name not in ANSWERING | WITHOUT_KEY_SKIPPED)
    failed_lines = [line for line in refresh.stderr.splitlines() if line.startswith("FAILED")]
    assert refresh.returncode == 1
    # One line per failed feed: the asset, the host, the error class with the attempts made, what to do.
    assert [line.split(":")[0] for line in failed_lines] == [f"FAILED  prices/{name}" for name in failing]
    for line in failed_lines:
        assert " at 127.0.0.1: ConnectionError, no connection (after 2 attempts). Check the network" in line, line
    # No stack trace and no retry chatter on the terminal: a handful of lines in all.
    output = refresh.stdout + refresh.stderr
    assert "Traceback" not in output and "retrying" not in output and " - DEBUG - " not in output
    assert len(output.splitlines()) <= len(PRICE_FEEDS) + 6, output

    # A feed without its key is skipped, and the line says which setting it needs.
    for feed in PRICE_FEEDS:
        if feed.name in WITHOUT_KEY_SKIPPED:
            assert f"prices/{feed.name} {today}: skipped (set {feed.credential_env} to fetch it)" in refresh.stdout

    # The feeds that answered are loaded.
    assert f"prices/lambda {today}: loaded" in refresh.stdout, output
    loaded = query(
        home / "warehouse.duckdb", "select feed, count(*) from raw.price_observations group by feed order by feed"
    )
    assert [feed for feed, rows in loaded if rows > 0] == ["lambda"]
    assert query(home / "warehouse.duckdb", "select count(*) > 0 from raw.ecb_fx_rates") == [(True,)]

    # The details are in the log file the output names: every failed feed's stack trace and its retries.
    (log,) = (home / "logs").glob("*-prices-refresh.log")
    assert f"Log (Dagster's events, retries, stack traces): {log}" in refresh.stderr
    details = log.read_text()
    assert details.count("sources.common.http.FetchError") >= len(failing)
    assert "retrying in" in details
