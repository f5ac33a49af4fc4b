from __future__ import annotations

from pathlib import Path
from typing import cast

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from kb.actors import SYSTEM, Actor
from kb.connectors import CONNECTOR_NAMES, ConnectorError, connector_from_settings
from kb.embedders import EmbeddingError, active_embedder
from kb.management.progress import progress_bar
from kb.services import EmbeddingModelMismatch
from kb.services.categories import (
    CATEGORY_LABELS_FILE,
    CategoryLabelsError,
    category_labels_add,
    category_labels_read,
)
from kb.services.sync import SyncRefused, SyncReport, corpus_sync
from kb.services.sync.connector import ConnectorRunFailed, connector_sync
from kb.services.sync.sources import MARKUPS, Markup
from kb.services.sync_preview import CorpusPreview, corpus_preview

MARKUP_LINES_SHOWN = 5  # per file: enough to see what a rule misses without a wall of text


class Command(BaseCommand):
    help = (
        "Bring what changed in a folder of Markdown (and Sphinx reStructuredText) files since its "
        "last sync into the index "
        "(only changed files are re-embedded); a document changed in the database since is kept "
        "and reported as a conflict unless --overwrite."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", type=Path, nargs="?")
        parser.add_argument(
            "--source",
            choices=CONNECTOR_NAMES,
            help="sync from a connector instead of a folder: what changed upstream since its "
            "last run (its settings: docs/operations.md, Connectors); a run that died resumes",
        )
        parser.add_argument(
            "--allow-prune-all",
            action="store_true",
            help="allow an empty folder to remove every indexed document",
        )
        parser.add_argument(
            "--overwrite",
            action="store_true",
            help="take the file's version of a document changed in the database since the last "
            "sync (status and successor still change only where the file changed them)",
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="print what each file would become (title, status, audience, aliases, "
            "sections, warnings) without writing or embedding anything",
        )
        parser.add_argument(
            "--fail-on-markup",
            action="store_true",
            help="with --dry-run: fail if syntax CommonMark would not render as meant ({#id}, "
            "{{< >}}, :::, !!!, [[wiki links]], > [!note], :ref:, {%% %%} ...) would be left "
            "outside code in a heading path or an embedded text",
        )
        parser.add_argument(
            "--markup",
            choices=MARKUPS,
            default="auto",
            help="how the folder is written: obsidian (an Obsidian vault: wiki links, embeds, "
            "callouts), sites (Hugo, MkDocs, Docusaurus, MyST); auto (default): obsidian for a "
            "folder with an .obsidian/ folder, else sites",
        )
        parser.add_argument(
            "--user",
            help="import with this user's permissions, as if they uploaded the files in admin "
            "(a doc writer cannot retire, restore or re-link pages); default: the system",
        )

    def handle(self, *args: object, directory: Path | None, **options: object) -> None:
        if (directory is None) == (options["source"] is None):
            raise CommandError("give a folder or --source NAME (one of them)")
        if options["source"] is not None:
            if options["dry_run"]:
                raise CommandError("--dry-run reads a folder; a connector has no dry run yet")
            self._connector_sync(str(options["source"]), options)
            return
        assert directory is not None
        if options["fail_on_markup"] and not options["dry_run"]:
            raise CommandError("--fail-on-markup goes with --dry-run (a sync never fails on it)")
        markup = cast(Markup, options["markup"])
        if options["dry_run"]:
            preview = corpus_preview(directory=directory, embedder=active_embedder(), markup=markup)
            self._print_preview(preview, fail_on_markup=bool(options["fail_on_markup"]))
            return
        actor = self._actor(options["user"])
        try:
            category_labels = category_labels_read(directory=directory)
        except CategoryLabelsError as exc:
            raise CommandError(f"{exc}; nothing was synced") from exc
        try:
            with progress_bar("indexing", enabled=not options["no_progress"]) as progress:
                report = corpus_sync(
                    directory=directory,
                    embedder=active_embedder(),
                    actor=actor,
                    overwrite=bool(options["overwrite"]),
                    allow_prune_all=bool(options["allow_prune_all"]),
                    progress=progress,
                    markup=markup,
                )
        except (SyncRefused, EmbeddingModelMismatch, EmbeddingError) as exc:
            raise CommandError(str(exc)) from exc
        except DatabaseError as exc:
            # Each document is written in its own transaction: what was written is whole, the
            # rest still holds its previous version, and a re-run does only what is left.
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise CommandError(
                f"the database failed during the sync ({reason}); documents written before it "
                "are complete and the others unchanged: run kb_sync again to finish"
            ) from exc

        self._report_print(report)
        self.stdout.write(report.summary())
        named = category_labels_add(labels=category_labels)
        if named:
            self.stdout.write(
                f"named {len(named)} categor{'y' if len(named) == 1 else 'ies'} from "
                f"{CATEGORY_LABELS_FILE} (names staff set in admin are kept)"
            )
        if report.failed:
            raise CommandError(
                f"{len(report.failed)} file(s) skipped; their indexed copies were left as they were"
            )

    def _connector_sync(self, name: str, options: dict[str, object]) -> None:
        try:
            connector = connector_from_settings(name)
            with progress_bar(name, enabled=not options["no_progress"]) as progress:
                run = connector_sync(
                    connector=connector,
                    embedder=active_embedder(),
                    actor=self._actor(options["user"]),
                    overwrite=bool(options["overwrite"]),
                    allow_prune_all=bool(options["allow_prune_all"]),
                    progress=progress,
                )
        except (
            ConnectorError,
            ConnectorRunFailed,
            SyncRefused,
            EmbeddingModelMismatch,
            EmbeddingError,
        ) as exc:
            raise CommandError(str(exc)) from exc
        except DatabaseError as exc:
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise CommandError(
                f"the database failed during the sync ({reason}); the pages written before it "
                f"are complete: run kb_sync --source {name} again to resume"
            ) from exc
        self._report_print(run.sync)
        self.stdout.write(run.summary())
        if run.sync.failed:
            raise CommandError(
                f"{len(run.sync.failed)} article(s) skipped; their indexed copies were left as "
                "they were, and the next run reads them again"
            )

    def _report_print(self, report: SyncReport) -> None:
        for warning in report.warnings:
            self.stderr.write(f"warning: {warning}")
        for failure in report.failed:
            self.stderr.write(f"failed: {failure.message}")
        for conflict in report.conflicts:
            self.stderr.write(f"conflict, kept the database copy: {conflict.message()}")
        for replaced in report.overwritten:
            self.stderr.write(f"overwritten with the file: {replaced.message()}")
        if report.conflicts:
            self.stderr.write(
                "the database copies above were kept; to take the files' versions instead, "
                "run kb_sync again with --overwrite"
            )

    def _print_preview(self, preview: CorpusPreview, *, fail_on_markup: bool) -> None:
        if preview.markup == "obsidian":
            self.stdout.write("read as an Obsidian vault (wiki links, embeds, callouts)")
        for file in preview.files:
            document = file.document
            self.stdout.write(
                f"{document.path}: {document.title!r} {document.status}, {document.audience}, "
                f"{file.chunks} chunk(s)"
            )
            if document.aliases:  # Hugo `aliases`, Jekyll `redirect_from`: they will redirect
                addresses = ", ".join(f"/docs/{alias}" for alias in document.aliases)
                self.stdout.write(f"  aliases: {addresses}")
            for section in file.sections:
                self.stdout.write(f"  section: {section or '(before the first heading)'}")
            if file.problem:
                self.stdout.write(f"  cannot be chunked: {file.problem}")
            for line in file.markup_lines[:MARKUP_LINES_SHOWN]:
                self.stdout.write(f"  markup left: {line[:120]!r}")
            if len(file.markup_lines) > MARKUP_LINES_SHOWN:
                self.stdout.write(
                    f"  markup left: {len(file.markup_lines) - MARKUP_LINES_SHOWN} more line(s)"
                )
        for warning in preview.warnings:
            self.stdout.write(f"warning: {warning}")
        for kind in preview.markup_by_kind():
            self.stdout.write(
                f"markup left, {kind.kind}: {kind.chunks} chunk(s) in {kind.files} file(s)"
            )
            for path, line in kind.examples:
                self.stdout.write(f"  e.g. {path}: {line[:120]!r}")
        for rejected in preview.rejected:
            self.stdout.write(f"rejected: {rejected}")
        self.stdout.write(preview.summary())
        if preview.rejected:
            raise CommandError(f"{len(preview.rejected)} file(s) would be rejected")
        if fail_on_markup and preview.texts_with_markup:
            raise CommandError(
                f"markup left in {preview.heading_paths_with_markup} heading path(s) and "
                f"{preview.texts_with_markup} embedded text(s): see 'markup left' above"
            )

    def _actor(self, username: object) -> Actor:
        if username is None:
            return SYSTEM
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise CommandError(f"--user {username}: no active user of that name")
        return user
