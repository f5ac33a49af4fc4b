"""Per-key rate limits and CORS for the answer API."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.support.api import bearer, new_key

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_cache")]

USE = "/api/v1/conversations"
SHOP = "https://shop.example.com"
OTHER = "https://elsewhere.example.org"


def _preflight(origin: str):
    return Client().options(
        USE,
        HTTP_ORIGIN=origin,
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="authorization, content-type",
    )


def test_a_key_over_its_limit_gets_429_with_retry_after_and_others_do_not() -> None:
    _, limited = new_key(rate_limit_per_minute=2)
    _, other = new_key(rate_limit_per_minute=2, name="other")
    client = Client()

    statuses = [client.post(USE, **bearer(limited)).status_code for _ in range(3)]
    refused = client.post(USE, **bearer(limited))

    assert statuses == [201, 201, 429]
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert "2 requests a minute" in refused.json()["error"]
    assert client.post(USE, **bearer(other)).status_code == 201


def test_a_preflight_is_answered_for_an_origin_some_active_key_allows() -> None:
    new_key(allowed_origins=(SHOP,))

    response = _preflight(SHOP)

    assert response.status_code == 204
    assert response["Access-Control-Allow-Origin"] == SHOP
    assert "Authorization" in response["Access-Control-Allow-Headers"]
    assert "POST" in response["Access-Control-Allow-Methods"]
    assert "Origin" in response["Vary"]


def test_a_preflight_from_an_origin_no_key_allows_gets_no_cors_headers() -> None:
    api_key, _ = new_key(allowed_origins=(SHOP,))

    refused = _preflight(OTHER)
    api_key.revoked_at = api_key.created_at
    api_key.save()
    revoked = _preflight(SHOP)

    for response in (refused, revoked):
        assert response.status_code == 403
        assert "Access-Control-Allow-Origin" not in response
        assert "No API key allows" in response.json()["error"]


def test_a_request_names_its_origin_only_when_its_own_key_allows_it() -> None:
    _, shop_key = new_key(allowed_origins=(SHOP,))
    _, other_key = new_key(allowed_origins=(OTHER,), name="other")
    client = Client()

    allowed = client.post(USE, **bearer(shop_key, HTTP_ORIGIN=SHOP))
    # SHOP passes the preflight (shop_key allows it), but this key does not allow SHOP
    refused = client.post(USE, **bearer(other_key, HTTP_ORIGIN=SHOP))

    assert allowed.status_code == 201
    assert allowed["Access-Control-Allow-Origin"] == SHOP
    assert "Retry-After" in allowed["Access-Control-Expose-Headers"]
    assert refused.status_code == 403
    assert "may not be used from https://shop.example.com" in refused.json()["error"]
    assert "Access-Control-Allow-Origin" not in refused


def test_a_key_without_origins_works_from_servers_but_not_from_browsers() -> None:
    _, key = new_key()
    client = Client()

    server = client.post(USE, **bearer(key))
    browser = client.post(USE, **bearer(key, HTTP_ORIGIN=SHOP))

    assert server.status_code == 201
    assert "Access-Control-Allow-Origin" not in server
    assert browser.status_code == 403


def test_a_rate_limited_answer_is_readable_by_the_keys_browser_origin() -> None:
    _, key = new_key(rate_limit_per_minute=1, allowed_origins=(SHOP,))
    client = Client()
    client.post(USE, **bearer(key, HTTP_ORIGIN=SHOP))

    refused = client.post(USE, **bearer(key, HTTP_ORIGIN=SHOP))

    assert refused.status_code == 429
    assert refused["Access-Control-Allow-Origin"] == SHOP


def test_the_chat_page_never_sends_cors_headers(db) -> None:
    new_key(allowed_origins=(SHOP,))

    page = Client().get("/", HTTP_ORIGIN=SHOP)
    preflight = Client().options(
        "/ask", HTTP_ORIGIN=SHOP, HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST"
    )

    assert "Access-Control-Allow-Origin" not in page
    assert "Access-Control-Allow-Origin" not in preflight
