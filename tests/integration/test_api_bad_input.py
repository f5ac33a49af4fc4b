"""Bad input to the answer API is a 4xx with a message, never a 5xx: every field of every
endpoint, the raw body and the Authorization header under arbitrary values (Hypothesis).

Any JSON value where a string is expected and the reverse, NaN (not JSON), unknown fields,
bodies that are not JSON or not UTF-8, NUL and other controls, huge strings, path ids that are
not UUIDs. Each response is a 2xx, or a 4xx whose JSON body has an ``error`` sentence."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from django.core.cache import cache
from django.test import Client
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from tests.support.api import bearer, new_key

pytestmark = pytest.mark.django_db

NASTY = [
    "\x00",
    "a\x00b",
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "refund & | ! ( ) :* <->",
    "\u202eevil\u202c",
    "😀" * 50,
    "x" * 120_000,
    "",
    " ",
    "-1",
    "99999999999999999999",
    "NaN",
    str(uuid.uuid4()),
]
text = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=200), st.sampled_from(NASTY)
)
json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        text,
    ),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=10), children, max_size=3)
    ),
    max_leaves=6,
)
maybe = st.one_of(st.just(...), json_values)  # ... leaves the field out
FUZZ = hypothesis_settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture
def key(help_center: Path) -> str:
    """A key on the tiny help center, indexed: fuzzed questions go through real retrieval."""
    cache.clear()
    return new_key(rate_limit_per_minute=1_000_000)[1]


@pytest.fixture
def answered(key: str) -> str:
    """One of the key's answers, so feedback reaches the service."""
    response = Client().post(
        "/api/v1/ask",
        json.dumps({"question": "How do refunds work?"}),
        content_type="application/json",
        **bearer(key),
    )
    assert response.status_code == 200, response.content
    return response.json()["message"]


def _body(fields: dict[str, Any]) -> str:
    present = {name: value for name, value in fields.items() if value is not ...}
    return json.dumps(present)  # NaN and Infinity come out as invalid JSON, on purpose


def _assert_handled(response: Any) -> None:
    if getattr(response, "streaming", False):
        b"".join(response.streaming_content)  # a stream must end in its final event, not raise
    assert response.status_code < 500, response.content[:500]
    if response.status_code >= 400:
        error = response.json()["error"]
        assert isinstance(error, str) and error.strip()


@FUZZ
@given(
    question=maybe,
    conversation=maybe,
    extra=st.dictionaries(st.text(max_size=10), json_values, max_size=2),
    stream=st.booleans(),
)
def test_ask_never_fails_on_any_body(
    key: str, question: Any, conversation: Any, extra: dict, stream: bool
) -> None:
    fields = {**extra, "question": question, "conversation": conversation}
    path = "/api/v1/ask/stream" if stream else "/api/v1/ask"
    response = Client().post(path, _body(fields), content_type="application/json", **bearer(key))
    _assert_handled(response)


@FUZZ
@given(
    raw=st.binary(max_size=300),
    content_type=st.sampled_from(["application/json", "text/plain", "multipart/form-data", ""]),
)
def test_ask_never_fails_on_a_raw_body(key: str, raw: bytes, content_type: str) -> None:
    response = Client().post("/api/v1/ask", raw, content_type=content_type, **bearer(key))
    _assert_handled(response)


@FUZZ
@given(q=st.one_of(st.none(), text), limit=st.one_of(st.none(), text, st.integers()))
def test_search_never_fails_on_any_query(key: str, q: str | None, limit: Any) -> None:
    params = {name: value for name, value in {"q": q, "limit": limit}.items() if value is not None}
    response = Client().get(f"/api/v1/search?{urlencode(params)}", **bearer(key))
    _assert_handled(response)


@FUZZ
@given(
    message_id=st.one_of(text, st.just("")),
    use_answer=st.booleans(),
    vote=maybe,
    comment=maybe,
)
def test_feedback_never_fails_on_any_field(
    key: str, answered: str, message_id: str, use_answer: bool, vote: Any, comment: Any
) -> None:
    target = answered if use_answer else quote(message_id, safe="")
    response = Client().post(
        f"/api/v1/answers/{target}/feedback",
        _body({"vote": vote, "comment": comment}),
        content_type="application/json",
        **bearer(key),
    )
    _assert_handled(response)


@FUZZ
@given(conversation_id=text)
def test_a_conversation_id_of_any_form_is_a_4xx(key: str, conversation_id: str) -> None:
    response = Client().get(
        f"/api/v1/conversations/{quote(conversation_id, safe='')}", **bearer(key)
    )
    _assert_handled(response)
    assert response.status_code in (400, 404)


@FUZZ
@given(header=st.text(st.characters(min_codepoint=32, max_codepoint=255), max_size=120))
def test_any_authorization_header_is_a_401_or_accepted(header: str) -> None:
    response = Client().post("/api/v1/conversations", HTTP_AUTHORIZATION=header)
    _assert_handled(response)
    assert response.status_code == 401


@FUZZ
@given(
    origin=st.text(st.characters(min_codepoint=32, max_codepoint=255), max_size=120),
    preflight=st.booleans(),
)
def test_any_origin_header_is_answered_without_a_5xx(
    key: str, origin: str, preflight: bool
) -> None:
    if preflight:
        response = Client().options(
            "/api/v1/ask", HTTP_ORIGIN=origin, HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST"
        )
    else:
        response = Client().post("/api/v1/conversations", **bearer(key, HTTP_ORIGIN=origin))
    _assert_handled(response)


def test_refusals_before_the_api_are_json_with_their_reason(key: str) -> None:
    nul = Client().get("/api/v1/search?q=a%00b", **bearer(key))
    charset = Client().post(
        "/api/v1/ask", b"{}", content_type="application/json; charset=utf-16", **bearer(key)
    )

    assert nul.status_code == 400 and "NUL character" in nul.json()["error"]
    assert charset.status_code == 415 and "utf-16" in charset.json()["error"]


def test_an_unknown_api_path_is_a_json_404(key: str) -> None:
    response = Client().get("/api/v1/nothing-here", **bearer(key))

    assert response.status_code == 404
    assert response.json()["error"]
