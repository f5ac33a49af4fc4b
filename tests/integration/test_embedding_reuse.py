"""A text the model has already embedded is never embedded again: edits and chunking changes
embed only the text that is new."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.actors import SYSTEM
from kb.models import Chunk, Document, DocumentIndexState
from kb.services import document_index
from kb.services.sync import corpus_sync

pytestmark = pytest.mark.django_db

GUIDE = "# Guide\n\n" + "\n\n".join(
    f"## Step {number}\n\nStep {number} explains how to set up part {number} of the account."
    for number in range(1, 9)
)


@pytest.fixture
def guide(tmp_path: Path, counting_embedder) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "guide.md").write_text(GUIDE)
    (root / "other.md").write_text("# Other\n\nSomething else entirely.\n")
    corpus_sync(directory=root, embedder=counting_embedder, actor=SYSTEM)
    counting_embedder.embedded_texts.clear()
    return root


def test_a_one_line_edit_embeds_only_its_section(guide: Path, counting_embedder) -> None:
    # given a page of eight sections, already indexed
    before = Chunk.objects.filter(document__path="guide.md").count()

    # when one line of one section changes
    edited = GUIDE.replace("set up part 5", "configure part 5")
    (guide / "guide.md").write_text(edited)
    report = corpus_sync(directory=guide, embedder=counting_embedder, actor=SYSTEM)

    # then only that section's text is embedded; the rest reuse their vectors
    assert len(counting_embedder.embedded_texts) <= 2
    assert any("configure part 5" in text for text in counting_embedder.embedded_texts)
    assert (report.embedded, report.reused) == (1, before - 1)
    assert "1 texts embedded and 7 reused" in report.summary()
    assert Chunk.objects.filter(document__path="guide.md").count() == before


def test_a_reused_vector_is_the_one_the_text_was_embedded_to(guide: Path, local_embedder) -> None:
    (guide / "guide.md").write_text(GUIDE.replace("set up part 5", "configure part 5"))
    corpus_sync(directory=guide, embedder=local_embedder, actor=SYSTEM)

    chunk = Chunk.objects.get(document__path="guide.md", heading_path="Guide > Step 3")
    fresh = local_embedder.embed_documents(
        ["Guide > Step 3\n\nStep 3 explains how to set up part 3 of the account."]
    )[0]
    assert float(fresh @ chunk.embedding) == pytest.approx(1.0, abs=1e-5)


def test_background_indexing_reuses_vectors_too(guide: Path, counting_embedder) -> None:
    document = Document.objects.get(path="guide.md")
    document.body = document.body + "\n\n## Step 9\n\nA new last step.\n"
    document.save()

    outcome = document_index(document_id=document.pk, embedder=counting_embedder)

    assert outcome == "indexed"
    assert counting_embedder.embedded_texts == ["Guide > Step 9\n\nA new last step."]
    state = DocumentIndexState.objects.get(document=document)
    assert state.chunk_count == 9
