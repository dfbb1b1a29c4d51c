"""OCI cost estimator over real HTTP: shapes + paged price list, GPU shapes priced per GPU, preemptible at 50%."""

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
from sources.prices import oci
from sources.prices.offers import LayoutChanged, PayloadStore
from tests.support import FIXTURES_ROOT
from tests.support.local_http import Reply, local_server
from tests.support.warehouse_helpers import query, table_fingerprint

FIXTURES = FIXTURES_ROOT / "prices" / "oci"
SHAPES = (FIXTURES / "shapes.json").read_bytes()
PRODUCTS = [(FIXTURES / f"products-00{page}.json").read_bytes() for page in (1, 2)]
OBSERVED = datetime(2026, 10, 31, 4, 0)
log = logging.getLogger("test")


def _client(waits: list[float] | None = None, **overrides) -> HttpClient:
    recorder = waits if waits is not None else []
    return HttpClient(provider=oci.PROVIDER, backoff_seconds=0.5, sleep=recorder.append, **overrides)


def _serve(server, monkeypatch, shapes: bytes = SHAPES, products: list[Reply] | None = None) -> None:
    server.route(oci.SHAPES_PATH, Reply(shapes))
    server.route(oci.PRODUCTS_PATH, *(products or [Reply(page) for page in PRODUCTS]))
    monkeypatch.setenv(oci.BASE_URL_ENV, server.url)
    monkeypatch.setenv(oci.PRICES_BASE_URL_ENV, server.url)


def _fetch_and_parse(tmp_path: Path, client: HttpClient):
    store = PayloadStore(tmp_path / "capture")
    oci.fetch(client, store, None)
    return store, oci.parse(store.payloads, OBSERVED)


def test_shapes_and_every_price_page_in_order_priced_by_hand(tmp_path, monkeypatch):
    with local_server() as server:
        _serve(server, monkeypatch)
        store, frame = _fetch_and_parse(tmp_path, _client())
    assert [r.path for r in server.requests] == [
        oci.SHAPES_PATH,
        oci.PRODUCTS_PATH,
        oci.PRODUCTS_PATH + "?offset=2",  # the ORDS `next` link, followed while hasMore
    ]
    assert [p.name for p in store.payloads] == ["shapes.json", "products-001.json", "products-002.json"]
    rows = frame.select("instance_type", "gpu_name", "gpu_count", "pricing_model", "price", "sku").rows()
    d = Decimal
    assert rows == [
        ("VM.GPU.A10.1", "A10", d("1.000000000000"), "on_demand", d("2.000000000000"), "B95909"),  # $2/GPU-h × 1
        ("VM.GPU.A10.1", "A10", d("1.000000000000"), "spot", d("1.000000000000"), "B95909"),  # preemptible: 50%
        ("BM.GPU.H100.8", "H100", d("8.000000000000"), "on_demand", d("80.000000000000"), "B98415"),  # $10 × 8 GPUs
        ("VM.GPU3.1", None, d("1.000000000000"), "on_demand", d("3.000000000000"), "B89734"),  # per OCPU: 0.5 × 6
    ]  # flexible (non-GPU), hidden and deprecated shapes are left out; the EUR price is not used
    assert set(frame["price_unit"]) == {"instance-hour"} and set(frame["currency"]) == {"USD"}
    assert frame["region"].null_count() == frame.height
    assert set(frame["source_url"]) == {server.url + oci.SHAPES_PATH}


def test_429_then_success_honours_retry_after(tmp_path, monkeypatch):
    waits: list[float] = []
    with local_server() as server:
        _serve(
            server,
            monkeypatch,
            products=[Reply(b"", status=429, headers={"Retry-After": "2"}), *(Reply(page) for page in PRODUCTS)],
        )
        _, frame = _fetch_and_parse(tmp_path, _client(waits))
    assert waits == [2.0]
    assert frame.height == 4


def test_timeout_fails_naming_provider_and_url(tmp_path, monkeypatch):
    with local_server() as server:
        _serve(server, monkeypatch, products=[Reply(PRODUCTS[0], delay=1.0)])
        with pytest.raises(FetchError, match="Timeout") as error:
            _fetch_and_parse(tmp_path, _client(read_timeout=0.2, max_attempts=2))
    assert error.value.provider == "Oracle" and error.value.url == server.url + oci.PRODUCTS_PATH


def test_a_price_list_that_never_ends_is_cut_off(tmp_path, monkeypatch):
    monkeypatch.setattr(oci, "MAX_PRODUCT_PAGES", 3)
    with local_server() as server:
        _serve(server, monkeypatch, products=[Reply(PRODUCTS[0])])
        with pytest.raises(FetchError, match="more than 3 pages"):
            _fetch_and_parse(tmp_path, _client())
    assert len(server.requests) == 1 + 3


def _with_h100_price(value) -> bytes:
    page = json.loads(PRODUCTS[1])
    page["items"][0]["currencyCodeLocalizations"][0]["prices"][0]["value"] = value
    return json.dumps(page).encode()


@pytest.mark.parametrize(
    ("shapes", "last_page", "message"),
    [
        (b"<!DOCTYPE html><title>Oracle | Maintenance</title>", PRODUCTS[1], "shapes.json: not JSON"),
        (b'{"shapes": []}', PRODUCTS[1], "no `items` list of shapes"),
        (SHAPES, b'{"products": []}', "no `items` list of products"),
        (SHAPES, _with_h100_price("ten"), "'ten' is not a number"),
        (SHAPES, b'{"items": [], "hasMore": false}', "BM.GPU.H100.8: none of its products has a USD"),
    ],
)
def test_malformed_or_changed_payloads_name_provider_and_url(tmp_path, monkeypatch, shapes, last_page, message):
    with local_server() as server:
        _serve(server, monkeypatch, shapes=shapes, products=[Reply(PRODUCTS[0]), Reply(last_page)])
        with pytest.raises(LayoutChanged, match=message) as error:
            _fetch_and_parse(tmp_path, _client())
    assert str(error.value).startswith(f"Oracle: {server.url}")


def test_a_failing_day_leaves_the_previous_days_prices(tmp_path, monkeypatch):
    home = FinopsHome(tmp_path / "home").create_folders()
    with local_server() as server:
        _serve(server, monkeypatch)
        with connect(home.warehouse) as con:
            refresh_price_feed(
                home, con, oci.FEED, [date(2026, 10, 30)], offline=False, log=log, today=date(2026, 10, 30)
            )
        before = table_fingerprint(home.warehouse)
        server.route(oci.SHAPES_PATH, Reply(b"gateway down", status=503))
        with connect(home.warehouse) as con, pytest.raises(FetchError, match=r"Oracle: .*shapes\.json: HTTP 503"):
            refresh_price_feed(
                home,
                con,
                oci.FEED,
                [date(2026, 10, 31)],
                offline=False,
                log=log,
                client=_client(max_attempts=2),
                today=date(2026, 10, 31),
            )
    assert table_fingerprint(home.warehouse) == before
    assert query(home.warehouse, "select price_day, count(*) from raw.price_observations group by all") == [
        (date(2026, 10, 30), 4)
    ]


def test_offline_captures_load_for_both_bundled_days(tmp_path):
    home = FinopsHome(tmp_path / "home").create_folders()
    with connect(home.warehouse) as con:
        refresh_price_feed(home, con, oci.FEED, [date(2026, 9, 1), date(2026, 10, 31)], offline=True, log=log)
    a10 = query(
        home.warehouse,
        "select price_day, pricing_model, price from raw.price_observations "
        "where instance_type = 'VM.GPU.A10.2' order by all",
    )
    assert a10 == [
        (date(2026, 9, 1), "on_demand", Decimal("4.000000000000")),  # 2 GPUs × $2.00
        (date(2026, 9, 1), "spot", Decimal("2.000000000000")),
        (date(2026, 10, 31), "on_demand", Decimal("3.700000000000")),  # 2 GPUs × $1.85
        (date(2026, 10, 31), "spot", Decimal("1.850000000000")),
    ]
