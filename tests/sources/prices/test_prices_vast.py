"""Vast.ai over real HTTP: one search per offer type × GPU count; minimum and median per GPU model × count."""

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
from sources.prices import vast
from sources.prices.offers import LayoutChanged, PayloadStore
from tests.support import FIXTURES_ROOT
from tests.support.local_http import Reply, local_server
from tests.support.warehouse_helpers import query, table_fingerprint

FIXTURES = FIXTURES_ROOT / "prices" / "vast"
PAGES = [
    (FIXTURES / name).read_bytes()
    for name in (
        "bundles-ondemand-1gpu.json",
        "bundles-ondemand-8gpu.json",
        "bundles-bid-1gpu.json",
        "bundles-bid-8gpu.json",
    )
]
OBSERVED = datetime(2026, 10, 31, 4, 0)
log = logging.getLogger("test")


@pytest.fixture(autouse=True)
def _two_gpu_counts(monkeypatch):
    monkeypatch.setenv(vast.GPU_COUNTS_ENV, "1,8")


def _client(waits: list[float] | None = None, **overrides) -> HttpClient:
    recorder = waits if waits is not None else []
    return HttpClient(provider=vast.PROVIDER, backoff_seconds=0.5, sleep=recorder.append, **overrides)


def _fetch_and_parse(tmp_path: Path, client: HttpClient):
    store = PayloadStore(tmp_path / "capture")
    vast.fetch(client, store, None)
    return store, vast.parse(store.payloads, OBSERVED)


def test_every_search_in_order_and_minimum_median_by_hand(tmp_path, monkeypatch):
    with local_server() as server:
        server.route(vast.PATH, *(Reply(page) for page in PAGES))
        monkeypatch.setenv(vast.BASE_URL_ENV, server.url)
        _, frame = _fetch_and_parse(tmp_path, _client())
    searches = [json.loads(r.body) for r in server.requests]
    assert [(r.method, r.path) for r in server.requests] == [("POST", "/api/v0/bundles/")] * 4
    assert [(s["type"], s["num_gpus"]) for s in searches] == [
        ("ondemand", {"eq": 1}),
        ("ondemand", {"eq": 8}),
        ("bid", {"eq": 1}),
        ("bid", {"eq": 8}),
    ]
    assert all(s["rentable"] == {"eq": True} and s["rented"] == {"eq": False} for s in searches)
    rows = frame.select("pricing_model", "gpu_name", "gpu_count", "offer_statistic", "price", "offer_count", "sku")
    d = Decimal
    assert rows.rows() == [
        # bid: min_bid 1.10, 1.20, 1.30 → median the middle one
        ("interruptible", "H100 SXM", d("1.000000000000"), "median", d("1.200000000000"), 3, None),
        ("interruptible", "H100 SXM", d("1.000000000000"), "minimum", d("1.100000000000"), 3, "402"),
        # "A100 SXM4" at 40 GB and at 80 GB (gpu_ram 40960 / 81920 MiB) are two markets
        ("on_demand", "A100 SXM4 40GB", d("1.000000000000"), "median", d("0.800000000000"), 1, None),
        ("on_demand", "A100 SXM4 40GB", d("1.000000000000"), "minimum", d("0.800000000000"), 1, "502"),
        ("on_demand", "A100 SXM4 80GB", d("1.000000000000"), "median", d("1.100000000000"), 1, None),
        ("on_demand", "A100 SXM4 80GB", d("1.000000000000"), "minimum", d("1.100000000000"), 1, "501"),
        # on-demand dph_total 1.95, 2.02, 2.10, 2.40 → median (2.02 + 2.10) / 2
        ("on_demand", "H100 SXM", d("1.000000000000"), "median", d("2.060000000000"), 4, None),
        ("on_demand", "H100 SXM", d("1.000000000000"), "minimum", d("1.950000000000"), 4, "102"),
        ("on_demand", "H100 SXM", d("8.000000000000"), "median", d("16.800000000000"), 1, None),
        ("on_demand", "H100 SXM", d("8.000000000000"), "minimum", d("16.800000000000"), 1, "301"),
        # 0.35, 0.38, 0.41; the not-rentable 0.10 offer and the unpriced one are left out
        ("on_demand", "RTX 4090", d("1.000000000000"), "median", d("0.380000000000"), 3, None),
        ("on_demand", "RTX 4090", d("1.000000000000"), "minimum", d("0.350000000000"), 3, "201"),
    ]
    assert set(frame["price_unit"]) == {"instance-hour"}
    assert set(frame["provider"]) == {"Vast.ai"}
    assert frame["region"].null_count() == frame.height


def test_429_then_success_honours_retry_after(tmp_path, monkeypatch):
    waits: list[float] = []
    with local_server() as server:
        server.route(vast.PATH, Reply(b"", status=429, headers={"Retry-After": "3"}), *(Reply(page) for page in PAGES))
        monkeypatch.setenv(vast.BASE_URL_ENV, server.url)
        _, frame = _fetch_and_parse(tmp_path, _client(waits))
    assert waits == [3.0]
    assert len(server.requests) == 5
    assert frame.height == 12


def test_timeout_fails_naming_provider_and_url(tmp_path, monkeypatch):
    with local_server() as server:
        server.route(vast.PATH, Reply(PAGES[0], delay=1.0))
        monkeypatch.setenv(vast.BASE_URL_ENV, server.url)
        with pytest.raises(FetchError, match="Timeout") as error:
            _fetch_and_parse(tmp_path, _client(read_timeout=0.2, max_attempts=2))
    assert error.value.provider == "Vast.ai" and error.value.url == server.url + vast.PATH


@pytest.mark.parametrize(
    ("first_page", "message"),
    [
        (b'{"offers": [{"id": 1, "gpu_name": "H100', "not JSON"),
        (b'{"results": []}', "no `offers` list"),
        (b'{"offers": [{"id": 7, "gpu_name": "H100 SXM", "num_gpus": 1, "price": 2.0}]}', "without dph_total, min_bid"),
        (
            b'{"offers": [{"id": 7, "gpu_name": "H100 SXM", "num_gpus": 1, "dph_total": "cheap", "min_bid": 1}]}',
            "offer 7: dph_total 'cheap' is not a number",
        ),
    ],
)
def test_malformed_or_changed_payloads_name_provider_and_url(tmp_path, monkeypatch, first_page, message):
    with local_server() as server:
        server.route(vast.PATH, Reply(first_page), *(Reply(page) for page in PAGES[1:]))
        monkeypatch.setenv(vast.BASE_URL_ENV, server.url)
        with pytest.raises(LayoutChanged, match=message) as error:
            _fetch_and_parse(tmp_path, _client())
    assert str(error.value).startswith(f"Vast.ai: {server.url}{vast.PATH}")


def test_no_offers_at_all_is_refused(tmp_path, monkeypatch):
    with local_server() as server:
        server.route(vast.PATH, Reply(b'{"offers": []}'))
        monkeypatch.setenv(vast.BASE_URL_ENV, server.url)
        with pytest.raises(LayoutChanged, match=r"Vast\.ai bundles: no GPU offers"):
            _fetch_and_parse(tmp_path, _client())


def test_bad_gpu_counts_setting_is_explained(monkeypatch):
    monkeypatch.setenv(vast.GPU_COUNTS_ENV, "1,eight")
    with pytest.raises(ValueError, match="FINOPS_VAST_GPU_COUNTS"):
        vast.gpu_counts()


def test_a_failing_day_leaves_the_previous_days_prices(tmp_path, monkeypatch):
    home = FinopsHome(tmp_path / "home").create_folders()
    with local_server() as server:
        monkeypatch.setenv(vast.BASE_URL_ENV, server.url)
        server.route(vast.PATH, *(Reply(page) for page in PAGES))
        with connect(home.warehouse) as con:
            refresh_price_feed(
                home, con, vast.FEED, [date(2026, 10, 30)], offline=False, log=log, today=date(2026, 10, 30)
            )
        before = table_fingerprint(home.warehouse)
        server.route(vast.PATH, Reply(b"<html>502 Bad Gateway</html>"))
        with connect(home.warehouse) as con, pytest.raises(LayoutChanged, match=r"Vast\.ai: .*not JSON"):
            refresh_price_feed(
                home,
                con,
                vast.FEED,
                [date(2026, 10, 31)],
                offline=False,
                log=log,
                client=_client(),
                today=date(2026, 10, 31),
            )
    assert table_fingerprint(home.warehouse) == before
    assert query(home.warehouse, "select price_day, count(*) from raw.price_observations group by all") == [
        (date(2026, 10, 30), 12)
    ]


def test_offline_captures_load_for_both_bundled_days(tmp_path, monkeypatch):
    monkeypatch.delenv(vast.GPU_COUNTS_ENV)
    home = FinopsHome(tmp_path / "home").create_folders()
    with connect(home.warehouse) as con:
        refresh_price_feed(home, con, vast.FEED, [date(2026, 9, 1), date(2026, 10, 31)], offline=True, log=log)
    rows = query(
        home.warehouse,
        "select price_day, count(*) filter (where offer_statistic = 'minimum'), "
        "count(*) filter (where offer_statistic = 'median'), count(distinct pricing_model) "
        "from raw.price_observations group by all order by 1",
    )
    assert [(day, minimum == median, models) for day, minimum, median, models in rows] == [
        (date(2026, 9, 1), True, 2),
        (date(2026, 10, 31), True, 2),
    ]
