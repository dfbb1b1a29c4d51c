"""The demo's LiteLLM spend log: deterministic, readable by the connector, and shaped as the docs say (the bills'
last month, two or three teams per routed model, GPT-5 not routed, Nova Pro's cache reads logged)."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

from sources.ai_gateway.litellm import read_spend_logs
from synthetic_data.demo_ai_gateway import write_demo_gateway
from synthetic_data.demo_aws import BEDROCK_TOKEN_LINES


def test_the_log_is_deterministic_and_loads(tmp_path: Path):
    first = write_demo_gateway(tmp_path / "a", seed=7)
    second = write_demo_gateway(tmp_path / "b", seed=7)
    assert first.read_bytes() == second.read_bytes()
    assert write_demo_gateway(tmp_path / "c", seed=8).read_bytes() != first.read_bytes()
    frame = read_spend_logs(first)
    assert frame.height == frame["request_id"].n_unique()
    assert (str(frame["usage_date"].min()), str(frame["usage_date"].max())) == ("2026-10-01", "2026-10-31")


def test_each_model_is_split_between_teams_and_nova_pro_logs_its_cache_reads(tmp_path: Path):
    with write_demo_gateway(tmp_path, seed=42).open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    teams: dict[str, set[str]] = defaultdict(set)
    cache_reads: dict[str, Decimal] = defaultdict(Decimal)
    prompts: dict[str, Decimal] = defaultdict(Decimal)
    for row in rows:
        metadata = json.loads(row["metadata"])
        teams[row["model"]].add(metadata["user_api_key_team_alias"])
        usage = metadata.get("additional_usage_values") or {}
        cache_reads[row["model"]] += Decimal(usage.get("cache_read_input_tokens", 0))
        prompts[row["model"]] += Decimal(row["prompt_tokens"])
    assert {model: len(names) for model, names in teams.items()} == {
        "bedrock/amazon.nova-pro-v1:0": 3,
        "bedrock/us.anthropic.claude-sonnet-4-20250514-v1:0": 2,
        "azure/gpt-4.1": 2,
        "azure/gpt-4o": 2,
    }
    assert not any("gpt-5" in model for model in teams)
    # the gateway sees a little under the bill's nominal Nova Pro cache reads (15,000K a day, 31 days)
    nominal = next(line[3] for line in BEDROCK_TOKEN_LINES if "cache-read" in line[1]) * 1000 * 31
    assert Decimal("0.85") * nominal < cache_reads["bedrock/amazon.nova-pro-v1:0"] < nominal
    assert cache_reads["bedrock/amazon.nova-pro-v1:0"] < prompts["bedrock/amazon.nova-pro-v1:0"]
