"""A synced Hugo folder's `param` shortcodes read as the site renders them (`kb.hugo`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.actors import SYSTEM
from kb.models import Chunk, Document
from kb.services.sync import corpus_sync
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db


def test_a_cascaded_param_is_the_pages_text_and_a_change_to_it_reindexes_the_page(
    tmp_path: Path, counting_embedder: CountingEmbedder
) -> None:
    # given: etcd's layout, each version's section cascading the release its pages install
    section = tmp_path / "docs" / "v3.6"
    section.mkdir(parents=True)
    (section / "_index.md").write_text(
        "---\ntitle: v3.6 docs\ncascade:\n  git_version_tag: v3.6.0\n---\nThe v3.6 docs.\n"
    )
    (section / "install.md").write_text(
        "---\ntitle: Install\n---\n# Install\n\n"
        "Run the latest release of etcd ({{< param git_version_tag >}}) from the packages.\n"
    )

    # when
    report = corpus_sync(directory=tmp_path, embedder=counting_embedder, actor=SYSTEM)

    # then: the page says the release, in what it stores, embeds and quotes
    assert sorted(report.indexed) == ["docs/v3.6/_index.md", "docs/v3.6/install.md"]
    install = Document.objects.get(path="docs/v3.6/install.md")
    assert "etcd (v3.6.0) from the packages" in install.body
    assert "etcd (v3.6.0) from the packages" in " ".join(
        Chunk.objects.filter(document=install).values_list("text", flat=True)
    )

    # when the section moves to the next patch release, the page's file unchanged
    (section / "_index.md").write_text(
        (section / "_index.md").read_text().replace("v3.6.0", "v3.6.1")
    )
    report = corpus_sync(directory=tmp_path, embedder=counting_embedder, actor=SYSTEM)

    # then: the section's page changed in its front matter only, and the page reading the
    # value is embedded again, saying the new release
    assert (report.updated, report.indexed) == (["docs/v3.6/_index.md"], ["docs/v3.6/install.md"])
    assert "etcd (v3.6.1) from" in Document.objects.get(path="docs/v3.6/install.md").body
