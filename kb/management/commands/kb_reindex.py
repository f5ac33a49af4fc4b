"""``manage.py kb_reindex [--all] [--background]``: bring every model's chunks up to date.

Without ``--all`` it re-embeds only documents whose chunks are not current (edited while no
worker ran, chunked by an older chunker version, failed earlier). ``--all`` re-embeds every
document, e.g. after changing how chunks are embedded. ``--background`` sends the work to the
workers' ``bulk`` queue in batches, so it never delays a writer's edit. Search keeps serving
the existing chunks meanwhile: each document's chunks are swapped in one transaction.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from kb.embedders import EmbeddingError
from kb.management.progress import progress_bar
from kb.models import DocumentIndexState, EmbeddingModel
from kb.services import embedding_model_build, index_enqueue


class Command(BaseCommand):
    help = "Re-chunk and re-embed documents whose chunks are not current (or all of them)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--all", action="store_true", help="re-embed every document")
        parser.add_argument(
            "--background", action="store_true", help="send the work to the Celery workers"
        )
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        models = list(EmbeddingModel.objects.indexing().order_by("pk"))
        if not models:
            raise CommandError("no embedding model yet: run kb_sync first")
        if options["all"]:
            # An indexed hash that matches nothing makes every document "not current".
            DocumentIndexState.objects.filter(embedding_model__in=models).update(
                indexed_hash="", status=DocumentIndexState.Status.PENDING
            )
        if options["background"]:
            document_ids = list(
                DocumentIndexState.objects.filter(embedding_model__in=models)
                .exclude(status=DocumentIndexState.Status.INDEXED)
                .values_list("document_id", flat=True)
                .distinct()
            )
            sent = index_enqueue(document_ids=document_ids, bulk=True)
            self.stdout.write(
                f"sent {sent} of {len(document_ids)} documents to the workers' bulk queue"
            )
            if sent < len(document_ids):
                raise CommandError("the broker is unreachable; the index sweep will resend them")
            return
        for model in models:
            description = f"reindexing {model.key}"
            try:
                with progress_bar(description, enabled=not options["no_progress"]) as progress:
                    report = embedding_model_build(model_id=model.pk, progress=progress)
            except EmbeddingError as exc:
                raise CommandError(f"{model.key}: {exc}") from exc
            self.stdout.write(report.summary())
            if report.failed:
                raise CommandError(f"{len(report.failed)} document(s) failed in {model.key}")
