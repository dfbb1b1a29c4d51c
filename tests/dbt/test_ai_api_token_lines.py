"""AI API spend as token lines, on a real dbt build of bills loaded through the landing zone and the quality gate.

Three deliveries of November 2026, each in its provider's published layout:

- a CUR 2.0 CSV.gz export (overwrite mode, with its manifest) with Amazon Bedrock lines: Nova Pro input (quantity in
  thousands of tokens, priced per `1K tokens`), Nova Pro output (the same unit, but the quantity counts single
  tokens: the rate says so), a cache read per `1M tokens`, a Qwen3 32B batch line, Anthropic's Claude Sonnet 4 sold
  through AWS Marketplace (`USE1-MP:USE1_InputTokenCount-Units`, the model named by the product), a Bedrock line that
  bills no tokens (kept as `unknown`), and an EC2 line that is not AI spend;
- an Azure MCA ActualCost export (the layout of tests/fixtures/azure/mca_actualcost_2026-10.csv, EUR billing, USD
  pricing) with Azure OpenAI meters spelled as Azure spells them (`gpt 4.1 Inp regnl Tokens`,
  `gpt-4o-0806-Inp-glbl Tokens`, `gpt 4o 0806 cached Inp regnl Tokens`, `GPT 5 outpt Glbl 1M Tokens`), one line whose
  Quantity counts single tokens, and a provisioned-throughput hour line (`unknown`);
- a FOCUS 1.2 file with token rows (ConsumedUnit `Tokens`, model and token type in SkuPriceDetails `x_` properties).

The expected tokens and costs are computed here from the files' rows with csv and Decimal: a line's quantity
counts blocks of its unit when cost = quantity × unit price, single tokens when cost = quantity × unit price ÷ block.
The Bedrock usage type without tokens is invented (the reference names no such usage type); every other spelling is
one the reference quotes.
"""

from __future__ import annotations

import csv
import io
import json
import logging
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal

import pytest

from pipelines.lib.catalog.billing import AWS_CUR, AZURE_ACTUAL, FOCUS
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.ingest.landing import register
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from tests.support import FIXTURES_ROOT
from tests.support.aws_fixtures import csv_text, cur2_manifest, write_gzip, write_json
from tests.support.dbt_helpers import dbt_environment, run_dbt
from tests.support.focus_fixtures import BASE_ROW, csv_bytes
from tests.support.warehouse_helpers import query

MILLION = Decimal(1_000_000)
BLOCKS = {"1k tokens": 1000, "1m tokens": 1_000_000, "units": 1, "hrs": 1, "1k": 1000, "1m": 1_000_000}

# --- CUR 2.0, November 2026 -------------------------------------------------------------------------------------

CUR_HEADER = [
    *("bill_bill_type", "bill_billing_entity", "bill_billing_period_end_date", "bill_billing_period_start_date"),
    *("bill_invoice_id", "bill_invoicing_entity", "bill_payer_account_id", "bill_payer_account_name"),
    *("identity_line_item_id", "identity_time_interval", "line_item_currency_code", "line_item_line_item_description"),
    *("line_item_line_item_type", "line_item_operation", "line_item_product_code", "line_item_unblended_cost"),
    *("line_item_unblended_rate", "line_item_usage_account_id", "line_item_usage_amount", "line_item_usage_end_date"),
    *("line_item_usage_start_date", "line_item_usage_type", "pricing_public_on_demand_cost"),
    *("pricing_public_on_demand_rate", "pricing_unit", "product", "product_region_code", "product_servicecode"),
    "resource_tags",
]
CUR_COMMON = {
    "bill_bill_type": "Anniversary", "bill_billing_entity": "AWS", "bill_invoice_id": "EUINGB26-118",
    "bill_billing_period_start_date": "2026-11-01T00:00:00.000Z",
    "bill_billing_period_end_date": "2026-12-01T00:00:00.000Z",
    "bill_invoicing_entity": "Amazon Web Services, Inc.", "bill_payer_account_id": "111122223333",
    "bill_payer_account_name": "research-payer", "line_item_currency_code": "USD", "line_item_line_item_type": "Usage",
    "line_item_usage_account_id": "444455556666", "line_item_product_code": "AmazonBedrock",
    "product_servicecode": "AmazonBedrock", "line_item_operation": "InvokeModelInference",
    "product_region_code": "us-east-1",
}  # fmt: skip


def bedrock(line_id: str, day: int, usage_type: str, amount: str, unit: str, rate: str, cost: str, **extra) -> dict:
    product = extra.pop("product", {"product_name": "Amazon Bedrock", "region": "us-east-1", "model": "Nova Pro"})
    return CUR_COMMON | {
        "identity_line_item_id": line_id,
        "identity_time_interval": f"2026-11-{day:02d}T00:00:00Z/2026-11-{day + 1:02d}T00:00:00Z",
        "line_item_usage_start_date": f"2026-11-{day:02d}T00:00:00.000Z",
        "line_item_usage_end_date": f"2026-11-{day + 1:02d}T00:00:00.000Z",
        "line_item_usage_type": usage_type, "line_item_usage_amount": amount, "pricing_unit": unit,
        "line_item_unblended_rate": rate, "pricing_public_on_demand_rate": rate,
        "line_item_unblended_cost": cost, "pricing_public_on_demand_cost": cost,
        "line_item_line_item_description": f"Amazon Bedrock {usage_type}",
        "product": json.dumps(product), "resource_tags": json.dumps({"user_team": extra.pop("team", "search")}),
    } | extra  # fmt: skip


CLAUDE = {"product_name": "Claude Sonnet 4 (Amazon Bedrock Edition)", "region": "us-east-1"}
QWEN = {"product_name": "Amazon Bedrock", "region": "eu-west-2", "model": "Qwen3 32B"}
CUR_ROWS = [
    bedrock("br-nova-in", 3, "USE1-NovaPro-input-tokens", "1500.25", "1K tokens", "0.0008", "1.2002"),
    # the same unit, the quantity in single tokens: 320000 × 0.0032 / 1000
    bedrock("br-nova-out", 3, "USE1-NovaPro-output-tokens", "320000", "1K tokens", "0.0032", "1.024"),
    bedrock("br-nova-cache", 4, "USE1-NovaPro-cache-read-input-token-count", "0.8", "1M tokens", "0.2", "0.16"),
    bedrock(
        "br-qwen-batch", 4, "EU-Qwen3-32B-input-tokens-batch", "2.5", "1M tokens", "0.075", "0.1875",
        product=QWEN, team="platform", product_region_code="eu-west-2",
    ),
    bedrock(
        "br-claude-in", 3, "USE1-MP:USE1_InputTokenCount-Units", "100000", "Units", "0.000003", "0.3",
        product=CLAUDE, bill_billing_entity="AWS Marketplace", line_item_legal_entity="Anthropic, PBC",
    ),
    bedrock(
        "br-claude-out", 3, "USE1-MP:USE1_OutputTokenCount-Units", "20000", "Units", "0.000015", "0.3",
        product=CLAUDE, bill_billing_entity="AWS Marketplace", line_item_legal_entity="Anthropic, PBC",
    ),
    bedrock("br-no-tokens", 4, "USE1-NovaPro-ProvisionedModelUnit-Hours", "1", "Hrs", "23.5", "23.5"),
    bedrock(
        "ec2", 3, "BoxUsage:m5.large", "24", "Hrs", "0.096", "2.304", line_item_product_code="AmazonEC2",
        product_servicecode="AmazonEC2", product={"product_name": "Amazon Elastic Compute Cloud"},
        line_item_operation="RunInstances",
    ),
]  # fmt: skip

# --- Azure MCA ActualCost, November 2026, EUR billing, USD pricing ----------------------------------------------

AZURE_TEMPLATE = FIXTURES_ROOT / "azure" / "mca_actualcost_2026-10.csv"
RATE = Decimal("0.92")


def azure_rows() -> tuple[list[str], list[dict[str, str]]]:
    with AZURE_TEMPLATE.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        header, template = list(reader.fieldnames or []), next(reader)
    common = template | {
        "billingPeriodStartDate": "2026-11-01T00:00:00Z", "billingPeriodEndDate": "2026-11-30T00:00:00Z",
        "servicePeriodStartDate": "2026-11-01T00:00:00Z", "servicePeriodEndDate": "2026-11-30T00:00:00Z",
        "date": "2026-11-03T00:00:00Z", "serviceFamily": "AI + Machine Learning",
        "consumedService": "Microsoft.CognitiveServices", "meterRegion": "EU West", "additionalInfo": "",
        "ResourceId": "/subscriptions/9c8b7a6f-5e4d-4c3b-a291-807f6e5d4c3b/resourceGroups/rg-search/providers/"
        "Microsoft.CognitiveServices/accounts/search-aoai",
        "pricingModel": "OnDemand", "benefitId": "", "benefitName": "", "chargeType": "Usage",
        "exchangeRatePricingToBilling": str(RATE), "billingCurrency": "EUR", "pricingCurrency": "USD",
    }  # fmt: skip
    meters = [
        # meter, category, sub-category, unit, quantity, unit price (USD), quantity counts blocks
        ("gpt 4.1 Inp regnl Tokens", "Foundry Models", "Azure OpenAI", "1K", "2400", "0.002", True),
        ("gpt-4o-0806-Inp-glbl Tokens", "Cognitive Services", "Azure OpenAI", "1K", "1000", "0.0025", True),
        ("gpt 4o 0806 cached Inp regnl Tokens", "Cognitive Services", "Azure OpenAI", "1K", "500", "0.00125", True),
        ("GPT 5 outpt Glbl 1M Tokens", "Foundry Models", "Azure OpenAI", "1M", "0.3", "10", True),
        ("gpt 4.1 outpt regnl Tokens", "Foundry Models", "Azure OpenAI", "1K", "150000", "0.008", False),
        ("gpt 4.1 Provisioned Managed Glbl", "Foundry Models", "Azure OpenAI", "1 Hour", "24", "1", True),
    ]
    rows = []
    for number, (meter, category, subcategory, unit, quantity, price, in_blocks) in enumerate(meters):
        block = BLOCKS.get(unit.lower(), 1)
        usd = Decimal(quantity) * Decimal(price) / (1 if in_blocks else block)
        rows.append(common | {
            "meterId": f"7c1d2e3f-0000-4a5b-8c9d-00000000000{number}", "meterName": meter, "meterCategory": category,
            "meterSubCategory": subcategory, "ProductName": f"{subcategory} - {meter}", "unitOfMeasure": unit,
            "quantity": quantity, "unitPrice": price, "PayGPrice": price, "effectivePrice": price,
            "costInUsd": str(usd), "costInBillingCurrency": str(usd * RATE),
            "paygCostInUsd": str(usd), "paygCostInBillingCurrency": str(usd * RATE),
            "tags": json.dumps({"team": "search" if number % 2 == 0 else "support"}),
        })  # fmt: skip
    return header, rows


# --- FOCUS 1.2 token rows -----------------------------------------------------------------------------------------

FOCUS_COMMON = BASE_ROW | {
    "BillingAccountId": "org-7781", "BillingAccountName": "Fabrikam AI", "BillingPeriodStart": "2026-11-01T00:00:00Z",
    "BillingPeriodEnd": "2026-12-01T00:00:00Z", "ChargePeriodStart": "2026-11-03T00:00:00Z",
    "ChargePeriodEnd": "2026-11-04T00:00:00Z", "InvoiceIssuerName": "Anthropic", "ProviderName": "Anthropic",
    "PublisherName": "Anthropic", "ServiceCategory": "AI and Machine Learning", "ServiceName": "Claude API",
    "ServiceSubcategory": "Generative AI", "PricingUnit": "1M Tokens", "ConsumedUnit": "Tokens",
    "Tags": json.dumps({"team": "assistant"}),
}  # fmt: skip


def focus_row(meter: str, token_type: str | None, consumed: str, price: str) -> dict[str, str]:
    pricing_quantity = Decimal(consumed) / MILLION
    cost = str(pricing_quantity * Decimal(price))
    details = {"x_ModelId": "claude-sonnet-4-5", "x_ModelDeveloper": "Anthropic"}
    if token_type:
        details["x_TokenType"] = token_type
    return FOCUS_COMMON | {
        "ChargeDescription": f"Claude Sonnet 4.5 {meter}", "SkuId": f"claude-sonnet-4-5-{meter}",
        "SkuPriceId": f"claude-sonnet-4-5-{meter}-std", "SkuMeter": meter, "SkuPriceDetails": json.dumps(details),
        "ConsumedQuantity": consumed, "PricingQuantity": str(pricing_quantity), "ListUnitPrice": price,
        "ContractedUnitPrice": price, "BilledCost": cost, "EffectiveCost": cost, "ListCost": cost,
        "ContractedCost": cost,
    }  # fmt: skip


FOCUS_ROWS = [
    focus_row("Input Tokens", "Input", "2000000", "3"),
    focus_row("Output Tokens", "Output", "400000", "15"),
    focus_row("Cache Write Tokens", "Cache Write", "100000", "3.75"),
    focus_row("Reasoning Output Tokens", None, "50000", "15"),
]


def expected_lines() -> dict[tuple[str, str, str], tuple[Decimal, Decimal]]:
    """(model as billed, token type, day) -> (tokens, cost), from the rows as written, by the block/rate rule."""
    lines: dict[tuple[str, str, str], tuple[Decimal, Decimal]] = {}
    for row in CUR_ROWS[:6]:
        amount, rate, cost = (Decimal(row[key]) for key in ("line_item_usage_amount", "line_item_unblended_rate",
                                                            "line_item_unblended_cost"))  # fmt: skip
        block = BLOCKS[row["pricing_unit"].lower()]
        tokens = amount * block if cost == amount * rate else amount
        assert cost == amount * rate or cost == amount * rate / block
        usage = row["line_item_usage_type"].lower()
        words = (("cache-read", "cache_read"), ("output", "output"), ("input", "input"))
        kind = next(kind for word, kind in words if word in usage)
        lines[(row["identity_line_item_id"], kind, row["line_item_usage_start_date"][:10])] = (tokens, cost)
    return lines


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> FinopsHome:
    tmp_path = tmp_path_factory.mktemp("ai_api")
    home = FinopsHome(tmp_path / "home").create_folders()
    export = tmp_path / "cur" / "exports" / "bedrock-export"
    relative = "data/BILLING_PERIOD=2026-11/bedrock-export-00001.csv.gz"
    write_gzip(export / relative, csv_text(CUR_HEADER, CUR_ROWS))
    manifest = cur2_manifest(
        "bedrock-export", "2026-11", "b3d1c2a4-1111-4c6e-8f70-a1b2c3d4e5f6",
        [f"s3://finops-exports/exports/bedrock-export/{relative}"],
    )  # fmt: skip
    write_json(export / "metadata" / "BILLING_PERIOD=2026-11" / "bedrock-export-Manifest.json", manifest)
    header, rows = azure_rows()
    azure_file = tmp_path / "mca_actualcost_2026-11.csv"
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, header, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    azure_file.write_text(buffer.getvalue(), encoding="utf-8")
    focus_file = tmp_path / "focus_anthropic_2026-11.csv"
    focus_file.write_bytes(csv_bytes(FOCUS_ROWS))
    register(home, "aws_cur", tmp_path / "cur")
    register(home, "azure_actual", azure_file)
    register(home, "focus", focus_file)
    log = logging.getLogger("test")
    with connect(home.warehouse) as con:
        recover_and_ensure_raw_tables(con)
        for entry in (AWS_CUR, AZURE_ACTUAL, FOCUS):
            assert [result.status for result in ingest_landing_zone(home, con, entry, log=log)] == ["loaded"]
    env = dbt_environment(home.root) | {"FINOPS_ONPREM_COSTS_THROUGH": "2026-11-30"}
    build = run_dbt(
        home.root, tmp_path / "target",
        "build", "--select", "+fct_ai_api_token_spend_daily", "--exclude", "test_type:unit",
        "--indirect-selection", "cautious",
        "--log-path", str(tmp_path / "logs"), environment=env,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout[-6000:]
    assert "assert_ai_api_token_spend_reconciles" in build.stdout
    return home


def token_lines(home: FinopsHome, where: str) -> list[tuple]:
    return query(
        home.warehouse,
        "select billed_item, billed_model, model, token_type, deployment_type, tokens, token_scale_rule, "
        f"effective_cost, team, recognition_rule from intermediate.int_ai_api__token_lines where {where} "
        "order by billed_item",
    )


def test_bedrock_lines_become_token_lines_at_either_scale(built: FinopsHome):
    expected = expected_lines()
    by_usage = {row["line_item_usage_type"]: row["identity_line_item_id"] for row in CUR_ROWS}
    rows = token_lines(built, "x_source = 'aws_cur'")
    got = {(by_usage[row[0]], row[3]): (row[5], row[7]) for row in rows if row[3] != "unknown"}
    assert got == {(line_id, kind): value for (line_id, kind, _), value in expected.items()}
    assert got[("br-nova-in", "input")][0] == Decimal(1_500_250)  # 1500.25 thousands
    assert got[("br-nova-out", "output")][0] == Decimal(320_000)  # single tokens: the rate says so
    described = {row[0]: (row[2], row[4], row[6], row[8], row[9]) for row in rows}
    assert described["USE1-NovaPro-input-tokens"] == (
        "amazon.nova-pro",
        None,
        "rate_prices_quantity_in_blocks",
        "search",
        "bedrock_usage_type",
    )
    assert described["USE1-NovaPro-output-tokens"][2] == "rate_prices_quantity_in_tokens"
    assert described["EU-Qwen3-32B-input-tokens-batch"][:2] == ("qwen.qwen3-32b", "batch")
    assert described["USE1-MP:USE1_InputTokenCount-Units"] == (
        "anthropic.claude-sonnet-4",
        None,
        "unit_counts_tokens",
        "search",
        "bedrock_marketplace_usage_type",
    )
    # a Bedrock line that bills no tokens is kept, flagged, with its cost; EC2 is not AI API spend
    (unknown,) = [row for row in rows if row[3] == "unknown"]
    assert (unknown[0], unknown[5], unknown[7]) == ("USE1-NovaPro-ProvisionedModelUnit-Hours", None, Decimal("23.5"))
    assert "BoxUsage:m5.large" not in described


def test_azure_openai_meters_give_model_direction_deployment_and_tokens(built: FinopsHome):
    _, rows = azure_rows()
    rows_by_meter = {row["meterName"]: row for row in rows}
    got = {row[0]: row for row in token_lines(built, "x_source = 'azure_actual'")}
    assert set(got) == set(rows_by_meter)
    expected = {
        "gpt 4.1 Inp regnl Tokens": ("gpt-4.1", "input", "regional", Decimal(2_400_000)),
        "gpt-4o-0806-Inp-glbl Tokens": ("gpt-4o-2024-08-06", "input", "global", Decimal(1_000_000)),
        "gpt 4o 0806 cached Inp regnl Tokens": ("gpt-4o-2024-08-06", "cache_read", "regional", Decimal(500_000)),
        "GPT 5 outpt Glbl 1M Tokens": ("gpt-5", "output", "global", Decimal(300_000)),
        "gpt 4.1 outpt regnl Tokens": ("gpt-4.1", "output", "regional", Decimal(150_000)),
        "gpt 4.1 Provisioned Managed Glbl": (None, "unknown", "global", None),  # no token word: no model read
    }
    for meter, (model, kind, deployment, tokens) in expected.items():
        row = got[meter]
        assert (row[2], row[3], row[4], row[5]) == (model, kind, deployment, tokens), meter
        assert row[7] == Decimal(rows_by_meter[meter]["costInBillingCurrency"]), meter
        assert row[8] == json.loads(rows_by_meter[meter]["tags"])["team"]
    assert got["gpt 4.1 outpt regnl Tokens"][6] == "rate_prices_quantity_in_tokens"
    assert got["gpt 4.1 Inp regnl Tokens"][6] == "rate_prices_quantity_in_blocks"


def test_focus_token_rows_take_consumed_quantity_and_stated_properties(built: FinopsHome):
    got = {row[0]: row for row in token_lines(built, "x_source = 'focus'")}
    for source in FOCUS_ROWS:
        row = got[source["SkuMeter"]]
        assert row[2] == "claude-sonnet-4-5"
        assert row[5] == Decimal(source["ConsumedQuantity"])
        assert row[6] == "consumed_unit_tokens"
        assert row[7] == Decimal(source["EffectiveCost"])
    assert {meter: row[3] for meter, row in got.items()} == {
        "Input Tokens": "input",
        "Output Tokens": "output",
        "Cache Write Tokens": "cache_write",
        "Reasoning Output Tokens": "reasoning",
    }


def test_the_mart_sums_tokens_and_cost_per_model_type_team_and_currency(built: FinopsHome):
    expected: dict[tuple, list[Decimal]] = defaultdict(lambda: [Decimal(0), Decimal(0)])
    models = {"USE1-Nova": "amazon.nova-pro", "EU-Qwen3": "qwen.qwen3-32b", "USE1-MP:": "anthropic.claude-sonnet-4"}
    for row in CUR_ROWS[:6]:
        (_, kind, day), (tokens, cost) = next(
            (key, value) for key, value in expected_lines().items() if key[0] == row["identity_line_item_id"]
        )
        model = next(m for prefix, m in models.items() if row["line_item_usage_type"].startswith(prefix))
        team = json.loads(row["resource_tags"])["user_team"]
        key = (day, "AWS", model, kind, team, "USD")
        expected[key][0] += tokens
        expected[key][1] += cost
    rows = query(
        built.warehouse,
        "select cast(usage_date as varchar), provider_name, model, token_type, team, billing_currency, tokens, "
        "effective_cost, effective_cost_per_million_tokens from marts.fct_ai_api_token_spend_daily "
        "where provider_name = 'AWS' and token_type <> 'unknown'",
    )
    assert {row[:6]: [row[6], row[7]] for row in rows} == dict(expected)
    for row in rows:
        assert row[8] == (row[7] * MILLION / row[6]).quantize(Decimal("0.000001"), ROUND_HALF_UP)
    # Nova Pro input: 1.2002 for 1,500,250 tokens is 0.8 per million
    assert {row[2:4]: row[8] for row in rows}[("amazon.nova-pro", "input")] == Decimal("0.8")


def test_the_mart_reconciles_to_the_ai_api_usage_lines_per_day_and_currency(built: FinopsHome):
    totals: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    for row in CUR_ROWS:
        if row["line_item_product_code"] == "AmazonBedrock":
            totals[(row["line_item_usage_start_date"][:10], "USD")] += Decimal(row["line_item_unblended_cost"])
    for row in azure_rows()[1]:
        totals[(row["date"][:10], "EUR")] += Decimal(row["costInBillingCurrency"])
    for row in FOCUS_ROWS:
        totals[(row["ChargePeriodStart"][:10], "USD")] += Decimal(row["EffectiveCost"])
    rows = query(
        built.warehouse,
        "select cast(usage_date as varchar), billing_currency, sum(effective_cost), sum(billed_cost) "
        "from marts.fct_ai_api_token_spend_daily group by all",
    )
    assert {(row[0], row[1]): row[2] for row in rows} == dict(totals)
    assert {(row[0], row[1]): row[3] for row in rows} == dict(totals)
