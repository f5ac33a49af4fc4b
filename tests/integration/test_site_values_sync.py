"""What a synced site's pages print from its configuration, data and sections reads as the site
renders it: Hugo's `param` shortcode (`kb.hugo`), Jekyll's Liquid values (`kb.jekyll`)."""

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


def test_a_jekyll_pages_printed_value_is_its_text_and_a_change_to_the_data_reindexes_it(
    tmp_path: Path, counting_embedder: CountingEmbedder
) -> None:
    # given: a Jekyll site printing the Ruby it needs from a data file
    (tmp_path / "_data").mkdir()
    (tmp_path / "_config.yml").write_text("title: Acme docs\n")
    (tmp_path / "_data" / "ruby.yml").write_text("min_version: 2.7.0\n")
    (tmp_path / "installation.md").write_text(
        "---\ntitle: Installation\n---\n# Installation\n\n"
        "You need Ruby {{ site.data.ruby.min_version }} or higher to build {{ site.title }}.\n"
    )
    (tmp_path / "about.md").write_text("---\ntitle: About\n---\n# About\n\nWho we are.\n")

    report = corpus_sync(directory=tmp_path, embedder=counting_embedder, actor=SYSTEM)

    assert sorted(report.indexed) == ["about.md", "installation.md"]
    page = Document.objects.get(path="installation.md")
    assert "You need Ruby 2.7.0 or higher to build Acme docs." in page.body
    assert "Ruby 2.7.0 or higher" in " ".join(
        Chunk.objects.filter(document=page).values_list("text", flat=True)
    )

    # when the data file alone changes
    (tmp_path / "_data" / "ruby.yml").write_text("min_version: 3.0.0\n")
    report = corpus_sync(directory=tmp_path, embedder=counting_embedder, actor=SYSTEM)

    # then: the page printing it is synced again, the other is not
    assert report.indexed == ["installation.md"]
    assert "You need Ruby 3.0.0 or higher" in Document.objects.get(path="installation.md").body
