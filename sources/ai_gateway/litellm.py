"""LiteLLM's spend log (the proxy's `LiteLLM_SpendLogs` table) exported as CSV: one row per request.

The columns are the table's, as LiteLLM's `schema.prisma` names them (docs/ai-workloads.md, "Gateway usage"):

    request_id,call_type,api_key,spend,total_tokens,prompt_tokens,completion_tokens,startTime,endTime,
    model,model_group,custom_llm_provider,user,team_id,end_user,metadata,cache_hit,status,...

`api_key` is LiteLLM's hash of the virtual key, never a key. Names are matched case-insensitively, so
`startTime` and `starttime` are one column; columns we do not read (api_base, cache_key, request_tags,
messages, ...) are kept as text in `extra`. Timestamps are UTC (Prisma stores DateTime in UTC).

What the gateway says a request cost (`spend`) is kept but not used as money: a gateway prices from its own
price map, in a unit it may not state (docs/ai-workloads.md); the bill's cost is what is allocated, by tokens.
The team is the virtual key's team: `metadata.user_api_key_team_alias` (its readable name), else `team_id`.
Cache tokens are read from `metadata.additional_usage_values` (`cache_read_input_tokens`,
`cache_creation_input_tokens`, the names LiteLLM's daily spend tables use): unverified against a real log.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from sources.common.errors import RejectedInput
from sources.common.rejects import plain
from sources.common.row_checks import NonNegative, RowRules, check_rows
from sources.common.tabular import EXTRA_COLUMN, Column, read_contract_file
from sources.common.types import DECIMAL, TIMESTAMP, Kind

SOURCE = "litellm_spend_logs"
FORMAT_VERSION = "LiteLLM_SpendLogs CSV"

COLUMNS = (
    Column("request_id", Kind.STRING, required=True),
    Column("call_type", Kind.STRING),
    Column("api_key", Kind.STRING),
    Column("spend", Kind.DECIMAL),
    Column("total_tokens", Kind.INTEGER),
    Column("prompt_tokens", Kind.INTEGER, required=True),
    Column("completion_tokens", Kind.INTEGER, required=True),
    Column("starttime", Kind.DATETIME, required=True),
    Column("endtime", Kind.DATETIME),
    Column("model", Kind.STRING, required=True),
    Column("model_id", Kind.STRING),
    Column("model_group", Kind.STRING),
    Column("custom_llm_provider", Kind.STRING),
    Column("user", Kind.STRING),
    Column("team_id", Kind.STRING),
    Column("organization_id", Kind.STRING),
    Column("end_user", Kind.STRING),
    Column("metadata", Kind.JSON),
    Column("cache_hit", Kind.STRING),
    Column("status", Kind.STRING),
)
HEADERS = {"start_time": "startTime", "end_time": "endTime"}
"""The file's spelling of the columns renamed here, for messages."""

SPEND_LOG_SCHEMA: dict[str, pl.DataType] = {
    "usage_date": pl.Date(),
    "request_id": pl.String(),
    "call_type": pl.String(),
    "api_key": pl.String(),
    "spend": DECIMAL,
    "total_tokens": pl.Int64(),
    "prompt_tokens": pl.Int64(),
    "completion_tokens": pl.Int64(),
    "cache_read_input_tokens": pl.Int64(),
    "cache_creation_input_tokens": pl.Int64(),
    "start_time": TIMESTAMP,
    "end_time": TIMESTAMP,
    "model": pl.String(),
    "model_id": pl.String(),
    "model_group": pl.String(),
    "custom_llm_provider": pl.String(),
    "user": pl.String(),
    "team_id": pl.String(),
    "team_alias": pl.String(),
    "organization_id": pl.String(),
    "end_user": pl.String(),
    "cache_hit": pl.String(),
    "status": pl.String(),
    "metadata": pl.String(),
    "extra": pl.String(),
    "source_file": pl.String(),
    "source_row": pl.Int64(),
}
"""One row per logged request; `usage_date` is the UTC day of `start_time`, the key a later export of the same days
replaces."""

_TOKENS = (
    "total_tokens",
    "prompt_tokens",
    "completion_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
RULES = RowRules(non_negative=[NonNegative(column) for column in _TOKENS], line_item_key=("request_id",))
"""Token counts are never negative; a request is logged once (`request_id` is the table's primary key)."""


def _usage_value(key: str) -> pl.Expr:
    return pl.col("metadata").str.json_path_match(f"$.additional_usage_values.{key}")


def read_spend_logs(path: Path, *, name: str | None = None) -> pl.DataFrame:
    """One exported spend log file as rows of `SPEND_LOG_SCHEMA`, or RejectedInput naming file, row and column."""
    name = name or path.name
    typed = read_contract_file(path, name, COLUMNS)
    cache_counts = typed.select(
        pl.col("_source_row"),
        *[_usage_value(key).alias(key) for key in ("cache_read_input_tokens", "cache_creation_input_tokens")],
    )
    for key in ("cache_read_input_tokens", "cache_creation_input_tokens"):
        unparsed = cache_counts.filter(pl.col(key).is_not_null() & pl.col(key).cast(pl.Int64, strict=False).is_null())
        if unparsed.height:
            raise RejectedInput(
                name,
                f"metadata.additional_usage_values.{key} must be a whole number (found {plain(unparsed[key][0])!r})",
                row=int(unparsed["_source_row"][0]),
                column="metadata",
            )
    frame = typed.select(
        usage_date=pl.col("starttime").dt.date(),
        request_id=pl.col("request_id"),
        call_type=pl.col("call_type"),
        api_key=pl.col("api_key"),
        spend=pl.col("spend"),
        total_tokens=pl.col("total_tokens"),
        prompt_tokens=pl.col("prompt_tokens"),
        completion_tokens=pl.col("completion_tokens"),
        cache_read_input_tokens=_usage_value("cache_read_input_tokens").cast(pl.Int64, strict=False),
        cache_creation_input_tokens=_usage_value("cache_creation_input_tokens").cast(pl.Int64, strict=False),
        start_time=pl.col("starttime"),
        end_time=pl.col("endtime"),
        model=pl.col("model"),
        model_id=pl.col("model_id"),
        model_group=pl.col("model_group"),
        custom_llm_provider=pl.col("custom_llm_provider"),
        user=pl.col("user"),
        team_id=pl.col("team_id"),
        team_alias=pl.col("metadata").str.json_path_match("$.user_api_key_team_alias"),
        organization_id=pl.col("organization_id"),
        end_user=pl.col("end_user"),
        cache_hit=pl.col("cache_hit"),
        status=pl.col("status"),
        metadata=pl.col("metadata"),
        extra=pl.col(EXTRA_COLUMN),
        source_file=pl.col("_source_file"),
        source_row=pl.col("_source_row"),
    )
    check_rows(frame.rename({"source_row": "_source_row", "source_file": "_source_file"}), RULES)
    return frame.select([pl.col(column).cast(dtype) for column, dtype in SPEND_LOG_SCHEMA.items()])
