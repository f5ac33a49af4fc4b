"""Choose what the offline answerer quotes by measurement: ``dump`` a case file's quote choices
(on the index of its set), then ``fit`` over several dumps by leave-one-set-out, and ``frontier``
to see what longer answers would state; ``follow-ups`` scores the answerer's follow-up rules on a
case file."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from assistant.tooling.evaluation import AnswerEvalError, answer_cases_load
from assistant.tooling.tuning.follow_ups import (
    follow_up_pairs,
    follow_ups_report,
    follow_ups_score,
)
from assistant.tooling.tuning.quotes import (
    dump_load,
    length_frontier_report,
    quotes_dump,
    quotes_fit_report,
)
from assistant.tooling.tuning.ranker import ranker_report, ranker_save
from assistant.tooling.tuning.refusal import Refusal, refusal_fit_report
from kb.models import EmbeddingModel
from kb.tooling.outputs import output_prepared


class Command(BaseCommand):
    help = "Dump the quote choices of an answer eval set, or fit the choice over several dumps."

    def add_arguments(self, parser: CommandParser) -> None:
        verbs = parser.add_subparsers(dest="verb", required=True)
        dump = verbs.add_parser("dump", help="answer each case as far as the quote choice")
        dump.add_argument("cases", type=Path)
        dump.add_argument("--output", type=Path, required=True)
        follow_ups = verbs.add_parser(
            "follow-ups",
            help="ask each case as the follow-up of another case of its page, with and without "
            "the answerer's follow-up rules",
        )
        follow_ups.add_argument("cases", type=Path)
        fit = verbs.add_parser("fit", help="choose the weights by leave-one-set-out")
        fit.add_argument("dumps", type=Path, nargs="+")
        frontier = verbs.add_parser(
            "frontier",
            help="replay longer answers (wider margins, a place more): facts stated against words",
        )
        frontier.add_argument("dumps", type=Path, nargs="+")
        ranker = verbs.add_parser(
            "ranker",
            help="train the unit ranker on the dumps' calibration halves (leave-one-set-out)",
        )
        ranker.add_argument("dumps", type=Path, nargs="+")
        ranker.add_argument(
            "--held-out",
            type=Path,
            action="append",
            default=[],
            help="a dump used for no choice, scored whole",
        )
        ranker.add_argument("--output", type=Path, help="write the model (LightGBM text) here")

    def handle(self, *args: object, verb: str, **options: object) -> None:
        if verb == "follow-ups":
            self._follow_ups(Path(str(options["cases"])))
            return
        if verb == "dump":
            try:
                cases = answer_cases_load(Path(str(options["cases"])))
            except (OSError, AnswerEvalError) as exc:
                raise CommandError(str(exc)) from exc
            if not EmbeddingModel.objects.active().exists():
                raise CommandError("nothing is indexed: run `manage.py kb_sync FOLDER` first")
            quotes_dump(
                cases,
                output=output_prepared(str(options["output"])),
                progress=lambda items: tqdm(items, desc="dumping", unit="q", file=sys.stderr),
            )
            return
        dumps = self._load(options["dumps"])  # type: ignore[arg-type]
        if verb == "ranker":
            self._ranker(dumps, options)
            return
        if verb == "frontier":
            for line in length_frontier_report(dumps):
                self.stdout.write(line)
            return
        today = Refusal(settings.NO_ANSWER_THRESHOLD, settings.NO_ANSWER_UNSUPPORTED_THRESHOLD)
        for line in [*refusal_fit_report(dumps, today=today), *quotes_fit_report(dumps)]:
            self.stdout.write(line)

    def _follow_ups(self, path: Path) -> None:
        try:
            cases = answer_cases_load(path)
        except (OSError, AnswerEvalError) as exc:
            raise CommandError(str(exc)) from exc
        if not EmbeddingModel.objects.active().exists():
            raise CommandError("nothing is indexed: run `manage.py kb_sync FOLDER` first")
        pairs = follow_up_pairs(cases)
        if not pairs:
            raise CommandError(f"{path}: no page answers two of its cases, so no follow-up to ask")
        scores = follow_ups_score(
            pairs,
            progress=lambda items: tqdm(items, desc="follow-ups", unit="pair", file=sys.stderr),
        )
        for line in follow_ups_report(scores):
            self.stdout.write(line)

    def _load(self, paths: list[Path]) -> dict[str, list[dict[str, Any]]]:
        dumps = {}
        for path in paths:
            try:
                dumps[Path(path).stem] = dump_load(Path(path))
            except (OSError, ValueError) as exc:
                raise CommandError(f"cannot read {path}: {exc}") from exc
        return dumps

    def _ranker(self, dumps: dict[str, list[dict[str, Any]]], options: dict[str, Any]) -> None:
        held_out = self._load(options["held_out"])
        ranker, params, lines = ranker_report(dumps, held_out=held_out)
        for line in lines:
            self.stdout.write(line)
        if options["output"]:
            paths = [Path(path) for path in options["dumps"]]
            command = "manage.py answer_tuning ranker " + " ".join(
                [
                    *(path.name for path in paths),
                    *(f"--held-out {p.name}" for p in options["held_out"]),
                ]
            )
            ranker_save(ranker, params, output=Path(options["output"]), command=command, data=paths)
            self.stdout.write(f"wrote {options['output']}")
