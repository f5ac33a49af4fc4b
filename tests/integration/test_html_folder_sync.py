"""A folder of HTML articles synced like a folder of Markdown (issue 29)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.actors import SYSTEM
from kb.models import Chunk, Document
from kb.services.sync import corpus_sync
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db

ARTICLE = (
    "<html><head><title>Refunds - Acme</title></head><body><nav>Home | Billing</nav>"
    "<article><h1>Refunds</h1><p>Monthly plans are refundable within {days} days.</p>"
    "<h2>Cards</h2><ul><li>Visa</li><li>Mastercard</li></ul></article></body></html>"
)


def test_an_html_folder_is_synced_then_only_its_changed_page_is_reembedded(
    tmp_path: Path, counting_embedder: CountingEmbedder
) -> None:
    # given
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "refunds.html").write_text(ARTICLE.format(days=30))
    (folder / "intro.htm").write_text("<h1>Welcome</h1><p>Start here.</p>")

    # when
    first = corpus_sync(directory=folder, embedder=counting_embedder, actor=SYSTEM)

    # then
    assert (first.failed, sorted(first.indexed)) == ([], ["intro.htm", "refunds.html"])
    refunds = Document.objects.get(path="refunds.html")
    assert refunds.title == "Refunds"
    assert refunds.body.startswith("# Refunds\n\nMonthly plans are refundable within 30 days.")
    assert "Home | Billing" not in refunds.body
    paths = set(Chunk.objects.filter(document=refunds).values_list("heading_path", flat=True))
    assert paths == {"Refunds", "Refunds > Cards"}

    # when synced again unchanged, nothing is embedded
    counting_embedder.embedded_texts.clear()
    again = corpus_sync(directory=folder, embedder=counting_embedder, actor=SYSTEM)
    assert (again.indexed, again.unchanged, counting_embedder.embedded_texts) == ([], 2, [])

    # when one page changes upstream, only it is re-embedded
    (folder / "refunds.html").write_text(ARTICLE.format(days=14))
    changed = corpus_sync(directory=folder, embedder=counting_embedder, actor=SYSTEM)
    assert changed.indexed == ["refunds.html"]
    assert "within 14 days" in Document.objects.get(path="refunds.html").body
