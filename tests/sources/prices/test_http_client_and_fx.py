"""The shared HTTP client against a real local server, and ECB reference rates parsed from recorded XML."""

from __future__ import annotations

import logging
from datetime import date
from decimal import Decimal

import pytest

from sources.common.http import USER_AGENT, FetchError, HttpClient, MissingCredential, credential
from sources.prices import ecb
from tests.support import FIXTURES_ROOT
from tests.support.local_http import Reply, local_server

ECB_FIXTURES = FIXTURES_ROOT / "prices" / "ecb"


def _client(**overrides) -> tuple[HttpClient, list[float]]:
    waits: list[float] = []
    settings = {"provider": "TestCloud", "backoff_seconds": 0.5, "sleep": waits.append} | overrides
    return HttpClient(**settings), waits


def test_429_then_success_honours_retry_after_and_sends_user_agent():
    with local_server() as server:
        server.route("/prices", Reply(b"slow down", status=429, headers={"Retry-After": "7"}), Reply(b'{"ok": 1}'))
        client, waits = _client()
        response = client.get(server.url + "/prices")
    assert response.json() == {"ok": 1}
    assert waits == [7.0]
    assert [r.headers["User-Agent"] for r in server.requests] == [USER_AGENT, USER_AGENT]


def test_5xx_backs_off_exponentially_then_fails_naming_provider_url_and_status():
    with local_server() as server:
        server.route("/prices", Reply(b"down", status=503))
        client, waits = _client(max_attempts=4)
        with pytest.raises(FetchError) as error:
            client.get(server.url + "/prices")
    assert waits == [0.5, 1.0, 2.0]
    assert len(server.requests) == 4
    assert error.value.provider == "TestCloud"
    assert "HTTP 503" in error.value.reason and "after 4 attempts" in error.value.reason
    assert error.value.url == server.url + "/prices"


def test_client_errors_are_not_retried():
    with local_server() as server:
        server.route("/prices", Reply(b"no", status=403))
        client, waits = _client()
        with pytest.raises(FetchError, match="HTTP 403"):
            client.get(server.url + "/prices")
    assert waits == [] and len(server.requests) == 1


def test_read_timeout_is_retried_then_reported():
    with local_server() as server:
        server.route("/slow", Reply(b"late", delay=1.0))
        client, waits = _client(read_timeout=0.2, max_attempts=2)
        with pytest.raises(FetchError, match="Timeout"):
            client.get(server.url + "/slow")
    assert waits == [0.5]


def test_secrets_never_reach_errors_or_logs(caplog):
    secret = "sk-live-4f9a8b7c6d5e"
    with local_server() as server:
        server.route("/v1/skus", Reply(b"err", status=500))
        client, _ = _client(max_attempts=2, secrets=(secret,))
        with caplog.at_level(logging.WARNING), pytest.raises(FetchError) as error:
            client.get(f"{server.url}/v1/skus?key={secret}&pageSize=5000")
    assert secret not in str(error.value)
    assert "key=***" in error.value.url
    assert secret not in caplog.text


def test_missing_credential_names_the_variable_not_a_value(monkeypatch):
    monkeypatch.delenv("FINOPS_TEST_API_KEY", raising=False)
    with pytest.raises(MissingCredential, match="set FINOPS_TEST_API_KEY"):
        credential("FINOPS_TEST_API_KEY", provider="TestCloud")
    monkeypatch.setenv("FINOPS_TEST_API_KEY", "abc")
    assert credential("FINOPS_TEST_API_KEY", provider="TestCloud") == "abc"


def test_ecb_daily_rates_fetched_over_http_from_the_overridden_base_url(monkeypatch):
    payload = (ECB_FIXTURES / "eurofxref-daily.xml").read_bytes()
    with local_server() as server:
        server.route("/stats/eurofxref/eurofxref-daily.xml", Reply(payload))
        monkeypatch.setenv(ecb.BASE_URL_ENV, server.url)
        url, body = ecb.fetch_reference_rates(HttpClient(provider=ecb.PROVIDER))
    rates = ecb.parse_reference_rates(body, source_url=url)
    assert url == server.url + "/stats/eurofxref/eurofxref-daily.xml"
    assert rates.rows() == [
        (date(2026, 11, 27), "EUR", "CHF", Decimal("0.938700000000"), url),
        (date(2026, 11, 27), "EUR", "GBP", Decimal("0.836150000000"), url),
        (date(2026, 11, 27), "EUR", "JPY", Decimal("163.210000000000"), url),
        (date(2026, 11, 27), "EUR", "USD", Decimal("1.084200000000"), url),
    ]


def test_ecb_history_has_one_row_per_day_and_currency():
    rates = ecb.parse_reference_rates((ECB_FIXTURES / "eurofxref-hist-90d.xml").read_bytes(), source_url="u")
    usd = rates.filter(quote_currency="USD").select("rate_date", "rate").rows()
    assert usd == [
        (date(2026, 11, 25), Decimal("1.079900000000")),
        (date(2026, 11, 26), Decimal("1.081500000000")),
        (date(2026, 11, 27), Decimal("1.084200000000")),
    ]
    assert rates.height == 6


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"<html><body>Maintenance</body></html>", "no <Cube"),
        (b"{not xml", "not XML"),
        (
            b'<E xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref"><Cube><Cube time="2026-11-27">'
            b'<Cube currency="USD" rate="n/a"/></Cube></Cube></E>',
            "is not a number",
        ),
        (
            b'<E xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref"><Cube><Cube time="27.11.2026">'
            b'<Cube currency="USD" rate="1.1"/></Cube></Cube></E>',
            "not an ISO date",
        ),
    ],
)
def test_ecb_layout_changes_fail_loudly(payload, message):
    with pytest.raises(ecb.LayoutChanged, match=message):
        ecb.parse_reference_rates(payload, source_url="https://www.ecb.europa.eu/x.xml")
