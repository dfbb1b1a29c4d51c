"""CoreWeave's pricing page over real HTTP: the GPU table read by header names; a changed page is refused loudly."""

from __future__ import annotations

import logging
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from pipelines.lib.prices.market_prices import refresh_price_feed
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from sources.common.http import FetchError, HttpClient
from sources.prices import coreweave
from sources.prices.offers import LayoutChanged, PayloadStore
from tests.support import FIXTURES_ROOT
from tests.support.local_http import Reply, local_server
from tests.support.warehouse_helpers import query, table_fingerprint

PAGE = (FIXTURES_ROOT / "prices" / "coreweave" / "pricing.html").read_text()
OBSERVED = datetime(2026, 10, 31, 4, 0)
log = logging.getLogger("test")


def _client(waits: list[float] | None = None, **overrides) -> HttpClient:
    recorder = waits if waits is not None else []
    return HttpClient(provider=coreweave.PROVIDER, backoff_seconds=0.5, sleep=recorder.append, **overrides)


def _fetch_and_parse(tmp_path: Path, client: HttpClient):
    store = PayloadStore(tmp_path / "capture")
    coreweave.fetch(client, store, None)
    return coreweave.parse(store.payloads, OBSERVED)


def test_gpu_table_read_by_header_names_by_hand(tmp_path, monkeypatch):
    with local_server() as server:
        server.route(coreweave.PATH, Reply(PAGE.encode(), headers={"Content-Type": "text/html; charset=utf-8"}))
        monkeypatch.setenv(coreweave.BASE_URL_ENV, server.url)
        frame = _fetch_and_parse(tmp_path, _client())
    assert [(r.method, r.path) for r in server.requests] == [("GET", "/pricing")]
    d = Decimal
    assert frame.select("gpu_name", "gpu_count", "price", "sku").rows() == [
        ("NVIDIA HGX H100 80GB", d("8.000000000000"), d("49.240000000000"), "NVIDIA HGX H100"),
        ("NVIDIA HGX B200 180GB", d("8.000000000000"), d("68.800000000000"), "NVIDIA HGX B200"),
        ("NVIDIA GH200 96GB", d("1.000000000000"), d("6.500000000000"), "NVIDIA GH200"),
        ("NVIDIA A100 80GB", d("8.000000000000"), d("21.600000000000"), "NVIDIA A100"),
    ]  # the CPU-instance table is not a GPU table and is ignored
    assert set(frame["pricing_model"]) == {"on_demand"} and set(frame["price_unit"]) == {"instance-hour"}
    assert set(frame["provider"]) == {"CoreWeave"} and set(frame["source_url"]) == {server.url + "/pricing"}


def test_429_then_success_honours_retry_after(tmp_path, monkeypatch):
    waits: list[float] = []
    with local_server() as server:
        server.route(coreweave.PATH, Reply(b"", status=429, headers={"Retry-After": "5"}), Reply(PAGE.encode()))
        monkeypatch.setenv(coreweave.BASE_URL_ENV, server.url)
        frame = _fetch_and_parse(tmp_path, _client(waits))
    assert waits == [5.0] and frame.height == 4


def test_timeout_fails_naming_provider_and_url(tmp_path, monkeypatch):
    with local_server() as server:
        server.route(coreweave.PATH, Reply(PAGE.encode(), delay=1.0))
        monkeypatch.setenv(coreweave.BASE_URL_ENV, server.url)
        with pytest.raises(FetchError, match="Timeout") as error:
            _fetch_and_parse(tmp_path, _client(read_timeout=0.2, max_attempts=2))
    assert error.value.provider == "CoreWeave" and error.value.url == server.url + "/pricing"


CPU_TABLE_ONLY = PAGE[: PAGE.index("<h2>GPU Instances</h2>")] + PAGE[PAGE.index("<h2>CPU Instances</h2>") :]
GPU_ROWS = [line for line in PAGE.splitlines() if "<td>" in line and "NVIDIA" in line]


@pytest.mark.parametrize(
    ("page", "message"),
    [
        # the site moved from a <table> to styled <div>s: no table at all
        (PAGE.replace("<table", "<div").replace("</table>", "</div>"), "no table with the columns GPU Model"),
        (CPU_TABLE_ONLY, "no table with the columns GPU Model"),
        # columns renamed
        (PAGE.replace("<th>Instance Price (per hour)</th>", "<th>Price</th>"), "no table with the columns"),
        (PAGE.replace("<th>GPU Count</th>", "<th>GPUs</th>"), "no table with the columns"),
        # prices no longer numbers
        (PAGE.replace("$68.80", "Contact sales"), "row 2: instance price 'Contact sales' is not a dollar amount"),
        (PAGE.replace("$49.24", "€45.10"), "row 1: instance price '€45.10' is not a dollar amount"),
        (PAGE.replace("<td>8</td><td>80</td>", "<td>eight</td><td>80</td>", 1), "row 1: 'eight' is not a number"),
        # a row lost a cell: the columns would no longer line up
        (PAGE.replace("<td>72</td>", ""), "row 3: 5 cells under 6 headers"),
        # too few rows: a half-rendered page
        ("\n".join(line for line in PAGE.splitlines() if line not in GPU_ROWS[1:]), "only 1 GPU instance row"),
    ],
)
def test_a_changed_page_layout_is_refused(tmp_path, monkeypatch, page, message):
    with local_server() as server:
        server.route(coreweave.PATH, Reply(page.encode()))
        monkeypatch.setenv(coreweave.BASE_URL_ENV, server.url)
        with pytest.raises(LayoutChanged, match=message) as error:
            _fetch_and_parse(tmp_path, _client())
    assert str(error.value).startswith("CoreWeave: ")
    if "only 1" not in message:
        assert server.url + "/pricing" in str(error.value)


def test_a_changed_page_fails_the_day_and_keeps_the_previous_days_prices(tmp_path, monkeypatch):
    home = FinopsHome(tmp_path / "home").create_folders()
    with local_server() as server:
        monkeypatch.setenv(coreweave.BASE_URL_ENV, server.url)
        server.route(coreweave.PATH, Reply(PAGE.encode()))
        with connect(home.warehouse) as con:
            refresh_price_feed(
                home, con, coreweave.FEED, [date(2026, 10, 30)], offline=False, log=log, today=date(2026, 10, 30)
            )
        before = table_fingerprint(home.warehouse)
        server.route(coreweave.PATH, Reply(PAGE.replace("<table", "<div").replace("</table>", "</div>").encode()))
        with connect(home.warehouse) as con, pytest.raises(LayoutChanged, match="layout changed"):
            refresh_price_feed(
                home, con, coreweave.FEED, [date(2026, 10, 31)], offline=False, log=log, today=date(2026, 10, 31)
            )
    assert table_fingerprint(home.warehouse) == before
    assert query(home.warehouse, "select price_day, count(*) from raw.price_observations group by all") == [
        (date(2026, 10, 30), 4)
    ]


def test_offline_captures_load_for_both_bundled_days(tmp_path):
    home = FinopsHome(tmp_path / "home").create_folders()
    with connect(home.warehouse) as con:
        refresh_price_feed(home, con, coreweave.FEED, [date(2026, 9, 1), date(2026, 10, 31)], offline=True, log=log)
    h100 = query(
        home.warehouse,
        "select price_day, gpu_count, price from raw.price_observations "
        "where gpu_name = 'NVIDIA HGX H100 80GB' order by price_day",
    )
    assert h100 == [
        (date(2026, 9, 1), Decimal("8.000000000000"), Decimal("49.240000000000")),
        (date(2026, 10, 31), Decimal("8.000000000000"), Decimal("47.840000000000")),
    ]
