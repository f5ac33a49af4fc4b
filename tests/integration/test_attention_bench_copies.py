"""attention_bench grows the index with copies of its pages written by set-based SQL: the copies
must fit the schema as it is now (a NOT NULL column added to kb_document stopped it once)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.actors import SYSTEM
from kb.embedders.hashing import HashingEmbedder
from kb.models import Chunk, Document
from kb.services import embedding_model_add
from kb.services.sync import corpus_sync
from kb.tooling.benchmarks.attention import pages_copy

pytestmark = pytest.mark.django_db


def test_copies_of_pages_fit_the_current_schema(tmp_path: Path) -> None:
    (tmp_path / "refunds.md").write_text(
        "---\naliases: [/old/refunds/]\ntags: [billing]\n---\n# Refunds\n\n"
        "A monthly plan is refunded within 30 days.\n"
    )
    model = embedding_model_add(embedder=HashingEmbedder())
    report = corpus_sync(directory=tmp_path, embedder=HashingEmbedder(), actor=SYSTEM)
    assert report.failed == []

    pages_copy(embedding_model=model, copy_number=1)

    original, copy = (
        Document.objects.get(path="refunds.md"),
        Document.objects.get(path="copy1/refunds.md"),
    )
    # the copy keeps what the page's front matter said, but not its old addresses: an address
    # redirects to one page only
    assert copy.metadata == original.metadata and original.aliases and copy.aliases == []
    assert (
        Chunk.objects.filter(document=copy).count()
        == Chunk.objects.filter(document=original).count()
    )
