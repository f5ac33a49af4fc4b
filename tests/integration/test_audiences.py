"""Who sees internal pages: one rule, ``kb.selectors.access.audiences_for``, for the /docs pages,
chat answers, debug search and evals alike. Internal pages are for active staff holding
``kb.view_document``; anyone else must not learn they exist."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import AnonymousUser, Group, Permission, User
from django.core.cache import cache
from django.test import Client

from kb.actors import SYSTEM
from kb.selectors.access import ALL_AUDIENCES, PUBLIC_AUDIENCES, audiences_for
from tests.support.chat import INTERNAL_QUESTION, index_help_center

pytestmark = pytest.mark.django_db

INTERNAL_PATH = "internal/escalation.md"
INTERNAL_TEXT = "goodwill credits of up to 200 dollars"


def _user(username: str, *, group: str | None = None, permission: bool = False, **flags) -> User:
    user = User.objects.create_user(username, **flags)  # no password to hash: force_login
    if group:
        user.groups.add(Group.objects.get(name=group))
    if permission:
        user.user_permissions.add(Permission.objects.get(codename="view_document"))
    return User.objects.get(pk=user.pk)  # no cached permissions


# reader, and whether the rule lets them see internal pages
READERS: dict[str, tuple[Callable[[], User | None], bool]] = {
    "anonymous": (lambda: None, False),
    "customer": (lambda: _user("customer"), False),
    "customer holding the permission": (lambda: _user("odd", permission=True), False),
    "staff without the permission": (lambda: _user("agent", is_staff=True), False),
    "staff with the permission": (lambda: _user("lead", is_staff=True, permission=True), True),
    "doc writer": (lambda: _user("writer", group="Doc writers", is_staff=True), True),
    "superuser": (lambda: User.objects.create_superuser("root"), True),
}


def test_audiences_for_each_kind_of_reader() -> None:
    for name, (make, sees_internal) in READERS.items():
        user = make() or AnonymousUser()
        assert audiences_for(user) == (ALL_AUDIENCES if sees_internal else PUBLIC_AUDIENCES), name
    inactive = _user("gone", is_staff=True, permission=True, is_active=False)
    assert audiences_for(inactive) == PUBLIC_AUDIENCES
    assert audiences_for(SYSTEM) == ALL_AUDIENCES


def test_pages_answers_and_debug_search_agree_for_every_reader(
    tmp_path: Path, cached_embedder
) -> None:
    index_help_center(tmp_path / "docs", embedder=cached_embedder)

    for name, (make, sees_internal) in READERS.items():
        # given a reader of this kind
        user = make()
        client = Client()
        if user is not None:
            client.force_login(user)
        cache.clear()  # answers are cached per audience set; the rate limit is per client

        # when they open the internal page, list the documents, ask and (if staff) search
        opened = client.get(f"/docs/{INTERNAL_PATH}").status_code
        listed = INTERNAL_PATH in client.get("/docs/").content.decode()
        answer = client.post("/ask", {"question": INTERNAL_QUESTION}, follow=True)
        cited = INTERNAL_PATH in answer.content.decode()
        debug = client.get("/debug/search", {"q": INTERNAL_QUESTION, "audience": "internal"})
        searched = debug.status_code == 200 and INTERNAL_PATH in debug.content.decode()

        # then every path gives the same verdict, the one audiences_for gives
        assert (opened == 200, listed, cited, searched) == (sees_internal,) * 4, name
        assert opened in (200, 404), name
