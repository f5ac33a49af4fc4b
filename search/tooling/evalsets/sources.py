"""Staging a set's pages from its pinned commit, verified by a checksum of the staged tree.

A set is described in `corpus/eval-sets/sources.json`: repository, commit, docs folder, file
patterns and the checksum of what staging produces; optionally `include`, the sub-folders of the
docs folder to stage when a set is a few parts of a larger tree (their paths stay relative to the
docs folder; the rest of it is left out). Staging reads the commit with `git archive` (from a
local git directory or a fresh clone of a URL), keeps the Markdown files the patterns name
(renaming `.html.md` / `.html.markerb` to `.md`, so `kb_sync` takes them), and refuses to
write anything when the checksum differs: the cases only mean something on exactly those pages.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import shutil
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

from django.conf import settings

SOURCES_FILE = Path(settings.BASE_DIR) / "corpus" / "eval-sets" / "sources.json"
# Staged pages live beside the data of every environment, not inside one of them.
EVAL_SOURCES_DIR = Path(settings.BASE_DIR) / ".data" / "eval-sources"
# Extensions that are Markdown with template bits (Fly.io's ERB): staged as plain `.md`.
_RENAMED_SUFFIXES = (".html.md", ".html.markerb")


class EvalSourceError(RuntimeError):
    """A set cannot be staged or read as pinned; the message says what to do."""


@dataclass(frozen=True)
class EvalSource:
    name: str
    repository: str
    commit: str
    folder: str  # inside the repository; "" for the whole tree
    patterns: tuple[str, ...]
    reference_folders: tuple[str, ...]  # staged folders of reference pages (functions, commands)
    pages: int
    sha256: str
    # sub-folders of `folder` to stage (paths stay relative to `folder`); empty: all of `folder`
    include: tuple[str, ...] = ()


def sources_load(path: Path = SOURCES_FILE) -> dict[str, EvalSource]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {
        name: EvalSource(
            name=name,
            repository=entry["repository"],
            commit=entry["commit"],
            folder=entry["folder"],
            patterns=tuple(entry["patterns"]),
            reference_folders=tuple(entry.get("reference_folders", ())),
            pages=int(entry.get("pages", 0)),
            sha256=entry.get("sha256", ""),
            include=tuple(entry.get("include", ())),
        )
        for name, entry in raw.items()
    }


def source_record(source: EvalSource, path: Path = SOURCES_FILE) -> None:
    """Write `source` back into the sources file (used when a pin is deliberately changed)."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    entry: dict[str, object] = {
        "repository": source.repository,
        "commit": source.commit,
        "folder": source.folder,
    }
    if source.include:  # written only where a set uses it, so other entries keep their shape
        entry["include"] = list(source.include)
    entry |= {
        "patterns": list(source.patterns),
        "reference_folders": list(source.reference_folders),
        "pages": source.pages,
        "sha256": source.sha256,
    }
    raw[source.name] = entry
    path.write_text(json.dumps(raw, indent=2) + "\n", encoding="utf-8")


def staged_folder(name: str, *, root: Path = EVAL_SOURCES_DIR) -> Path:
    return root / name


def tree_checksum(files: dict[str, bytes]) -> str:
    """sha256 over the sorted relative paths and contents: `path NUL length NUL content` each."""
    digest = hashlib.sha256()
    for path in sorted(files):
        content = files[path]
        digest.update(path.encode("utf-8") + b"\0" + str(len(content)).encode() + b"\0")
        digest.update(content)
    return digest.hexdigest()


def folder_files(folder: Path) -> dict[str, bytes]:
    """Every non-hidden file under `folder`, by relative POSIX path."""
    files = {}
    for file_path in sorted(folder.rglob("*")):
        relative = file_path.relative_to(folder)
        if file_path.is_file() and not any(part.startswith(".") for part in relative.parts):
            files[relative.as_posix()] = file_path.read_bytes()
    return files


def staged_path(source: EvalSource, repository_path: str) -> str | None:
    """Where a repository file lands in the staged folder, or None when it is not staged.

    Hidden files and folders are left out, as `kb_sync` skips them.
    """
    prefix = f"{source.folder.strip('/')}/" if source.folder.strip("/") else ""
    if not repository_path.startswith(prefix):
        return None
    relative = repository_path[len(prefix) :]
    if source.include and not any(
        relative.startswith(f"{folder.strip('/')}/") for folder in source.include
    ):
        return None
    name = relative.rsplit("/", 1)[-1]
    if any(part.startswith(".") for part in relative.split("/")):
        return None
    if not any(fnmatch.fnmatchcase(name, pattern) for pattern in source.patterns):
        return None
    for suffix in _RENAMED_SUFFIXES:
        if relative.endswith(suffix):
            return relative[: -len(suffix)] + ".md"
    return relative


def source_files(source: EvalSource, *, repo: str, root: Path) -> dict[str, bytes]:
    """The staged files of `source`, read from its pinned commit in `repo` (a git dir or URL)."""
    git_dir = _git_dir_with_commit(source, repo, clones=root / ".clones")
    # ls-tree + cat-file read only the files staged: a mirror may lack big binary blobs.
    command = ["git", "-C", str(git_dir), "ls-tree", "-r", "-z", source.commit]
    if source.folder.strip("/"):
        command += ["--", source.folder.strip("/")]
    listing = _git_output(command)
    wanted: dict[str, str] = {}  # staged path -> blob id
    for entry in listing.decode("utf-8").split("\0"):
        if not entry:
            continue
        meta, _, repository_path = entry.partition("\t")
        mode, kind, blob = meta.split()
        target = staged_path(source, repository_path)
        if kind != "blob" or mode not in ("100644", "100755") or target is None:
            continue
        if target in wanted:
            raise EvalSourceError(f"two files of {source.name} would be staged as {target}")
        wanted[target] = blob
    files = dict(zip(wanted, _blobs_read(git_dir, list(wanted.values())), strict=True))
    if not files:
        raise EvalSourceError(f"no files of {source.name} match {', '.join(source.patterns)}")
    return files


def source_stage(
    source: EvalSource,
    *,
    repo: str,
    root: Path = EVAL_SOURCES_DIR,
    record_in: Path | None = None,
) -> Path:
    """Stage `source` into its folder under `.data/eval-sources/`; verify (or record) its checksum.

    Nothing is written when the checksum differs, so a good staged copy is never replaced by a
    wrong one.
    """
    files = source_files(source, repo=repo, root=root)
    checksum = tree_checksum(files)
    if record_in is not None:
        source = replace(source, pages=len(files), sha256=checksum)
        source_record(source, record_in)
    elif checksum != source.sha256:
        raise EvalSourceError(
            f"{source.name}: the staged tree's checksum is {checksum}, sources.json pins "
            f"{source.sha256 or 'none'}; these are not the pinned pages (check --repo and the "
            f"commit {source.commit}, or re-record a deliberate change with --record)"
        )
    folder = staged_folder(source.name, root=root)
    if folder.exists():
        shutil.rmtree(folder)
    for path, content in files.items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return folder


def staged_verify(source: EvalSource, *, root: Path = EVAL_SOURCES_DIR) -> Path:
    """The staged folder of `source`, refusing when it is missing or differs from the pin."""
    folder = staged_folder(source.name, root=root)
    if not folder.is_dir():
        raise EvalSourceError(
            f"{source.name} is not staged: run 'manage.py eval_sets stage {source.name} "
            f"--repo {source.repository}'"
        )
    checksum = tree_checksum(folder_files(folder))
    if checksum != source.sha256:
        raise EvalSourceError(
            f"{folder} differs from the pinned pages (checksum {checksum}, pinned "
            f"{source.sha256}): stage {source.name} again"
        )
    return folder


def _git_dir_with_commit(source: EvalSource, repo: str, *, clones: Path) -> Path:
    local = Path(repo)
    if local.exists():
        git_dir = local
    else:
        git_dir = clones / f"{source.name}.git"
        if not git_dir.exists():
            git_dir.parent.mkdir(parents=True, exist_ok=True)
            _git("clone", "--bare", "--quiet", repo, str(git_dir))
    if not _has_commit(git_dir, source.commit):
        _git("-C", str(git_dir), "fetch", "--quiet", "origin", source.commit)
    if not _has_commit(git_dir, source.commit):
        raise EvalSourceError(f"{repo} does not contain commit {source.commit}")
    return git_dir


def _blobs_read(git_dir: Path, blobs: list[str]) -> list[bytes]:
    """The contents of `blobs`, in order, from one `git cat-file --batch`."""
    output = subprocess.run(
        ["git", "-C", str(git_dir), "cat-file", "--batch"],
        input="".join(f"{blob}\n" for blob in blobs).encode(),
        capture_output=True,
        check=False,
    )
    if output.returncode != 0:
        raise EvalSourceError(f"git cat-file failed: {output.stderr.decode().strip()}")
    contents = []
    position = 0
    data = output.stdout
    for blob in blobs:
        header_end = data.index(b"\n", position)
        header = data[position:header_end].decode().split()
        if len(header) != 3 or header[1] != "blob":
            raise EvalSourceError(f"{blob} is missing from {git_dir}")
        size = int(header[2])
        contents.append(data[header_end + 1 : header_end + 1 + size])
        position = header_end + 1 + size + 1
    return contents


def _git_output(command: list[str]) -> bytes:
    completed = subprocess.run(command, capture_output=True, check=False)
    if completed.returncode != 0:
        raise EvalSourceError(f"{' '.join(command)} failed: {completed.stderr.decode().strip()}")
    return completed.stdout


def _has_commit(git_dir: Path, commit: str) -> bool:
    completed = subprocess.run(
        ["git", "-C", str(git_dir), "cat-file", "-e", f"{commit}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    return completed.returncode == 0


def _git(*arguments: str) -> None:
    completed = subprocess.run(["git", *arguments], capture_output=True, check=False)
    if completed.returncode != 0:
        raise EvalSourceError(
            f"git {' '.join(arguments)} failed: {completed.stderr.decode().strip()}"
        )
