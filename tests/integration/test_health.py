"""Liveness, readiness (each check failing with its reason) and request ids."""

from __future__ import annotations

from pathlib import Path

import pytest
import structlog
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from kb.actors import SYSTEM
from kb.models import EmbeddingModel
from kb.services.sync import corpus_sync

pytestmark = pytest.mark.django_db


@pytest.fixture
def indexed(tmp_path: Path, cached_embedder) -> None:
    (tmp_path / "parking.md").write_text("# Parking\n\nVisitors park free in bay C.\n")
    corpus_sync(directory=tmp_path, embedder=cached_embedder, actor=SYSTEM)


def _checks(response) -> dict[str, dict]:
    return response.json()["checks"]


def test_healthz_answers_while_the_process_is_up() -> None:
    response = Client().get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


def test_readyz_is_ok_when_everything_an_answer_needs_is_there(indexed) -> None:
    response = Client().get("/readyz")

    assert response.status_code == 200, response.json()
    checks = _checks(response)
    assert set(checks) == {"database", "pgvector", "embedding_model", "broker"}
    assert all(check["ok"] for check in checks.values())
    assert checks["pgvector"]["detail"].startswith("pgvector 0.8")
    assert checks["embedding_model"]["detail"] == "local/all-MiniLM-L6-v2 (384 dimensions)"


PUBLIC_ADDRESS = "203.0.113.7"
VERSION_WORDS = ("PostgreSQL", "pgvector", "MiniLM", "dimensions", "reachable")


def test_readyz_tells_the_public_only_its_status(indexed) -> None:
    ready = Client(REMOTE_ADDR=PUBLIC_ADDRESS).get("/readyz")
    EmbeddingModel.objects.update(dimensions=768)
    not_ready = Client(REMOTE_ADDR=PUBLIC_ADDRESS).get("/readyz")

    assert (ready.status_code, ready.json()) == (200, {"status": "ok"})
    assert (not_ready.status_code, not_ready.json()) == (503, {"status": "fail"})
    for response in (ready, not_ready):
        assert not any(word in response.content.decode() for word in VERSION_WORDS)


def test_readyz_behind_a_proxy_on_the_same_host_is_public(indexed) -> None:
    # A reverse proxy on this machine connects from loopback on behalf of anyone.
    response = Client().get("/readyz", HTTP_X_FORWARDED_FOR=PUBLIC_ADDRESS)

    assert response.json() == {"status": "ok"}


def test_readyz_shows_staff_the_checks_from_anywhere(indexed) -> None:
    client = Client(REMOTE_ADDR=PUBLIC_ADDRESS)
    client.force_login(User.objects.create_user("operator", is_staff=True))

    response = client.get("/readyz")

    assert response.status_code == 200
    assert _checks(response)["database"]["detail"].startswith("PostgreSQL ")


def test_readyz_fails_with_a_reason_before_anything_is_indexed() -> None:
    response = Client().get("/readyz")

    assert response.status_code == 503
    assert response.json()["status"] == "fail"
    assert "no active embedding model" in _checks(response)["embedding_model"]["detail"]
    assert _checks(response)["database"]["ok"]


def test_readyz_fails_when_the_index_is_empty(indexed) -> None:
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM kb_chunk")

    response = Client().get("/readyz")

    assert response.status_code == 503
    assert "the index is empty" in _checks(response)["embedding_model"]["detail"]


def test_readyz_fails_when_the_model_does_not_match_the_indexed_vectors(indexed) -> None:
    EmbeddingModel.objects.update(dimensions=768)

    response = Client().get("/readyz")

    assert response.status_code == 503
    assert (
        "produces 384 dimensions, the index holds 768"
        in (_checks(response)["embedding_model"]["detail"])
    )


def test_readyz_fails_when_the_broker_is_unreachable(indexed, settings) -> None:
    from config.celery_app import app

    previous = app.conf.broker_url
    app.conf.broker_url = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    try:
        response = Client().get("/readyz")
    finally:
        app.conf.broker_url = previous

    assert response.status_code == 503
    broker = _checks(response)["broker"]
    assert not broker["ok"] and broker["detail"]
    assert _checks(response)["embedding_model"]["ok"]


def test_every_response_carries_a_request_id_that_the_logs_share() -> None:
    with structlog.testing.capture_logs() as events:
        response = Client().get("/healthz", HTTP_X_REQUEST_ID="edge-1234abcd")
        generated = Client().get("/healthz?token=secret-value")

    assert response["X-Request-ID"] == "edge-1234abcd"
    assert len(generated["X-Request-ID"]) == 32
    finished = [e for e in events if e["event"] == "request_finished"]
    assert [e["request_id"] for e in finished] == ["edge-1234abcd", generated["X-Request-ID"]]
    assert finished[1]["path"] == "/healthz" and "secret-value" not in repr(events)


def test_a_malformed_incoming_request_id_is_replaced() -> None:
    response = Client().get("/healthz", HTTP_X_REQUEST_ID="<script>alert(1)</script>")
    assert response["X-Request-ID"] != "<script>alert(1)</script>"
    assert len(response["X-Request-ID"]) == 32
