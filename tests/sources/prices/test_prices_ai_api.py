"""AI API token-price feeds over real HTTP (Azure Retail Prices for Azure OpenAI, the AmazonBedrock price list),
loaded into a real DuckDB file. The fixtures (tests/fixtures/prices/azure_openai/, aws_bedrock/) are written by
hand in the providers' documented layouts; the expected rows are recomputed here from the JSON with Decimal: each
text-token meter or token product's price per 1K or 1M tokens scaled to a million, every other item skipped.
"""

from __future__ import annotations

import json
import logging
from datetime import date
from decimal import Decimal
from urllib.parse import parse_qs, urlsplit

import pytest

from pipelines.lib.prices.market_prices import refresh_price_feed
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from sources.common.http import HttpClient
from sources.prices import azure_openai, azure_retail
from sources.prices.aws import bedrock
from sources.prices.offers import LayoutChanged, Payload
from tests.support import FIXTURES_ROOT
from tests.support.local_http import Reply, local_server
from tests.support.warehouse_helpers import query, table_fingerprint

AZURE = FIXTURES_ROOT / "prices" / "azure_openai"
BEDROCK = FIXTURES_ROOT / "prices" / "aws_bedrock"
BEDROCK_ROUTE = bedrock.PATH.format(region="us-east-1")
log = logging.getLogger("test")
DAY_1, DAY_2 = date(2026, 10, 30), date(2026, 10, 31)


def _refresh(home: FinopsHome, feed, day: date):
    client = HttpClient(provider=feed.provider, sleep=lambda _: None)
    with connect(home.warehouse) as con:
        return refresh_price_feed(home, con, feed, [day], offline=False, log=log, client=client, today=day)


def _rows(home: FinopsHome, feed: str) -> set[tuple]:
    rows = query(
        home.warehouse,
        "select model, token_type, pricing_tier, deployment_type, region, price_per_million "
        f"from raw.ai_api_token_prices where feed = '{feed}'",
    )
    return {(*row[:5], row[5].normalize()) for row in rows}


# Azure meters by hand: (model, token type, tier, deployment) for each text-token meter of the two eastus pages.
AZURE_METERS = {
    "gpt 4.1 Inp glbl Tokens": ("gpt-4.1", "input", "standard", "global"),
    "gpt 4.1 cached Inp glbl Tokens": ("gpt-4.1", "cache_read", "standard", "global"),
    "gpt 4.1 Outp glbl Tokens": ("gpt-4.1", "output", "standard", "global"),
    "gpt 4.1 Inp regnl Tokens": ("gpt-4.1", "input", "standard", "regional"),
    "gpt 4.1 cached Inp regnl Tokens": ("gpt-4.1", "cache_read", "standard", "regional"),
    "gpt 4.1 Outp regnl Tokens": ("gpt-4.1", "output", "standard", "regional"),
    "gpt 4.1 Batch Inp glbl Tokens": ("gpt-4.1", "input", "batch", "global"),
    "gpt 4.1 Batch Outp glbl Tokens": ("gpt-4.1", "output", "batch", "global"),
    "gpt 4.1 mini Inp glbl Tokens": ("gpt-4.1-mini", "input", "standard", "global"),
    "gpt 4.1 mini cached Inp glbl Tokens": ("gpt-4.1-mini", "cache_read", "standard", "global"),
    "gpt 4.1 mini Outp glbl Tokens": ("gpt-4.1-mini", "output", "standard", "global"),
    "gpt-4o-0806-Inp-glbl Tokens": ("gpt-4o", "input", "standard", "global"),
    "gpt 4o 0806 cached Inp glbl Tokens": ("gpt-4o", "cache_read", "standard", "global"),
    "gpt-4o-0806-Outp-glbl Tokens": ("gpt-4o", "output", "standard", "global"),
    "gpt 4o 0806 Inp regnl Tokens": ("gpt-4o", "input", "standard", "regional"),
    "gpt 4o 0806 cached Inp regnl Tokens": ("gpt-4o", "cache_read", "standard", "regional"),
    "gpt 4o 0806 Outp regnl Tokens": ("gpt-4o", "output", "standard", "regional"),
    "gpt 4o mini 0718 Inp glbl Tokens": ("gpt-4o-mini", "input", "standard", "global"),
    "gpt 4o mini 0718 cached Inp glbl Tokens": ("gpt-4o-mini", "cache_read", "standard", "global"),
    "gpt 4o mini 0718 Outp glbl Tokens": ("gpt-4o-mini", "output", "standard", "global"),
    "GPT 5 Inp Glbl 1M Tokens": ("gpt-5", "input", "standard", "global"),
    "GPT 5 cchd Inp Glbl 1M Tokens": ("gpt-5", "cache_read", "standard", "global"),
    "GPT 5 outpt Glbl 1M Tokens": ("gpt-5", "output", "standard", "global"),
    "GPT 5 mini Inp Glbl 1M Tokens": ("gpt-5-mini", "input", "standard", "global"),
    "GPT 5 mini cchd Inp Glbl 1M Tokens": ("gpt-5-mini", "cache_read", "standard", "global"),
    "GPT 5 mini outpt Glbl 1M Tokens": ("gpt-5-mini", "output", "standard", "global"),
    "o3 mini 0131 Inp glbl Tokens": ("o3-mini", "input", "standard", "global"),
    "o3 mini 0131 cached Inp glbl Tokens": ("o3-mini", "cache_read", "standard", "global"),
    "o3 mini 0131 Outp glbl Tokens": ("o3-mini", "output", "standard", "global"),
    "o3 mini 0131 Batch Outp Data Zone Tokens": ("o3-mini", "output", "batch", "data_zone"),
}
AZURE_SKIPPED = {
    "gpt 4o 0806 Provisioned Managed Unit",  # per hour, not per token
    "gpt 4o rt aud Inp glbl 1M Tokens",  # realtime audio tokens
    "gpt 4.1 FT Training",  # fine-tuning hours, zero-priced
}


def expected_azure(*pages: str) -> set[tuple]:
    """Every text-token Consumption meter of the pages, its price scaled from 1K or 1M tokens to a million."""
    expected = set()
    for page in pages:
        for item in json.loads((AZURE / page).read_text(), parse_float=Decimal)["Items"]:
            if item["meterName"] in AZURE_SKIPPED or item["type"] != "Consumption":
                assert item["meterName"] in AZURE_SKIPPED or item["isPrimaryMeterRegion"] is False
                continue
            per_unit = {"1K": Decimal(1000), "1M": Decimal(1)}[item["unitOfMeasure"]]
            price = Decimal(item["retailPrice"]) * per_unit
            expected.add((*AZURE_METERS[item["meterName"]][:2], *AZURE_METERS[item["meterName"]][2:], "eastus", price))
    return {(m, t, tier, dep, region, p.normalize()) for m, t, tier, dep, region, p in expected}


def expected_bedrock(name: str) -> set[tuple]:
    """Products whose usagetype ends in a token direction; model id from provider and model by the documented rule."""
    document = json.loads((BEDROCK / name).read_text())
    ids = {
        ("Amazon", "Nova Micro"): "amazon.nova-micro",
        ("Amazon", "Nova Lite"): "amazon.nova-lite",
        ("Amazon", "Nova Pro"): "amazon.nova-pro",
        ("Meta", "Llama 3.1 8B Instruct"): "meta.llama3-1-8b-instruct",
        ("Meta", "Llama 3.1 70B Instruct"): "meta.llama3-1-70b-instruct",
        ("Meta", "Llama 3.1 405B Instruct"): "meta.llama3-1-405b-instruct",
        ("Meta", "Llama 3.3 70B Instruct"): "meta.llama3-3-70b-instruct",
        ("DeepSeek", "DeepSeek R1"): "deepseek.r1",
    }
    directions = {
        "-input-tokens": "input",
        "-output-tokens": "output",
        "-cache-read-input-token-count": "cache_read",
    }
    expected = set()
    for sku, product in document["products"].items():
        usage = product["attributes"]["usagetype"]
        batch = usage.endswith("-batch")
        direction = next((d for suffix, d in directions.items() if usage.removesuffix("-batch").endswith(suffix)), None)
        if direction is None:
            continue
        (term,) = document["terms"]["OnDemand"][sku].values()
        (dimension,) = term["priceDimensions"].values()
        assert dimension["unit"] == "1K tokens"
        model = ids[(product["attributes"]["provider"], product["attributes"]["model"])]
        price = Decimal(dimension["pricePerUnit"]["USD"]) * 1000
        expected.add((model, direction, "batch" if batch else "standard", "regional", "us-east-1", price.normalize()))
    return expected


def test_azure_openai_pages_are_followed_and_each_text_token_meter_loaded(tmp_path, monkeypatch):
    monkeypatch.setenv(azure_openai.REGIONS_ENV, "eastus")
    home = FinopsHome(tmp_path / "home").create_folders()
    with local_server() as server:
        pages = (Reply((AZURE / "eastus-page-1.json").read_bytes()), Reply((AZURE / "eastus-page-2.json").read_bytes()))
        server.route(azure_retail.PATH, *pages)
        monkeypatch.setenv(azure_openai.BASE_URL_ENV, server.url)
        load = _refresh(home, azure_openai.FEED, DAY_1)
    first, second = (parse_qs(urlsplit(request.path).query) for request in server.requests)
    assert first["$filter"] == [
        "serviceName eq 'Foundry Models' and armRegionName eq 'eastus' "
        "and contains(productName, 'OpenAI') and priceType eq 'Consumption'"
    ]
    assert second["$skip"] == ["20"], "the NextPageLink, rebased onto the local server, was followed"
    expected = expected_azure("eastus-page-1.json", "eastus-page-2.json")
    assert len(expected) == 27 and load.offers == 27
    assert _rows(home, "azure_openai") == expected
    gpt4o = query(
        home.warehouse,
        "select distinct provider, service, model_name, model_version, unit_tokens, effective_date, currency "
        "from raw.ai_api_token_prices where model = 'gpt-4o'",
    )
    assert gpt4o == [("Microsoft", "Azure OpenAI", "gpt 4o 0806", "0806", 1000, date(2024, 8, 6), "USD")]


def test_bedrock_offer_file_is_read_per_region_and_only_token_products_loaded(tmp_path, monkeypatch):
    monkeypatch.setenv(bedrock.REGIONS_ENV, "us-east-1")
    home = FinopsHome(tmp_path / "home").create_folders()
    with local_server() as server:
        server.route(BEDROCK_ROUTE, Reply((BEDROCK / "us-east-1.json").read_bytes()))
        monkeypatch.setenv(bedrock.BASE_URL_ENV, server.url)
        load = _refresh(home, bedrock.FEED, DAY_1)
    assert [request.path for request in server.requests] == [BEDROCK_ROUTE]
    expected = expected_bedrock("us-east-1.json")
    assert len(expected) == 29, "provisioned throughput, model storage and image products are skipped"
    assert _rows(home, "aws_bedrock") == expected
    assert load.source_urls == [server.url + BEDROCK_ROUTE]
    nova = query(
        home.warehouse,
        "select price, unit_tokens, price_per_million from raw.ai_api_token_prices "
        "where model = 'amazon.nova-micro' and token_type = 'cache_read'",
    )
    assert nova == [(Decimal("0.00000875"), 1000, Decimal("0.00875"))]


@pytest.mark.parametrize(
    ("meter", "expected"),
    [
        ("gpt 4.1 Inp regnl Tokens", ("gpt-4.1", None, "input", "standard", "regional")),
        ("gpt-4o-0806-Inp-glbl Tokens", ("gpt-4o", "0806", "input", "standard", "global")),
        ("gpt 4o 0806 cached Inp regnl Tokens", ("gpt-4o", "0806", "cache_read", "standard", "regional")),
        ("GPT 5 outpt Glbl 1M Tokens", ("gpt-5", None, "output", "standard", "global")),
        ("4o cchd Inp regnl 1M Tokens", ("gpt-4o", None, "cache_read", "standard", "regional")),
        ("5 mini pp Inp Gl 1M Tokens", ("gpt-5-mini", None, "input", "priority", "global")),
        ("o3 mini 0131 Batch Outp Data Zone Tokens", ("o3-mini", "0131", "output", "batch", "data_zone")),
        ("gpt 4o Input global Tokens", ("gpt-4o", None, "input", "standard", "global")),
        ("gpt 4o rt aud Inp glbl 1M Tokens", None),
        ("gpt 4o 0806 Provisioned Managed Unit", None),
        ("gpt 4.1 Inp Tokens", None),
    ],
)
def test_azure_meter_names_read_word_by_word(meter, expected):
    parsed = azure_openai.parse_meter(meter)
    fields = ("model", "model_version", "token_type", "pricing_tier", "deployment_type")
    assert (tuple(parsed[name] for name in fields) if parsed else None) == expected


def _edited(folder, name, source, edit) -> Payload:
    folder.mkdir(exist_ok=True)
    document = json.loads(source.read_text())
    edit(document)
    (folder / name).write_text(json.dumps(document))
    return Payload(folder / name, f"https://example.test/{name}")


def _azure_item(meter):
    def edit(document):
        (item,) = [i for i in document["Items"] if i["meterName"] == "gpt 4.1 Outp glbl Tokens"]
        meter(item)

    return edit


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            _azure_item(lambda item: item.update(retailPrice="0.008")),
            "eastus-page-001.json: item 2 (meterName 'gpt 4.1 Outp glbl Tokens'): retailPrice '0.008' is not a price",
        ),
        (
            _azure_item(lambda item: item.update(unitOfMeasure="10K")),
            "eastus-page-001.json: item 2 (meterName 'gpt 4.1 Outp glbl Tokens'): unitOfMeasure '10K' is not one of",
        ),
        (_azure_item(lambda item: item.pop("armRegionName")), "eastus-page-001.json: item 2: no armRegionName"),
        (lambda document: document.pop("Items"), "eastus-page-001.json: no `Items` list"),
    ],
    ids=["price-as-text", "unknown-unit", "no-region", "no-items"],
)
def test_a_bad_azure_payload_is_refused_naming_file_item_and_field(tmp_path, edit, message):
    payload = _edited(tmp_path / "capture", "eastus-page-001.json", AZURE / "eastus-page-1.json", edit)
    with pytest.raises(LayoutChanged, match=message.replace("(", r"\(").replace(")", r"\)")) as error:
        azure_openai.parse([payload], observed_at=None)
    assert str(error.value).startswith("Microsoft Retail Prices (Azure OpenAI): ")


def _bedrock_product(usage, change):
    def edit(document):
        (sku,) = [s for s, p in document["products"].items() if p["attributes"]["usagetype"] == usage]
        change(document, sku)

    return edit


def _price_text(text):
    def change(document, sku):
        (term,) = document["terms"]["OnDemand"][sku].values()
        (dimension,) = term["priceDimensions"].values()
        dimension["pricePerUnit"]["USD"] = text

    return change


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            _bedrock_product("USE1-NovaPro-input-tokens", _price_text("$0.0008")),
            "us-east-1.json: product .* \\(usagetype USE1-NovaPro-input-tokens\\): pricePerUnit USD '\\$0.0008' "
            "is not a number",
        ),
        (
            _bedrock_product(
                "USE1-NovaPro-output-tokens", lambda d, sku: d["products"][sku]["attributes"].pop("model")
            ),
            "us-east-1.json: product .* \\(usagetype USE1-NovaPro-output-tokens\\): no attribute `model`",
        ),
        (
            _bedrock_product("USE1-NovaLite-input-tokens", lambda d, sku: d["terms"]["OnDemand"].pop(sku)),
            "us-east-1.json: product .* \\(usagetype USE1-NovaLite-input-tokens\\): expected one OnDemand offer term",
        ),
        (lambda document: document.update(offerCode="AmazonEC2"), "us-east-1.json: not an AmazonBedrock offer file"),
    ],
    ids=["price-not-a-number", "no-model-attribute", "no-term", "other-offer"],
)
def test_a_bad_bedrock_payload_is_refused_naming_file_product_and_field(tmp_path, edit, message):
    payload = _edited(tmp_path / "capture", "us-east-1.json", BEDROCK / "us-east-1.json", edit)
    with pytest.raises(LayoutChanged, match=message) as error:
        bedrock.parse([payload], observed_at=None)
    assert str(error.value).startswith("AWS price list (Amazon Bedrock): ")


def test_a_refused_capture_keeps_the_previous_day(tmp_path, monkeypatch):
    monkeypatch.setenv(bedrock.REGIONS_ENV, "us-east-1")
    home = FinopsHome(tmp_path / "home").create_folders()
    with local_server() as server:
        monkeypatch.setenv(bedrock.BASE_URL_ENV, server.url)
        server.route(BEDROCK_ROUTE, Reply((BEDROCK / "us-east-1.json").read_bytes()))
        _refresh(home, bedrock.FEED, DAY_1)
        before = table_fingerprint(home.warehouse)
        server.route(BEDROCK_ROUTE, Reply(b"<html>Service Unavailable</html>"))
        with pytest.raises(LayoutChanged, match=r"us-east-1\.json: not JSON"):
            _refresh(home, bedrock.FEED, DAY_2)
    assert table_fingerprint(home.warehouse) == before


@pytest.mark.parametrize(
    ("provider", "model", "expected"),
    [
        ("Amazon", "Nova Pro", "amazon.nova-pro"),
        ("Meta", "Llama 3.1 70B Instruct", "meta.llama3-1-70b-instruct"),
        ("DeepSeek", "DeepSeek R1", "deepseek.r1"),
        ("Mistral AI", "Mistral Large", "mistral.mistral-large"),
    ],
)
def test_bedrock_model_ids_follow_bedrocks_spelling(provider, model, expected):
    assert bedrock.model_id(provider, model) == expected
