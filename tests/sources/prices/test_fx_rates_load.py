"""ECB rates: fetched over HTTP once per day, kept compressed, re-parsed without refetching, loaded idempotently."""

from __future__ import annotations

import logging
from datetime import date, timedelta
from decimal import Decimal

import pytest

from pipelines.lib.prices.fx_rates import refresh_fx_rates
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from sources.common.http import FetchError, HttpClient
from sources.prices import ecb
from tests.support import FIXTURES_ROOT
from tests.support.local_http import Reply, local_server
from tests.support.warehouse_helpers import query, table_fingerprint

FIXTURES = FIXTURES_ROOT / "prices" / "ecb"
log = logging.getLogger("test")


def test_online_fetch_is_stored_and_the_day_reparses_without_the_network(tmp_path, monkeypatch):
    home = FinopsHome(tmp_path / "home").create_folders()
    day = date.today() - timedelta(days=1)
    payload = (FIXTURES / "eurofxref-hist-90d.xml").read_bytes()  # 3 days × USD, GBP
    with local_server() as server:
        server.route("/stats/eurofxref/eurofxref-hist-90d.xml", Reply(payload))
        monkeypatch.setenv(ecb.BASE_URL_ENV, server.url)
        with connect(home.warehouse) as con:
            first = refresh_fx_rates(home, con, day, offline=False, log=log)
        assert len(server.requests) == 1
        server.route("/stats/eurofxref/eurofxref-hist-90d.xml", Reply(b"gone", status=500))
        with connect(home.warehouse) as con:
            again = refresh_fx_rates(home, con, day, offline=False, log=log)
        assert len(server.requests) == 1, "a stored day must not be fetched again"
    assert first.payload_path == home.price_payloads("ecb", day) / "eurofxref-hist-90d.xml.gz"
    assert first.outcome.status == "loaded" and again.outcome.status == "duplicate"
    assert first.outcome.rows == 6


def test_offline_snapshot_loads_rates_known_on_the_day_only(tmp_path):
    home = FinopsHome(tmp_path / "home").create_folders()
    with connect(home.warehouse) as con:
        load = refresh_fx_rates(home, con, date(2026, 10, 31), offline=True, log=log)
    assert load.latest_day == date(2026, 10, 30)  # a Saturday: Friday's rates are the latest known
    rows = query(home.warehouse, "select max(rate_date), count(distinct quote_currency) from raw.ecb_fx_rates")
    assert rows == [(date(2026, 10, 30), 6)]
    usd = query(
        home.warehouse, "select rate from raw.ecb_fx_rates where rate_date = '2026-10-30' and quote_currency = 'USD'"
    )
    assert usd == [(Decimal("1.098400000000"),)]


def test_a_failed_fetch_leaves_yesterdays_rates_in_place(tmp_path, monkeypatch):
    home = FinopsHome(tmp_path / "home").create_folders()
    with connect(home.warehouse) as con:
        refresh_fx_rates(home, con, date(2026, 10, 31), offline=True, log=log)
    before = table_fingerprint(home.warehouse)
    with local_server() as server:
        server.route("/stats/eurofxref/eurofxref-hist-90d.xml", Reply(b"<html>maintenance</html>", status=503))
        monkeypatch.setenv(ecb.BASE_URL_ENV, server.url)
        client = HttpClient(provider=ecb.PROVIDER, sleep=lambda seconds: None)
        with connect(home.warehouse) as con, pytest.raises(FetchError, match=r"ECB.*HTTP 503"):
            refresh_fx_rates(home, con, date.today(), offline=False, log=log, client=client)
    assert table_fingerprint(home.warehouse) == before
