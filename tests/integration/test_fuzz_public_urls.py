"""No request can cause a 500: every public URL and form field under arbitrary input (Hypothesis).

Any Unicode (NUL and other controls included), markup, SQL and tsquery syntax, traversal paths,
long values, and wrong methods. A 4xx is a fine answer; a 5xx is a bug. Bounded to 150
examples (about 350 requests) in all.
"""

from __future__ import annotations

import uuid
from urllib.parse import quote

import pytest
from django.core.cache import cache
from django.test import Client
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from assistant.models import Message

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
NASTY = [
    "\x00",
    "a\x00b",
    "%00",
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "refund & | ! ( ) :* <->",
    "../../etc/passwd",
    "\u202eevil\u202c",
    "\ufeff",
    "😀" * 50,
    "x" * 5000,
    "",
    " ",
    "-1",
    "99999999999999999999",
    "NaN",
]
# Any text a browser can send (lone surrogates cannot be encoded), or a known troublemaker.
values = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=300),
    st.sampled_from(NASTY),
)
FUZZ = hypothesis_settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture
def asker() -> tuple[Client, Message]:
    """A browser with one answered question, so feedback on it reaches the service."""
    cache.clear()  # rate limits of earlier tests live in the shared Redis
    client = Client()
    assert client.post("/ask", {"question": "How do refunds work?"}, **HTMX).status_code == 200
    message = Message.objects.get()
    message.status = Message.Status.ANSWERED
    message.answer = "Refunds go back to the card."
    message.save()
    return client, message


def _no_server_error(response, what: object) -> None:
    assert response.status_code < 500, (what, response.status_code)


@FUZZ
@given(path=values, start=values, end=values)
def test_document_pages_never_fail(path: str, start: str, end: str) -> None:
    client = Client()
    url = "/docs/" + quote(path, safe="/")
    _no_server_error(client.get(url, {"start": start, "end": end}), url)
    _no_server_error(client.get("/docs/", {"page": start}), start)


@FUZZ
@given(question=values, conversation=values, htmx=st.booleans())
def test_asking_never_fails(asker, question: str, conversation: str, htmx: bool) -> None:
    client, _ = asker
    response = client.post(
        "/ask", {"question": question, "conversation": conversation}, **(HTMX if htmx else {})
    )
    _no_server_error(response, (question, conversation))


@FUZZ
@given(
    vote=st.one_of(st.sampled_from(["up", "down"]), values),
    comment=values,
    known=st.booleans(),
    htmx=st.booleans(),
)
def test_feedback_never_fails(asker, vote: str, comment: str, known: bool, htmx: bool) -> None:
    client, message = asker
    public_id = message.public_id if known else uuid.uuid4()
    response = client.post(
        f"/answers/{public_id}/feedback",
        {"vote": vote, "comment": comment},
        **(HTMX if htmx else {}),
    )
    _no_server_error(response, (vote, comment))


@FUZZ
@given(segment=values, query=values, method=st.sampled_from(["get", "post", "put", "delete"]))
def test_every_other_public_url_never_fails(segment: str, query: str, method: str) -> None:
    client = Client()
    for url in (
        "/",
        f"/answers/{uuid.uuid4()}/events",
        f"/answers/{quote(segment, safe='')}/events",
        "/conversations/new",
        "/support",
        f"/embed/{quote(segment, safe='')}/",
        f"/embed/{quote(segment, safe='')}/new-conversation",
        "/debug/search",
        "/healthz",
        "/" + quote(segment, safe="/"),
    ):
        fields = {"q": query, "question": query, "email": query, "message": query}
        response = getattr(client, method)(url, fields)
        _no_server_error(response, (method, url, query))


@FUZZ
@given(username=values, password=values)
def test_the_admin_login_never_fails(username: str, password: str) -> None:
    response = Client().post("/admin/login/", {"username": username, "password": password})
    _no_server_error(response, username)
