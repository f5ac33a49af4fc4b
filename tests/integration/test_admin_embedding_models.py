"""Embedding models in admin: stewards add, watch, activate and drop; writers only look."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client

from kb.actors import SYSTEM
from kb.embedders import embedder_for
from kb.models import EmbeddingModel
from kb.services import embedding_model_build
from kb.services import model_builds as lifecycle
from kb.services.sync import corpus_sync
from tests.support.voyage_stub import VoyageStub

pytestmark = pytest.mark.django_db

API_KEY = "test-voyage-key"
VOYAGE = "voyage/voyage-3.5"
CHANGELIST = "/admin/kb/embeddingmodel/"


@pytest.fixture
def voyage(settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[VoyageStub]:
    monkeypatch.setattr(lifecycle, "_enqueue_build", lambda model_id: None)
    with VoyageStub(api_key=API_KEY) as stub:
        settings.VOYAGE_API_KEY = API_KEY
        settings.VOYAGE_BASE_URL = stub.base_url
        embedder_for.cache_clear()
        yield stub
    embedder_for.cache_clear()


@pytest.fixture
def corpus(tmp_path: Path, cached_embedder) -> None:
    (tmp_path / "parking.md").write_text("# Parking\n\nVisitors park free in bay C.\n")
    (tmp_path / "pets.md").write_text("# Pets\n\nDogs may visit on Fridays.\n")
    corpus_sync(directory=tmp_path, embedder=cached_embedder, actor=SYSTEM)


def _act(client: Client, action: str, model: EmbeddingModel):
    return client.post(CHANGELIST, {"action": action, "_selected_action": [model.pk]}, follow=True)


def test_steward_adds_a_model_watches_it_build_and_activates_it(
    corpus, voyage, steward_client: Client
) -> None:
    steward = steward_client

    # when a steward adds a model by key
    response = steward.post(f"{CHANGELIST}add/", {"key": VOYAGE}, follow=True)

    # then it is registered through the service and shows its coverage
    assert response.status_code == 200
    model = EmbeddingModel.objects.get(key=VOYAGE)
    assert model.state == "building" and model.dimensions == 1024
    assert "0/2 documents (0%), 2 pending" in steward.get(CHANGELIST).content.decode()

    # and activating before the build completes is refused with the reason
    refused = _act(steward, "activate_model", model).content.decode()
    assert "is not ready: 0/2 documents" in refused
    assert EmbeddingModel.objects.active().get().key == "local/all-MiniLM-L6-v2"

    # when the build has run, activation switches search to it
    embedding_model_build(model_id=model.pk)
    assert "2/2 documents (100%)" in steward.get(CHANGELIST).content.decode()
    _act(steward, "activate_model", model)
    assert EmbeddingModel.objects.active().get().key == VOYAGE

    # and the retired model can be dropped, the active one cannot
    old = EmbeddingModel.objects.get(key="local/all-MiniLM-L6-v2")
    assert "Dropped local/all-MiniLM-L6-v2" in _act(steward, "drop_model", old).content.decode()
    assert "is the active model" in _act(steward, "drop_model", model).content.decode()
    assert EmbeddingModel.objects.filter(key=VOYAGE).exists()


def test_an_unknown_key_is_a_form_error(corpus, voyage, steward_client: Client) -> None:
    steward = steward_client

    response = steward.post(f"{CHANGELIST}add/", {"key": "openai/text-embedding-3"})

    assert response.status_code == 200
    assert "no embedder for model" in response.content.decode()
    assert EmbeddingModel.objects.count() == 1


def test_doc_writer_sees_models_but_cannot_add_activate_or_drop(
    corpus, writer_client: Client
) -> None:
    writer = writer_client
    model = EmbeddingModel.objects.get()

    listing = writer.get(CHANGELIST)

    assert listing.status_code == 200
    assert "activate_model" not in listing.content.decode()
    assert writer.get(f"{CHANGELIST}add/").status_code == 403
    _act(writer, "drop_model", model)
    assert EmbeddingModel.objects.filter(pk=model.pk).exists()
