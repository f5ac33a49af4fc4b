"""Bulk import in admin: a .md or a .zip, per-file errors, indexing left to the background."""

from __future__ import annotations

import io
import warnings
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from kb.models import Document, DocumentIndexState
from kb.parsing import MAX_DOCUMENT_BYTES
from kb.services import embedding_model_register
from kb.services import index_queue as indexing_services
from kb.uploads import MAX_ZIP_ENTRIES, UploadRejected, upload_sources

pytestmark = pytest.mark.django_db


@pytest.fixture
def writer_client(writer_client: Client, local_embedder, monkeypatch: pytest.MonkeyPatch) -> Client:
    """The shared writer's client, with the index registered and indexing left undone."""
    embedding_model_register(embedder=local_embedder)
    monkeypatch.setattr(indexing_services, "index_enqueue", lambda *, document_ids, bulk=False: 0)
    return writer_client


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _upload(client: Client, name: str, data: bytes, target: str = "/"):
    return client.post(
        "/admin/kb/document/import/",
        {"file": SimpleUploadedFile(name, data), "target": target},
        follow=True,
    )


def test_markdown_file_upload_creates_a_pending_document(writer_client: Client) -> None:
    response = _upload(writer_client, "parking.md", b"# Parking\n\nVisitors use bay C.\n")

    assert response.status_code == 200
    document = Document.objects.get(path="parking.md")
    assert document.title == "Parking"
    assert DocumentIndexState.objects.get(document=document).status == "pending"
    assert "1 new document, queued for indexing." in response.content.decode()


def test_a_zip_with_any_bad_file_imports_nothing_and_lists_every_problem(
    writer_client: Client,
) -> None:
    archive = _zip(
        {
            "policies/a.md": b"# A\n\nAlpha.\n",
            "policies/b.md": b"---\ntitle: [broken\n---\n# B\n",
            "notes.txt": b"ignored",
            "__MACOSX/policies/._a.md": b"\x00\x01",
            "bin.md": b"\x00\x01\x02",
        }
    )

    page = _upload(writer_client, "docs.zip", archive).content.decode()

    assert not Document.objects.exists()
    assert "Nothing was imported: 2 problem(s)" in page
    assert "policies/b.md:2" in page and "bin.md: binary file" in page


def test_a_zip_of_good_files_imports_them_all(writer_client: Client) -> None:
    archive = _zip({"policies/a.md": b"# A\n\nAlpha.\n", "notes.txt": b"ignored"})

    page = _upload(writer_client, "docs.zip", archive).content.decode()

    assert list(Document.objects.values_list("path", flat=True)) == ["policies/a.md"]
    assert "1 new document, queued for indexing." in page


def test_an_html_article_upload_becomes_a_page_with_its_sections(writer_client: Client) -> None:
    # given: an article as help-center exports write it
    article = (
        b"<html><head><title>Parking | Help</title></head><body><nav>Home</nav><main>"
        b"<h1>Parking</h1><p>Visitors use bay C.</p><h2>Permits</h2><ul><li>Ask reception</li>"
        b"</ul></main></body></html>"
    )

    # when: alone, and in a zip beside a Markdown page
    _upload(writer_client, "parking.html", article, target="help/")
    _upload(writer_client, "more.zip", _zip({"lobby.htm": article, "desk.md": b"# Desk\n\nHi.\n"}))

    # then: each is a page, read as its main content with its headings
    document = Document.objects.get(path="help/parking.html")
    assert document.title == "Parking"
    assert "## Permits" in document.body and "Visitors use bay C." in document.body
    assert "Home" not in document.body  # the site's navigation is not the article
    assert set(Document.objects.values_list("path", flat=True)) == {
        "help/parking.html",
        "lobby.htm",
        "desk.md",
    }


def test_a_zip_with_the_same_entry_twice_is_refused_and_writes_nothing(
    writer_client: Client,
) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile warns "Duplicate name"
        archive.writestr("policies/a.md", b"# A\n\nAlpha.\n")
        archive.writestr("policies/b.md", b"# B\n\nBeta.\n")
        archive.writestr("policies/a.md", b"# A\n\nAlpha, edited.\n")

    response = _upload(writer_client, "docs.zip", buffer.getvalue())

    page = response.content.decode()
    assert response.status_code == 200
    assert "policies/a.md: appears more than once in docs.zip" in page
    assert not Document.objects.exists()


def test_reimporting_an_unchanged_file_changes_nothing(writer_client: Client) -> None:
    _upload(writer_client, "a.md", b"# A\n\nAlpha.\n")
    page = _upload(writer_client, "a.md", b"# A\n\nAlpha.\n").content.decode()

    assert "1 document unchanged." in page
    assert Document.objects.get(path="a.md").history.count() == 1


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("notes.pdf", b"%PDF-1.4", "upload a Markdown file (.md), an HTML page (.html)"),
        ("docs.zip", b"not a zip", "not a readable zip"),
        ("empty.zip", _zip({"readme.txt": b"x"}), "no Markdown or HTML pages"),
    ],
)
def test_unreadable_uploads_are_refused_with_a_reason(
    writer_client: Client, name: str, data: bytes, message: str
) -> None:
    page = _upload(writer_client, name, data).content.decode()

    assert message in page
    assert not Document.objects.exists()


def test_zip_entries_cannot_escape_the_corpus(writer_client: Client) -> None:
    page = _upload(writer_client, "evil.zip", _zip({"../../etc/x.md": b"# X\n"})).content.decode()

    assert "invalid document path" in page
    assert not Document.objects.exists()


def test_zip_with_too_many_entries_is_refused_before_reading() -> None:
    archive = _zip({f"d/{n}.md": b"# T\n" for n in range(MAX_ZIP_ENTRIES + 1)})

    with pytest.raises(UploadRejected, match="entries"):
        upload_sources(filename="big.zip", data=archive)


def test_anonymous_cannot_import() -> None:
    response = Client().post("/admin/kb/document/import/", {})

    assert response.status_code == 302 and "/admin/login/" in response["Location"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"# A\n\nCaf\xe9 au lait.\n", "not UTF-8 text (invalid byte 0xe9"),
        (b"# A\n\n" + b"x" * (MAX_DOCUMENT_BYTES + 10), "file is too large"),
        (b"# A\n\x00\x01binary", "binary file"),
        (
            b"---\naudience: internal\n\n# A\n\nAlpha.\n",
            "a.md:1: front matter: the &#x27;---&#x27; on line 1 is never closed",
        ),
    ],
)
def test_a_bad_upload_of_an_existing_page_is_refused_and_loses_nothing(
    writer_client: Client, data: bytes, message: str
) -> None:
    # given a page already imported
    _upload(writer_client, "a.md", b"# A\n\nAlpha.\n")
    before = Document.objects.get(path="a.md")

    # when a broken version of the same file is uploaded
    page = _upload(writer_client, "a.md", data).content.decode()

    # then the reason is shown and the page is exactly as it was
    assert message in page, page[-3000:]
    after = Document.objects.get(path="a.md")
    assert (after.body, after.content_hash) == (before.body, before.content_hash)
    assert after.history.count() == 1


def test_unclosed_front_matter_is_refused_and_nothing_is_published(writer_client: Client) -> None:
    archive = _zip({"internal/escalations.md": b"---\naudience: internal\n\n# E\n\nCredits.\n"})

    page = _upload(writer_client, "docs.zip", archive).content.decode()

    assert "internal/escalations.md:1: front matter: the &#x27;---&#x27; on line 1" in page
    assert not Document.objects.exists()


@pytest.mark.parametrize(
    ("target", "path"),
    [
        ("policies/", "policies/parking.md"),
        ("policies", "policies/parking.md"),
        ("/policies/visitors/", "policies/visitors/parking.md"),
        ("policies/visitor-parking.md", "policies/visitor-parking.md"),
        ("/", "parking.md"),
    ],
)
def test_a_single_file_goes_to_the_folder_or_path_given(
    writer_client: Client, target: str, path: str
) -> None:
    page = _upload(writer_client, "parking.md", b"# Parking\n\nBay C.\n", target).content.decode()

    assert list(Document.objects.values_list("path", flat=True)) == [path]
    assert "1 new document, queued for indexing." in page


def test_a_single_file_without_a_folder_or_path_is_asked_where_it_goes(
    writer_client: Client,
) -> None:
    page = _upload(writer_client, "parking.md", b"# Parking\n\nBay C.\n", "").content.decode()

    assert "say where parking.md goes: a folder such as policies/" in page
    assert not Document.objects.exists()


def test_a_zip_goes_under_the_folder_given_and_not_to_one_page_path(writer_client: Client) -> None:
    archive = _zip({"a.md": b"# A\n\nAlpha.\n", "cards/b.md": b"# B\n\nBeta.\n"})

    refused = _upload(writer_client, "docs.zip", archive, "billing/a.md").content.decode()
    assert "give a folder for them, not the path of one page" in refused
    assert not Document.objects.exists()

    page = _upload(writer_client, "docs.zip", archive, "billing/").content.decode()
    assert sorted(Document.objects.values_list("path", flat=True)) == [
        "billing/a.md",
        "billing/cards/b.md",
    ]
    assert "2 new documents, queued for indexing." in page


def test_the_message_tells_new_updated_and_unchanged_apart(writer_client: Client) -> None:
    # given: two pages imported
    _upload(writer_client, "docs.zip", _zip({"a.md": b"# A\n\nAlpha.\n", "b.md": b"# B\n\nB.\n"}))

    # when: one comes back edited, one as it was, and one is new
    archive = _zip({"a.md": b"# A\n\nAlpha, edited.\n", "b.md": b"# B\n\nB.\n", "c.md": b"# C\n"})
    page = _upload(writer_client, "docs.zip", archive).content.decode()

    # then
    assert (
        "1 new document, queued for indexing; 1 document updated, queued for indexing; "
        "1 document unchanged." in page
    )


def test_the_folder_field_suggests_the_folders_in_use(writer_client: Client) -> None:
    Document.objects.create(path="policies/refunds/eu.md", title="EU refunds", body="# EU\n")

    page = writer_client.get("/admin/kb/document/import/").content.decode()

    assert '<option value="policies/">' in page and '<option value="policies/refunds/">' in page
    assert 'list="kb-import-folders"' in page


def test_what_loaded_with_a_warning_is_said_after_the_summary(writer_client: Client) -> None:
    page = _upload(
        writer_client, "a.md", b"---\nowner: finance\n---\n# A\n\nAlpha.\n", "policies/"
    ).content.decode()

    assert "1 new document, queued for indexing." in page
    assert (
        '<li class="warning">Front matter keys kept as metadata, not used: owner (1 file)' in page
    )


# --- issue 26 ----------------------------------------------------------------------------------

INTERNAL_PAGE = b"---\naudience: internal\n---\n\n# X\n\nRX-4471\n"


def test_reuploading_an_internal_page_without_front_matter_keeps_it_internal_and_says_so(
    writer_client: Client,
) -> None:
    # issue 26 (2): the body copied from the admin editor, which never shows front matter
    _upload(writer_client, "p.md", INTERNAL_PAGE, "rt/p.md")

    page = _upload(writer_client, "p.md", b"# X\n\nRX-4471 updated\n", "rt/p.md").content.decode()

    document = Document.objects.get(path="rt/p.md")
    assert document.audience == "internal"
    assert "RX-4471 updated" in document.body
    assert "1 document updated, queued for indexing." in page
    assert "Kept rt/p.md internal: the file does not say audience:" in page
    assert Client().get("/docs/rt/p.md").status_code == 404


def test_a_file_that_says_public_widens_the_audience_and_the_change_is_reported(
    writer_client: Client,
) -> None:
    _upload(writer_client, "p.md", INTERNAL_PAGE, "rt/p.md")

    page = _upload(
        writer_client, "p.md", b"---\naudience: public\n---\n# X\n\nRX-4471\n", "rt/p.md"
    ).content.decode()

    assert Document.objects.get(path="rt/p.md").audience == "public"
    assert "Audience of rt/p.md: internal → public, as the file says" in page


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"t.md": b"---\ntitle: " + b"T" * 5_000 + b"\n---\nText.\n"}, "title is 5,000 characters"),
        ({"t.md": b"# " + b"T" * 600 + b"\n\nText.\n"}, "title is 600 characters; the limit"),
        ({"c.md": b"---\ncategory: " + b"c" * 5_000 + b"\n---\n# C\n"}, "the limit is 200"),
        ({"d/" * 299 + "p.md": b"# P\n"}, "path is 602 characters; the limit is 500"),
        ({"b.md": b"---\nx: !!binary aGVsbG8=\n---\n# B\n"}, "binary data"),
        ({"s.md": b"---\nx: !!set {a, b}\n---\n# S\n"}, "a set (!!set)"),
    ],
)
def test_a_value_past_a_limit_is_a_per_file_error_not_a_500(
    writer_client: Client, files: dict[str, bytes], message: str
) -> None:
    # issue 26 (12): each was a DataError or TypeError, a 500 in admin
    response = _upload(writer_client, "docs.zip", _zip({**files, "fine.md": b"# Fine\n"}))

    assert response.status_code == 200
    assert message in response.content.decode()
    assert not Document.objects.exists()


def test_a_symbolic_link_in_a_zip_is_refused(writer_client: Client) -> None:
    # issue 26 (1): a zip entry that is a link names its target, it is not a page
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        link = zipfile.ZipInfo("passwd.md")
        link.external_attr = (0o120777 << 16) | 0x20  # S_IFLNK, as `zip --symlinks` writes it
        archive.writestr(link, "/etc/passwd")

    page = _upload(writer_client, "docs.zip", buffer.getvalue()).content.decode()

    assert "passwd.md: a symbolic link, not a file" in page
    assert not Document.objects.exists()
