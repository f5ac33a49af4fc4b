"""No file can cause a 500 or a partial write: the admin import and kb_sync under arbitrary paths,
front matter (near-miss fences, YAML tags and anchors, TOML, JSON) and sizes (Hypothesis).

Each file either becomes a whole document or is reported by name; an upload writes all of its
files or none; the public index still serves afterwards. Bounded to 60 examples in all (about
5 s); the hashing embedder keeps kb_sync's indexing fast, since bookkeeping, not meaning, is
under test.
"""

from __future__ import annotations

import io
import tempfile
import warnings
import zipfile
from io import StringIO
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from kb.embedders.hashing import HashingEmbedder
from kb.models import Chunk, Document, DocumentIndexState
from kb.parsing import MAX_DOCUMENT_BYTES
from kb.services import embedding_model_register
from kb.services import index_queue as indexing_services
from kb.uploads import UploadRejected, upload_sources

pytestmark = pytest.mark.django_db

FUZZ = hypothesis_settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

NASTY_CHARACTERS = ["\n", "\x1b", "\t", "\u202e", "\u200b", "\u00a0", " ", "é", "😀", ":", "#", "%"]
segments = st.text(
    st.one_of(st.sampled_from("abcxyz-_."), st.sampled_from(NASTY_CHARACTERS)),
    min_size=1,
    max_size=12,
)
suffixes = st.sampled_from([".md", ".md", ".markdown", ".MD", ".txt", ""])
# Up to 700 characters: past the path column's 500.
paths = st.builds(
    lambda parts, long, suffix: "/".join([*parts, "d" * long]) + suffix,
    st.lists(segments, min_size=0, max_size=3),
    st.sampled_from([1, 8, 300, 690]),
    suffixes,
)
openings = st.sampled_from(["---", "---", " ---", "----", "--- yaml", "---\u00a0", "\u200b---"])
closings = st.sampled_from(["---", "---", "...", " ---", "----", ""])
keys = st.sampled_from(
    [
        "title",
        "category",
        "audience",
        "status",
        "updated",
        "review_by",
        "superseded_by",
        "aliases",
        "draft",
        "tags",
        "owner",
        "Audience",
        "audiance",
    ]
)
yaml_values = st.one_of(
    st.sampled_from(
        [
            "internal",
            "public",
            "retired",
            "draft",
            "2026-01-15",
            "2026-13-45",
            "true",
            "!!binary aGVsbG8=",
            "!!set {a, b}",
            "!!omap [a: 1, b: 2]",
            ".nan",
            "-.inf",
            "!!float 1e400",
            '"nul \\0 inside"',
            '"\\ud800"',
            '"esc \\e[2J"',
            "!!python/object/apply:os.system ['true']",
            "&anchor [1, 2, 3]",
            "*anchor",
            "&loop [*loop]",
            "[" * 60,
            "{a: [b, {c: d}]}",
            "9" * 5_000,
            "policies/new\\nline.md",
            "[/old/, /docs/, 'https://x.example/']",
        ]
    ),
    st.integers(min_value=0, max_value=6_000).map(lambda n: "T" * n),
    st.text(max_size=40).map(lambda text: '"' + text.replace("\\", "").replace('"', "") + '"'),
)
BILLION_LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{chr(98 + n)}: &{chr(98 + n)} [{', '.join([f'*{chr(97 + n)}'] * 9)}]\n" for n in range(6)
)
front_matters = st.one_of(
    st.just(""),
    st.builds(
        lambda opening, pairs, closing: "\n".join(
            [opening, *(f"{key}: {value}" for key, value in pairs), closing, ""]
        ),
        openings,
        st.lists(st.tuples(keys, yaml_values), max_size=4),
        closings,
    ),
    st.builds(lambda opening: f"{opening}\n{BILLION_LAUGHS}---\n", openings),
    st.builds(
        lambda pairs: "+++\n" + "".join(f'{key} = "{value}"\n' for key, value in pairs) + "+++\n",
        st.lists(st.tuples(keys, st.sampled_from(["internal", "x", "nan"])), max_size=3),
    ),
    st.sampled_from(['{"audience": "internal", "x": NaN}\n', '{"x": ' + "9" * 5_000 + "}\n"]),
)
bodies = st.one_of(
    st.sampled_from(
        [
            "# Refunds\n\nMonthly plans are refundable within 30 days.\n",
            "Text without a heading.\n",
            "## Section\n\n" + "word " * 80 + "\n",
            "# " + "H" * 600 + "\n\nA long heading.\n",
            "",
        ]
    ),
    st.text(max_size=200),
)
files = st.builds(
    lambda front, body: (front + body).encode("utf-8", "surrogatepass"), front_matters, bodies
)
raw_files = st.one_of(
    files,
    files,
    files,
    st.sampled_from(
        [
            b"\xff\xfe# UTF-16\n",
            b"# A\n\x00binary",
            b"# A\n\nCaf\xe9\n",
            b"# Big\n\n" + b"x" * (MAX_DOCUMENT_BYTES + 1),
        ]
    ),
)


def _documents() -> dict[str, tuple[str, str, str, str]]:
    return {
        row[0]: row[1:]
        for row in Document.objects.values_list(
            "path", "content_hash", "audience", "status", "title"
        )
    }


def _zip(entries: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "Duplicate name": refused, and tested so
        for name, data in entries:
            archive.writestr(name, data)
    return buffer.getvalue()


def _public_pages_serve(paths_written: set[str]) -> None:
    visitor = Client()
    assert visitor.get("/docs/").status_code == 200
    for path in sorted(paths_written)[:3]:
        assert visitor.get("/docs/" + quote(path)).status_code < 500, path


@pytest.fixture
def importer(writer_client: Client, monkeypatch: pytest.MonkeyPatch) -> Client:
    embedding_model_register(embedder=HashingEmbedder())
    monkeypatch.setattr(indexing_services, "index_enqueue", lambda *, document_ids, bulk=False: 0)
    return writer_client


@FUZZ
@given(entries=st.lists(st.tuples(paths, raw_files), min_size=1, max_size=3))
def test_an_upload_writes_all_its_files_or_none_and_never_fails_with_a_500(
    importer: Client, entries: list[tuple[str, bytes]]
) -> None:
    cache.clear()  # the page cache must not hide what this example wrote
    data = _zip(entries)
    before = _documents()

    response = importer.post(
        "/admin/kb/document/import/",
        {"file": SimpleUploadedFile("docs.zip", data), "target": "fuzz/"},
        follow=True,
    )

    assert response.status_code == 200, response.status_code
    after = _documents()
    try:
        wanted = {
            path for path, _ in upload_sources(filename="docs.zip", data=data, target="fuzz/")
        }
    except UploadRejected:
        wanted = set()
    # all or nothing: either nothing changed, or every Markdown entry is now a document
    assert after == before or wanted <= after.keys(), (sorted(wanted), sorted(after))
    assert set(after) >= set(before)  # an import never deletes
    _public_pages_serve(set(after) - set(before))


folder_names = st.text(
    st.one_of(st.sampled_from("abcxyz-_"), st.sampled_from(["\x1b", "\t", "\u202e", " ", "é"])),
    min_size=1,
    max_size=20,
)


@FUZZ
@given(
    entries=st.lists(
        st.tuples(folder_names, st.sampled_from([".md", ".mdx", ".txt"]), raw_files),
        min_size=1,
        max_size=3,
        unique_by=lambda entry: entry[0] + entry[1],
    )
)
def test_kb_sync_reports_each_bad_file_and_writes_every_other_one_whole(
    monkeypatch: pytest.MonkeyPatch, entries: list[tuple[str, str, bytes]]
) -> None:
    embedder = HashingEmbedder()
    embedding_model_register(embedder=embedder)
    monkeypatch.setattr("kb.management.commands.kb_sync.active_embedder", lambda: embedder)
    Document.objects.all().delete()  # each example syncs a folder of its own from scratch
    with tempfile.TemporaryDirectory(dir=settings.DATA_DIR) as folder:
        for name, suffix, data in entries:
            (Path(folder) / f"{name}{suffix}").write_bytes(data)
        markdown = {f"{name}{suffix}" for name, suffix, _ in entries if suffix != ".txt"}
        errors = StringIO()

        try:
            call_command("kb_sync", folder, "--no-progress", stdout=StringIO(), stderr=errors)
        except CommandError as exc:
            assert "file(s) skipped" in str(exc), str(exc)

    failed = {path for path in markdown if f"failed: {_shown(path)}:" in errors.getvalue()}
    assert set(_documents()) == markdown - failed, errors.getvalue()
    for document in Document.objects.all():  # each written whole: row, chunks and index state
        state = DocumentIndexState.objects.get(document=document)
        assert state.status == "indexed"
        assert Chunk.objects.filter(document=document).count() == state.chunk_count
    _public_pages_serve(set(_documents()))


def _shown(path: str) -> str:
    """A path as kb_sync prints it: escaped when it holds a control character."""
    return path if path.isprintable() else repr(path)[1:-1]
