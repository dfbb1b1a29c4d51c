"""A price refresh with feeds down reads as an outage: one line per failed feed, the details in a log file.

Without network every feed fails after its retries, and Dagster's console log of that is hundreds of
lines of stack traces and retry warnings. The refresh writes all of it to FINOPS_HOME/logs/ instead
(pipelines/cli/console.py), and says per failed feed what failed, where, how, and what to do (`failure_line`).
Feeds that answered are loaded as usual.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

_FETCH_ERROR = re.compile(r"(?s)^(?P<provider>.*?): (?P<url>https?://\S+?): (?P<reason>.*)$")


def log_file(logs: Path, command: str) -> Path:
    """A new log file for one run of `command`, named by its start time (UTC) so they list in order."""
    logs.mkdir(parents=True, exist_ok=True)
    return logs / f"{datetime.now(UTC):%Y%m%dT%H%M%S%fZ}-{command}.log"


def failure_line(asset: str, error: Any) -> str:
    """One line for a failed feed: the asset, the host it called, the error class, and what to do.

    `error` is the step failure's SerializableErrorInfo; the connector's FetchError is in its cause chain.
    """
    fetch = _find(error, "FetchError")
    if fetch is None:
        root = _root(error)
        return f"FAILED  {asset}: {root.cls_name}: {root.message.strip().splitlines()[0]} (details in the log file)"
    text = fetch.message.strip()
    text = text.split(": ", 1)[1] if text.startswith(("FetchError", "sources.common.http.FetchError")) else text
    match = _FETCH_ERROR.match(text)
    if match is None:
        return f"FAILED  {asset}: FetchError: {text.splitlines()[0]}"
    host = urlsplit(match["url"]).hostname or match["url"]
    reason = match["reason"].strip()
    error_class, advice = _classify(reason)
    return f"FAILED  {asset}: {match['provider']} at {host}: {error_class}. {advice}"


def _classify(reason: str) -> tuple[str, str]:
    """The error class as an operator reads it, and what to do about it."""
    after = re.search(r"after (\d+) attempts", reason)
    tries = f" (after {after[1]} attempts)" if after else ""
    if reason.startswith("ConnectionError"):
        kind = "no connection (name not resolved)" if "NameResolution" in reason else "no connection"
        return (
            f"ConnectionError, {kind}{tries}",
            "Check the network or proxy (HTTPS_PROXY); or use --offline for the bundled snapshots.",
        )
    if reason.startswith(("Timeout", "ReadTimeout", "ConnectTimeout")):
        return f"{reason.split(':', 1)[0]}{tries}", "The host did not answer in time: try again later, or --offline."
    status = re.match(r"HTTP (\d{3})[^\n]*?(?= after|$)", reason)
    if status:
        code = int(status[1])
        if code in (401, 403):
            advice = "The provider refused the request: check this feed's API key."
        elif code == 429 or code >= 500:
            advice = "The provider is failing or throttling: try again later."
        else:
            advice = "The address may have changed: check the feed's base URL setting."
        return f"{status[0].strip()}{tries}", advice
    return reason.splitlines()[0], "See the log file for details."


def _chain(error: Any) -> Iterator[Any]:
    while error is not None:
        yield error
        error = error.cause or error.context


def _find(error: Any, cls_name: str) -> Any:
    return next((e for e in _chain(error) if e.cls_name == cls_name), None)


def _root(error: Any) -> Any:
    *_, last = _chain(error)
    return last
