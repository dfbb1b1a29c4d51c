"""RunPod GraphQL prices over real HTTP: one query per cloud, per-GPU prices, spot fallbacks, failures kept loud."""

from __future__ import annotations

import json
import logging
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from pipelines.lib.prices.market_prices import refresh_price_feed
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from sources.common.http import FetchError, HttpClient
from sources.prices import runpod
from sources.prices.offers import LayoutChanged, PayloadStore
from tests.support import FIXTURES_ROOT
from tests.support.local_http import Reply, local_server
from tests.support.warehouse_helpers import query, table_fingerprint

FIXTURES = FIXTURES_ROOT / "prices" / "runpod"
SECURE = (FIXTURES / "gpu-types-secure.json").read_bytes()
COMMUNITY = (FIXTURES / "gpu-types-community.json").read_bytes()
OBSERVED = datetime(2026, 10, 31, 4, 0)
log = logging.getLogger("test")


def _client(waits: list[float] | None = None, **overrides) -> HttpClient:
    recorder = waits if waits is not None else []
    return HttpClient(provider=runpod.PROVIDER, backoff_seconds=0.5, sleep=recorder.append, **overrides)


def _fetch_and_parse(tmp_path: Path, client: HttpClient):
    store = PayloadStore(tmp_path / "capture")
    runpod.fetch(client, store, None)
    return store, runpod.parse(store.payloads, OBSERVED)


def test_one_query_per_cloud_in_order_and_per_gpu_prices_by_hand(tmp_path, monkeypatch):
    with local_server() as server:
        server.route("/graphql", Reply(SECURE), Reply(COMMUNITY))
        monkeypatch.setenv(runpod.BASE_URL_ENV, server.url)
        store, frame = _fetch_and_parse(tmp_path, _client())
    bodies = [json.loads(r.body) for r in server.requests]
    assert [(r.method, r.path) for r in server.requests] == [("POST", "/graphql"), ("POST", "/graphql")]
    assert [b["variables"]["lowestPriceInput"] for b in bodies] == [
        {"gpuCount": 1, "secureCloud": True},
        {"gpuCount": 1, "secureCloud": False},
    ]
    assert all("gpuTypes" in b["query"] and "lowestPrice" in b["query"] for b in bodies)
    assert [p.name for p in store.payloads] == ["gpu-types-secure.json", "gpu-types-community.json"]
    rows = frame.select("gpu_name", "pricing_model", "price", "sku").rows()
    h100, a100 = "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"
    assert rows == [
        (h100, "on_demand", Decimal("2.690000000000"), f"{h100} (secure cloud)"),
        (h100, "interruptible", Decimal("1.650000000000"), f"{h100} (secure cloud)"),  # secureSpotPrice
        (a100, "on_demand", Decimal("1.740000000000"), f"{a100} (secure cloud)"),
        (a100, "interruptible", Decimal("0.990000000000"), f"{a100} (secure cloud)"),  # no spot price: minimumBidPrice
        (h100, "community", Decimal("2.490000000000"), f"{h100} (community cloud)"),
        (h100, "interruptible", Decimal("1.490000000000"), f"{h100} (community cloud)"),  # communitySpotPrice
    ]  # the zero-priced `unknown` type and the A100's absent community offer give no rows
    assert set(frame["price_unit"]) == {"gpu-hour"}
    assert set(frame["gpu_count"]) == {Decimal(1)}
    assert frame["region"].null_count() == frame.height and frame["instance_type"].null_count() == frame.height
    assert set(frame["provider"]) == {"RunPod"} and set(frame["currency"]) == {"USD"}
    assert set(frame["source_url"]) == {server.url + "/graphql"}


def test_429_then_success_honours_retry_after(tmp_path, monkeypatch):
    waits: list[float] = []
    with local_server() as server:
        server.route(
            "/graphql", Reply(b"slow down", status=429, headers={"Retry-After": "4"}), Reply(SECURE), Reply(COMMUNITY)
        )
        monkeypatch.setenv(runpod.BASE_URL_ENV, server.url)
        _, frame = _fetch_and_parse(tmp_path, _client(waits))
    assert waits == [4.0]
    assert len(server.requests) == 3
    assert frame.height == 6


def test_timeout_fails_naming_provider_and_url(tmp_path, monkeypatch):
    with local_server() as server:
        server.route("/graphql", Reply(SECURE, delay=1.0))
        monkeypatch.setenv(runpod.BASE_URL_ENV, server.url)
        with pytest.raises(FetchError, match=r"Timeout") as error:
            _fetch_and_parse(tmp_path, _client(read_timeout=0.2, max_attempts=2))
    assert error.value.provider == "RunPod" and error.value.url == server.url + "/graphql"


def test_graphql_errors_fail_the_fetch_with_the_message(tmp_path, monkeypatch):
    errors = json.dumps({"errors": [{"message": "Something went wrong. Please try again later."}], "data": None})
    with local_server() as server:
        server.route("/graphql", Reply(errors.encode()))
        monkeypatch.setenv(runpod.BASE_URL_ENV, server.url)
        with pytest.raises(FetchError, match=r"RunPod: .*/graphql: GraphQL errors: Something went wrong"):
            _fetch_and_parse(tmp_path, _client())


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"<html>Bad gateway</html>", "not JSON"),
        (b'{"data": {"gpuTypeList": []}}', "no `data.gpuTypes` list"),
        (b'{"data": {"gpuTypes": [{"id": "NVIDIA H100", "price": 2.5}]}}', "without id or securePrice"),
        (b'{"data": {"gpuTypes": [{"id": "NVIDIA H100", "securePrice": "n/a"}]}}', "is not a number"),
        (b'{"data": {"gpuTypes": []}}', "refusing to load an empty capture"),
    ],
)
def test_malformed_or_changed_payloads_name_provider_and_url(tmp_path, monkeypatch, body, message):
    with local_server() as server:
        server.route("/graphql", Reply(body))
        monkeypatch.setenv(runpod.BASE_URL_ENV, server.url)
        with pytest.raises(LayoutChanged, match=message) as error:
            _fetch_and_parse(tmp_path, _client())
    assert str(error.value).startswith("RunPod")
    if "empty capture" not in message:
        assert server.url + "/graphql" in str(error.value)


def test_a_failing_day_leaves_the_previous_days_prices(tmp_path, monkeypatch):
    home = FinopsHome(tmp_path / "home").create_folders()
    with local_server() as server:
        monkeypatch.setenv(runpod.BASE_URL_ENV, server.url)
        server.route("/graphql", Reply(SECURE), Reply(COMMUNITY))
        with connect(home.warehouse) as con:
            first = refresh_price_feed(
                home, con, runpod.FEED, [date(2026, 10, 30)], offline=False, log=log, today=date(2026, 10, 30)
            )
        before = table_fingerprint(home.warehouse)
        server.route("/graphql", Reply(b'{"errors": [{"message": "rate limited by upstream"}]}'))
        with connect(home.warehouse) as con, pytest.raises(FetchError, match="GraphQL errors"):
            refresh_price_feed(
                home,
                con,
                runpod.FEED,
                [date(2026, 10, 31)],
                offline=False,
                log=log,
                client=_client(max_attempts=1),
                today=date(2026, 10, 31),
            )
    assert first.outcome.rows == 6
    assert table_fingerprint(home.warehouse) == before
    assert query(home.warehouse, "select price_day, count(*) from raw.price_observations group by all") == [
        (date(2026, 10, 30), 6)
    ]
    assert not (home.price_payloads("runpod", date(2026, 10, 31)) / "index.json").exists()


def test_offline_captures_load_for_both_bundled_days(tmp_path):
    home = FinopsHome(tmp_path / "home").create_folders()
    with connect(home.warehouse) as con:
        refresh_price_feed(home, con, runpod.FEED, [date(2026, 9, 1), date(2026, 10, 31)], offline=True, log=log)
    h100 = query(
        home.warehouse,
        "select price_day, price from raw.price_observations where gpu_name = 'NVIDIA H100 80GB HBM3' "
        "and pricing_model = 'on_demand' order by price_day",
    )
    assert h100 == [(date(2026, 9, 1), Decimal("2.990000000000")), (date(2026, 10, 31), Decimal("2.690000000000"))]
