"""Precision of the probable-contradictions list: index a folder of pages in a throwaway database,
list the pairs the attention page would offer, and score them against a labels file (each pair
judged true or false by a person who read both passages).

``--pairs FILE`` writes the offered pairs, one JSON line each, to be read and labelled."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import OperationalError, connection

from kb.actors import SYSTEM
from kb.embedders import get_embedder
from kb.management.progress import progress_bar
from kb.models import EmbeddingModel
from kb.services.sync import corpus_sync
from kb.tooling.benchmarking import BenchmarkError, quiet, throwaway_database
from kb.tooling.benchmarks.attention import (
    OfferedPair,
    labels_read,
    offered_pairs,
    precision_of,
)

DATABASE_PREFIX = "test_groundwork_attention_eval"


def database_name(corpus: Path) -> str:
    """One throwaway database per corpus folder, so a --keep of one survives a run on another."""
    folder = re.sub(r"[^a-z0-9]+", "_", corpus.resolve().name.lower()).strip("_")
    return f"{DATABASE_PREFIX}_{folder}"[:63]


class Command(BaseCommand):
    help = "Precision of the probable-contradictions list on a folder of pages, by hand labels."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--corpus", type=Path, default=settings.BASE_DIR / "corpus")
        parser.add_argument("--labels", type=Path, help="JSONL: {key, contradiction, why}")
        parser.add_argument("--pairs", type=Path, help="write the offered pairs here (JSONL)")
        parser.add_argument(
            "--keep",
            action="store_true",
            help="keep the indexed database (one per corpus folder) for a later --reuse",
        )
        parser.add_argument(
            "--reuse",
            action="store_true",
            help="list from the database a --keep run left (the same corpus), indexing nothing",
        )

    def handle(self, *args: object, corpus: Path, labels: Path | None, pairs: Path | None,
               keep: bool, reuse: bool, **options: object) -> None:  # fmt: skip
        if not corpus.is_dir():
            raise CommandError(f"{corpus} is not a folder of pages")
        try:
            judged = labels_read(labels) if labels else {}
        except (OSError, BenchmarkError) as exc:
            raise CommandError(str(exc)) from exc
        if reuse:
            offered = self._kept_database_pairs(database_name(corpus))
        else:
            self.stdout.write("creating a throwaway database...")
            with throwaway_database(database_name(corpus), keep=keep), quiet("groundwork.kb"):
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
            label = judged.get(pair.key)
            verdict = "  ?  " if label is None else ("true " if label else "FALSE")
            self.stdout.write(f"{verdict} {pair.similarity:.3f} {pair.kinds}: {pair.key}")
        if labels:
            score = precision_of(offered, judged)
            shown = "n/a" if score.precision is None else f"{score.precision:.2f}"
            self.stdout.write(
                f"offered {score.offered}, true {score.true}, false {score.false}, "
                f"unlabelled {len(score.unlabelled)}: precision {shown}"
            )

    def _kept_database_pairs(self, name: str) -> list[OfferedPair]:
        """The offered pairs of the database a ``--keep`` run left; a missing one is refused."""
        old_name = connection.settings_dict["NAME"]
        connection.close()
        connection.settings_dict["NAME"] = name
        try:
            model = EmbeddingModel.objects.active().first()
            if model is None:
                raise CommandError(f"{name} holds no index: run once with --keep first")
            return offered_pairs(embedding_model=model)
        except OperationalError as exc:
            raise CommandError(f"no kept database {name}: run with --keep first") from exc
        finally:
            connection.close()
            connection.settings_dict["NAME"] = old_name
