"""Score answers on corpus/answer-eval.jsonl: facts stated, facts cited, refusals.

Runs on the indexed help center (``manage.py kb_sync corpus``), through the real answer
pipeline, and leaves nothing behind (see ``assistant.tooling.evaluation``). With ``--generator
anthropic`` it calls Claude, or whatever serves the Messages API at ``--anthropic-base-url``
(default ANTHROPIC_BASE_URL): against a stub that run checks plumbing and citation mapping, not
quality, since the stub's answers are whatever it returns.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from assistant.generators import GENERATOR_CHOICES, generator_for
from assistant.tooling.evaluation import (
    AnswerEvalError,
    HalfSummary,
    answer_cases_load,
    answer_eval_run,
    answer_eval_summarise,
)
from kb.models import EmbeddingModel
from kb.tooling.outputs import output_prepared


class Command(BaseCommand):
    help = (
        "Share of answers stating the expected fact, of those citing a passage that states it, "
        "of unanswerable questions refused and of answerable ones wrongly refused, per half."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "cases", type=Path, nargs="?", default=settings.BASE_DIR / "corpus/answer-eval.jsonl"
        )
        parser.add_argument("--generator", choices=GENERATOR_CHOICES, default=settings.GENERATOR)
        parser.add_argument("--anthropic-base-url", default=None, help="default ANTHROPIC_BASE_URL")
        parser.add_argument("--anthropic-api-key", default=None, help="default ANTHROPIC_API_KEY")
        parser.add_argument("--output", type=Path, help="one JSON line per case")
        parser.add_argument("--json", type=Path, help="the summary as JSON")

    def handle(self, *args: object, cases: Path, generator: str, **options: object) -> None:
        try:
            loaded = answer_cases_load(cases)
        except (OSError, AnswerEvalError) as exc:
            raise CommandError(str(exc)) from exc
        output = output_prepared(str(options["output"])) if options["output"] else None
        report_path = output_prepared(str(options["json"])) if options["json"] else None
        if not EmbeddingModel.objects.active().exists():
            raise CommandError("nothing is indexed: run `manage.py kb_sync corpus` first")
        api_key = options["anthropic_api_key"] or settings.ANTHROPIC_API_KEY
        if generator == "anthropic" and not api_key:
            raise CommandError(
                "--generator anthropic needs ANTHROPIC_API_KEY or --anthropic-api-key"
            )
        try:
            answerer = generator_for(
                generator,
                anthropic_api_key=str(api_key or ""),
                anthropic_base_url=str(options["anthropic_base_url"] or "") or None,
            )
        except ValueError as exc:
            raise CommandError(f"cannot make the {generator} generator: {exc}") from exc
        outcomes = answer_eval_run(
            loaded,
            generator=answerer,
            progress=lambda items: tqdm(items, desc="answering", unit="q", file=sys.stderr),
        )
        summaries = answer_eval_summarise(outcomes)
        self._print(summaries, generator=answerer.name, cases=cases)
        if output is not None:
            with output.open("w", encoding="utf-8") as handle:
                for outcome in outcomes:
                    handle.write(json.dumps(outcome.as_json(), ensure_ascii=False) + "\n")
        if report_path is not None:
            report = {"cases": str(cases), "generator": answerer.name}
            report["halves"] = [summary.as_json() for summary in summaries]  # type: ignore[assignment]
            report_path.write_text(json.dumps(report, indent=2) + "\n")

    def _print(self, summaries: list[HalfSummary], *, generator: str, cases: Path) -> None:
        self.stdout.write(f"answer_eval on {cases} with {generator}")
        columns = (
            ("cases", 6),
            ("states fact", 12),
            ("lead states", 12),
            ("cites it", 9),
            ("cites section", 14),
            ("lead cites sec.", 16),
            ("sees section", 13),
            ("unans. refused", 15),
            ("ans. refused", 13),
            ("words p50", 10),
            ("sources", 8),
        )
        self.stdout.write(f"{'half':<12}" + "".join(f"{name:>{width}}" for name, width in columns))
        for s in summaries:
            values = (
                f"{s.answerable + s.unanswerable}",
                f"{s.states_fact:.1%}",
                f"{s.lead_states_fact:.1%}",
                f"{s.cites_fact:.1%}",
                f"{s.cites_section:.1%}",
                f"{s.lead_cites_section:.1%}",
                f"{s.sees_section:.1%}",
                f"{s.refused_unanswerable:.1%}",
                f"{s.refused_answerable:.1%}",
                f"{s.median_words:.0f}",
                f"{s.mean_sources:.2f}",
            )
            self.stdout.write(
                f"{s.half:<12}"
                + "".join(
                    f"{value:>{width}}" for value, (_, width) in zip(values, columns, strict=True)
                )
            )
        for s in summaries:
            if s.half == "overall":
                continue
            for outcome in s.failed:
                case = outcome.case
                want = f"{case.fact!r} ({case.path} > {case.section})" if case.fact else "refusal"
                got = outcome.answer.replace("\n", " ")[:160]
                self.stdout.write(
                    f"  [{s.half}] {case.id}: want {want}; got {outcome.status}: {got}"
                )
