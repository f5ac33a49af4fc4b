"""Precision of the probable-contradictions list: index a folder of pages in a throwaway database,
list the pairs the attention page would offer, and score them against a labels file (each pair
judged true or false by a person who read both passages).

``--pairs FILE`` writes the offered pairs, one JSON line each, to be read and labelled."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from kb.actors import SYSTEM
from kb.embedders import get_embedder
from kb.management.progress import progress_bar
from kb.models import EmbeddingModel
from kb.services.sync import corpus_sync
from kb.tooling.benchmarking import BenchmarkError, quiet, throwaway_database
from kb.tooling.benchmarks.attention import labels_read, offered_pairs, precision_of

DATABASE_NAME = "test_groundwork_attention_eval"


class Command(BaseCommand):
    help = "Precision of the probable-contradictions list on a folder of pages, by hand labels."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--corpus", type=Path, default=settings.BASE_DIR / "corpus")
        parser.add_argument("--labels", type=Path, help="JSONL: {key, contradiction, why}")
        parser.add_argument("--pairs", type=Path, help="write the offered pairs here (JSONL)")

    def handle(self, *args: object, corpus: Path, labels: Path | None, pairs: Path | None,
               **options: object) -> None:  # fmt: skip
        if not corpus.is_dir():
            raise CommandError(f"{corpus} is not a folder of pages")
        try:
            judged = labels_read(labels) if labels else {}
        except (OSError, BenchmarkError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write("creating a throwaway database...")
        with throwaway_database(DATABASE_NAME), quiet("groundwork.kb"):
            self.stdout.write(f"indexing {corpus} (embeds every chunk once)...")
            with progress_bar("indexing") as progress:
                corpus_sync(
                    directory=corpus, embedder=get_embedder(), actor=SYSTEM, progress=progress
                )
            offered = offered_pairs(embedding_model=EmbeddingModel.objects.active().get())
        if pairs:
            pairs.write_text(
                "".join(json.dumps(dataclasses.asdict(pair)) + "\n" for pair in offered)
            )
            self.stdout.write(f"wrote {len(offered)} pairs to {pairs}")
        for pair in offered:
            verdict = {True: "true ", False: "FALSE"}.get(judged.get(pair.key), "  ?  ")
            self.stdout.write(f"{verdict} {pair.similarity:.3f} {pair.kinds}: {pair.key}")
        if labels:
            score = precision_of(offered, judged)
            shown = "n/a" if score.precision is None else f"{score.precision:.2f}"
            self.stdout.write(
                f"offered {score.offered}, true {score.true}, false {score.false}, "
                f"unlabelled {len(score.unlabelled)}: precision {shown}"
            )
