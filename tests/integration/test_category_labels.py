"""Category names on /docs/: staff's names from the database, a folder sync's from the folder's
categories.json where staff have none, never ``str.title()`` and no "Other" for categorised
pages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from kb.models import Category, Document
from kb.parsing import parse_document
from kb.selectors.categories import category_label
from kb.services.categories import category_labels_read
from tests.conftest import CORPUS_DIR, signed_in

pytestmark = pytest.mark.django_db


def _document(path: str, title: str, category: str) -> Document:
    return Document.objects.create(
        path=path, title=title, category=category, body=f"# {title}\n\nText.\n"
    )


def _headings(html: str) -> list[str]:
    return [
        part.split(">", 1)[1].split("</h2>", 1)[0] for part in html.split('<h2 id="category-')[1:]
    ]


def test_index_groups_by_the_names_staff_gave_the_categories() -> None:
    # given: pages in three categories, two named, and one page with no category
    Category.objects.create(slug="api", label="API")
    Category.objects.create(slug="getting-started", label="Getting started")
    _document("api/keys.md", "API keys", "api")
    _document("start/quickstart.md", "Quickstart", "getting-started")
    _document("start/install.md", "Install", "getting-started")
    _document("webhooks/events.md", "Events", "webhooks")
    _document("misc.md", "Miscellany", "")

    # when
    html = Client().get("/docs/").content.decode()

    # then: named, in name order; an unnamed slug read plainly; "Other" only for no category
    assert _headings(html) == ["API", "Getting started", "Webhooks", "Other"]
    getting_started = html.split(">Getting started</h2>", 1)[1].split("</section>", 1)[0]
    assert getting_started.index("Install") < getting_started.index("Quickstart")
    assert "Miscellany" in html.split(">Other</h2>", 1)[1]


def test_a_page_names_its_category_as_the_index_does() -> None:
    Category.objects.create(slug="api", label="API")
    _document("api/keys.md", "API keys", "api")

    html = Client().get("/docs/api/keys.md").content.decode()

    assert "Category: API" in html
    assert "<li>API</li>" in html.split('aria-label="Breadcrumb"', 1)[1].split("</nav>", 1)[0]


def test_a_category_without_a_name_is_shown_as_written_never_title_cased() -> None:
    assert category_label("getting-started", labels={}) == "Getting started"
    assert category_label("FAQ", labels={}) == "FAQ"
    assert category_label("api", labels={"api": "API"}) == "API"


def test_kb_sync_names_categories_from_the_folder_but_keeps_staff_names(tmp_path: Path) -> None:
    # given: staff already named "api"; the folder names it too, and "getting-started"
    Category.objects.create(slug="api", label="Developer API")
    (tmp_path / "start.md").write_text("---\ncategory: getting-started\n---\n# Start\n\nGo.\n")
    (tmp_path / "categories.json").write_text(
        json.dumps({"api": "API", "getting-started": "Getting started"})
    )

    # when
    call_command("kb_sync", str(tmp_path), "--no-progress")

    # then
    assert dict(Category.objects.values_list("slug", "label")) == {
        "api": "Developer API",
        "getting-started": "Getting started",
    }


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('["api"]', "expected an object"),
        ('{"api": ""}', "the name of 'api' must be text"),
    ],
)
def test_a_bad_categories_file_is_refused_and_nothing_is_synced(
    tmp_path: Path, content: str, message: str
) -> None:
    (tmp_path / "start.md").write_text("# Start\n\nGo.\n")
    (tmp_path / "categories.json").write_text(content)

    with pytest.raises(CommandError, match=message):
        call_command("kb_sync", str(tmp_path), "--no-progress")

    assert not Document.objects.exists() and not Category.objects.exists()


def test_every_category_of_the_sample_corpus_has_a_name() -> None:
    categories = {
        parse_document(path=str(path.relative_to(CORPUS_DIR)), raw=path.read_bytes()).category
        for path in CORPUS_DIR.glob("*/*.md")
    }
    labels = category_labels_read(directory=CORPUS_DIR)

    assert categories - {""} <= set(labels)
    assert (labels["api"], labels["getting-started"]) == ("API", "Getting started")


def test_doc_writers_name_categories_in_admin(writer) -> None:
    Category.objects.create(slug="api", label="Api")
    _document("api/keys.md", "API keys", "api")
    category = Category.objects.get()

    client = signed_in(writer)
    listing = client.get("/admin/kb/category/").content.decode()
    response = client.post(
        f"/admin/kb/category/{category.pk}/change/", {"slug": "api", "label": "API"}
    )

    assert '<td class="field-document_count">1</td>' in listing
    assert response.status_code == 302
    assert Category.objects.get().label == "API"
