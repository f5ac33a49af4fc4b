"""The demo's sign-ins: an admin, a doc writer and a policy steward, each with a password made
once and kept in the demo's data directory, so a restart keeps everyone signed in."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from kb.services.demo_logins import LOGINS_FILE, demo_logins_ensure

pytestmark = pytest.mark.django_db


def _signed_in_client(username: str, password: str) -> Client:
    client = Client()
    response = client.post(
        "/admin/login/?next=/admin/", {"username": username, "password": password}
    )
    assert response.status_code == 302, f"{username} could not sign in"
    return client


def _admin_index(client: Client) -> int:
    return client.get("/admin/").status_code


def test_the_demo_creates_an_admin_a_writer_and_a_steward_who_can_sign_in(tmp_path: Path) -> None:
    logins = demo_logins_ensure(data_dir=tmp_path)

    assert [login.username for login in logins] == ["demo", "writer", "steward"]
    users = {
        user.username: user
        for user in User.objects.filter(username__in=["demo", "writer", "steward"])
    }
    assert users["demo"].is_superuser and users["demo"].is_staff
    assert list(users["writer"].groups.values_list("name", flat=True)) == ["Doc writers"]
    assert list(users["steward"].groups.values_list("name", flat=True)) == ["Policy stewards"]
    assert not users["writer"].is_superuser and not users["steward"].is_superuser
    # each role holds its group's permissions: the writer may edit, only the steward retire
    assert users["writer"].has_perm("kb.change_document")
    assert not users["writer"].has_perm("kb.retire_document")
    assert users["steward"].has_perm("kb.retire_document")
    for login in logins:
        assert (
            login.password
            and _admin_index(_signed_in_client(login.username, login.password)) == 200
        )


def test_passwords_are_kept_readable_by_the_owner_only(tmp_path: Path) -> None:
    logins = demo_logins_ensure(data_dir=tmp_path)

    kept = tmp_path / LOGINS_FILE
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert json.loads(kept.read_text()) == {login.username: login.password for login in logins}


def test_a_restart_keeps_the_passwords_and_the_sessions(tmp_path: Path) -> None:
    # given a steward signed in to the demo's admin
    first = demo_logins_ensure(data_dir=tmp_path)
    steward = next(login for login in first if login.username == "steward")
    session = _signed_in_client(steward.username, steward.password or "")

    # when the demo starts again
    again = demo_logins_ensure(data_dir=tmp_path)

    # then the same passwords are printed and the session still opens the admin
    assert again == first
    assert _admin_index(session) == 200


def test_reset_passwords_changes_all_three_and_ends_their_sessions(tmp_path: Path) -> None:
    first = demo_logins_ensure(data_dir=tmp_path)
    writer = next(login for login in first if login.username == "writer")
    session = _signed_in_client(writer.username, writer.password or "")

    reset = demo_logins_ensure(data_dir=tmp_path, reset_passwords=True)

    assert all(old.password != new.password for old, new in zip(first, reset, strict=True))
    assert _admin_index(session) == 302  # to the sign-in page
    new_writer = next(login for login in reset if login.username == "writer")
    assert _admin_index(_signed_in_client("writer", new_writer.password or "")) == 200


def test_a_password_changed_in_admin_is_left_alone_and_not_printed(tmp_path: Path) -> None:
    demo_logins_ensure(data_dir=tmp_path)
    writer = User.objects.get(username="writer")
    writer.set_password("chosen-by-the-writer")
    writer.save()

    logins = demo_logins_ensure(data_dir=tmp_path)

    assert next(login for login in logins if login.username == "writer").password is None
    assert _admin_index(_signed_in_client("writer", "chosen-by-the-writer")) == 200
    assert "writer" not in json.loads((tmp_path / LOGINS_FILE).read_text())


def test_a_new_database_gets_the_kept_passwords_back(tmp_path: Path) -> None:
    first = demo_logins_ensure(data_dir=tmp_path)
    User.objects.filter(username__in=["demo", "writer", "steward"]).delete()

    again = demo_logins_ensure(data_dir=tmp_path)

    assert again == first
    demo = next(login for login in again if login.username == "demo")
    assert _admin_index(_signed_in_client("demo", demo.password or "")) == 200
