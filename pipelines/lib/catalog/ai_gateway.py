"""AI gateway usage: the requests a LiteLLM proxy logged (its spend log), which say which team used which model.

The bills name the model and the tokens but rarely the team behind a shared API account; the gateway's log names
the team. dbt allocates the bill's cost of a model and day to the teams by their share of the gateway's tokens
(docs/ai-workloads.md, "Gateway usage: API spend by team"). The export is optional: without it the API spend stays
with the bill's own team tag.
"""

from __future__ import annotations

from pipelines.lib.catalog.entry import CatalogEntry
from pipelines.lib.catalog.facts import Derived, InRange, NotBefore, QualityFacts
from pipelines.lib.catalog.tables import ReferenceTable
from sources.ai_gateway import litellm
from sources.common.row_checks import EARLIEST, LATEST, NonNegative

LITELLM_SPEND_LOGS = ReferenceTable(
    name="raw.litellm_spend_logs",
    columns=litellm.SPEND_LOG_SCHEMA,
    replace_key=("usage_date",),
)
"""A later export of the same UTC days replaces them whole."""

LITELLM_SPEND_LOG_FACTS = QualityFacts(
    keys=("usage_date", "request_id", "start_time", "model", "source_file", "source_row"),
    not_negative=tuple(
        NonNegative(column)
        for column in (
            "total_tokens",
            "prompt_tokens",
            "completion_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        )
    ),
    in_range=(InRange("start_time", EARLIEST, LATEST, unit="(a plausible request time)"),),
    ordered=(
        NotBefore("end_time", "start_time"),
        NotBefore("_started_on", "usage_date"),
        NotBefore("usage_date", "_started_on"),
    ),
    derived=(Derived("_started_on", "CAST(start_time AS DATE)"),),
)
"""raw.litellm_spend_logs: token counts are never negative, a request ends after it starts, and `usage_date` is
the day it started."""

LITELLM = CatalogEntry(
    name=litellm.SOURCE,
    title="LiteLLM spend logs",
    asset_key=("raw", "litellm_spend_logs"),
    raw_table=LITELLM_SPEND_LOGS,
    quality=LITELLM_SPEND_LOG_FACTS,
    # An export a user takes when they want API spend by team: no cadence, so not watched for freshness.
    delivery_cadence=None,
)

AI_GATEWAY = (LITELLM,)
