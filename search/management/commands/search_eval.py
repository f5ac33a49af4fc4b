from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError
from tqdm import tqdm

from kb.actors import SYSTEM
from kb.embedders import Embedder, active_embedder, get_embedder
from kb.selectors import audiences_for
from search.hybrid import LEG_DEPTH, LEG_PAGES
from search.results import RetrievalUnavailable
from search.services import retrieve
from search.tooling.evalsets.baselines import (
    BASELINES,
    BaselineUnavailable,
    SectionBaselines,
    VectorCache,
)
from search.tooling.evalsets.pages import pages_read
from search.tooling.evaluation import (
    METRIC_KEYS,
    CaseOutcome,
    EvalCase,
    EvalCaseError,
    Summary,
    cases_load,
    outcome_from_hits,
    outcome_score,
    summarise,
    threshold_for,
    threshold_sweep,
)


@dataclass(frozen=True)
class Row:
    """One row of the report: the legs used and whether the reranker runs."""

    legs: tuple[str, ...]
    rerank: bool


ROWS = {
    "vector": Row(legs=("vector",), rerank=False),
    "keyword": Row(legs=("keyword",), rerank=False),
    "hybrid": Row(legs=("vector", "keyword"), rerank=False),
    "rerank": Row(legs=("vector", "keyword"), rerank=True),
}
# The whole candidate pool, so the page ranking has 10 distinct pages when the corpus has them:
# each leg lists LEG_DEPTH chunks and the best chunk of its LEG_PAGES best pages (search.hybrid),
# and a long page's 40 chunks could otherwise fill the first 50 places on their own.
RETRIEVE_DEPTH = 2 * (LEG_DEPTH + LEG_PAGES)
VECTOR_CACHE = Path(settings.BASE_DIR) / ".data" / "eval-cache" / "vectors.sqlite3"
_SHORT = {
    "recall@1": "R@1",
    "recall@5": "R@5",
    "recall@10": "R@10",
    "mrr@10": "MRR",
    "ndcg@10": "nDCG",
}


class Command(BaseCommand):
    help = (
        "Score retrieval on a JSONL file of cases: recall@1/5/10, MRR@10, nDCG@10 per leg, at "
        "page and section level; with --docs also the bm25, dense and rrf baselines on those pages."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("cases", type=Path)
        parser.add_argument("--k", type=int, default=5, help="cut-off for pass/fail (recall@k)")
        parser.add_argument(
            "--legs",
            help="rows, in order: bm25,dense,rrf (need --docs), vector,keyword,hybrid,rerank "
            "(default: the baselines when --docs is given, then vector,keyword,hybrid,rerank)",
        )
        parser.add_argument(
            "--docs",
            type=Path,
            help="the folder of pages the cases were written for: adds the baseline rows",
        )
        parser.add_argument("--output", type=Path, help="one JSON line per case (last row)")
        parser.add_argument("--json", type=Path, help="the whole report as JSON")
        parser.add_argument("--audience", choices=["public", "internal"], default="public")
        parser.add_argument(
            "--threshold",
            type=float,
            default=None,
            help="no-answer threshold (default: settings.NO_ANSWER_THRESHOLD)",
        )

    def handle(
        self,
        *args: object,
        cases: Path,
        k: int,
        legs: str | None,
        docs: Path | None,
        output: Path | None,
        audience: str,
        threshold: float | None,
        **options: object,
    ) -> None:
        default_rows = [*BASELINES, *ROWS] if docs else list(ROWS)
        chosen = legs or ",".join(default_rows)
        rows = [name.strip() for name in chosen.split(",") if name.strip()]
        unknown = [name for name in rows if name not in ROWS and name not in BASELINES]
        if unknown or not rows:
            raise CommandError(f"--legs takes {', '.join([*BASELINES, *ROWS])} (got {legs!r})")
        if not docs and any(name in BASELINES for name in rows):
            raise CommandError("the bm25, dense and rrf rows need --docs FOLDER (the pages)")
        k = int(k)
        if not 1 <= k <= 50:
            raise CommandError("--k must be between 1 and 50")
        try:
            loaded = cases_load(cases)
        except (OSError, EvalCaseError) as exc:
            raise CommandError(str(exc)) from exc
        if threshold is None:
            threshold = settings.NO_ANSWER_THRESHOLD
        # The command runs on the server: "internal" reads as the system, "public" as a customer.
        reader = SYSTEM if audience == "internal" else AnonymousUser()
        audiences = audiences_for(reader)

        baselines = self._baselines(Path(docs), rows) if docs else None
        summaries: list[Summary] = []
        last: list[CaseOutcome] = []
        last_retrieved: list[CaseOutcome] = []  # a baseline has no confidence to calibrate
        for name in rows:
            outcomes = []
            for case in tqdm(loaded, desc=name, unit="q", file=sys.stderr, leave=False):
                if name in BASELINES:
                    assert baselines is not None
                    hits = baselines.hits(name, case.question)
                    outcomes.append(outcome_from_hits(case, hits, k=k))
                else:
                    outcomes.append(
                        self._retrieve(case, name, audiences=audiences, k=k, threshold=threshold)
                    )
            summary = summarise(name, outcomes, k=k)
            if name in BASELINES:
                summary.no_answer_accuracy = None
            else:
                last_retrieved = outcomes
            summaries.append(summary)
            last = outcomes

        self._print(summaries, k=k, threshold=threshold)
        self._print_kinds(summaries)
        self._print_calibration(last_retrieved)
        if output:
            with Path(output).open("w", encoding="utf-8") as handle:
                for outcome in last:
                    handle.write(json.dumps(outcome.as_json()) + "\n")
        if options["json"]:
            report = {
                "cases": str(cases),
                "docs": str(docs) if docs else None,
                "k": k,
                "rows": [summary.as_json() for summary in summaries],
            }
            Path(str(options["json"])).write_text(
                json.dumps(report, indent=2) + "\n", encoding="utf-8"
            )

    def _retrieve(
        self, case: EvalCase, name: str, *, audiences: tuple[str, ...], k: int, threshold: float
    ) -> CaseOutcome:
        try:
            result = retrieve(
                question=case.question,
                audiences=audiences,
                limit=RETRIEVE_DEPTH,
                candidates=RETRIEVE_DEPTH,
                legs=ROWS[name].legs,
                rerank=ROWS[name].rerank,
            )
        except RetrievalUnavailable as exc:
            raise CommandError(str(exc)) from exc
        return outcome_score(case, result, k=k, no_answer_threshold=threshold)

    def _baselines(self, docs: Path, rows: list[str]) -> SectionBaselines:
        if not docs.is_dir():
            raise CommandError(f"--docs {docs} is not a folder")
        folder = pages_read(docs)
        if not folder.pages:
            raise CommandError(f"--docs {docs} holds no Markdown pages the parser accepts")
        if folder.rejected:
            self.stderr.write(f"{len(folder.rejected)} files refused by the parser (left out)")
        embedder = self._baseline_embedder() if {"dense", "rrf"} & set(rows) else None
        try:
            return SectionBaselines(
                folder.sections, embedder=embedder, cache=VectorCache(VECTOR_CACHE), progress=True
            )
        except BaselineUnavailable as exc:
            raise CommandError(str(exc)) from exc

    def _baseline_embedder(self) -> Embedder:
        """The active model's embedder; the baselines need no index, nor even a migrated
        database, so without one they use the configured model."""
        try:
            return active_embedder()
        except DatabaseError as exc:
            embedder = get_embedder()
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            self.stderr.write(
                f"no embedding model in the database ({reason}); using {embedder.key}"
            )
            return embedder

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
        section_keys = [key for key in METRIC_KEYS if key != "recall@10"]
        self.stdout.write(
            f"{summaries[0].answerable} answerable and {summaries[0].unanswerable} unanswerable "
            f"cases ({summaries[0].section_cases} with section labels); no-answer threshold "
            f"{threshold}"
        )
        self.stdout.write(f"{'':<10}{'page':<{8 * len(keys)}}{'section':<{8 * len(section_keys)}}")
        self.stdout.write(
            f"{'row':<10}"
            + "".join(f"{_SHORT.get(key, key):>8}" for key in keys)
            + "".join(f"{_SHORT[key]:>8}" for key in section_keys)
            + f"{'no-answer':>11}"
        )
        for summary in summaries:
            no_answer = (
                "-" if summary.no_answer_accuracy is None else f"{summary.no_answer_accuracy:.3f}"
            )
            sections = (
                "".join(f"{summary.section_metrics[key]:>8.3f}" for key in section_keys)
                if summary.section_cases
                else "".join(f"{'-':>8}" for _ in section_keys)
            )
            self.stdout.write(
                f"{summary.name:<10}"
                + "".join(f"{summary.metrics[key]:>8.3f}" for key in keys)
                + sections
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

    def _print_kinds(self, summaries: list[Summary]) -> None:
        """Per kind of case, nDCG@10 and R@1 at page and section level: the kinds disagree."""
        kinds = sorted({kind for summary in summaries for kind in summary.by_kind})
        if len(kinds) < 2:
            return
        self.stdout.write("\nper kind: page R@1, page nDCG@10, section R@1, section nDCG@10")
        self.stdout.write(f"{'row':<10}" + "".join(f"{kind:>34}" for kind in kinds))
        for summary in summaries:
            cells = []
            for kind in kinds:
                part = summary.by_kind.get(kind)
                if part is None:
                    cells.append(f"{'-':>34}")
                    continue
                page, section = part.metrics, part.section_metrics
                sections = (
                    f"{section['recall@1']:>8.3f}{section['ndcg@10']:>8.3f}"
                    if part.section_cases
                    else f"{'-':>8}{'-':>8}"
                )
                cells.append(f"{page['recall@1']:>10.3f}{page['ndcg@10']:>8.3f}{sections}")
            self.stdout.write(f"{summary.name:<10}" + "".join(cells))
