"""``manage.py kb_models list|add|build|activate|drop``: embedding model versions.

kb_models list                       every model, its state and how far its chunks cover
kb_models add voyage/voyage-3.5      register a model and build it in the background
kb_models add KEY --wait             ... and build it here, with a progress bar
kb_models build KEY                  build (or finish building) a model here
kb_models activate KEY               switch search to it (refused until coverage is complete)
kb_models drop KEY --yes             delete a model that is not active, and its chunks
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Count

from kb.embedders import EmbeddingError, embedder_for
from kb.management.progress import progress_bar
from kb.models import EmbeddingModel
from kb.services import (
    EmbeddingModelError,
    EmbeddingModelMismatch,
    embedding_model_activate,
    embedding_model_add,
    embedding_model_build,
    embedding_model_coverage,
    embedding_model_drop,
    embedding_model_for_key,
)


class Command(BaseCommand):
    help = "List, add, build, activate and drop embedding models."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        actions.add_parser("list", help="every model with its state and coverage")
        add = actions.add_parser("add", help="register a model and build it in the background")
        add.add_argument("key", help="e.g. voyage/voyage-3.5")
        add.add_argument("--wait", action="store_true", help="build here instead, with progress")
        build = actions.add_parser("build", help="build (or finish building) a model here")
        build.add_argument("key")
        activate = actions.add_parser("activate", help="switch search to a fully built model")
        activate.add_argument("key")
        drop = actions.add_parser("drop", help="delete a model that is not active")
        drop.add_argument("key")
        drop.add_argument("--yes", action="store_true", help="really delete its chunks")
        for sub in (add, build):
            sub.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        try:
            getattr(self, f"_{action}")(**options)
        except (EmbeddingModelError, EmbeddingModelMismatch, EmbeddingError) as exc:
            raise CommandError(str(exc)) from exc

    def _list(self, **options: Any) -> None:
        models = EmbeddingModel.objects.annotate(chunk_total=Count("chunks")).order_by("pk")
        if not models:
            self.stdout.write("no embedding models yet: 'kb_sync' registers the configured one")
            return
        self.stdout.write(f"{'key':32} {'state':9} {'dims':>5} {'chunks':>8}  coverage")
        for model in models:
            coverage = embedding_model_coverage(model=model)
            chunk_total = model.chunk_total  # type: ignore[attr-defined]  # the annotate() above
            self.stdout.write(
                f"{model.key:32} {model.state:9} {model.dimensions:>5} {chunk_total:>8}  {coverage}"
            )

    def _add(self, *, key: str, wait: bool, **options: Any) -> None:
        model = embedding_model_add(embedder=embedder_for(key))
        if model.state == EmbeddingModel.State.ACTIVE:
            self.stdout.write(f"{model.key} is the active model")
            return
        if wait:
            self._build(key=key, **options)
            return
        self.stdout.write(
            f"{model.key} is building in the background; 'kb_models list' shows its progress "
            f"and 'kb_models activate {model.key}' switches search to it when it is complete"
        )

    def _build(self, *, key: str, no_progress: bool = False, **options: Any) -> None:
        model = embedding_model_for_key(key)
        with progress_bar(f"building {key}", enabled=not no_progress) as progress:
            report = embedding_model_build(model_id=model.pk, progress=progress)
        self.stdout.write(report.summary())
        if report.failed:
            raise CommandError(
                f"{len(report.failed)} document(s) failed: {', '.join(report.failed[:10])}"
            )

    def _activate(self, *, key: str, **options: Any) -> None:
        model = embedding_model_activate(model=embedding_model_for_key(key))
        self.stdout.write(f"{model.key} is now the active model: search uses it from now on")

    def _drop(self, *, key: str, yes: bool, **options: Any) -> None:
        model = embedding_model_for_key(key)
        if not yes:
            chunks = model.chunks.count()
            raise CommandError(
                f"this deletes {model.key} and its {chunks} chunks; run again with --yes to do it"
            )
        chunks = embedding_model_drop(model=model)
        self.stdout.write(f"dropped {key} and its {chunks} chunks")
