"""The staff-only debug search endpoint and the admin search lab, over a real indexed corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse

from kb.actors import SYSTEM
from kb.embedders import EmbeddingError
from kb.models import Document, EmbeddingModel
from kb.services.sync import corpus_sync
from tests.conftest import CachedEmbedder, CountingEmbedder, member, signed_in

pytestmark = pytest.mark.django_db

DEBUG_URL = "/debug/search"
LAB_URL = "/admin/search-lab/"
INTERNAL_PATH = "support/refund-escalations.md"
REFUND_SENTENCE = "Monthly plans are refundable within 30 days of purchase, no questions asked. "


def _page(title: str, text: str, **front: str) -> str:
    fields = "".join(f"{key}: {value}\n" for key, value in {"title": title, **front}.items())
    return f"---\n{fields}---\n# {title}\n\n{text}\n"


@pytest.fixture
def corpus(tmp_path: Path, cached_embedder: CachedEmbedder) -> None:
    root = tmp_path / "docs"
    (root / "policies").mkdir(parents=True)
    (root / "support").mkdir()
    (root / "policies" / "refunds.md").write_text(
        _page("Refund Policy", REFUND_SENTENCE * 6, updated="2026-09-14")
    )
    (root / "support" / "refund-escalations.md").write_text(
        _page(
            "Refund Escalations",
            "Support agents may approve refunds up to 500 dollars without a manager.",
            audience="internal",
        )
    )
    (root / "widgets.md").write_text(
        _page(
            "Refund Widget",
            "Paste <script>alert('pwned')</script> into your page to embed the refund widget.",
        )
    )
    report = corpus_sync(directory=root, embedder=cached_embedder, actor=SYSTEM)
    assert report.failed == []


def _client(user: User | None) -> Client:
    return Client() if user is None else signed_in(user)


@pytest.fixture
def staff() -> User:
    """Staff without the kb.view_document permission: public documents only."""
    return member("staff")


@pytest.fixture
def editor() -> User:
    """Staff granted kb.view_document explicitly, not through superuser status."""
    user = member("editor")
    user.user_permissions.add(Permission.objects.get(codename="view_document"))
    return User.objects.get(pk=user.pk)  # drop the cached permissions


@pytest.fixture
def superuser() -> User:
    return User.objects.create_superuser(username="root")  # force_login: no password to hash


def _search(user: User, **params: Any) -> tuple[int, dict[str, Any]]:
    response = _client(user).get(DEBUG_URL, params)
    assert response["Content-Type"] == "application/json"
    return response.status_code, response.json()


def _paths(body: dict[str, Any]) -> list[str]:
    return [hit["path"] for hit in body["hits"]]


def test_debug_search_is_a_404_for_anyone_but_staff(
    corpus: None, customer: User, staff: User
) -> None:
    inactive = member("former-staff", is_active=False)
    for user in (None, customer, inactive):
        assert _client(user).get(DEBUG_URL, {"q": "refunds"}).status_code == 404
        assert _client(user).post(DEBUG_URL, {"q": "refunds"}).status_code == 404

    # the same request from staff is answered, so the 404s above are the guard, not a bad URL
    assert _client(staff).get(DEBUG_URL, {"q": "refunds"}).status_code == 200


def test_search_lab_sends_anyone_but_staff_to_the_admin_login(customer: User) -> None:
    for user in (None, customer):
        response = _client(user).get(LAB_URL, {"q": "refunds"})
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("admin:login"))


def test_staff_get_every_leg_evidence_as_json(corpus: None, staff: User) -> None:
    status, body = _search(staff, q="Are monthly plans refundable within 30 days?", limit="3")

    assert status == 200
    assert body["question"] == "Are monthly plans refundable within 30 days?"
    assert body["embedding_model"] == EmbeddingModel.objects.active().get().key
    assert body["reranker"] == "none"
    assert (body["degraded"], body["failed_stages"], body["errors"]) == (False, [], {})
    assert {"embed", "sql", "total"} <= set(body["timings_ms"])
    assert body["vector_candidates"] == 2  # both public documents; the internal one is filtered
    # both legs run for a plain question; each public page holds one of its words
    assert body["keyword_candidates"] == 2
    assert body["candidates"] == 2

    top = body["hits"][0]
    assert top["rank"] == 1
    assert top["path"] == "policies/refunds.md"
    assert top["title"] == "Refund Policy"
    assert top["section"] == "Refund Policy"
    assert top["updated_on"] == "2026-09-14"
    assert (top["vector_rank"], top["keyword_rank"]) == (1, 1)
    assert top["fused_score"] > 0 and top["keyword_score"] > 0
    assert top["rerank_score"] is None
    body_text = Document.objects.get(path="policies/refunds.md").body
    assert "refundable" in body_text[top["char_start"] : top["char_end"]]
    assert len(top["preview"]) == 301 and top["preview"].endswith("…")
    assert top["preview"].startswith(REFUND_SENTENCE.strip()[:40])


def test_internal_documents_need_the_internal_audience_and_the_permission(
    corpus: None, staff: User, editor: User, superuser: User
) -> None:
    question = {"q": "how much can support agents refund without a manager", "limit": "20"}

    for user in (staff, editor, superuser):
        status, body = _search(user, **question)
        assert status == 200
        assert INTERNAL_PATH not in _paths(body), user.username

    for user in (editor, superuser):
        status, body = _search(user, **question, audience="internal")
        assert status == 200
        assert INTERNAL_PATH in _paths(body), user.username

    status, body = _search(staff, **question, audience="internal")
    assert status == 403
    assert "kb.view_document" in body["error"]
    assert "hits" not in body

    page = _client(staff).get(LAB_URL, {**question, "audience": "internal"}).content.decode()
    assert "needs the kb.view_document permission" in page
    assert INTERNAL_PATH not in page


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "q is required"),
        ({"q": "   "}, "q is required"),
        ({"q": "x" * 6000}, "too long: 6000 characters, at most 1000"),
        ({"q": "refunds", "limit": "0"}, "limit must be a whole number from 1 to 20"),
        ({"q": "refunds", "limit": "21"}, "limit must be a whole number from 1 to 20"),
        ({"q": "refunds", "limit": "five"}, "limit must be a whole number from 1 to 20"),
        ({"q": "refunds", "legs": "vector,bm25"}, "Unknown leg bm25"),
        ({"q": "refunds", "legs": ""}, "Choose at least one leg"),
        ({"q": "refunds", "rerank": "yes"}, "rerank must be 0 or 1"),
        ({"q": "refunds", "audience": "everyone"}, "audience must be public or internal"),
    ],
)
def test_bad_parameters_are_a_400_that_says_what_is_wrong(
    staff: User, params: dict[str, str], message: str
) -> None:
    # no corpus: were the parameters not checked first, retrieval would answer 503 instead
    status, body = _search(staff, **params)

    assert status == 400
    assert message in body["error"]


def test_no_index_is_a_503_with_the_reason(staff: User) -> None:
    status, body = _search(staff, q="refunds")

    assert status == 503
    assert body["error"] == "retrieval unavailable"
    assert "no active embedding model" in body["reason"]


def test_a_failing_embedder_degrades_to_the_keyword_leg(
    corpus: None,
    staff: User,
    counting_embedder: CountingEmbedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given the embedding service is down when a question is asked
    counting_embedder.failure = EmbeddingError("embedding service unreachable")
    monkeypatch.setattr("search.services.embedder_for", lambda key: counting_embedder)

    # when staff search
    status, body = _search(staff, q="refundable within 30 days")
    page = _client(staff).get(LAB_URL, {"q": "refundable within 30 days"}).content.decode()

    # then the keyword leg answers alone and says why
    assert status == 200
    assert body["degraded"] is True
    assert body["failed_stages"] == ["embed"]
    assert body["errors"]["embed"] == "EmbeddingError: embedding service unreachable"
    assert body["vector_candidates"] == 0
    assert _paths(body)[0] == "policies/refunds.md"
    assert all(hit["vector_rank"] is None for hit in body["hits"])
    assert "degraded: embed" in page
    assert "EmbeddingError: embedding service unreachable" in page


def test_only_the_chosen_legs_run(corpus: None, staff: User) -> None:
    status, body = _search(staff, q="refundable within 30 days", legs="keyword", rerank="0")

    assert status == 200
    assert body["legs"] == ["keyword"]
    assert body["vector_candidates"] == 0
    assert "embed" not in body["timings_ms"]
    assert body["hits"] and all(hit["vector_rank"] is None for hit in body["hits"])


def test_search_lab_shows_hits_with_admin_links_and_escapes_document_html(
    corpus: None, superuser: User
) -> None:
    response = _client(superuser).get(LAB_URL, {"q": "embed the refund widget", "limit": "5"})

    assert response.status_code == 200
    page = response.content.decode()
    widget = Document.objects.get(path="widgets.md")
    assert f'href="{reverse("admin:kb_document_change", args=[widget.pk])}"' in page
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in page
    assert "<script>alert" not in page
    assert EmbeddingModel.objects.active().get().key in page
    for label in ("Vector leg", "Keyword leg", "Fused", "Timings (ms)", "Reranker"):
        assert label in page
    assert "degraded:" not in page


def test_admin_index_links_to_an_empty_search_lab(superuser: User) -> None:
    client = _client(superuser)

    index = client.get(reverse("admin:index")).content.decode()
    lab = client.get(reverse("admin:search-lab"))

    assert f'href="{reverse("admin:search-lab")}"' in index
    assert "Documents" in index  # the app list still renders below the link
    assert lab.status_code == 200
    assert 'name="q"' in lab.content.decode()
    assert lab.context["retrieval"] is None
    assert "q is required" not in lab.content.decode()  # an unbound form shows no errors
