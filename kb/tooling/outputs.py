"""Where a long-running tooling command writes its results: checked before the work starts, so
a mistyped folder never costs an hour of scoring at the end."""

from __future__ import annotations

from pathlib import Path

from django.core.management import CommandError


def output_prepared(path: Path | str) -> Path:
    """``path`` with its folder made if missing; a clear ``CommandError`` when it cannot be
    written there (its folder is a file, or not ours to write)."""
    path = Path(path)
    blocking = next((folder for folder in path.parents if folder.is_file()), None)
    if blocking is not None:
        raise CommandError(f"cannot write {path}: {blocking} is a file, not a folder")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror or exc}") from exc
    if path.is_dir():
        raise CommandError(f"cannot write {path}: it is a folder")
    return path
