"""Choose what the offline answerer quotes by measurement: ``dump`` a case file's quote choices
(on the index of its set), then ``fit`` over several dumps by leave-one-set-out."""

from __future__ import annotations

import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from assistant.tooling.evaluation import AnswerEvalError, answer_cases_load
from assistant.tooling.tuning.quotes import dump_load, quotes_dump, quotes_fit_report
from assistant.tooling.tuning.refusal import Refusal, refusal_fit_report
from kb.models import EmbeddingModel


class Command(BaseCommand):
    help = "Dump the quote choices of an answer eval set, or fit the choice over several dumps."

    def add_arguments(self, parser: CommandParser) -> None:
        verbs = parser.add_subparsers(dest="verb", required=True)
        dump = verbs.add_parser("dump", help="answer each case as far as the quote choice")
        dump.add_argument("cases", type=Path)
        dump.add_argument("--output", type=Path, required=True)
        fit = verbs.add_parser("fit", help="choose the weights by leave-one-set-out")
        fit.add_argument("dumps", type=Path, nargs="+")

    def handle(self, *args: object, verb: str, **options: object) -> None:
        if verb == "dump":
            try:
                cases = answer_cases_load(Path(str(options["cases"])))
            except (OSError, AnswerEvalError) as exc:
                raise CommandError(str(exc)) from exc
            if not EmbeddingModel.objects.active().exists():
                raise CommandError("nothing is indexed: run `manage.py kb_sync FOLDER` first")
            quotes_dump(
                cases,
                output=Path(str(options["output"])),
                progress=lambda items: tqdm(items, desc="dumping", unit="q", file=sys.stderr),
            )
            return
        dumps = {}
        for path in options["dumps"]:  # type: ignore[attr-defined]
            try:
                dumps[Path(path).stem] = dump_load(Path(path))
            except (OSError, ValueError) as exc:
                raise CommandError(f"cannot read {path}: {exc}") from exc
        today = Refusal(settings.NO_ANSWER_THRESHOLD, settings.NO_ANSWER_UNSUPPORTED_THRESHOLD)
        for line in [*refusal_fit_report(dumps, today=today), *quotes_fit_report(dumps)]:
            self.stdout.write(line)
