"""Each page's mean chunk vector (``kb_page_vector``, the page topic's input) follows every
change of its chunks in the same transaction: indexing, an edit, a deletion, a dropped model."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import DatabaseError, connection, transaction

from kb.actors import SYSTEM
from kb.models import Chunk, Document, EmbeddingModel, PageVector
from kb.services.sync import corpus_sync
from tests.conftest import pages_written_and_synced
from tests.support.index_recounts import page_vectors_match_a_recount

pytestmark = pytest.mark.django_db

PAGES = {
    "billing/refunds.md": "# Refunds\n\nAnnual plans get a prorated refund within 60 days.\n\n"
    "## Monthly plans\n\nMonthly plans are not refunded, but you can cancel any time.\n",
    "billing/invoices.md": "# Invoices\n\nEvery invoice lists the plan, the period and the tax.\n",
    "api/errors.md": "# Errors\n\nE4012 means the card was declined.\n\n## Expired cards\n\n"
    "E4013 means the card expired.\n\n## Retries\n\nRetry the payment with another card.\n",
}


@pytest.fixture
def pages(tmp_path: Path, cached_embedder) -> Path:
    return pages_written_and_synced(tmp_path / "docs", PAGES, cached_embedder)


def test_page_vectors_follow_indexing_edits_deletions_and_model_drops(
    pages: Path, local_embedder
) -> None:
    # indexing wrote one row per page: the errors page is the mean of its three sections
    page_vectors_match_a_recount()
    errors = Document.objects.get(path="api/errors.md")
    assert PageVector.objects.get(document=errors).chunk_count == 3

    # an edit re-chunks one page, and only its row changes
    others = {v.document_id: list(v.embedding) for v in PageVector.objects.exclude(document=errors)}
    (pages / "api/errors.md").write_text("# Errors\n\nE4012 means the card was declined.\n")
    corpus_sync(directory=pages, embedder=local_embedder, actor=SYSTEM)
    page_vectors_match_a_recount()
    assert PageVector.objects.get(document=errors).chunk_count == 1
    assert {
        v.document_id: list(v.embedding) for v in PageVector.objects.exclude(document=errors)
    } == others

    # a page deleted in admin takes its row with it
    Document.objects.filter(path="billing/invoices.md").delete()
    page_vectors_match_a_recount()
    assert PageVector.objects.count() == 2

    # emptying the chunk table (a benchmark does) empties the page vectors with it
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE kb_chunk CASCADE")
    assert not PageVector.objects.exists()


def test_dropping_a_model_leaves_no_page_vectors(pages: Path) -> None:
    assert PageVector.objects.exists()

    EmbeddingModel.objects.all().delete()

    assert not PageVector.objects.exists()


def test_a_chunk_vector_cannot_change_behind_its_page_vector(pages: Path) -> None:
    chunk = Chunk.objects.first()
    assert chunk is not None

    with pytest.raises(DatabaseError, match="immutable"), transaction.atomic():
        Chunk.objects.filter(pk=chunk.pk).update(embedding=[0.0] * len(chunk.embedding))
