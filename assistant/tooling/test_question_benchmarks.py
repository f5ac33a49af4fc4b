"""What the test questions that guard an edit cost per save: the sample help center's answer-eval
cases become test questions on the pages that answer them, then each page is edited, indexed,
and its questions answered (``test_questions_run``, the task's body), timed per save."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from celery import current_app

from kb.actors import SYSTEM
from kb.models import Document
from kb.services import document_save
from kb.test_questions.models import TestQuestionRun
from kb.test_questions.services import MAX_QUESTIONS_PER_DOCUMENT, TestQuestionEdit
from kb.test_questions.services import test_questions_save as questions_save
from kb.tooling.benchmarking import BenchmarkError, percentiles


@dataclass(frozen=True)
class SaveTiming:
    path: str
    questions: int
    ms: float  # answering every question of the page after its edit was indexed
    flagged: int
    flags: tuple[str, ...] = ()  # "question: reason" of each flagged run


def guarded_pages(cases_path: Path) -> dict[str, list[TestQuestionEdit]]:
    """The answerable cases of an answer-eval file, as test questions of the page they name."""
    pages: dict[str, list[TestQuestionEdit]] = defaultdict(list)
    for line in cases_path.read_text().splitlines():
        if not line.strip():
            continue
        case = json.loads(line)
        facts = case.get("facts") or ([case["fact"]] if case.get("fact") else [])
        if facts and len(pages[case["path"]]) < MAX_QUESTIONS_PER_DOCUMENT:
            pages[case["path"]].append(
                TestQuestionEdit(
                    question=case["question"], facts=facts, match=case.get("match") or "all"
                )
            )
    return dict(pages)


def test_question_save_timings(
    pages: dict[str, list[TestQuestionEdit]],
    *,
    progress: Callable[[str], None] = lambda line: None,
) -> list[SaveTiming]:
    """Attach the questions (their first runs are the baselines), then edit each page once (a
    sentence added at its end, which no question asks about) and save it. Celery runs eagerly
    here, so each save goes the real way in this process: indexing, ``document_indexed``, the
    receiver, the task answering the page's questions; their answering time is what the stored
    runs took."""
    documents = Document.objects.in_bulk(list(pages), field_name="path")
    timings = []
    eager = current_app.conf.task_always_eager
    current_app.conf.task_always_eager = True  # no message left in the broker for a later run
    try:
        for done, (path, edits) in enumerate(pages.items(), start=1):
            questions_save(document=documents[path], actor=SYSTEM, edits=edits)
            progress(f"  first runs (the baselines): {done}/{len(pages)} pages")
        for done, path in enumerate(pages, start=1):
            document = Document.objects.get(pk=documents[path].pk)
            document.body += "\n\nThis page was reviewed by the support team.\n"
            last = TestQuestionRun.objects.order_by("-id").values_list("id", flat=True).first()
            document_save(document=document, actor=SYSTEM)
            runs = list(
                TestQuestionRun.objects.filter(
                    document=document, id__gt=last or 0, trigger=TestQuestionRun.Trigger.INDEXED
                )
            )
            if len(runs) != len(edits := pages[path]):
                raise BenchmarkError(f"{path}: {len(runs)} runs after its save, for {len(edits)}")
            timings.append(
                SaveTiming(
                    path=path,
                    questions=len(runs),
                    ms=float(sum(run.ms for run in runs)),
                    flagged=sum(bool(run.flags) for run in runs),
                    flags=tuple(
                        f"{run.question}: {'; '.join(run.flags)} (answered: {run.answer[:200]!r})"
                        for run in runs
                        if run.flags
                    ),
                )
            )
            progress(f"  saved and answered: {done}/{len(pages)} pages")
    finally:
        current_app.conf.task_always_eager = eager
    return timings


def timing_summary(timings: list[SaveTiming]) -> dict[str, float]:
    per_save = percentiles([timing.ms for timing in timings])
    per_question = percentiles(
        [timing.ms / timing.questions for timing in timings if timing.questions]
    )
    return {
        "saves": len(timings),
        "questions": sum(timing.questions for timing in timings),
        "flagged": sum(timing.flagged for timing in timings),
        "save_p50_ms": per_save[50],
        "save_p95_ms": per_save[95],
        "question_p50_ms": per_question[50],
        "question_p95_ms": per_question[95],
    }
