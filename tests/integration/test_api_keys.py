"""API keys: stored as a hash, shown once in admin, used, revoked (then 401), and who may hand
out a key that reads internal pages."""

from __future__ import annotations

import datetime
import hashlib
import re

import pytest
from django.contrib.auth.models import Permission
from django.contrib.messages import get_messages
from django.utils import timezone

from assistant.api.models import ApiKey
from tests.conftest import member, signed_in
from tests.support.api import bearer, new_key

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_cache")]

# Starting a conversation is the cheapest authenticated request: no retrieval behind it.
USE = "/api/v1/conversations"
KEY_IN_MESSAGE = re.compile(r"gw_[0-9a-f]{8}_[A-Za-z0-9_-]{43}")


def _key_admin(*codenames: str):
    user = member("key-admin")
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    return user


def test_a_key_is_stored_only_as_its_hash() -> None:
    api_key, key = new_key()

    row = ApiKey.objects.values().get(pk=api_key.pk)
    assert row["key_hash"] == hashlib.sha256(key.encode()).hexdigest()
    assert key.startswith(f"gw_{row['prefix']}_")
    secret = key.split("_", 2)[2]
    assert not any(secret in str(value) for value in row.values())


def test_key_lifecycle_create_in_admin_use_then_revoke_gives_401(client) -> None:
    # given: an admin who may manage keys creates one
    admin_client = signed_in(_key_admin("add_apikey", "change_apikey", "view_apikey"))
    response = admin_client.post(
        "/admin/assistant/apikey/add/",
        {
            "name": "Mobile app",
            "audience": "public",
            "rate_limit_per_minute": "30",
            "allowed_origins": "https://Shop.example.com/\nhttp://localhost:8080",
        },
        follow=True,
    )
    assert response.status_code == 200
    shown = [str(m) for m in get_messages(response.wsgi_request)]
    keys = [match for text in shown for match in KEY_IN_MESSAGE.findall(text)]
    assert len(keys) == 1, shown
    key = keys[0]
    api_key = ApiKey.objects.get()
    assert api_key.allowed_origins == ["https://shop.example.com", "http://localhost:8080"]
    assert api_key.last_used_at is None

    # the key is shown once: the change page and the list show only its prefix
    page = admin_client.get(f"/admin/assistant/apikey/{api_key.pk}/change/").content.decode()
    listing = admin_client.get("/admin/assistant/apikey/").content.decode()
    assert key not in page and key not in listing
    assert f"gw_{api_key.prefix}_" in listing

    # when: it is used
    used = client.post(USE, **bearer(key))
    assert used.status_code == 201, used.content
    api_key.refresh_from_db()
    assert api_key.last_used_at is not None

    # when: it is revoked from the admin list
    revoked = admin_client.post(
        "/admin/assistant/apikey/",
        {"action": "revoke", "_selected_action": [api_key.pk]},
        follow=True,
    )
    assert revoked.status_code == 200
    api_key.refresh_from_db()
    assert api_key.revoked_at is not None

    # then: the same key is a 401 that says why
    refused = client.post(USE, **bearer(key))
    assert refused.status_code == 401
    assert "revoked" in refused.json()["error"]
    assert refused["WWW-Authenticate"].startswith("Bearer")


def test_last_used_at_is_written_at_most_once_a_minute(client) -> None:
    api_key, key = new_key()
    assert client.post(USE, **bearer(key)).status_code == 201
    first = ApiKey.objects.get(pk=api_key.pk).last_used_at

    assert client.post(USE, **bearer(key)).status_code == 201
    assert ApiKey.objects.get(pk=api_key.pk).last_used_at == first

    earlier = timezone.now() - datetime.timedelta(minutes=2)
    ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=earlier)
    assert client.post(USE, **bearer(key)).status_code == 201
    assert ApiKey.objects.get(pk=api_key.pk).last_used_at > earlier


@pytest.mark.parametrize(
    "headers, says",
    [
        ({}, "Authorization: Bearer"),
        ({"HTTP_AUTHORIZATION": "Basic dXNlcjpwYXNz"}, "Bearer <key>"),
        ({"HTTP_AUTHORIZATION": "Bearer "}, "Bearer <key>"),
        ({"HTTP_AUTHORIZATION": "Bearer gw_00000000_" + "x" * 43}, "Unknown API key"),
        ({"HTTP_AUTHORIZATION": "Bearer not-a-key"}, "Unknown API key"),
    ],
)
def test_a_missing_or_wrong_key_is_a_401_with_a_message(client, headers, says) -> None:
    new_key()

    response = client.post(USE, **headers)

    assert response.status_code == 401
    assert says in response.json()["error"]


def test_a_key_that_differs_only_in_its_secret_is_refused(client) -> None:
    _, key = new_key()
    forged = key[:-4] + ("aaaa" if not key.endswith("aaaa") else "bbbb")

    assert client.post(USE, **bearer(forged)).status_code == 401


def test_only_someone_who_reads_internal_pages_may_create_an_internal_key(writer) -> None:
    # given: a key admin who is not a reader of internal pages
    admin_client = signed_in(_key_admin("add_apikey", "view_apikey"))

    response = admin_client.post(
        "/admin/assistant/apikey/add/",
        {"name": "Agents", "audience": "internal", "rate_limit_per_minute": "30"},
    )

    assert response.status_code == 200  # the form again, with the reason
    assert "Only staff who may read internal pages" in response.content.decode()
    assert not ApiKey.objects.exists()


def test_an_origin_that_is_not_an_origin_is_refused_in_admin() -> None:
    admin_client = signed_in(_key_admin("add_apikey", "view_apikey"))

    response = admin_client.post(
        "/admin/assistant/apikey/add/",
        {
            "name": "Shop",
            "audience": "public",
            "rate_limit_per_minute": "30",
            "allowed_origins": "https://shop.example.com/checkout",
        },
    )

    assert response.status_code == 200
    assert "is not an origin" in response.content.decode()
    assert not ApiKey.objects.exists()
