"""Lambda prices through the price-feed framework: real HTTP, stored captures, per-day replacement, offline days."""

from __future__ import annotations

import logging
from datetime import date
from decimal import Decimal

import pytest

from pipelines.lib.prices.market_prices import NoSnapshot, refresh_price_feed
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from sources.common.http import FetchError, HttpClient, MissingCredential
from sources.prices import lambda_cloud
from sources.prices.offers import LayoutChanged
from tests.support import FIXTURES_ROOT
from tests.support.local_http import Reply, local_server
from tests.support.warehouse_helpers import query, table_fingerprint

PAYLOAD = (FIXTURES_ROOT / "prices" / "lambda" / "instance-types.json").read_bytes()
ROUTE = "/api/v1/instance-types"
KEY = "secret_lambda_key_7f3a"
TODAY = date(2026, 11, 29)
log = logging.getLogger("test")


@pytest.fixture
def home(tmp_path) -> FinopsHome:
    return FinopsHome(tmp_path / "home").create_folders()


@pytest.fixture
def lambda_api(monkeypatch):
    with local_server() as server:
        monkeypatch.setenv(lambda_cloud.BASE_URL_ENV, server.url)
        monkeypatch.setenv(lambda_cloud.API_KEY_ENV, KEY)
        yield server


def client(delays: list[float] | None = None) -> HttpClient:
    return HttpClient(provider="Lambda", secrets=(KEY,), sleep=(delays if delays is not None else []).append)


def test_fetch_sends_the_key_stores_the_capture_and_loads_gpu_offers(home, lambda_api):
    lambda_api.route(ROUTE, Reply(PAYLOAD))
    with connect(home.warehouse) as con:
        load = refresh_price_feed(
            home, con, lambda_cloud.FEED, [TODAY], offline=False, log=log, client=client(), today=TODAY
        )
    rows = query(
        home.warehouse,
        "select instance_type, gpu_name, gpu_count, price, price_unit, pricing_model, currency, price_day "
        "from raw.price_observations order by instance_type",
    )
    assert lambda_api.requests[0].headers["Authorization"] == f"Bearer {KEY}"
    # 2392 cents per instance-hour is $23.92; the CPU-only type is not a GPU offer.
    assert rows == [
        ("gpu_1x_a10", "A10 (24 GB PCIe)", Decimal(1), Decimal("0.75"), "instance-hour", "on_demand", "USD", TODAY),
        (
            "gpu_8x_h100_sxm5",
            "H100 (80 GB SXM5)",
            Decimal(8),
            Decimal("23.92"),
            "instance-hour",
            "on_demand",
            "USD",
            TODAY,
        ),
    ]
    folder = home.price_payloads("lambda", TODAY)
    assert load.captures == [folder]
    stored = b"".join(path.read_bytes() for path in folder.iterdir())
    assert KEY.encode() not in stored


def test_a_stored_day_is_reparsed_without_refetching_and_loads_once(home, lambda_api):
    lambda_api.route(ROUTE, Reply(PAYLOAD))
    with connect(home.warehouse) as con:
        first = refresh_price_feed(
            home, con, lambda_cloud.FEED, [TODAY], offline=False, log=log, client=client(), today=TODAY
        )
        again = refresh_price_feed(
            home, con, lambda_cloud.FEED, [TODAY], offline=False, log=log, client=client(), today=TODAY
        )
    count = query(home.warehouse, "select count(*) from raw.price_observations")[0][0]
    assert len(lambda_api.requests) == 1
    assert (first.outcome.status, again.outcome.status) == ("loaded", "duplicate")
    assert count == 2


def test_429_then_success_honours_retry_after(home, lambda_api):
    lambda_api.route(ROUTE, Reply(b"slow down", status=429, headers={"Retry-After": "7"}), Reply(PAYLOAD))
    delays: list[float] = []
    with connect(home.warehouse) as con:
        load = refresh_price_feed(
            home, con, lambda_cloud.FEED, [TODAY], offline=False, log=log, client=client(delays), today=TODAY
        )
    assert delays == [7.0]
    assert load.outcome.rows == 2


def test_a_failing_day_keeps_the_previous_days_prices_and_never_shows_the_key(home, lambda_api):
    yesterday = date(2026, 11, 28)
    lambda_api.route(ROUTE, Reply(PAYLOAD))
    with connect(home.warehouse) as con:
        refresh_price_feed(
            home, con, lambda_cloud.FEED, [yesterday], offline=False, log=log, client=client(), today=TODAY
        )
    before = table_fingerprint(home.warehouse)
    lambda_api.route(ROUTE, Reply(b"<html>maintenance</html>", status=503))
    with connect(home.warehouse) as con, pytest.raises(FetchError) as failure:
        refresh_price_feed(home, con, lambda_cloud.FEED, [TODAY], offline=False, log=log, client=client(), today=TODAY)
    assert table_fingerprint(home.warehouse) == before
    assert "Lambda" in str(failure.value) and ROUTE in str(failure.value) and "503" in str(failure.value)
    assert KEY not in str(failure.value)
    assert not home.price_payloads("lambda", TODAY).exists(), "a failed fetch leaves no partial capture"


def test_malformed_json_is_a_layout_change_naming_the_url(home, lambda_api):
    lambda_api.route(ROUTE, Reply(b'{"data": {"gpu_1x_a10": {"instance_type": {"name": "gpu_1x_a10"'))
    with connect(home.warehouse) as con, pytest.raises(LayoutChanged, match="instance-types"):
        refresh_price_feed(home, con, lambda_cloud.FEED, [TODAY], offline=False, log=log, client=client(), today=TODAY)


def test_a_changed_schema_is_refused_not_loaded_empty(home, lambda_api):
    lambda_api.route(ROUTE, Reply(b'{"instanceTypes": []}'))
    with connect(home.warehouse) as con, pytest.raises(LayoutChanged, match="no `data` object"):
        refresh_price_feed(home, con, lambda_cloud.FEED, [TODAY], offline=False, log=log, client=client(), today=TODAY)


def test_a_timeout_fails_with_the_provider_and_url(home, lambda_api):
    lambda_api.route(ROUTE, Reply(PAYLOAD, delay=1.0))
    slow = HttpClient(provider="Lambda", secrets=(KEY,), read_timeout=0.2, max_attempts=2, sleep=lambda _: None)
    with connect(home.warehouse) as con, pytest.raises(FetchError, match=r"Lambda: .*instance-types.*Timeout"):
        refresh_price_feed(home, con, lambda_cloud.FEED, [TODAY], offline=False, log=log, client=slow, today=TODAY)


def test_missing_key_is_reported_for_skipping(home, monkeypatch):
    monkeypatch.delenv(lambda_cloud.API_KEY_ENV, raising=False)
    with connect(home.warehouse) as con, pytest.raises(MissingCredential, match="LAMBDA_API_KEY"):
        refresh_price_feed(home, con, lambda_cloud.FEED, [TODAY], offline=False, log=log, today=TODAY)


def test_past_days_are_never_fetched_as_if_current(home, lambda_api):
    lambda_api.route(ROUTE, Reply(PAYLOAD))
    with connect(home.warehouse) as con, pytest.raises(NoSnapshot, match="only publish current prices"):
        refresh_price_feed(
            home, con, lambda_cloud.FEED, [date(2026, 10, 1)], offline=False, log=log, client=client(), today=TODAY
        )
    assert lambda_api.requests == []


def test_offline_range_uses_the_latest_bundled_capture_of_each_day(home):
    days = [date(2026, 10, 30), date(2026, 10, 31)]
    with connect(home.warehouse) as con:
        load = refresh_price_feed(home, con, lambda_cloud.FEED, days, offline=True, log=log)
    rows = query(
        home.warehouse,
        "select price_day, price, cast(observed_at as date) from raw.price_observations "
        "where instance_type = 'gpu_8x_h100_sxm5' order by price_day",
    )
    # The bundled September capture lists $23.92, the one of 31 October $21.52.
    assert rows == [
        (date(2026, 10, 30), Decimal("23.92"), date(2026, 9, 1)),
        (date(2026, 10, 31), Decimal("21.52"), date(2026, 10, 31)),
    ]
    assert load.outcome.status == "loaded"
    with connect(home.warehouse) as con, pytest.raises(NoSnapshot, match="no bundled snapshot on or before 2026-08-31"):
        refresh_price_feed(home, con, lambda_cloud.FEED, [date(2026, 8, 31)], offline=True, log=log)
