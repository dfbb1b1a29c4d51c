"""One well-behaved HTTP client for every connector that calls a provider's endpoint.

Why one: each provider's API is fetched the same careful way (timeouts, a descriptive
User-Agent, bounded retries with exponential backoff on 429 and 5xx honouring Retry-After, a
base URL that mirrors, proxies and tests can override by environment variable), and secrets must
never reach a log line, an error message or a stored payload. Connectors build their requests
through `HttpClient` and never touch `requests` directly.
"""

from __future__ import annotations

import email.utils
import logging
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import requests


def _package_version() -> str:
    try:
        return version("gpu-finops")
    except PackageNotFoundError:
        return "dev"


USER_AGENT = (
    f"gpu-finops/{_package_version()} (FinOps GPU price and billing ingest; +https://pypi.org/project/gpu-finops/)"
)
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_log = logging.getLogger(__name__)


class FetchError(Exception):
    """A request that failed for good: names the provider, the URL (secrets removed) and why."""

    def __init__(self, provider: str, url: str, reason: str):
        self.provider = provider
        self.url = url
        self.reason = reason
        super().__init__(f"{provider}: {url}: {reason}")


class MissingCredential(Exception):
    """A provider that needs a key the environment does not hold; callers skip it with this message."""


def base_url(env_var: str, default: str) -> str:
    """The provider's base URL, overridable (mirror, proxy, local test server) by `env_var`."""
    return (os.environ.get(env_var) or default).rstrip("/")


def credential(env_var: str, *, provider: str) -> str:
    """A secret from the environment only; its absence is a `MissingCredential` naming the variable."""
    value = os.environ.get(env_var, "").strip()
    if not value:
        raise MissingCredential(f"{provider}: set {env_var} to fetch prices from this provider; skipped")
    return value


def default_attempts() -> int:
    """FINOPS_HTTP_ATTEMPTS (default 5): tries per request before it fails (1: no retries, e.g. known offline)."""
    return max(1, int(os.environ.get("FINOPS_HTTP_ATTEMPTS", "").strip() or 5))


@dataclass
class HttpClient:
    provider: str
    connect_timeout: float = 10.0
    read_timeout: float = 60.0
    max_attempts: int = field(default_factory=lambda: default_attempts())
    backoff_seconds: float = 1.0
    max_backoff_seconds: float = 60.0
    secrets: tuple[str, ...] = ()
    """Values to scrub from every URL and message this client reports (API keys, tokens)."""
    sleep: Callable[[float], None] = time.sleep
    session: requests.Session = field(default_factory=requests.Session)

    def __post_init__(self) -> None:
        self.session.headers["User-Agent"] = USER_AGENT

    def get(self, url: str, **kwargs: Any) -> requests.Response:
        return self.request("GET", url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> requests.Response:
        return self.request("POST", url, **kwargs)

    def request(self, method: str, url: str, **kwargs: Any) -> requests.Response:
        """Send with timeouts; retry 429/5xx and connection errors with backoff; raise FetchError at the end."""
        kwargs.setdefault("timeout", (self.connect_timeout, self.read_timeout))
        last_reason = "no attempt made"
        for attempt in range(1, self.max_attempts + 1):
            try:
                response = self.session.request(method, url, **kwargs)
            except (requests.ConnectionError, requests.Timeout) as error:
                last_reason = f"{type(error).__name__}: {self.scrub(str(error))}"
                delay = self._backoff(attempt)
            else:
                if response.status_code < 400:
                    return response
                last_reason = f"HTTP {response.status_code} {response.reason}"
                if response.status_code not in RETRY_STATUSES:
                    raise FetchError(self.provider, self.scrub(url), last_reason)
                delay = _retry_after(response.headers) or self._backoff(attempt)
            if attempt == self.max_attempts:
                break
            delay = min(delay, self.max_backoff_seconds)
            _log.warning(
                "%s: %s (attempt %d/%d); retrying in %.1f s",
                self.provider,
                last_reason,
                attempt,
                self.max_attempts,
                delay,
            )
            self.sleep(delay)
        raise FetchError(self.provider, self.scrub(url), f"{last_reason} after {self.max_attempts} attempts")

    def scrub(self, text: str) -> str:
        for secret in self.secrets:
            if secret:
                text = text.replace(secret, "***")
        return _SECRET_QUERY.sub(r"\1=***", text)

    def _backoff(self, attempt: int) -> float:
        return self.backoff_seconds * 2 ** (attempt - 1)


_SECRET_QUERY = re.compile(r"(?i)\b(key|api_key|apikey|token|access_token|secret|signature)=[^&\s]+")


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date), if present."""
    value = headers.get("Retry-After")
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
