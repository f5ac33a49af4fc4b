from __future__ import annotations

import json
import sys
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from kb.actors import SYSTEM
from kb.selectors import audiences_for
from search.evaluation import (
    CaseOutcome,
    EvalCaseError,
    Summary,
    cases_load,
    outcome_score,
    summarise,
    threshold_for,
    threshold_sweep,
)
from search.results import RetrievalUnavailable
from search.services import retrieve

# Each row of the report: the legs used and whether the reranker runs.
ROWS = {
    "vector": {"legs": ("vector",), "rerank": False},
    "keyword": {"legs": ("keyword",), "rerank": False},
    "hybrid": {"legs": ("vector", "keyword"), "rerank": False},
    "rerank": {"legs": ("vector", "keyword"), "rerank": True},
}


class Command(BaseCommand):
    help = "Score retrieval on a JSONL file of cases: recall@1/5/10, MRR@10, nDCG@10 per leg."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("cases", type=Path)
        parser.add_argument("--k", type=int, default=5, help="cut-off for pass/fail (recall@k)")
        parser.add_argument("--legs", default="vector,keyword,hybrid,rerank")
        parser.add_argument("--output", type=Path, help="one JSON line per case (last row)")
        parser.add_argument("--audience", choices=["public", "internal"], default="public")
        parser.add_argument(
            "--threshold",
            type=float,
            default=None,
            help="no-answer threshold (default: settings.NO_ANSWER_THRESHOLD)",
        )

    def handle(self, *args: object, cases: Path, **options: object) -> None:
        rows = [name.strip() for name in str(options["legs"]).split(",") if name.strip()]
        unknown = [name for name in rows if name not in ROWS]
        if unknown or not rows:
            raise CommandError(f"--legs takes {', '.join(ROWS)} (got {options['legs']!r})")
        k = int(options["k"])
        if not 1 <= k <= 50:
            raise CommandError("--k must be between 1 and 50")
        try:
            loaded = cases_load(cases)
        except (OSError, EvalCaseError) as exc:
            raise CommandError(str(exc)) from exc
        threshold = options["threshold"]
        if threshold is None:
            threshold = settings.NO_ANSWER_THRESHOLD
        # The command runs on the server: "internal" reads as the system, "public" as a customer.
        reader = SYSTEM if options["audience"] == "internal" else AnonymousUser()
        audiences = audiences_for(reader)

        summaries: list[Summary] = []
        last: list[CaseOutcome] = []
        for name in rows:
            outcomes = []
            for case in tqdm(loaded, desc=name, unit="q", file=sys.stderr, leave=False):
                try:
                    result = retrieve(
                        question=case.question,
                        audiences=audiences,
                        limit=max(k, 10),
                        legs=ROWS[name]["legs"],
                        rerank=ROWS[name]["rerank"],
                    )
                except RetrievalUnavailable as exc:
                    raise CommandError(str(exc)) from exc
                outcomes.append(outcome_score(case, result, k=k, no_answer_threshold=threshold))
            summaries.append(summarise(name, outcomes, k=k))
            last = outcomes

        self._print(summaries, k=k, threshold=threshold)
        self._print_calibration(last)
        if options["output"]:
            with Path(options["output"]).open("w", encoding="utf-8") as handle:
                for outcome in last:
                    handle.write(json.dumps(outcome.as_json()) + "\n")

    def _print_calibration(self, outcomes: list[CaseOutcome]) -> None:
        points = threshold_sweep(outcomes)
        chosen = threshold_for(points)
        if chosen is None:
            return
        self.stdout.write(
            f"\nno-answer calibration: a threshold of {chosen.threshold:.2f} answers "
            f"{chosen.answerable_kept:.0%} of answerable cases and refuses "
            f"{chosen.unanswerable_refused:.0%} of unanswerable ones (NO_ANSWER_THRESHOLD)"
        )

    def _print(self, summaries: list[Summary], *, k: int, threshold: float | None) -> None:
        keys = list(summaries[0].metrics)
        header = f"{'row':<10}" + "".join(f"{key:>11}" for key in keys) + f"{'no-answer':>11}"
        self.stdout.write(
            f"{summaries[0].answerable} answerable and {summaries[0].unanswerable} unanswerable "
            f"cases; no-answer threshold {threshold}"
        )
        self.stdout.write(header)
        for summary in summaries:
            no_answer = (
                "-" if summary.no_answer_accuracy is None else f"{summary.no_answer_accuracy:.3f}"
            )
            self.stdout.write(
                f"{summary.name:<10}"
                + "".join(f"{summary.metrics[key]:>11.3f}" for key in keys)
                + f"{no_answer:>11}"
            )
        final = summaries[-1]
        if final.failed:
            self.stdout.write(f"\nfailed cases ({final.name}, recall@{k} = 0 or wrong no-answer):")
            for outcome in final.failed:
                got = ", ".join(outcome.ranked[:3]) or "nothing"
                want = ", ".join(outcome.case.relevant) or "no answer"
                score = "-" if outcome.top_score is None else f"{outcome.top_score:.3f}"
                self.stdout.write(
                    f"  {outcome.case.id}: want {want}; got {got} (confidence {score})"
                )
