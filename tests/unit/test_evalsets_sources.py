from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from search.tooling.evalsets.sources import (
    EvalSource,
    EvalSourceError,
    source_stage,
    sources_load,
    staged_verify,
    tree_checksum,
)


def _git(repo: Path, *arguments: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *arguments], capture_output=True, check=True, text=True
    ).stdout.strip()


_COMMIT = ("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm")


@pytest.fixture
def pinned(tmp_path: Path) -> EvalSource:
    """A repository whose docs folder holds Markdown, ERB Markdown, a hidden file and an image."""
    repo = tmp_path / "repo"
    (repo / "docs" / "guides").mkdir(parents=True)
    (repo / "docs" / ".github").mkdir()
    (repo / "docs" / "index.md").write_text("# Home\n\nWelcome.\n")
    (repo / "docs" / "guides" / "deploy.html.markerb").write_text("# Deploy\n\n<%= x %>\n")
    (repo / "docs" / "guides" / "scale.html.md").write_text("# Scale\n\nMore machines.\n")
    (repo / "docs" / ".github" / "template.md").write_text("# Template\n")
    (repo / "docs" / "logo.png").write_bytes(b"\x89PNG")
    (repo / "README.md").write_text("# Not docs\n")
    _git(tmp_path, "init", "--quiet", str(repo))
    _git(repo, "add", ".")
    _git(repo, *_COMMIT, "docs")
    return EvalSource(
        name="tiny",
        repository=str(repo),
        commit=_git(repo, "rev-parse", "HEAD"),
        folder="docs",
        patterns=("*.md", "*.html.md", "*.html.markerb"),
        reference_folders=(),
        pages=3,
        sha256="",
    )


def test_staging_keeps_markdown_renamed_and_records_the_checksum(
    pinned: EvalSource, tmp_path: Path
) -> None:
    sources_file = tmp_path / "sources.json"
    sources_file.write_text(json.dumps({"tiny": {"repository": "x"}}))

    folder = source_stage(
        pinned, repo=pinned.repository, root=tmp_path / "staged", record_in=sources_file
    )

    staged = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert staged == ["guides/deploy.md", "guides/scale.md", "index.md"]
    recorded = sources_load(sources_file)["tiny"]
    assert recorded.pages == 3
    assert recorded.sha256 == tree_checksum({path: (folder / path).read_bytes() for path in staged})
    assert staged_verify(recorded, root=tmp_path / "staged") == folder


def test_staging_refuses_a_tree_that_differs_from_the_pin(
    pinned: EvalSource, tmp_path: Path
) -> None:
    wrong = replace(pinned, sha256="0" * 64)

    with pytest.raises(EvalSourceError, match="not the pinned pages"):
        source_stage(wrong, repo=pinned.repository, root=tmp_path / "staged")

    assert not (tmp_path / "staged" / "tiny").exists()


def test_a_staged_folder_edited_afterwards_is_refused(pinned: EvalSource, tmp_path: Path) -> None:
    sources_file = tmp_path / "sources.json"
    sources_file.write_text("{}")
    folder = source_stage(
        pinned, repo=pinned.repository, root=tmp_path / "staged", record_in=sources_file
    )
    (folder / "index.md").write_text("# Home\n\nEdited.\n")

    with pytest.raises(EvalSourceError, match="differs from the pinned pages"):
        staged_verify(sources_load(sources_file)["tiny"], root=tmp_path / "staged")


def test_staging_only_the_included_sub_folders_keeps_their_paths_under_the_folder(
    pinned: EvalSource, tmp_path: Path
) -> None:
    # a set made of some parts of a docs tree (an FAQ folder beside a few manuals): the pages
    # outside the included sub-folders are left out, and the paths stay relative to `folder`
    (tmp_path / "repo" / "docs" / "guidesextra").mkdir()
    (tmp_path / "repo" / "docs" / "guidesextra" / "other.md").write_text("# Other\n")
    _git(tmp_path / "repo", "add", ".")
    _git(tmp_path / "repo", *_COMMIT, "more")
    parts = replace(
        pinned, commit=_git(tmp_path / "repo", "rev-parse", "HEAD"), include=("guides/",)
    )
    sources_file = tmp_path / "sources.json"
    sources_file.write_text("{}")

    folder = source_stage(
        parts, repo=parts.repository, root=tmp_path / "staged", record_in=sources_file
    )

    staged = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert staged == ["guides/deploy.md", "guides/scale.md"]
    recorded = sources_load(sources_file)["tiny"]
    assert recorded.include == ("guides/",)
    assert recorded.pages == 2
    assert staged_verify(recorded, root=tmp_path / "staged") == folder


def test_a_set_without_include_is_recorded_in_its_old_shape(
    pinned: EvalSource, tmp_path: Path
) -> None:
    sources_file = tmp_path / "sources.json"
    sources_file.write_text("{}")

    source_stage(pinned, repo=pinned.repository, root=tmp_path / "staged", record_in=sources_file)

    assert list(json.loads(sources_file.read_text())["tiny"]) == [
        "repository",
        "commit",
        "folder",
        "patterns",
        "reference_folders",
        "pages",
        "sha256",
    ]


ONE_PAGE_SETS = {"starship-config"}  # Starship's configuration reference: 438 sections


def test_the_committed_sets_are_pinned() -> None:
    sources = sources_load()

    assert set(sources) >= {"argo-cd", "hugo", "fly", "plausible", "csc-faq"}
    for name, source in sources.items():
        # a help center (Plausible: 132 pages) or a library's Sphinx docs (Flask: 76 pages and
        # conf.py) is smaller than a product manual; 70 still rules out a toy folder pinned by
        # mistake. The one exception is the shape of one long reference page, staged alone.
        smallest = 1 if name in ONE_PAGE_SETS else 70
        assert len(source.commit) == 40 and len(source.sha256) == 64
        assert source.pages >= smallest, name
