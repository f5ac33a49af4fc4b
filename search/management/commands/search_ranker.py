"""The local ranking stage's lab: ``folds`` scores it leave-one-set-out over candidate dumps
(``search_fusion dump``) beside the fused order and each leg, ``train`` fits the shipped model
on every dump and writes it, with the data's checksum and the held-out figures, to
``search/rerankers/models/``."""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from search.rerankers.local import MODEL_FILE
from search.tooling.tuning.ranking import (
    DEPTH,
    PARAMS,
    ROUNDS,
    Fold,
    dumps_checksum,
    dumps_load,
    leave_one_set_out,
    model_save,
    train,
    training_data,
)

ROWS = ("fused", "vector leg", "keyword leg", "stage", "stage, 10 read")
# Each set's cases as a help center of one page poses them (``one_page``): sets with sections.
ONE_PAGE_ROWS = ("fused, one page", "stage, one page")
COLUMNS = (
    "page recall@1",
    "page mrr@10",
    "page ndcg@10",
    "section recall@1",
    "section mrr@10",
    "section ndcg@10",
)


class Command(BaseCommand):
    help = "Validate (folds) or train (train) the local ranking stage over candidate dumps."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=("folds", "train"))
        parser.add_argument("dumps", type=Path, nargs="+", help="search_fusion dump files")
        parser.add_argument("--output", type=Path, default=MODEL_FILE, help="the model file")
        parser.add_argument("--rounds", type=int, default=ROUNDS)

    def handle(self, *args: object, **options: object) -> None:
        paths = [Path(str(p)) for p in options["dumps"]]  # type: ignore[attr-defined]
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            raise CommandError(
                f"no such dump: {', '.join(missing)} (make one with search_fusion dump)"
            )
        sets = dumps_load(paths)
        if len(sets) < 2:
            raise CommandError("leave-one-set-out needs the dumps of at least two eval sets")
        rounds = int(str(options["rounds"]))
        self.stderr.write(f"leave-one-set-out over {len(sets)} sets ...")
        folds = leave_one_set_out(sets, rounds=rounds)
        self._report(folds)
        if options["action"] == "train":
            output = Path(str(options["output"]))
            data = training_data(sets)
            booster = train(data, rounds=rounds)
            model_save(
                booster,
                output,
                metadata={
                    "command": "manage.py search_ranker train " + " ".join(p.name for p in paths),
                    "dumps": sorted(p.name for p in paths),
                    "dumps_sha256": dumps_checksum(paths),
                    "training_sha256": data.sha256,
                    "questions": len(data.groups),
                    "depth": DEPTH,
                    "rounds": rounds,
                    "params": PARAMS,
                    "held_out": {fold.held_out: fold.rows for fold in folds},
                },
            )
            self.stdout.write(f"model written to {output} ({len(data.groups)} questions)")

    def _report(self, folds: list[Fold]) -> None:
        write = self.stdout.write
        write("held-out figures: each set scored by a model trained on the others")
        write(f"{'set':<26}{'row':<16}" + "".join(f"{c:>18}" for c in COLUMNS))
        for fold in folds:
            rows = ROWS + (ONE_PAGE_ROWS if fold.one_page_cases else ())
            for row in rows:
                values = fold.rows[row]
                write(
                    f"{fold.held_out:<26}{row:<16}"
                    + "".join(f"{values[c]:>18.3f}" for c in COLUMNS)
                )
        for row in ROWS + ONE_PAGE_ROWS:
            scored = [f for f in folds if row in ROWS or f.one_page_cases]
            means = [sum(f.rows[row][c] for f in scored) / max(len(scored), 1) for c in COLUMNS]
            write(f"{'mean':<26}{row:<16}" + "".join(f"{m:>18.3f}" for m in means))
        sys.stdout.flush()
