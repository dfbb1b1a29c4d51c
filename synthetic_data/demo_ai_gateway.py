"""The demo organisation's LiteLLM gateway: its spend log for the month the bills have AI API lines in.

Acme AI's teams reach Amazon Bedrock and Azure OpenAI through one LiteLLM proxy, each team with its own virtual
keys, while the bills tag the API accounts with one team each (`demo_aws.BEDROCK_TOKEN_LINES`,
`demo_azure.AZURE_OPENAI_METERS`). The log splits a model's daily tokens between two or three teams (`ROUTES`), at a
share of the bill's daily volume a little under one in all, so a few tokens the gateway did not see stay with the
bill's team; GPT-5 is called directly, not through the gateway, so it stays with its bill team whole. Nova Pro logs
its prompt-cache reads (`metadata.additional_usage_values`); the Azure `gpt-4o` deployment logs none, so its bill's
cached input is split by the teams' tokens of the model.

The file is LiteLLM's `LiteLLM_SpendLogs` table exported as CSV (columns in schema.prisma's order, a subset), one
row per request, a few requests per team, model and day.
"""

from __future__ import annotations

import csv
import hashlib
import json
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

from synthetic_data.demo_common import rng_for
from synthetic_data.focus_samples import billing_months

SOURCE = "litellm_spend_logs"
HEADER = (
    "request_id", "call_type", "api_key", "spend", "total_tokens", "prompt_tokens", "completion_tokens", "startTime",
    "endTime", "model", "model_group", "custom_llm_provider", "user", "metadata", "cache_hit", "team_id", "end_user",
    "status",
)  # fmt: skip
# model as LiteLLM logs it: (thousands of prompt tokens a day, of which cache reads, thousands of completion tokens,
# USD per 1K prompt and completion tokens for the gateway's own `spend`, {team: share of the day's tokens}).
# Volumes are the bills' nominal daily ones (demo_aws.BEDROCK_TOKEN_LINES, demo_azure.AZURE_OPENAI_METERS).
ROUTES = {
    "bedrock/amazon.nova-pro-v1:0": (
        57_000, 15_000, 9_500, Decimal("0.0008"), Decimal("0.0032"),
        {"inference": Decimal("0.55"), "data": Decimal("0.25"), "platform": Decimal("0.14")},
    ),
    "bedrock/us.anthropic.claude-sonnet-4-20250514-v1:0": (
        6_000, 0, 1_200, Decimal("0.003"), Decimal("0.015"),
        {"platform": Decimal("0.6"), "research": Decimal("0.35")},
    ),
    "azure/gpt-4.1": (
        18_000, 0, 3_600, Decimal("0.002"), Decimal("0.008"),
        {"inference": Decimal("0.62"), "data": Decimal("0.33")},
    ),
    "azure/gpt-4o": (
        12_000, 0, 1_500, Decimal("0.0025"), Decimal("0.01"),
        {"inference": Decimal("0.7"), "research": Decimal("0.3")},
    ),
}  # fmt: skip
REQUESTS_PER_TEAM_DAY = 6
LOG_FILE = "LiteLLM_SpendLogs_{month}.csv"


def _team_id(team: str) -> str:
    return hashlib.sha256(f"demo/litellm/team/{team}".encode()).hexdigest()[:32]


def _split(total: int, parts: int, rng) -> list[int]:
    """`total` tokens over `parts` requests, whole numbers that add up to it."""
    weights = [rng.randint(50, 150) for _ in range(parts)]
    counts = [total * weight // sum(weights) for weight in weights]
    counts[-1] += total - sum(counts)
    return counts


def write_demo_gateway(out_dir: Path, seed: int = 42, start_month: str = "2026-09", months: int = 2) -> Path:
    """The spend log of the demo's last month, one CSV; returns its path."""
    month = billing_months(start_month, months)[-1]
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / LOG_FILE.format(month=month.label)
    rows = []
    day = month.start
    while day < month.end:
        for model, (prompt_k, cached_k, completion_k, prompt_rate, completion_rate, teams) in ROUTES.items():
            rng = rng_for(seed, SOURCE, model, day.date().isoformat())
            provider = model.split("/")[0]
            for team, share in teams.items():
                scale = share * Decimal(rng.randint(90, 110)) / 100
                prompts = _split(int(prompt_k * 1000 * scale), REQUESTS_PER_TEAM_DAY, rng)
                cached = _split(int(cached_k * 1000 * scale), REQUESTS_PER_TEAM_DAY, rng)
                completions = _split(int(completion_k * 1000 * scale), REQUESTS_PER_TEAM_DAY, rng)
                requests = enumerate(zip(prompts, cached, completions, strict=True))
                for number, (prompt, cache_read, completion) in requests:
                    start = day + timedelta(seconds=rng.randint(0, 86_399 - 60))
                    request_id = hashlib.sha256(f"{seed}/{model}/{team}/{start}/{number}".encode()).hexdigest()[:24]
                    finished = start + timedelta(seconds=rng.randint(2, 50))
                    key_hash = hashlib.sha256(f"demo/litellm/key/{team}/{provider}".encode()).hexdigest()
                    metadata = {
                        "user_api_key": key_hash,
                        "user_api_key_alias": f"{team}-{provider}",
                        "user_api_key_team_id": _team_id(team),
                        "user_api_key_team_alias": team,
                        "user_api_key_user_id": f"svc-{team}",
                        "spend_logs_metadata": None,
                        "status": "success",
                    }
                    if cache_read:
                        metadata["additional_usage_values"] = {"cache_read_input_tokens": cache_read}
                    spend = (prompt * prompt_rate + completion * completion_rate) / 1000
                    rows.append({
                        "request_id": f"chatcmpl-{request_id}",
                        "call_type": "acompletion", "api_key": key_hash, "spend": format(spend.normalize(), "f"),
                        "total_tokens": prompt + completion, "prompt_tokens": prompt, "completion_tokens": completion,
                        "startTime": _timestamp(start), "endTime": _timestamp(finished),
                        "model": model, "model_group": model.split("/")[-1], "custom_llm_provider": provider,
                        "user": f"svc-{team}", "metadata": json.dumps(metadata), "cache_hit": "False",
                        "team_id": _team_id(team), "end_user": "", "status": "success",
                    })  # fmt: skip
        day += timedelta(days=1)
    rows.sort(key=lambda row: (row["startTime"], row["request_id"]))
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, HEADER, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


def _timestamp(moment: datetime) -> str:
    """As PostgreSQL writes a `timestamp(3)` to CSV: `2026-10-03 14:07:55.000`."""
    return moment.strftime("%Y-%m-%d %H:%M:%S.000")
