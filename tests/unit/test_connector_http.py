"""The connectors' HTTP client against a local stub: what is retried, how long it waits, and
what it refuses (a wait past its bound, a next link off the API's origin, a bad token)."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Iterator

import pytest

from kb.connectors.http import ConnectorHTTPError, RetryPolicy, UpstreamClient, UpstreamNotFound
from kb.connectors.pagination import pages_follow
from tests.support.zendesk_stub import ZendeskStub

POLICY = RetryPolicy(max_attempts=3, backoff_seconds=0.01, max_retry_wait=5, timeout=5)
CATEGORIES = "/api/v2/help_center/categories.json"


@pytest.fixture
def stub() -> Iterator[ZendeskStub]:
    with ZendeskStub() as server:
        server.put(1, title="Refunds", body="<p>5 days.</p>", category="Billing")
        yield server


def _client(stub: ZendeskStub, *, authorization: str | None = None) -> UpstreamClient:
    headers = {"Authorization": authorization or stub.authorization}
    return UpstreamClient(base_url=stub.origin, headers=headers, policy=POLICY)


def test_a_503_is_retried_after_an_http_date_retry_after(stub: ZendeskStub) -> None:
    # given: a 503 asking to come back at a time two seconds from now (whole seconds: 1-2 s)
    stub.fail_next(status=503, retry_after=email.utils.formatdate(time.time() + 2, usegmt=True))
    client = _client(stub)

    # when
    started = time.monotonic()
    payload = client.get_json(CATEGORIES)

    # then
    assert time.monotonic() - started >= 0.9
    assert payload["categories"][0]["name"] == "Billing"
    assert client.retries == 1 and len(stub.requests) == 2


def test_without_retry_after_a_503_is_retried_after_a_short_backoff(stub: ZendeskStub) -> None:
    stub.fail_next(status=503, times=2)
    client = _client(stub)

    started = time.monotonic()
    client.get_json(CATEGORIES)

    assert time.monotonic() - started < 1.0
    assert client.retries == 2


def test_a_retry_after_longer_than_the_bound_fails_at_once(stub: ZendeskStub) -> None:
    stub.fail_next(status=429, retry_after=3600)
    client = _client(stub)

    with pytest.raises(ConnectorHTTPError, match="asked to wait 3600 s, longer than"):
        client.get_json(CATEGORIES)
    assert len(stub.requests) == 1


def test_retries_end_after_max_attempts(stub: ZendeskStub) -> None:
    stub.fail_next(status=500, times=5)
    client = _client(stub)

    with pytest.raises(ConnectorHTTPError, match="still after 3 attempts") as failure:
        client.get_json(CATEGORIES)
    assert failure.value.status == 500
    assert len(stub.requests) == 3


def test_a_bad_token_is_not_retried_and_names_the_credentials(stub: ZendeskStub) -> None:
    client = _client(stub, authorization="Basic bm9wZQ==")

    with pytest.raises(ConnectorHTTPError, match=r"HTTP 401 .*check the connector's credentials"):
        client.get_json(CATEGORIES)
    assert len(stub.requests) == 1


def test_a_missing_article_is_upstream_not_found(stub: ZendeskStub) -> None:
    with pytest.raises(UpstreamNotFound):
        _client(stub).get_json("/api/v2/help_center/articles/404.json")


def test_a_next_link_off_the_apis_origin_is_refused(stub: ZendeskStub) -> None:
    client = _client(stub)
    pages = pages_follow(client, CATEGORIES, next_of=lambda payload: "https://evil.example/x")

    next(pages)
    with pytest.raises(ConnectorHTTPError, match=r"refused to follow https://evil\.example/x"):
        next(pages)
    assert all("evil" not in r.path for r in stub.requests)
