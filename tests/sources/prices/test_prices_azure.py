"""Azure Retail Prices feed over real HTTP: OData filter, NextPageLink and $skip paging, retries, layout
errors, and the classification of Consumption / Spot / Low Priority / savings plans / whole-term reservations."""

from __future__ import annotations

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
from sources.common.http import FetchError, HttpClient
from sources.prices import azure_retail
from sources.prices.offers import LayoutChanged, PayloadStore
from tests.support import FIXTURES_ROOT
from tests.support.local_http import Reply, local_server
from tests.support.warehouse_helpers import query, table_fingerprint

FIXTURES = FIXTURES_ROOT / "prices" / "azure_retail"
PAGE_1 = (FIXTURES / "eastus-page-1.json").read_bytes()
PAGE_2 = (FIXTURES / "eastus-page-2.json").read_bytes()
ROUTE = azure_retail.PATH
log = logging.getLogger("test")
DAY_1, DAY_2 = date(2026, 10, 30), date(2026, 10, 31)
"""Two consecutive capture days; each is 'today' when fetched (providers publish current prices only)."""

# By hand from the two fixture pages: the Windows meter, the DevTestConsumption price and the
# zero-priced T4 spot meter are dropped; the A100's on-demand row carries two savings-plan rates.
EXPECTED = {
    ("Standard_NC24ads_A100_v4", "on_demand", Decimal("3.673"), "instance-hour", None),
    ("Standard_NC24ads_A100_v4", "savings_plan_1y", Decimal("2.6444"), "instance-hour", 1),
    ("Standard_NC24ads_A100_v4", "savings_plan_3y", Decimal("1.4325"), "instance-hour", 3),
    ("Standard_NC24ads_A100_v4", "spot", Decimal("0.7345"), "instance-hour", None),
    ("Standard_ND96isr_H100_v5", "reserved_1y", Decimal("350400"), "term", 1),
    ("Standard_ND96isr_H100_v5", "interruptible", Decimal("23.6"), "instance-hour", None),
}


@pytest.fixture
def eastus(monkeypatch):
    monkeypatch.setenv(azure_retail.REGIONS_ENV, "eastus")


def _client(**overrides) -> tuple[HttpClient, list[float]]:
    waits: list[float] = []
    settings = {"provider": azure_retail.PROVIDER, "sleep": waits.append} | overrides
    return HttpClient(**settings), waits


def _query(recorded_path: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(recorded_path).query)


def _offers(warehouse: Path) -> set[tuple]:
    rows = query(
        warehouse,
        "select instance_type, pricing_model, price, price_unit, term_years from raw.price_observations "
        "where feed = 'azure_retail'",
    )
    return {(t, m, p.normalize(), u, y) for t, m, p, u, y in rows}


def test_pages_are_followed_in_order_and_loaded_as_published(tmp_path, monkeypatch, eastus):
    home = FinopsHome(tmp_path / "home").create_folders()
    with local_server() as server:
        server.route(ROUTE, Reply(PAGE_1), Reply(PAGE_2))
        monkeypatch.setenv(azure_retail.BASE_URL_ENV, server.url)
        with connect(home.warehouse) as con:
            load = refresh_price_feed(home, con, azure_retail.FEED, [DAY_1], offline=False, log=log, today=DAY_1)
    first, second = (_query(request.path) for request in server.requests)
    assert len(server.requests) == 2
    assert first["api-version"] == ["2023-01-01-preview"] and "$skip" not in first
    assert first["$filter"] == [
        "serviceName eq 'Virtual Machines' and armRegionName eq 'eastus' and (contains(armSkuName, 'Standard_NC') "
        "or contains(armSkuName, 'Standard_ND') or contains(armSkuName, 'Standard_NV'))"
    ]
    assert second["$skip"] == ["3"], "the NextPageLink, rebased onto the local server, was followed"
    assert load.offers == 6
    assert _offers(home.warehouse) == EXPECTED
    rows = query(
        home.warehouse,
        "select distinct provider, currency, offer_statistic, gpu_name, gpu_count, region from raw.price_observations",
    )
    assert rows == [("Microsoft", "USD", "list", None, None, "eastus")]
    stored = sorted(path.name for path in load.captures[0].iterdir())
    assert stored == ["eastus-page-001.json.gz", "eastus-page-002.json.gz", "index.json"]


def test_a_full_page_without_next_link_falls_back_to_skip(tmp_path, monkeypatch, eastus):
    monkeypatch.setattr(azure_retail, "PAGE_SIZE", 3)
    full_page_without_link = json.loads(PAGE_1) | {"NextPageLink": None}
    short_last_page = json.loads(PAGE_2)
    short_last_page["Items"] = short_last_page["Items"][:2]
    with local_server() as server:
        server.route(ROUTE, *(Reply(json.dumps(page).encode()) for page in (full_page_without_link, short_last_page)))
        monkeypatch.setenv(azure_retail.BASE_URL_ENV, server.url)
        store = PayloadStore(tmp_path / "capture")
        azure_retail.fetch(_client()[0], store, None)
    assert [_query(r.path).get("$skip") for r in server.requests] == [None, ["3"]]
    assert [p.name for p in store.payloads] == ["eastus-page-001.json", "eastus-page-002.json"]
    assert store.payloads[1].source_url.endswith("&$skip=3")


def test_paging_is_bounded_and_an_endless_listing_is_refused(tmp_path, monkeypatch, eastus):
    monkeypatch.setattr(azure_retail, "MAX_PAGES", 3)
    with local_server() as server:
        server.route(ROUTE, Reply(PAGE_1))
        monkeypatch.setenv(azure_retail.BASE_URL_ENV, server.url)
        with pytest.raises(FetchError, match="more than 3 pages for eastus"):
            azure_retail.fetch(_client()[0], PayloadStore(tmp_path / "capture"), None)
    assert len(server.requests) == 3


def test_each_configured_region_is_queried_in_turn(tmp_path, monkeypatch):
    monkeypatch.setenv(azure_retail.REGIONS_ENV, "westeurope, eastus")
    empty = json.dumps({"BillingCurrency": "USD", "Items": [], "NextPageLink": None, "Count": 0}).encode()
    with local_server() as server:
        server.route(ROUTE, Reply(empty))
        monkeypatch.setenv(azure_retail.BASE_URL_ENV, server.url)
        azure_retail.fetch(_client()[0], PayloadStore(tmp_path / "capture"), None)
    filters = [_query(r.path)["$filter"][0] for r in server.requests]
    assert ["armRegionName eq 'westeurope'" in filters[0], "armRegionName eq 'eastus'" in filters[1]] == [True, True]


@pytest.mark.parametrize("value", ["eastus' or serviceName ne 'x", "East US"])
def test_region_names_that_are_not_arm_names_are_refused(monkeypatch, value):
    monkeypatch.setenv(azure_retail.REGIONS_ENV, f"westeurope,{value}")
    with pytest.raises(ValueError, match="is not an Azure region name"):
        azure_retail.regions()


def test_429_is_retried_after_the_servers_delay(tmp_path, monkeypatch, eastus):
    with local_server() as server:
        server.route(ROUTE, Reply(b"busy", status=429, headers={"Retry-After": "4"}), Reply(PAGE_1), Reply(PAGE_2))
        monkeypatch.setenv(azure_retail.BASE_URL_ENV, server.url)
        client, waits = _client()
        store = PayloadStore(tmp_path / "capture")
        azure_retail.fetch(client, store, None)
    assert waits == [4.0]
    assert len(server.requests) == 3 and len(store.payloads) == 2


def test_a_timeout_fails_naming_provider_and_url(tmp_path, monkeypatch, eastus):
    with local_server() as server:
        server.route(ROUTE, Reply(PAGE_1, delay=1.0))
        monkeypatch.setenv(azure_retail.BASE_URL_ENV, server.url)
        client, _ = _client(read_timeout=0.2, max_attempts=2, backoff_seconds=0)
        with pytest.raises(FetchError, match="Timeout") as error:
            azure_retail.fetch(client, PayloadStore(tmp_path / "capture"), None)
    assert error.value.provider == "Microsoft"
    assert error.value.url.startswith(server.url + ROUTE + "?api-version=")


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"<html>Service Unavailable</html>", "not JSON"),
        (json.dumps({"value": [], "@odata.nextLink": None}).encode(), "no `Items` list"),
    ],
)
def test_malformed_or_changed_payload_is_a_clear_error(tmp_path, monkeypatch, eastus, body, reason):
    with local_server() as server:
        server.route(ROUTE, Reply(body))
        monkeypatch.setenv(azure_retail.BASE_URL_ENV, server.url)
        with pytest.raises(LayoutChanged) as error:
            azure_retail.fetch(_client()[0], PayloadStore(tmp_path / "capture"), None)
    message = str(error.value)
    assert message.startswith(f"Microsoft Retail Prices: {server.url}{ROUTE}?") and reason in message


def test_a_failed_day_keeps_the_previous_days_prices(tmp_path, monkeypatch, eastus):
    home = FinopsHome(tmp_path / "home").create_folders()
    with local_server() as server:
        server.route(ROUTE, Reply(PAGE_1), Reply(PAGE_2))
        monkeypatch.setenv(azure_retail.BASE_URL_ENV, server.url)
        with connect(home.warehouse) as con:
            refresh_price_feed(home, con, azure_retail.FEED, [DAY_1], offline=False, log=log, today=DAY_1)
        before = table_fingerprint(home.warehouse)
        server.route(ROUTE, Reply(PAGE_1), Reply(b'{"Items": [{"armSkuName": "Standard_NC24ads_A100_v4"'))
        with connect(home.warehouse) as con, pytest.raises(LayoutChanged, match="not JSON"):
            refresh_price_feed(home, con, azure_retail.FEED, [DAY_2], offline=False, log=log, today=DAY_2)
    assert table_fingerprint(home.warehouse) == before
    assert _offers(home.warehouse) == EXPECTED
    assert not home.price_payloads("azure_retail", DAY_2).exists(), "no partial capture is kept"


def _item(**fields) -> dict:
    base = json.loads(PAGE_1)["Items"][0]
    base.pop("savingsPlan")
    return base | fields


def _parse(tmp_path, *items) -> set[tuple]:
    store = PayloadStore(tmp_path / "capture")
    envelope = {"BillingCurrency": "EUR", "Items": list(items), "NextPageLink": None, "Count": len(items)}
    store.save("page.json", "https://prices.azure.com/api/retail/prices", json.dumps(envelope).encode())
    frame = azure_retail.parse(store.payloads, datetime(2026, 10, 31, 5))
    rows = frame.iter_rows(named=True)
    return {(r["instance_type"], r["pricing_model"], r["price"].normalize(), r["currency"]) for r in rows}


def test_classification_of_meters_sizes_and_terms(tmp_path):
    offers = _parse(
        tmp_path,
        _item(retailPrice=3.1, currencyCode="EUR"),
        _item(skuName="NC24ads A100 v4 Low Priority", meterName="NC24ads A100 v4 Low Priority", retailPrice=0.62)
        | {"currencyCode": None},
        _item(productName="Virtual Machines NCCadsv5 Srs Win", retailPrice=9.9),
        _item(armSkuName="Standard_D4s_v5", retailPrice=0.19),
        _item(type="Reservation", reservationTerm="5 Years", retailPrice=60000),
        _item(type="Reservation", reservationTerm="3 Years", retailPrice=41000.5),
        _item(isPrimaryMeterRegion=False, retailPrice=3.2),
    )
    assert offers == {
        ("Standard_NC24ads_A100_v4", "on_demand", Decimal("3.1"), "EUR"),
        ("Standard_NC24ads_A100_v4", "interruptible", Decimal("0.62"), "EUR"),  # the envelope's BillingCurrency
        ("Standard_NC24ads_A100_v4", "reserved_3y", Decimal("41000.5"), "USD"),
    }


def test_an_hourly_meter_in_another_unit_or_a_missing_price_is_refused(tmp_path):
    with pytest.raises(LayoutChanged, match=r"priced per '1/Month'"):
        _parse(tmp_path, _item(unitOfMeasure="1/Month"))
    with pytest.raises(LayoutChanged, match=r"item 0 has no \['retailPrice'\]"):
        _parse(tmp_path, _item(retailPrice=None))
    with pytest.raises(LayoutChanged, match="no GPU offers"):
        _parse(tmp_path, _item(productName="Virtual Machines NCadsv4 Series Windows"))


def test_the_bundled_captures_load_offline(tmp_path):
    home = FinopsHome(tmp_path / "home").create_folders()
    with connect(home.warehouse) as con:
        for day in (date(2026, 9, 1), date(2026, 10, 31)):
            refresh_price_feed(home, con, azure_retail.FEED, [day], offline=True, log=log)
    rows = query(
        home.warehouse,
        "select price_day, price from raw.price_observations where feed = 'azure_retail' and region = 'eastus' "
        "and instance_type = 'Standard_ND96isr_H100_v5' and pricing_model = 'spot' order by price_day",
    )
    assert [(day, price.normalize()) for day, price in rows] == [
        (date(2026, 9, 1), Decimal("29.496")),
        (date(2026, 10, 31), Decimal("27.84")),
    ]
    windows = query(home.warehouse, "select count(*) from raw.price_observations where price = 4.856")
    assert windows == [(0,)]
