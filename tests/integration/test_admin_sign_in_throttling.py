"""Admin sign-in throttling (django-axes): repeated wrong passwords lock out the account and the
address they came from, even for the right password, until the cool-off passes or a policy
steward unlocks it in admin. Every lockout is logged."""

from __future__ import annotations

import logging

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import User
from django.test import Client

from tests.conftest import DOC_WRITERS, POLICY_STEWARDS, member, signed_in

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"
LIMIT = 5  # failures before a lockout (AXES_FAILURE_LIMIT, its default in config/settings.py)


@pytest.fixture(autouse=True)
def throttling(settings) -> None:
    settings.AXES_FAILURE_LIMIT = LIMIT


@pytest.fixture
def account() -> User:
    user = member("dana", POLICY_STEWARDS)
    user.set_password(PASSWORD)
    user.save()
    return user


def _sign_in(username: str, password: str, *, address: str = "203.0.113.7"):
    client = Client(REMOTE_ADDR=address)
    response = client.post(
        "/admin/login/?next=/admin/", {"username": username, "password": password}
    )
    return response, client


def _signed_in(client: Client) -> bool:
    return client.get("/admin/").status_code == 200


def test_the_right_password_is_refused_after_repeated_wrong_ones(account: User) -> None:
    # given as many wrong passwords as the limit: the form again each time, a lockout at the last
    statuses = [_sign_in("dana", f"guess {attempt}")[0].status_code for attempt in range(LIMIT)]
    assert statuses == [200] * (LIMIT - 1) + [429]

    # when the right one comes next
    response, client = _sign_in("dana", PASSWORD)

    # then it is refused with a lockout, and nobody is signed in (before: signed in, 302)
    assert response.status_code == 429
    assert "Too many failed sign-ins" in response.content.decode()
    assert not _signed_in(client)


def test_the_account_is_locked_whichever_address_guesses(account: User) -> None:
    for attempt in range(LIMIT):
        _sign_in("dana", f"guess {attempt}", address=f"198.51.100.{attempt + 1}")

    response, client = _sign_in("dana", PASSWORD, address="192.0.2.50")

    assert response.status_code == 429 and not _signed_in(client)


def test_an_address_guessing_many_accounts_is_locked_and_others_are_not(account: User) -> None:
    # given one address trying a wrong password on many accounts
    for attempt in range(LIMIT):
        _sign_in(f"user{attempt}", "guess", address="203.0.113.9")

    # then that address is locked out, even for a real account's right password
    locked, _ = _sign_in("dana", PASSWORD, address="203.0.113.9")
    assert locked.status_code == 429
    # and the account signs in from anywhere else
    response, client = _sign_in("dana", PASSWORD, address="192.0.2.50")
    assert response.status_code == 302 and _signed_in(client)


def test_a_lockout_is_logged(account: User, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="axes"):
        for attempt in range(LIMIT):
            _sign_in("dana", f"guess {attempt}")

    assert any("Locking out" in record.getMessage() for record in caplog.records)


def test_a_steward_sees_the_lockout_and_unlocks_the_account(account: User) -> None:
    # given a locked-out account
    for attempt in range(LIMIT):
        _sign_in("dana", f"guess {attempt}")
    steward = signed_in(member("sam", POLICY_STEWARDS))

    # when a steward finds its access attempt in admin and deletes it
    listing = steward.get("/admin/axes/accessattempt/")
    assert listing.status_code == 200 and "dana" in listing.content.decode()
    for attempt in AccessAttempt.objects.filter(username="dana"):
        deleted = steward.post(f"/admin/axes/accessattempt/{attempt.pk}/delete/", {"post": "yes"})
        assert deleted.status_code == 302

    # then the account signs in again at once
    response, client = _sign_in("dana", PASSWORD)
    assert response.status_code == 302 and _signed_in(client)


def test_a_doc_writer_cannot_unlock_sign_ins() -> None:
    writer = signed_in(member("wren", DOC_WRITERS))

    assert writer.get("/admin/axes/accessattempt/").status_code == 403


def test_a_username_longer_than_any_account_is_a_failed_sign_in_not_a_server_error() -> None:
    # given: a name past the 255 characters the attempts table keeps (found by the fuzz test)
    name = "x" * 300

    # when
    response, _ = _sign_in(name, "wrong")

    # then: the form says no, and the attempt is counted under the name cut to what is kept
    assert response.status_code == 200
    attempt = AccessAttempt.objects.get()
    assert attempt.username == name[:255] and attempt.failures_since_start == 1
