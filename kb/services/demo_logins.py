"""The demo's three sign-ins: an admin, a doc writer and a policy steward, so that a newcomer
tries each role's permissions without creating users by hand.

Passwords are generated once and kept in the demo's data directory (``demo-logins.json``, mode
0600): a restart no longer changes them, so an admin session survives it (Django ends every
session of a user whose password changes). ``reset_passwords`` changes all three. The demo
never ships a known password: each is random, made on the machine that runs it.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

LOGINS_FILE = "demo-logins.json"


@dataclass(frozen=True)
class DemoRole:
    username: str
    group: str | None  # a group the migrations create (kb 0004_groups); None for the superuser
    may: str  # what the role may do, as the start-up lines say it


DEMO_ROLES = (
    DemoRole("demo", None, "superuser: everything"),
    DemoRole("writer", "Doc writers", "Doc writers: write and edit pages"),
    DemoRole("steward", "Policy stewards", "Policy stewards: also retire pages, approve questions"),
)


@dataclass(frozen=True)
class DemoLogin:
    username: str
    password: str | None  # None: changed since (in admin), so not known to the demo
    may: str


class DemoLoginsError(RuntimeError):
    """The demo users cannot be set up; the message says why and what to do."""


@transaction.atomic
def demo_logins_ensure(*, data_dir: Path, reset_passwords: bool = False) -> list[DemoLogin]:
    """The three demo users, each staff, active and in its group, with the password kept in
    ``data_dir``; a user the file has no password for (a new one, or one from before the file)
    gets one, as all do with ``reset_passwords``; one missing from a new database gets the kept
    one. A password changed in admin since is left alone and reported as unknown. Returns the
    logins in ``DEMO_ROLES`` order."""
    path = data_dir / LOGINS_FILE
    stored = _logins_read(path)
    kept: dict[str, str] = {}
    logins = []
    for role in DEMO_ROLES:
        user, created = get_user_model().objects.get_or_create(username=role.username)
        user.is_staff = user.is_active = True
        user.is_superuser = role.group is None
        password: str | None = stored.get(role.username)
        if reset_passwords or password is None:
            password = secrets.token_urlsafe(12)
            user.set_password(password)
        elif created:
            user.set_password(password)  # a new database, the kept password
        elif not user.check_password(password):
            password = None  # someone chose another in admin: theirs stands
        user.save()
        if role.group is not None:
            user.groups.add(_group(role.group))
        if password is not None:
            kept[role.username] = password
        logins.append(DemoLogin(username=role.username, password=password, may=role.may))
    if kept != stored:
        _logins_write(path, kept)
    return logins


def _group(name: str) -> Group:
    try:
        return Group.objects.get(name=name)
    except Group.DoesNotExist:
        raise DemoLoginsError(
            f"the {name!r} group is missing (the migrations create it): run manage.py migrate, "
            "or re-create the group in admin"
        ) from None


def _logins_read(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    try:
        logins = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DemoLoginsError(
            f"{path} is unreadable ({exc}): delete it, or run the demo with --reset-passwords"
        ) from exc
    if not isinstance(logins, dict):
        raise DemoLoginsError(f"{path} is not a JSON object: delete it, or use --reset-passwords")
    return {name: value for name, value in logins.items() if isinstance(value, str)}


def _logins_write(path: Path, logins: dict[str, str]) -> None:
    """Written beside, readable by its owner only, then moved over the old file: a crash
    mid-write leaves the previous passwords, never half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(logins, handle, indent=2)
        handle.write("\n")
    os.chmod(partial, 0o600)  # an older partial file may have had another mode
    os.replace(partial, path)
