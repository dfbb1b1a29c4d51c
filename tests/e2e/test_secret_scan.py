"""A planted provider key must not appear in any artefact of a run.

The run is representative of what touches secrets: a price refresh whose keyed provider fails (the
local server answers 401 and echoes the key in its error body, as some APIs do), one that succeeds,
and a billing ingest, each a `gpu-finops`/Dagster process of its own with the key in its
environment. Then every file under FINOPS_HOME (warehouse, raw payloads, quarantine, the Dagster
instance's run and event storage and compute logs) and everything the processes printed is searched
for the key, as text, base64 and URL-encoded.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import urllib.parse
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pipelines.lib.catalog.prices import PRICE_FEEDS
from pipelines.lib.settings import PROJECT_ROOT
from pipelines.lib.warehouse.connection import connect
from sources.common.sql import quote_identifier
from sources.prices import ecb, lambda_cloud
from tests.support import FIXTURES_ROOT
from tests.support.focus_fixtures import focus_rows, write_csv
from tests.support.local_http import Reply, local_server

SECRET = "sk-planted-7f3e9c1b2a4d6e8f0a1b3c5d7e9f1a2b"
ECB_XML = (FIXTURES_ROOT / "prices" / "ecb" / "eurofxref-hist-90d.xml").read_bytes()
LAMBDA_JSON = PROJECT_ROOT / "sources" / "prices" / "snapshots" / "lambda" / "2026-10-31" / "instance-types.json"
INGEST = """
import os
import dagster as dg
from pipelines.definitions import defs
from pipelines.lib.settings import Settings

# A process of its own on FINOPS_HOME, started as the CLI starts: DAGSTER_HOME and the rest from the settings.
os.environ.update(Settings.from_environment().child_environment())
definitions = defs()
job = definitions.resolve_implicit_global_asset_job_def()
with dg.DagsterInstance.get() as instance:
    result = job.execute_in_process(
        instance=instance, asset_selection=[dg.AssetKey(["raw", "focus_cost_and_usage"])], raise_on_error=False
    )
print("ingest success:", result.success)
"""


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=600)


def _forms(secret: str) -> list[bytes]:
    raw = secret.encode()
    return [
        raw,
        base64.b64encode(raw),
        base64.b64encode(b"Bearer " + raw),
        urllib.parse.quote(secret).encode(),
        secret.encode("utf-16-le"),
    ]


def test_a_planted_key_appears_in_no_artefact_of_a_run(tmp_path: Path):
    home = tmp_path / "home"
    env = {key: value for key, value in os.environ.items() if not key.startswith(("FINOPS_", "DAGSTER_"))}
    env |= {"FINOPS_HOME": str(home), lambda_cloud.API_KEY_ENV: SECRET, "PYTHONUNBUFFERED": "1"}
    outputs: list[str] = []
    today = datetime.now(UTC).date()
    yesterday = today - timedelta(days=1)
    with local_server() as server:
        # Every feed points at the local server (none reaches the internet); only Lambda and ECB get answers.
        env |= {feed.base_url_env: server.url for feed in PRICE_FEEDS} | {ecb.BASE_URL_ENV: server.url}
        for path in ecb.FILES.values():
            server.route(path, Reply(ECB_XML))
        server.route(
            lambda_cloud.PATH,
            Reply(json.dumps({"error": {"message": f"invalid API key {SECRET}"}}).encode(), status=401),
            Reply(LAMBDA_JSON.read_bytes()),
        )
        # Providers publish current prices only, so the two fetches are for yesterday and today.
        failed = _run(
            [sys.executable, "-m", "pipelines.cli", "prices", "refresh", "--date", yesterday.isoformat()], env
        )
        succeeded = _run([sys.executable, "-m", "pipelines.cli", "prices", "refresh", "--date", today.isoformat()], env)
        lambda_calls = [r for r in server.requests if r.path == lambda_cloud.PATH]
    outputs += [failed.stdout, failed.stderr, succeeded.stdout, succeeded.stderr]

    # The run really used the key and really failed, then succeeded: the scan below is not vacuous.
    assert [r.headers.get("Authorization") for r in lambda_calls] == [f"Bearer {SECRET}"] * 2
    assert failed.returncode == 1 and "HTTP 401" in failed.stderr
    assert f"prices/lambda {today}: loaded" in succeeded.stdout, succeeded.stdout + succeeded.stderr
    assert any((home / "raw" / "prices" / "lambda" / today.isoformat()).iterdir())

    landing = home / "landing" / "focus"
    landing.mkdir(parents=True)
    write_csv(landing / "sep.csv", focus_rows({"Tags": '{"team": "research"}'}))
    ingested = _run([sys.executable, "-c", INGEST], env)
    outputs += [ingested.stdout, ingested.stderr]
    assert "ingest success: True" in ingested.stdout, ingested.stderr

    files = [path for path in home.rglob("*") if path.is_file()]
    assert any(path.suffix == ".db" for path in (home / "dagster").rglob("*")), "no Dagster storage was written"
    found = [str(path.relative_to(home)) for path in files if any(form in path.read_bytes() for form in _forms(SECRET))]
    found += [f"process output {number}" for number, text in enumerate(outputs) if SECRET in text]
    found += _warehouse_cells_holding(home / "warehouse.duckdb", SECRET)
    assert found == []


def _warehouse_cells_holding(warehouse: Path, secret: str) -> list[str]:
    """DuckDB compresses strings on disk, so a byte search of its file is not enough: ask every text column."""
    with connect(warehouse, read_only=True) as con:
        columns = con.execute(
            "select table_schema, table_name, column_name from information_schema.columns "
            "where data_type = 'VARCHAR' order by all"
        ).fetchall()
        assert columns
        return [
            f"warehouse {schema}.{table}.{column}"
            for schema, table, column in columns
            if con.execute(
                f"select count(*) from {quote_identifier(schema)}.{quote_identifier(table)} "
                f"where contains({quote_identifier(column)}, ?)",
                [secret],
            ).fetchone()[0]
        ]
