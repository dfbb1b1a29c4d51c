"""API spend by team: the bills' AI API cost allocated to teams by a LiteLLM spend log, on a real dbt build.

The bills are test_ai_api_token_lines's (a CUR 2.0 export with Amazon Bedrock lines, an Azure MCA export with Azure
OpenAI meters in EUR, a FOCUS file with Anthropic token rows), loaded through the landing zone and the quality gate.
The gateway export is LiteLLM's `LiteLLM_SpendLogs` table as CSV, in the column order of LiteLLM's schema.prisma,
with the model strings LiteLLM logs: `bedrock/amazon.nova-pro-v1:0`, `bedrock/us.anthropic.claude-sonnet-4-…-v1:0`
(a cross-region inference profile), `azure/gpt-4o` (an Azure deployment's name, mapped by seed ai_gateway_models),
`azure/gpt-4.1`; cache reads in `metadata.additional_usage_values`; a request LiteLLM answered from its own cache
and a failed one (neither billed by the provider).

The expected allocation is computed here from the spend log with csv and Decimal (the normalised model of each
gateway string written out by hand), against the bill rows int_ai_api__token_lines holds (test_ai_api_token_lines
checks those against the bill files); the reconciliation is checked against the bill files themselves.
"""

from __future__ import annotations

import csv
import io
import json
import logging
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

from pipelines.lib.catalog.ai_gateway import LITELLM
from pipelines.lib.catalog.billing import AWS_CUR, AZURE_ACTUAL, FOCUS
from pipelines.lib.ingest.ai_gateway import ingest_litellm_spend_logs
from pipelines.lib.ingest.billing_deliveries import ingest_landing_zone
from pipelines.lib.ingest.landing import register
from pipelines.lib.settings import FinopsHome
from pipelines.lib.warehouse.connection import connect
from pipelines.lib.warehouse.raw_schema import recover_and_ensure_raw_tables
from tests.dbt.test_ai_api_token_lines import CUR_HEADER, CUR_ROWS, FOCUS_ROWS, azure_rows
from tests.support.aws_fixtures import csv_text, cur2_manifest, write_gzip, write_json
from tests.support.dbt_helpers import dbt_environment, run_dbt
from tests.support.focus_fixtures import csv_bytes
from tests.support.warehouse_helpers import query

CENT = Decimal("0.01")
PICO = Decimal("1e-12")

# LiteLLM_SpendLogs, in schema.prisma's order.
SPEND_LOG_HEADER = [
    *("request_id", "call_type", "api_key", "spend", "total_tokens", "prompt_tokens", "completion_tokens"),
    *("startTime", "endTime", "request_duration_ms", "completionStartTime", "model", "model_id", "model_group"),
    *("custom_llm_provider", "api_base", "user", "metadata", "cache_hit", "cache_key", "request_tags", "team_id"),
    *("organization_id", "end_user", "requester_ip_address", "messages", "response", "session_id", "status"),
    *("mcp_namespaced_tool_name", "agent_id", "proxy_server_request"),
]
TEAM_IDS = {"search": "7f0c1a52-team-search", "ranking": "1b9d4e07-team-ranking", "support": "c3a8f611-team-support"}
NOVA = "bedrock/amazon.nova-pro-v1:0"
CLAUDE = "bedrock/us.anthropic.claude-sonnet-4-20250514-v1:0"
GPT_4O = "azure/gpt-4o"
GPT_41 = "azure/gpt-4.1"
MODEL_IDS = {
    NOVA: ("bedrock", "amazon.nova-pro"),
    CLAUDE: ("bedrock", "anthropic.claude-sonnet-4"),
    GPT_4O: ("azure_openai", "gpt-4o-2024-08-06"),
    GPT_41: ("azure_openai", "gpt-4.1"),
}
"""What each gateway string is, by hand: the id the bills' lines carry (int_ai_api__token_lines.model)."""


def request(
    number: int, day: int, model: str, team: str | None, prompt: int, completion: int, **extra
) -> dict[str, str]:
    provider = model.split("/")[0]
    usage = extra.pop("usage", None)
    metadata = {
        "user_api_key": f"88dc28d0f030c55ed4ab77ed8faf098196cb1c05df778539800c9f1243fe6b4{number % 10}",
        "user_api_key_alias": f"{team}-service" if team else None,
        "user_api_key_team_id": TEAM_IDS.get(team or ""),
        "user_api_key_team_alias": team,
        "user_api_key_user_id": "svc-gateway",
        "spend_logs_metadata": None,
        "requester_ip_address": "",
        "status": extra.get("status", "success"),
    }
    if usage:
        metadata["additional_usage_values"] = usage
    start = f"2026-11-{day:02d} {8 + number % 10:02d}:{number % 60:02d}:05.120"
    return {column: "" for column in SPEND_LOG_HEADER} | {
        "request_id": f"chatcmpl-{number:04d}-3f1c", "call_type": "acompletion",
        "api_key": metadata["user_api_key"], "spend": "0.0123", "total_tokens": str(prompt + completion),
        "prompt_tokens": str(prompt), "completion_tokens": str(completion), "startTime": start,
        "endTime": start.replace(":05.120", ":09.871"), "request_duration_ms": "4751", "model": model,
        "model_id": f"deployment-{provider}", "model_group": model.split("/")[-1], "custom_llm_provider": provider,
        "api_base": "", "user": "svc-gateway", "metadata": json.dumps(metadata), "cache_hit": "False",
        "cache_key": "Cache OFF", "request_tags": "[]", "team_id": TEAM_IDS.get(team or "", ""),
        "status": "success", "messages": "{}", "response": "{}", "proxy_server_request": "{}",
    } | extra  # fmt: skip


SPEND_LOG_ROWS = [
    # Nova Pro, 3 Nov: 1.2M of the bill's 1,500,250 input tokens seen; 350k output, more than the bill's 320k
    request(1, 3, NOVA, "search", 700_000, 200_000),
    request(2, 3, NOVA, "ranking", 500_000, 150_000),
    # Nova Pro, 4 Nov: cache reads (the bill's 800k), with the prompt tokens that include them
    request(3, 4, NOVA, "ranking", 350_000, 10_000, usage={"cache_read_input_tokens": 300_000}),
    request(4, 4, NOVA, "search", 150_000, 5_000, usage={"cache_read_input_tokens": 100_000}),
    # Claude Sonnet 4 through a US cross-region inference profile, 3 Nov
    request(5, 3, CLAUDE, "support", 60_000, 15_000),
    request(6, 3, CLAUDE, "search", 40_000, 5_000),
    # Azure OpenAI, 3 Nov: the deployment `gpt-4o` (no cache counts: the bill's cached input is split by all tokens)
    request(7, 3, GPT_4O, "search", 600_000, 40_000),
    request(8, 3, GPT_4O, "support", 300_000, 20_000),
    request(9, 3, GPT_41, "support", 2_000_000, 100_000),
    request(10, 3, GPT_41, None, 400_000, 50_000),
    # answered from LiteLLM's cache, and a failure: the provider billed neither
    request(11, 3, NOVA, "support", 900_000, 90_000, cache_hit="True"),
    request(12, 3, NOVA, "support", 800_000, 0, status="failure"),
]


def spend_log_text(rows: list[dict[str, str]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, SPEND_LOG_HEADER, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def gateway_tokens() -> dict[tuple, Decimal]:
    """(day, family, model, token type, team) -> tokens, from the spend log rows as written."""
    tokens: dict[tuple, Decimal] = defaultdict(Decimal)
    for row in SPEND_LOG_ROWS:
        if row["cache_hit"] == "True" or row["status"] == "failure":
            continue
        metadata = json.loads(row["metadata"])
        usage = metadata.get("additional_usage_values") or {}
        family, model = MODEL_IDS[row["model"]]
        key = (row["startTime"][:10], family, model)
        team = metadata["user_api_key_team_alias"]
        cache_read = Decimal(usage.get("cache_read_input_tokens", 0))
        by_type = {
            "input": Decimal(row["prompt_tokens"]) - cache_read,
            "output": Decimal(row["completion_tokens"]),
            "cache_read": cache_read,
        }
        for kind, count in by_type.items():
            if count:
                tokens[(*key, kind, team)] += count
    return tokens


def expected_allocation(bill_rows: list[tuple]) -> dict[tuple, tuple[Decimal, Decimal]]:
    """(day, model, token type, bill team, currency, team, rule) -> (effective cost, tokens), by the documented rule."""
    seen = gateway_tokens()
    key_bill: dict[tuple, Decimal] = defaultdict(Decimal)
    for day, family, _, model, kind, _, _, tokens, _ in bill_rows:
        key_bill[(day, family, model, "output" if kind == "reasoning" else kind)] += tokens or 0
    expected = {}
    for day, family, _, model, kind, bill_team, currency, tokens, cost in bill_rows:
        compared = "output" if kind == "reasoning" else kind
        by_type = {k[4]: v for k, v in seen.items() if k[:4] == (day, family, model, compared)}
        by_model: dict[str | None, Decimal] = defaultdict(Decimal)
        for k, v in seen.items():
            if k[:3] == (day, family, model):
                by_model[k[4]] += v
        if tokens and by_type:
            shares = [(team, "gateway_token_share", count) for team, count in by_type.items()]
            unseen = key_bill[(day, family, model, compared)] - sum(by_type.values())
            if unseen > 0:
                shares.append((bill_team, "bill_team_unseen_tokens", unseen))
        elif by_model:
            shares = [(team, "gateway_model_token_share", count) for team, count in by_model.items()]
        else:
            shares = [(bill_team, "bill_team_no_gateway_usage", Decimal(1))]
        shares.sort(key=lambda share: (share[1].startswith("bill_team_unseen"), share[0] is None, share[0] or ""))
        whole = sum(share[2] for share in shares)
        through, before = Decimal(0), Decimal(0)
        for team, rule, weight in shares:
            through += weight
            # the cost times the fraction through this share (12 decimals), to the cent; the last takes the rest
            fraction = (through / whole).quantize(PICO, ROUND_HALF_UP)
            cents = (
                cost
                if through == whole
                else (cost * fraction).quantize(PICO, ROUND_HALF_UP).quantize(CENT, ROUND_HALF_UP)
            )
            share_tokens = None if tokens is None else tokens * weight / whole
            expected[(day, model, kind, bill_team, currency, team, rule)] = (cents - before, share_tokens)
            before = cents
    return expected


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> FinopsHome:
    tmp_path = tmp_path_factory.mktemp("ai_gateway")
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
    spend_log = tmp_path / "LiteLLM_SpendLogs_2026-11.csv"
    spend_log.write_text(spend_log_text(SPEND_LOG_ROWS), encoding="utf-8")
    register(home, "aws_cur", tmp_path / "cur")
    register(home, "azure_actual", azure_file)
    register(home, "focus", focus_file)
    register(home, LITELLM.name, spend_log)
    log = logging.getLogger("test")
    with connect(home.warehouse) as con:
        recover_and_ensure_raw_tables(con)
        for entry in (AWS_CUR, AZURE_ACTUAL, FOCUS):
            assert [result.status for result in ingest_landing_zone(home, con, entry, log=log)] == ["loaded"]
        (loaded,) = ingest_litellm_spend_logs(home, con, log=log)
        assert (loaded.status, loaded.rows) == ("loaded", len(SPEND_LOG_ROWS))
    env = dbt_environment(home.root) | {"FINOPS_ONPREM_COSTS_THROUGH": "2026-11-30"}
    build = run_dbt(
        home.root, tmp_path / "target",
        "build", "--select", "+fct_ai_api_spend_by_team_daily", "+fct_ai_api_token_spend_daily",
        "--exclude", "test_type:unit", "--indirect-selection", "cautious", "--log-path", str(tmp_path / "logs"),
        environment=env,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout[-6000:]
    assert "assert_ai_api_spend_by_team_reconciles" in build.stdout
    assert "assert_ai_api_token_spend_reconciles" in build.stdout
    return home


def test_gateway_model_strings_become_the_bills_model_ids(built: FinopsHome):
    rows = query(
        built.warehouse,
        "select distinct gateway_model, api_family, model, model_source "
        "from intermediate.int_ai_api__gateway_tokens_daily",
    )
    assert {row[0]: row[1:3] for row in rows} == MODEL_IDS
    assert {row[0]: row[3] for row in rows}[GPT_4O] == "ai_gateway_models"
    assert {row[0]: row[3] for row in rows}[NOVA] == "ai_api_models"


def test_gateway_tokens_per_day_model_team_and_type_leave_out_cache_hits_and_failures(built: FinopsHome):
    rows = query(
        built.warehouse,
        "select cast(usage_date as varchar), api_family, model, token_type, team, tokens "
        "from intermediate.int_ai_api__gateway_tokens_daily",
    )
    assert {(row[0], row[1], row[2], row[3], row[4]): row[5] for row in rows} == gateway_tokens()


def test_the_bills_cost_is_allocated_by_the_gateways_token_shares(built: FinopsHome):
    bill_rows = query(
        built.warehouse,
        "select cast(usage_date as varchar), api_family, provider_name, model, token_type, team, billing_currency, "
        "sum(tokens), sum(effective_cost) from intermediate.int_ai_api__token_lines group by all",
    )
    expected = expected_allocation(bill_rows)
    rows = query(
        built.warehouse,
        "select cast(usage_date as varchar), model, token_type, bill_team, billing_currency, team, allocation_rule, "
        "effective_cost, tokens from marts.fct_ai_api_spend_by_team_daily",
    )
    got = {row[:7]: (row[7], row[8]) for row in rows}
    assert set(got) == set(expected)
    for key, (cost, tokens) in expected.items():
        assert got[key][0] == cost, key
        assert tokens is None or abs(got[key][1] - tokens) < Decimal("1e-3"), key  # the share is to 12 decimals
    # by hand: Nova Pro input on 3 Nov is 1.2002 USD for 1,500,250 tokens (0.80 a million); the gateway saw
    # ranking 500,000 and search 700,000; the 300,250 it did not see stay with the bill's team (search)
    nova = {key[5:]: value[0] for key, value in got.items() if key[:3] == ("2026-11-03", "amazon.nova-pro", "input")}
    assert nova == {
        ("ranking", "gateway_token_share"): Decimal("0.40"),
        ("search", "gateway_token_share"): Decimal("0.56"),
        ("search", "bill_team_unseen_tokens"): Decimal("0.2402"),
    }
    # Nova Pro output: the gateway counted 350,000, more than the bill's 320,000: all of 1.024 goes by its shares
    output = {key[5:]: value[0] for key, value in got.items() if key[:3] == ("2026-11-03", "amazon.nova-pro", "output")}
    assert output == {
        ("ranking", "gateway_token_share"): Decimal("0.44"),  # 1.024 × 150/350 = 0.4389
        ("search", "gateway_token_share"): Decimal("0.584"),
    }
    rules = {key[1:3]: key[6] for key in got}
    assert rules[("gpt-4o-2024-08-06", "cache_read")] == "gateway_model_token_share"
    assert rules[("gpt-5", "output")] == "bill_team_no_gateway_usage"
    assert rules[("claude-sonnet-4-5", "input")] == "bill_team_no_gateway_usage"  # the FOCUS file's, not routed


def test_teams_add_up_to_the_bill_per_day_and_currency(built: FinopsHome):
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
        "from marts.fct_ai_api_spend_by_team_daily group by all",
    )
    assert {(row[0], row[1]): row[2] for row in rows} == dict(totals)
    assert {(row[0], row[1]): row[3] for row in rows} == dict(totals)
    by_team = query(
        built.warehouse,
        "select team, sum(effective_cost) from marts.fct_ai_api_spend_by_team_daily "
        "where billing_currency = 'USD' and model = 'amazon.nova-pro' group by team",
    )
    assert {row[0] for row in by_team} == {"search", "ranking"}


@pytest.mark.parametrize(
    ("change", "row", "column", "message"),
    [
        ({"prompt_tokens": "12x"}, 2, "prompt_tokens", "'12x' is not a whole number"),
        ({"completion_tokens": "-5"}, 2, "completion_tokens", "completion_tokens must not be negative"),
        ({"startTime": "03/11/2026 10:00"}, 2, "starttime", "is not an ISO 8601 date-time"),
        ({"request_id": "chatcmpl-0001-3f1c"}, 2, "request_id", "appears on an earlier line"),
    ],
)
def test_a_bad_row_is_rejected_naming_file_row_and_column(
    tmp_path: Path, change: dict[str, str], row: int, column: str, message: str
):
    home = FinopsHome(tmp_path / "home").create_folders()
    rows = [SPEND_LOG_ROWS[0], SPEND_LOG_ROWS[1] | change, SPEND_LOG_ROWS[2]]
    path = tmp_path / "spend_logs.csv"
    path.write_text(spend_log_text(rows), encoding="utf-8")
    register(home, LITELLM.name, path)
    with connect(home.warehouse) as con:
        recover_and_ensure_raw_tables(con)
        (result,) = ingest_litellm_spend_logs(home, con, log=logging.getLogger("test"))
        assert con.execute("select count(*) from raw.litellm_spend_logs").fetchone() == (0,)
    assert result.status == "rejected"
    assert "spend_logs.csv" in result.reason
    assert f"row {row}" in result.reason
    assert f"column {column}" in result.reason
    assert message in result.reason
