"""PostgreSQL unreachable: every public page is a plain 503 "temporarily unavailable" with
``Retry-After``, never a 500 with a traceback; an answer stream ends with an event the page
shows; when the database is back the same process serves again, with no restart.

The outage is real to the app: its connection is closed and the next one is made to an address
where no PostgreSQL listens, so every query fails in psycopg exactly as during an outage.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from assistant.models import Message
from kb.models import Document

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("empty_cache")]

HTMX = {"HTTP_HX_REQUEST": "true"}
UNAVAILABLE = "temporarily unavailable"


@contextmanager
def database_down() -> Iterator[None]:
    settings_dict = connection.settings_dict
    saved = settings_dict["PORT"]
    connection.close()
    settings_dict["PORT"] = "1"  # nothing listens there: every connect is refused
    try:
        yield
    finally:
        connection.close()
        settings_dict["PORT"] = saved


def _assert_unavailable(response) -> None:
    html = response.content.decode()
    assert response.status_code == 503, html[:500]
    assert response["Retry-After"] == "60"
    assert UNAVAILABLE in html and "try again in a minute" in html
    assert "Traceback" not in html and "OperationalError" not in html


def test_public_pages_answer_503_while_the_database_is_down_and_recover_without_restart() -> None:
    Document.objects.create(path="policies/refunds.md", title="Refunds", body="# Refunds\n\nYes.\n")
    staff = User.objects.create_superuser(username="steward", password="pw-for-tests")
    admin_client = Client()
    admin_client.force_login(staff)
    reader = Client()  # has asked before, so its session and conversation are in the database
    assert reader.post("/ask", {"question": "Can I get a refund?"}, **HTMX).status_code == 200

    with database_down():
        _assert_unavailable(reader.get("/"))
        _assert_unavailable(reader.get("/docs/"))
        _assert_unavailable(reader.get("/docs/policies/refunds.md"))
        _assert_unavailable(reader.post("/ask", {"question": "Can I get a refund?"}))
        _assert_unavailable(admin_client.get("/admin/"))
        _assert_unavailable(admin_client.get("/admin/kb/document/"))

    assert reader.get("/").status_code == 200
    assert reader.get("/docs/policies/refunds.md").status_code == 200
    assert admin_client.get("/admin/kb/document/").status_code == 200


def test_an_htmx_ask_while_the_database_is_down_gets_the_notice_as_its_error() -> None:
    with database_down():
        response = Client().post("/ask", {"question": "Can I get a refund?"}, **HTMX)

    _assert_unavailable(response)


def test_an_answer_stream_opened_during_an_outage_ends_with_a_notice_the_page_shows() -> None:
    client = Client()
    assert client.post("/ask", {"question": "Can I get a refund?"}, **HTMX).status_code == 200
    message = Message.objects.get()

    with database_down():
        response = client.get(f"/answers/{message.public_id}/events")
        body = b"".join(response.streaming_content).decode()

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/event-stream")
    final = re.search(r"event: final\n((?:data: .*\n)+)\n", body)
    assert final, body
    assert UNAVAILABLE in final.group(1) and "try again in a minute" in final.group(1)
    message.refresh_from_db()
    assert message.is_pending  # nothing was recorded as failed: the reader can ask it again
