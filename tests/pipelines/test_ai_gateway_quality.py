"""The LiteLLM spend log's quality suite: what the demo loads passes it, and a row its facts forbid fails it."""

from __future__ import annotations

import csv
import logging
from pathlib import Path

import pytest

from pipelines.lib.catalog.ai_gateway import LITELLM
from pipelines.lib.ingest.ai_gateway import ingest_litellm_spend_logs
from pipelines.lib.ingest.landing import register
from pipelines.lib.quality.suite import check_pending_loads
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from synthetic_data.demo_ai_gateway import write_demo_gateway
from tests.support.home_helpers import isolated_home

log = logging.getLogger("test")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FinopsHome:
    return isolated_home(tmp_path, monkeypatch)


def _suite(home: FinopsHome, path: Path):
    register(home, LITELLM.name, path)
    with connect(home.warehouse) as con:
        (result,) = ingest_litellm_spend_logs(home, con, log=log)
        assert result.status == "loaded", result.reason
        return check_pending_loads(
            con, LITELLM.raw_table, LITELLM.quality, source=LITELLM.name, load_source=LITELLM.load_source
        )


def test_the_demo_gateway_log_passes_its_suite(home: FinopsHome, tmp_path: Path):
    report = _suite(home, write_demo_gateway(tmp_path / "demo", seed=3))
    assert len(report.checked_loads) == 1
    assert report.passed, [(failure.description, failure.observed_value) for failure in report.failures]


def test_a_request_that_ends_before_it_starts_fails_the_suite(home: FinopsHome, tmp_path: Path):
    path = write_demo_gateway(tmp_path / "demo", seed=3)
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    rows[0]["endTime"] = "2020-01-01 00:00:00.000"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    report = _suite(home, path)
    assert not report.passed
    assert any("end_time" in failure.description for failure in report.failures)
