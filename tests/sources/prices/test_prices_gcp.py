"""GCP Billing Catalog feed over real HTTP: API key as a query parameter that is never stored or reported,
nextPageToken paging, retries, layout errors, and GPU SKUs turned into per-GPU-hour offers per region."""

from __future__ import annotations

import gzip
import json
import logging
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from pipelines.lib.prices.market_prices import refresh_price_feed
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from sources.common.http import FetchError, HttpClient, MissingCredential
from sources.prices import gcp_catalog
from sources.prices.offers import LayoutChanged, PayloadStore
from tests.support import FIXTURES_ROOT
from tests.support.local_http import Reply, local_server
from tests.support.warehouse_helpers import query, table_fingerprint

FIXTURES = FIXTURES_ROOT / "prices" / "gcp_catalog"
PAGE_1 = (FIXTURES / "skus-page-1.json").read_bytes()
PAGE_2 = (FIXTURES / "skus-page-2.json").read_bytes()
ROUTE = gcp_catalog.PATH
KEY = "AIzaSyTEST-secret-4f9a8b7c6d5e"
log = logging.getLogger("test")
DAY_1, DAY_2 = date(2026, 10, 30), date(2026, 10, 31)
"""Two consecutive capture days; each is 'today' when fetched (providers publish current prices only)."""

# By hand from the fixture pages: the A2 vCPU SKU (resourceGroup CPU) and the L4 Virtual Workstation
# licence are dropped; each GPU SKU becomes one row per service region, at units + nanos / 1e9 per GPU-hour.
EXPECTED = {
    ("us-central1", "Nvidia Tesla A100", "on_demand", Decimal("2.933908"), None, "039F-D0DA-4055"),
    ("us-east1", "Nvidia Tesla A100", "on_demand", Decimal("2.933908"), None, "039F-D0DA-4055"),
    ("us-central1", "Nvidia Tesla A100", "spot", Decimal("1.4341"), None, "1B7E-3A55-2F10"),
    ("us-east4", "Nvidia H100 80GB", "committed_3y", Decimal("4.311"), 3, "5C3A-77E1-9B02"),
    ("us-central1", "Nvidia B200", "on_demand", Decimal("11.0597"), None, "E2A0-4F19-7C58"),
}


@pytest.fixture
def catalog(monkeypatch):
    with local_server() as server:
        monkeypatch.setenv(gcp_catalog.BASE_URL_ENV, server.url)
        monkeypatch.setenv(gcp_catalog.API_KEY_ENV, KEY)
        yield server


def _client(**overrides) -> tuple[HttpClient, list[float]]:
    waits: list[float] = []
    settings = {"provider": gcp_catalog.PROVIDER, "secrets": (KEY,), "sleep": waits.append} | overrides
    return HttpClient(**settings), waits


def _offers(warehouse: Path) -> set[tuple]:
    rows = query(
        warehouse,
        "select region, gpu_name, pricing_model, price, term_years, sku from raw.price_observations "
        "where feed = 'gcp_catalog'",
    )
    return {(r, g, m, p.normalize(), y, s) for r, g, m, p, y, s in rows}


def _stored_text(folder: Path) -> str:
    return "".join(
        (gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()).decode()
        for path in folder.iterdir()
    )


def test_pages_are_followed_with_the_key_sent_but_never_stored(tmp_path, catalog):
    home = FinopsHome(tmp_path / "home").create_folders()
    catalog.route(ROUTE, Reply(PAGE_1), Reply(PAGE_2))
    with connect(home.warehouse) as con:
        load = refresh_price_feed(home, con, gcp_catalog.FEED, [DAY_1], offline=False, log=log, today=DAY_1)
    sent = [parse_qs(urlsplit(request.path).query) for request in catalog.requests]
    assert sent == [
        {"pageSize": ["5000"], "key": [KEY]},
        {"pageSize": ["5000"], "pageToken": ["tok-page-2"], "key": [KEY]},
    ]
    assert load.offers == 5
    assert _offers(home.warehouse) == EXPECTED
    rows = query(
        home.warehouse,
        "select distinct provider, instance_type, gpu_count, price_unit, currency, offer_statistic "
        "from raw.price_observations",
    )
    assert rows == [("Google Cloud", None, Decimal(1), "gpu-hour", "USD", "list")]
    source_urls = query(home.warehouse, "select distinct source_url from raw.price_observations order by 1")
    assert source_urls == [
        (f"{catalog.url}{ROUTE}?pageSize=5000",),
        (f"{catalog.url}{ROUTE}?pageSize=5000&pageToken=tok-page-2",),
    ]
    assert KEY not in _stored_text(load.captures[0])
    assert sorted(path.name for path in load.captures[0].iterdir()) == [
        "index.json",
        "skus-page-001.json.gz",
        "skus-page-002.json.gz",
    ]


def test_paging_is_bounded_and_an_empty_last_page_ends_it(tmp_path, catalog, monkeypatch):
    monkeypatch.setattr(gcp_catalog, "MAX_PAGES", 2)
    catalog.route(ROUTE, Reply(PAGE_1))
    with pytest.raises(FetchError, match="more than 2 pages of SKUs") as error:
        gcp_catalog.fetch(_client()[0], PayloadStore(tmp_path / "endless"), KEY)
    assert len(catalog.requests) == 2 and KEY not in str(error.value)
    catalog.route(ROUTE, Reply(PAGE_1), Reply(b"{}"))
    store = PayloadStore(tmp_path / "ends")
    gcp_catalog.fetch(_client()[0], store, KEY)
    assert len(store.payloads) == 2 and len(catalog.requests) == 4


def test_without_a_key_the_feed_is_skipped_before_any_request(tmp_path, catalog, monkeypatch):
    monkeypatch.delenv(gcp_catalog.API_KEY_ENV)
    home = FinopsHome(tmp_path / "home").create_folders()
    catalog.route(ROUTE, Reply(PAGE_1))
    with connect(home.warehouse) as con, pytest.raises(MissingCredential, match="set GCP_API_KEY"):
        refresh_price_feed(home, con, gcp_catalog.FEED, [DAY_1], offline=False, log=log, today=DAY_1)
    assert catalog.requests == []


def test_429_is_retried_after_the_servers_delay(tmp_path, catalog):
    catalog.route(ROUTE, Reply(b"quota", status=429, headers={"Retry-After": "9"}), Reply(PAGE_1), Reply(PAGE_2))
    client, waits = _client()
    store = PayloadStore(tmp_path / "capture")
    gcp_catalog.fetch(client, store, KEY)
    assert waits == [9.0]
    assert len(catalog.requests) == 3 and len(store.payloads) == 2


def test_a_timeout_or_refused_key_fails_without_showing_the_key(tmp_path, catalog):
    catalog.route(ROUTE, Reply(PAGE_1, delay=1.0))
    client, _ = _client(read_timeout=0.2, max_attempts=2, backoff_seconds=0)
    with pytest.raises(FetchError, match="Timeout") as timeout:
        gcp_catalog.fetch(client, PayloadStore(tmp_path / "one"), KEY)
    catalog.route(ROUTE, Reply(b'{"error": {"code": 400, "message": "API key not valid."}}', status=400))
    with pytest.raises(FetchError, match="HTTP 400") as refused:
        gcp_catalog.fetch(client, PayloadStore(tmp_path / "two"), KEY)
    for error in (timeout.value, refused.value):
        assert error.provider == "Google Cloud" and error.url == f"{catalog.url}{ROUTE}?pageSize=5000"
        assert KEY not in str(error)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"<html>502 Bad Gateway</html>", "not JSON"),
        (json.dumps({"items": []}).encode(), "neither `skus` nor `nextPageToken`"),
        (json.dumps({"skus": {"039F": {}}}).encode(), "no `skus` list"),
    ],
)
def test_malformed_or_changed_payload_is_a_clear_error(tmp_path, catalog, body, reason):
    catalog.route(ROUTE, Reply(body))
    with pytest.raises(LayoutChanged) as error:
        gcp_catalog.fetch(_client()[0], PayloadStore(tmp_path / "capture"), KEY)
    message = str(error.value)
    assert message.startswith(f"Google Cloud Billing Catalog: {catalog.url}{ROUTE}?pageSize=5000: ")
    assert reason in message and KEY not in message


def test_a_failed_day_keeps_the_previous_days_prices(tmp_path, catalog):
    home = FinopsHome(tmp_path / "home").create_folders()
    catalog.route(ROUTE, Reply(PAGE_1), Reply(PAGE_2))
    with connect(home.warehouse) as con:
        refresh_price_feed(home, con, gcp_catalog.FEED, [DAY_1], offline=False, log=log, today=DAY_1)
    before = table_fingerprint(home.warehouse)
    catalog.route(ROUTE, Reply(PAGE_1), Reply(b"upstream error", status=503))
    client, _ = _client(max_attempts=2)
    with connect(home.warehouse) as con, pytest.raises(FetchError, match=r"HTTP 503") as error:
        refresh_price_feed(home, con, gcp_catalog.FEED, [DAY_2], offline=False, log=log, today=DAY_2, client=client)
    assert "pageToken=tok-page-2" in error.value.url and KEY not in str(error.value)
    assert table_fingerprint(home.warehouse) == before
    assert _offers(home.warehouse) == EXPECTED
    assert not home.price_payloads("gcp_catalog", DAY_2).exists()


def _sku(description: str, usage: str = "OnDemand", **changes) -> dict:
    sku = json.loads(PAGE_1)["skus"][1]
    sku["description"] = description
    sku["category"]["usageType"] = usage
    for path, value in changes.items():
        *parents, leaf = path.split("__")
        target = sku
        for name in parents:
            target = target[name][0] if isinstance(target[name], list) else target[name]
        target[leaf] = value
    return sku


def _parse(tmp_path, *skus) -> list[tuple]:
    store = PayloadStore(tmp_path / "capture")
    store.save("skus.json", "https://cloudbilling.googleapis.com/v1/x", json.dumps({"skus": list(skus)}).encode())
    frame = gcp_catalog.parse(store.payloads, datetime(2026, 10, 31, 5))
    rows = frame.iter_rows(named=True)
    return sorted((r["gpu_name"], r["pricing_model"], r["term_years"], r["region"]) for r in rows)


def test_gpu_names_and_usage_types_from_descriptions(tmp_path):
    parsed = _parse(
        tmp_path,
        _sku("Nvidia H100 80GB Mega GPU attached to Spot Preemptible VMs running in Tokyo", "Preemptible"),
        _sku("Commitment v1: Nvidia L4 GPU in Frankfurt for 1 Year", "Commit1Yr"),
        _sku("Spot Preemptible Nvidia Tesla T4 GPU running in Americas", "Preemptible"),
        _sku("H200 141GB GPU running in Americas"),
        _sku("Nvidia Tesla A100 GPU running in Americas", "Reserved"),
    )
    assert parsed == [  # each SKU lists us-central1 and us-east1: one row per region; "Reserved" is not a usage type
        (gpu, model, term, region)
        for gpu, model, term in (
            ("H200 141GB", "on_demand", None),
            ("Nvidia H100 80GB Mega", "spot", None),
            ("Nvidia L4", "committed_1y", 1),
            ("Nvidia Tesla T4", "spot", None),
        )
        for region in ("us-central1", "us-east1")
    ]


def test_a_gpu_sku_not_priced_per_hour_or_without_its_rate_is_refused(tmp_path):
    with pytest.raises(LayoutChanged, match="priced per 'mo', not per hour"):
        _parse(tmp_path, _sku("Nvidia L4 GPU running in APAC", pricingInfo__pricingExpression__usageUnit="mo"))
    with pytest.raises(LayoutChanged, match="039F-D0DA-4055: pricingInfo not as expected"):
        _parse(tmp_path, _sku("Nvidia L4 GPU running in APAC", pricingInfo__pricingExpression__tieredRates=[]))


def test_the_bundled_captures_load_offline(tmp_path, monkeypatch):
    monkeypatch.delenv(gcp_catalog.API_KEY_ENV, raising=False)
    home = FinopsHome(tmp_path / "home").create_folders()
    with connect(home.warehouse) as con:
        for day in (date(2026, 9, 1), date(2026, 10, 31)):
            refresh_price_feed(home, con, gcp_catalog.FEED, [day], offline=True, log=log)
    rows = query(
        home.warehouse,
        "select price_day, price from raw.price_observations where feed = 'gcp_catalog' and region = 'us-east4' "
        "and gpu_name = 'Nvidia H100 80GB' and pricing_model = 'spot' order by price_day",
    )
    assert [(day, price.normalize()) for day, price in rows] == [
        (date(2026, 9, 1), Decimal("2.2539")),
        (date(2026, 10, 31), Decimal("2.0615")),
    ]
