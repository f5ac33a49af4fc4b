"""What a sync or an import did, for the command's summary line and the admin's message."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field


class SyncRefused(RuntimeError):
    """The sync would do something destructive or impossible; nothing was changed."""


@dataclass(frozen=True)
class SyncFailure:
    path: str
    message: str


@dataclass(frozen=True)
class SyncConflict:
    """A document whose database copy someone changed since the last sync, or that did not come
    from the folder being synced: the sync left it alone (or, with ``--overwrite``, replaced it).
    """

    path: str
    reason: str  # e.g. "edited since the last sync from corpus"
    changed_by: str  # a username, or what the history says instead
    changed_at: datetime.datetime | None
    # With --overwrite: what of the database copy the file's version replaced ("body", "status").
    replaced: tuple[str, ...] = ()

    def message(self) -> str:
        when = f" on {self.changed_at:%Y-%m-%d %H:%M}" if self.changed_at else ""
        replaced = f"; replaced its {', '.join(self.replaced)}" if self.replaced else ""
        return f"{self.path}: {self.reason} (last changed by {self.changed_by}{when}){replaced}"


@dataclass
class SyncReport:
    indexed: list[str] = field(default_factory=list)  # new or changed content, re-embedded
    queued: list[str] = field(default_factory=list)  # new or changed, left to the background
    created: list[str] = field(default_factory=list)  # of those indexed or queued, the new ones
    updated: list[str] = field(default_factory=list)  # metadata only, no embedding
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    failed: list[SyncFailure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    conflicts: list[SyncConflict] = field(default_factory=list)  # left as the database has them
    overwritten: list[SyncConflict] = field(default_factory=list)  # replaced by --overwrite
    refused: bool = False  # an all-or-nothing import that found problems and wrote nothing
    chunks: int = 0  # chunks written
    embedded: int = 0  # texts sent to the embedder
    reused: int = 0  # texts whose vector the model already had (same embedded text)
    seconds: float = 0.0

    def add(self, other: SyncReport) -> None:
        """Count ``other`` (one page of a connector's run) into this report."""
        for name in ("indexed", "queued", "created", "updated", "removed", "failed", "warnings"):
            getattr(self, name).extend(getattr(other, name))
        self.conflicts += other.conflicts
        self.overwritten += other.overwritten
        self.unchanged += other.unchanged
        self.chunks += other.chunks
        self.embedded += other.embedded
        self.reused += other.reused
        self.seconds += other.seconds

    def summary(self) -> str:
        if self.refused:
            return f"Nothing was imported: {len(self.failed)} problem(s) to fix first."
        queued = f", {len(self.queued)} queued for indexing" if self.queued else ""
        kept = f", {len(self.conflicts)} conflicts kept as edited" if self.conflicts else ""
        overwritten = f", {len(self.overwritten)} edits overwritten" if self.overwritten else ""
        return (
            f"{len(self.indexed)} changed{queued}, {len(self.updated)} metadata-only, "
            f"{self.unchanged} unchanged, {len(self.removed)} removed, {len(self.failed)} failed"
            f"{kept}{overwritten}; "
            f"{self.chunks} chunks written, {self.embedded} texts embedded and {self.reused} "
            f"reused in {self.seconds:.2f} s"
        )

    def upload_summary(self) -> str:
        """What an upload did, in the words of the writer who made it: "1 new document, queued
        for indexing", rather than the sync's counters ("0 changed, 1 queued ...")."""
        if self.refused:
            return self.summary()
        created = set(self.created)
        parts: list[str] = []
        for paths, outcome in ((self.queued, "queued for indexing"), (self.indexed, "indexed")):
            new = sum(path in created for path in paths)
            if new:
                parts.append(f"{_documents(new, 'new ')}, {outcome}")
            if len(paths) > new:
                parts.append(f"{_documents(len(paths) - new)} updated, {outcome}")
        if self.updated:
            parts.append(f"{_documents(len(self.updated))} with new details only, not re-indexed")
        if self.unchanged:
            parts.append(f"{_documents(self.unchanged)} unchanged")
        for conflicts, outcome in (
            (self.conflicts, "kept as edited"),
            (self.overwritten, "overwritten"),
        ):
            parts += [f"conflict {outcome}: {conflict.message()}" for conflict in conflicts]
        if self.failed:
            parts.append(f"{_documents(len(self.failed))} failed")
        text = "; ".join(parts) or "nothing to import"
        return text[0].upper() + text[1:] + "."


def _documents(count: int, kind: str = "") -> str:
    return f"{count} {kind}document{'' if count == 1 else 's'}"
