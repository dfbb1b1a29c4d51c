"""Current AI API token prices on a real dbt build: both token-price feeds fetched over real HTTP for two days (the
second day's captures add GPT-5 mini and Llama 3.3 70B), then `dbt build` of their sources, the staging model, the
seeds ai_api_list_prices and inference_api_comparables, int_prices__ai_api_token_prices and the test that every
comparable is priced. The expected rows are recomputed here from the second day's fixtures and the seed CSV with
Decimal: the latest capture only, each price scaled to a million tokens, a reasoning price copied from every output
price (no list here has one of its own).
"""

from __future__ import annotations

import csv
import logging
import os
import re
import subprocess
from datetime import date
from decimal import Decimal

from pipelines.lib.prices.market_prices import refresh_price_feed
from pipelines.lib.settings import DBT_PROJECT_DIR, FinopsHome
from pipelines.lib.transform.dbt import DBT_EXECUTABLE
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from sources.common.http import HttpClient
from sources.prices import azure_openai, azure_retail
from sources.prices.aws import bedrock
from tests.sources.prices.test_prices_ai_api import AZURE, BEDROCK, BEDROCK_ROUTE, expected_azure, expected_bedrock
from tests.support.dbt_helpers import run_dbt
from tests.support.local_http import Reply, local_server
from tests.support.warehouse_helpers import query

SEEDS = DBT_PROJECT_DIR / "seeds"
DAY_1, DAY_2 = date(2026, 10, 30), date(2026, 10, 31)
log = logging.getLogger("test")


def _load_two_days(home: FinopsHome, monkeypatch) -> None:
    monkeypatch.setenv(azure_openai.REGIONS_ENV, "eastus")
    monkeypatch.setenv(bedrock.REGIONS_ENV, "us-east-1")
    pages = {DAY_1: "eastus-page-2.json", DAY_2: "eastus-page-2-later.json"}
    offers = {DAY_1: "us-east-1.json", DAY_2: "us-east-1-later.json"}
    with local_server() as server, connect(home.warehouse) as con:
        recover_and_ensure_raw_tables(con)
        for env in (azure_openai.BASE_URL_ENV, bedrock.BASE_URL_ENV):
            monkeypatch.setenv(env, server.url)
        for day in (DAY_1, DAY_2):
            server.route(
                azure_retail.PATH,
                Reply((AZURE / "eastus-page-1.json").read_bytes()),
                Reply((AZURE / pages[day]).read_bytes()),
            )
            server.route(BEDROCK_ROUTE, Reply((BEDROCK / offers[day]).read_bytes()))
            for feed in (azure_openai.FEED, bedrock.FEED):
                client = HttpClient(provider=feed.provider, sleep=lambda _: None)
                refresh_price_feed(home, con, feed, [day], offline=False, log=log, client=client, today=day)


def _expected() -> set[tuple]:
    listed = {("Microsoft", *row, "feed") for row in expected_azure("eastus-page-1.json", "eastus-page-2-later.json")}
    listed |= {("AWS", *row, "feed") for row in expected_bedrock("us-east-1-later.json")}
    with (SEEDS / "ai_api_list_prices.csv").open() as seed:
        for row in csv.DictReader(seed):
            listed.add(
                (
                    row["provider"],
                    row["model"],
                    row["token_type"],
                    row["pricing_tier"],
                    row["deployment_type"],
                    row["region"] or None,
                    Decimal(row["price_per_million"]).normalize(),
                    "seed",
                )
            )
    rows = {(*row, "list") for row in listed}
    rows |= {(p, m, "reasoning", *rest, source, "output") for p, m, t, *rest, source in listed if t == "output"}
    return rows


def test_current_api_prices_are_the_latest_captures_and_the_seed_with_reasoning_priced_as_output(tmp_path, monkeypatch):
    home = FinopsHome(tmp_path / "home").create_folders()
    _load_two_days(home, monkeypatch)
    selection = (
        "source:prices.azure_openai source:prices.aws_bedrock stg_prices__ai_api_token_prices ai_api_list_prices "
        "inference_api_comparables int_prices__ai_api_token_prices assert_inference_api_comparables_are_priced"
    )
    result = run_dbt(home.root, tmp_path / "t", "build", "--select", *selection.split(), timeout=600)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "ERROR=0" in result.stdout and "WARN=0" in result.stdout
    (schema,) = query(
        home.warehouse,
        "select table_schema from information_schema.tables where table_name = 'int_prices__ai_api_token_prices'",
    )
    rows = query(
        home.warehouse,
        "select provider, model, token_type, pricing_tier, deployment_type, region, price_per_million, price_source, "
        f'price_basis from "{schema[0]}".int_prices__ai_api_token_prices',
    )
    actual = {(*row[:6], row[6].normalize(), *row[7:]) for row in rows}
    expected = _expected()
    assert len(rows) == len(actual) == len(expected)
    assert actual == expected
    # The second day's captures are current: GPT-5 mini and Llama 3.3 70B (listed only then) are in, each day's
    # other prices once.
    days = query(
        home.warehouse, f'select distinct captured_on, price_source from "{schema[0]}".int_prices__ai_api_token_prices'
    )
    assert sorted(days) == [(DAY_2, "feed"), (date(2026, 12, 7), "seed")]


def test_a_comparable_without_a_price_is_a_warning(tmp_path, monkeypatch):
    """The comparables test can fail (as a warning): one comparable names a model no list prices."""
    home = FinopsHome(tmp_path / "home").create_folders()
    _load_two_days(home, monkeypatch)
    project = tmp_path / "project"
    subprocess.run(["cp", "-r", str(DBT_PROJECT_DIR), str(project)], check=True)
    comparables = project / "seeds" / "inference_api_comparables.csv"
    with comparables.open("a") as seed:
        seed.write(
            "Mixtral-8x7B-Instruct,mistralai/Mixtral-8x7B-Instruct-v0.1,AWS,Amazon Bedrock,"
            "mistral.mixtral-8x7b-instruct,regional,us-east-1,same_model,not in any captured list\n"
        )
    selection = (
        "source:prices.azure_openai source:prices.aws_bedrock stg_prices__ai_api_token_prices ai_api_list_prices "
        "inference_api_comparables int_prices__ai_api_token_prices assert_inference_api_comparables_are_priced"
    )
    result = subprocess.run(
        [DBT_EXECUTABLE, "build", "--select", *selection.split(), "--target-path", str(tmp_path / "t")],
        cwd=project,
        env=os.environ | {"FINOPS_HOME": str(home.root)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:]  # a warning: no other model waits for it
    assert re.search(r"WARN 1 assert_inference_api_comparables_are_priced", result.stdout), result.stdout[-3000:]
