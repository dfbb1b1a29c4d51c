"""AWS price feeds against recorded payloads over real HTTP, loaded into a real DuckDB file.

Expected figures are read off the fixtures by hand (tests/fixtures/prices/aws/): the parsers must keep
exactly the Linux / Shared / Used / no-software GPU rows and classify them, and skip everything else.
"""

from __future__ import annotations

import logging
from datetime import date
from decimal import Decimal

import pytest

from pipelines.lib.prices.market_prices import refresh_price_feed
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from sources.common.http import FetchError, HttpClient
from sources.prices.aws import price_list, spot, spot_advisor
from sources.prices.offers import LayoutChanged, Payload
from tests.support import FIXTURES_ROOT
from tests.support.dbt_helpers import run_dbt
from tests.support.local_http import Reply, local_server
from tests.support.warehouse_helpers import query, table_fingerprint

FIXTURES = FIXTURES_ROOT / "prices" / "aws"
PRICE_LIST_PATH = "/offers/v1.0/aws/AmazonEC2/current/{}/index.csv"
log = logging.getLogger("test")
DAY_1 = date(2026, 10, 30)
DAY_2 = date(2026, 10, 31)
_CAUTIOUS = ("--indirect-selection", "cautious")
"""Run only tests whose every parent is selected (not the seeds' tests that also read other models)."""


def _client(**overrides) -> tuple[HttpClient, list[float]]:
    waits: list[float] = []
    settings = {"provider": "AWS", "backoff_seconds": 0.5, "sleep": waits.append} | overrides
    return HttpClient(**settings), waits


def _csv(region: str) -> bytes:
    return (FIXTURES / f"{region}.csv").read_bytes()


def _refresh(home: FinopsHome, feed, day: date, client: HttpClient):
    with connect(home.warehouse) as con:
        return refresh_price_feed(home, con, feed, [day], offline=False, log=log, client=client, today=day)


@pytest.fixture
def price_list_server(monkeypatch):
    monkeypatch.setenv(price_list.REGIONS_ENV, "us-east-1, eu-west-1")
    with local_server() as server:
        monkeypatch.setenv(price_list.BASE_URL_ENV, server.url)
        server.route(PRICE_LIST_PATH.format("us-east-1"), Reply(_csv("us-east-1")))
        server.route(PRICE_LIST_PATH.format("eu-west-1"), Reply(_csv("eu-west-1")))
        yield server


# --- EC2 Price List ------------------------------------------------------------------------------


def test_price_list_fetches_each_region_in_order_and_keeps_only_gpu_linux_list_prices(tmp_path, price_list_server):
    home = FinopsHome(tmp_path / "home").create_folders()
    client, _ = _client()
    load = _refresh(home, price_list.FEED, DAY_1, client)

    assert [(r.method, r.path) for r in price_list_server.requests] == [
        ("GET", PRICE_LIST_PATH.format("us-east-1")),
        ("GET", PRICE_LIST_PATH.format("eu-west-1")),
    ]
    folder = home.price_payloads("aws_price_list", DAY_1)
    assert sorted(p.name for p in folder.iterdir()) == ["eu-west-1.csv.gz", "index.json", "us-east-1.csv.gz"]
    assert load.source_urls == [price_list_server.url + PRICE_LIST_PATH.format(r) for r in ("us-east-1", "eu-west-1")]

    rows = query(
        home.warehouse,
        "select region, instance_type, pricing_model, gpu_count, price, upfront_price, term_years, price_unit, "
        "currency, offer_statistic from raw.price_observations where feed = 'aws_price_list' order by all",
    )
    one, eight = Decimal(1), Decimal(8)
    hour = ("instance-hour", "USD", "list")
    assert rows == [
        # eu-west-1: two GPU types on demand; m6i.xlarge (no GPU) dropped.
        ("eu-west-1", "g4dn.xlarge", "on_demand", one, Decimal("0.587"), None, None, *hour),
        ("eu-west-1", "g5.xlarge", "on_demand", one, Decimal("1.1066"), None, None, *hour),
        # us-east-1: the SQL Web g5 row, the Windows, Dedicated and unused-reservation p5 rows,
        # the convertible reservation and m6i.xlarge are dropped.
        ("us-east-1", "g5.xlarge", "on_demand", one, Decimal("1.006"), None, None, *hour),
        ("us-east-1", "p5.48xlarge", "capacity_block", eight, Decimal("31.464"), None, None, *hour),
        ("us-east-1", "p5.48xlarge", "on_demand", eight, Decimal("55.04"), None, None, *hour),
        # 1-year All Upfront: $0/h plus $301,600 once; Partial Upfront: $17.57/h plus $153,900.
        ("us-east-1", "p5.48xlarge", "reserved_1y", eight, Decimal("0"), Decimal("301600"), 1, *hour),
        ("us-east-1", "p5.48xlarge", "reserved_1y", eight, Decimal("17.57"), Decimal("153900"), 1, *hour),
        ("us-east-1", "p5.48xlarge", "reserved_3y", eight, Decimal("26.42"), None, 3, *hour),
        # Trainium: an accelerator family with no GPU count in the price list (the dbt seed has it).
        ("us-east-1", "trn1.32xlarge", "on_demand", None, Decimal("21.5"), None, None, *hour),
    ]
    skus = dict(
        query(
            home.warehouse,
            "select pricing_model || coalesce(cast(upfront_price as varchar), ''), sku from raw.price_observations "
            "where feed = 'aws_price_list' and instance_type = 'p5.48xlarge'",
        )
    )
    assert skus["on_demand"].endswith(".JRTCKXETXF.6YS6EN2CT7")
    assert skus["reserved_1y153900.000000000000"].endswith(".HU7G6KETJZ.6YS6EN2CT7")
    assert query(home.warehouse, "select distinct provider, zone, gpu_name from raw.price_observations") == [
        ("AWS", None, None)
    ]


def test_price_list_429_then_success_honours_retry_after(tmp_path, price_list_server):
    price_list_server.route(
        PRICE_LIST_PATH.format("eu-west-1"),
        Reply(b"Rate exceeded", status=429, headers={"Retry-After": "3"}),
        Reply(_csv("eu-west-1")),
    )
    home = FinopsHome(tmp_path / "home").create_folders()
    client, waits = _client()
    load = _refresh(home, price_list.FEED, DAY_1, client)
    assert waits == [3.0]
    assert [r.path.split("/")[-2] for r in price_list_server.requests] == ["us-east-1", "eu-west-1", "eu-west-1"]
    assert load.offers == 9


def test_price_list_timeout_fails_naming_aws_and_the_url_and_stores_nothing(tmp_path, price_list_server):
    price_list_server.route(PRICE_LIST_PATH.format("us-east-1"), Reply(_csv("us-east-1"), delay=1.0))
    home = FinopsHome(tmp_path / "home").create_folders()
    client, waits = _client(read_timeout=0.2, max_attempts=2)
    with pytest.raises(FetchError) as error:
        _refresh(home, price_list.FEED, DAY_1, client)
    assert error.value.provider == "AWS"
    assert error.value.url == price_list_server.url + PRICE_LIST_PATH.format("us-east-1")
    assert "Timeout" in error.value.reason
    assert waits == [0.5]
    assert not home.price_payloads("aws_price_list", DAY_1).exists()


@pytest.mark.parametrize(
    ("mangle", "message"),
    [
        (
            lambda body: body.replace(b'"Instance Type"', b'"InstanceType"', 1),
            r"without column\(s\) \['Instance Type'\]",
        ),
        (lambda body: b"<html><body>Access Denied</body></html>", "not an EC2 price list CSV"),
        (lambda body: body.split(b"\n", 6)[6], "not an EC2 price list CSV"),
        (lambda body: body.replace(b'"55.0400000000"', b'"55,04"'), "unreadable price list CSV"),
    ],
    ids=["renamed-column", "html-page", "no-metadata-lines", "price-not-a-number"],
)
def test_price_list_changed_layout_fails_loudly_and_keeps_the_previous_day(
    tmp_path, price_list_server, mangle, message
):
    home = FinopsHome(tmp_path / "home").create_folders()
    client, _ = _client()
    _refresh(home, price_list.FEED, DAY_1, client)
    before = table_fingerprint(home.warehouse)

    price_list_server.route(PRICE_LIST_PATH.format("us-east-1"), Reply(mangle(_csv("us-east-1"))))
    with pytest.raises(LayoutChanged, match=message) as error:
        _refresh(home, price_list.FEED, DAY_2, client)
    assert "AWS" in str(error.value)
    assert price_list_server.url + PRICE_LIST_PATH.format("us-east-1") in str(error.value)
    assert table_fingerprint(home.warehouse) == before
    assert query(home.warehouse, "select distinct price_day from raw.price_observations") == [(DAY_1,)]


def test_a_failed_region_fetch_leaves_the_previous_day_intact(tmp_path, price_list_server):
    home = FinopsHome(tmp_path / "home").create_folders()
    client, _ = _client(max_attempts=2)
    _refresh(home, price_list.FEED, DAY_1, client)
    before = table_fingerprint(home.warehouse)

    price_list_server.route(PRICE_LIST_PATH.format("eu-west-1"), Reply(b"oops", status=503))
    with pytest.raises(FetchError, match="HTTP 503"):
        _refresh(home, price_list.FEED, DAY_2, client)
    assert table_fingerprint(home.warehouse) == before
    assert not home.price_payloads("aws_price_list", DAY_2).exists(), "a partial capture must not be kept"
    day_1 = query(home.warehouse, "select count(*) from raw.price_observations where price_day = '2026-10-30'")
    assert day_1 == [(9,)]


def test_regions_come_from_the_environment_and_are_validated(monkeypatch):
    monkeypatch.delenv(price_list.REGIONS_ENV, raising=False)
    assert price_list.regions() == ["us-east-1", "us-west-2", "eu-west-1"]
    monkeypatch.setenv(price_list.REGIONS_ENV, "ap-northeast-1,us-gov-west-1,ap-northeast-1")
    assert price_list.regions() == ["ap-northeast-1", "us-gov-west-1"]
    monkeypatch.setenv(price_list.REGIONS_ENV, "us-east-1,../../etc")
    with pytest.raises(ValueError, match="not an AWS region code"):
        price_list.regions()


# --- spot.json -----------------------------------------------------------------------------------


def test_spot_feed_keeps_linux_gpu_prices_and_skips_na_and_zero(tmp_path, monkeypatch):
    home = FinopsHome(tmp_path / "home").create_folders()
    with local_server() as server:
        monkeypatch.setenv(spot.BASE_URL_ENV, server.url)
        server.route("/spot.json", Reply(b"busy", status=429, headers={"Retry-After": "2"}), Reply(_spot_json()))
        client, waits = _client()
        load = _refresh(home, spot.FEED, DAY_1, client)
    assert waits == [2.0] and [r.path for r in server.requests] == ["/spot.json", "/spot.json"]
    assert load.source_urls == [server.url + "/spot.json"]
    rows = query(
        home.warehouse,
        "select region, zone, instance_type, pricing_model, price, price_unit, currency, gpu_count "
        "from raw.price_observations where feed = 'aws_spot' order by all",
    )
    # m6i.xlarge and c7i.large (no GPU), p5e.48xlarge (N/A*) and p5.4xlarge ($0) are skipped; Linux column only.
    assert rows == [
        ("eu-west-1", None, "g5.xlarge", "spot", Decimal("0.4512"), "instance-hour", "USD", None),
        ("us-east-1", None, "g5.xlarge", "spot", Decimal("0.4241"), "instance-hour", "USD", None),
        ("us-east-1", None, "p5.48xlarge", "spot", Decimal("24.768"), "instance-hour", "USD", None),
        ("us-east-1", None, "trn1.32xlarge", "spot", Decimal("6.882"), "instance-hour", "USD", None),
    ]


def _spot_json() -> bytes:
    return (FIXTURES / "spot.json").read_bytes()


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b'{"vers":0.01,"config":{"regions":[', "not JSON"),
        (b'{"vers":0.01,"prices":[]}', "no `config` object"),
        (_spot_json().replace(b'"name": "linux"', b'"name": "linux_ondemand"'), "no single `linux` price column"),
        (_spot_json().replace(b'"24.7680"', b'"$24.77"'), "'\\$24.77' is not a number"),
    ],
    ids=["malformed-json", "no-config", "column-renamed", "price-not-a-number"],
)
def test_spot_feed_layout_changes_name_aws_and_the_url_and_keep_the_previous_day(
    tmp_path, monkeypatch, payload, message
):
    home = FinopsHome(tmp_path / "home").create_folders()
    with local_server() as server:
        monkeypatch.setenv(spot.BASE_URL_ENV, server.url)
        server.route("/spot.json", Reply(_spot_json()))
        client, _ = _client()
        _refresh(home, spot.FEED, DAY_1, client)
        before = table_fingerprint(home.warehouse)
        server.route("/spot.json", Reply(payload))
        with pytest.raises(LayoutChanged, match=message) as error:
            _refresh(home, spot.FEED, DAY_2, client)
    assert str(error.value).startswith("AWS: ")
    assert server.url + "/spot.json" in str(error.value)
    assert table_fingerprint(home.warehouse) == before


# --- Spot Advisor --------------------------------------------------------------------------------


def test_spot_advisor_loads_bands_into_its_own_table(tmp_path, monkeypatch):
    home = FinopsHome(tmp_path / "home").create_folders()
    with local_server() as server:
        monkeypatch.setenv(spot_advisor.BASE_URL_ENV, server.url)
        server.route("/spot-advisor-data.json", Reply((FIXTURES / "spot-advisor-data.json").read_bytes()))
        client, _ = _client()
        _refresh(home, spot_advisor.FEED, DAY_1, client)
    rows = query(
        home.warehouse,
        "select region, os, instance_type, savings_pct, interruption_band, interruption_label, interruption_max_pct "
        "from raw.aws_spot_advisor order by all",
    )
    # m6i.xlarge (not an accelerator type) is dropped; bands resolved through `ranges`.
    assert rows == [
        ("eu-west-1", "Linux", "g4dn.xlarge", Decimal(63), 2, "10-15%", Decimal(16)),
        ("us-east-1", "Linux", "g5.xlarge", Decimal(58), 0, "<5%", Decimal(5)),
        ("us-east-1", "Linux", "p5.48xlarge", Decimal(56), 4, ">20%", Decimal(100)),
        ("us-east-1", "Windows", "g5.xlarge", Decimal(40), 1, "5-10%", Decimal(11)),
    ]
    raw_tables = query(home.warehouse, "select table_name from information_schema.tables where table_schema = 'raw'")
    assert raw_tables == [("aws_spot_advisor",)], "advice is not an offer: it has its own table"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda doc: doc.replace(b'"r": 4', b'"r": 7'), "band 7 not in `ranges`"),
        (lambda doc: doc.replace(b'"ranges"', b'"bands"'), "no `ranges` list"),
        (lambda doc: doc.replace(b'"s": 56', b'"savings": 56'), "expected {'s': savings %"),
        (lambda doc: b"[]", "not a JSON object"),
    ],
    ids=["unknown-band", "ranges-renamed", "entry-renamed", "not-an-object"],
)
def test_spot_advisor_layout_changes_fail_loudly(tmp_path, edit, message):
    folder = tmp_path / "capture"
    folder.mkdir()
    (folder / "spot-advisor-data.json").write_bytes(edit((FIXTURES / "spot-advisor-data.json").read_bytes()))
    url = "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json"
    with pytest.raises(LayoutChanged, match=message) as error:
        spot_advisor.parse([Payload(folder / "spot-advisor-data.json", url)], observed_at=None)
    assert str(error.value).startswith("AWS: ") and url in str(error.value)


# --- offline captures through dbt ----------------------------------------------------------------


def test_offline_captures_load_and_build_the_aws_staging_models(tmp_path):
    """Both bundled days load; the AWS sources, staging models and int_prices__gpu_offers build and test."""
    home = FinopsHome(tmp_path / "home").create_folders()
    with connect(home.warehouse) as con:
        recover_and_ensure_raw_tables(con)
        for feed in (price_list.FEED, spot.FEED, spot_advisor.FEED):
            refresh_price_feed(home, con, feed, [date(2026, 9, 1), date(2026, 10, 31)], offline=True, log=log)
    selection = (
        "source:prices.aws_price_list source:prices.aws_spot source:prices.aws_spot_advisor "
        "stg_aws__spot_advisor +int_prices__gpu_offers"
    )
    result = run_dbt(home.root, tmp_path / "t", "build", "--select", *selection.split(), *_CAUTIOUS, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "ERROR=0" in result.stdout and "PASS=0" not in result.stdout
    stg = _staging_relation(home, "stg_aws__spot_advisor")
    # us-east-1 p5en.48xlarge moved from band 2 to band 3 between the two captures; savings 71% → 0.71.
    assert query(
        home.warehouse,
        f"select price_day, interruption_band, savings_ratio from {stg} "
        "where region = 'us-east-1' and os = 'Linux' and instance_type = 'p5en.48xlarge' order by price_day",
    ) == [(date(2026, 9, 1), 2, Decimal("0.71")), (date(2026, 10, 31), 3, Decimal("0.71"))]
    observations = _staging_relation(home, "stg_prices__observations")
    # p5.48xlarge us-east-1 on demand: $55.04 on both days; spot $24.768 → $22.912.
    assert query(
        home.warehouse,
        f"select price_day, feed, price from {observations} where region = 'us-east-1' "
        "and instance_type = 'p5.48xlarge' and pricing_model in ('on_demand', 'spot') order by all",
    ) == [
        (date(2026, 9, 1), "aws_price_list", Decimal("55.04")),
        (date(2026, 9, 1), "aws_spot", Decimal("24.768")),
        (date(2026, 10, 31), "aws_price_list", Decimal("55.04")),
        (date(2026, 10, 31), "aws_spot", Decimal("22.912")),
    ]
    offers = _staging_relation(home, "int_prices__gpu_offers")
    # 8 H100s from the seed: $55.04 / 8 = $6.88 per GPU-hour; the 1-year All Upfront reservation spreads
    # $301,600 over 8,760 h = $34.429223744292 per instance-hour (12 decimals).
    assert query(
        home.warehouse,
        f"select pricing_model, gpu_model, price_per_instance_hour, price_per_gpu_hour from {offers} "
        "where feed = 'aws_price_list' and price_day = '2026-10-31' and region = 'us-east-1' "
        "and instance_type = 'p5.48xlarge' and (pricing_model = 'on_demand' or upfront_price = 301600) order by all",
    ) == [
        ("on_demand", "H100", Decimal("55.04"), Decimal("6.88")),
        ("reserved_1y", "H100", Decimal("34.429223744292"), Decimal("4.303652968037")),
    ]


def _staging_relation(home: FinopsHome, model: str) -> str:
    schemas = query(home.warehouse, f"select table_schema from information_schema.tables where table_name = '{model}'")
    assert len(schemas) == 1, schemas
    return f'"{schemas[0][0]}"."{model}"'
