"""Whether the help center answers a question at all, decided before any generator runs.

Two signals, because one similarity alone refused only a quarter of the unanswerable eval
questions while answering the rest:

- retrieval's ``confidence``: the best passage's similarity to the question (or its rerank
  score), already lowered when the question names something no visible page mentions;
- whether the best passage says anything the question asks about: the share of the question's
  content words it holds. A passage that shares *none* of them ("Who is on the billing on-call
  rota?" → a page about team roles) is only an answer when it is very close in meaning.

Refused: confidence below ``settings.NO_ANSWER_THRESHOLD``, or the best passage shares no content
word with the question and its confidence is below ``settings.NO_ANSWER_UNSUPPORTED_THRESHOLD``.
Both constants were chosen on the calibration half of corpus/answer-eval.jsonl (the report
half is what docs/answers.md quotes); the margin to the next page was tried as a third signal
and added nothing there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from assistant.terms import coverage, terms
from search.results import RetrievalResult


@dataclass(frozen=True)
class NoAnswerDecision:
    refuse: bool
    reason: str | None  # why it was refused, for the snapshot and content gaps
    confidence: float | None
    question_coverage: float  # share of the question's content words in the best passage

    def as_json(self) -> dict[str, Any]:
        return {
            "refuse": self.refuse,
            "reason": self.reason,
            "question_coverage": round(self.question_coverage, 3),
            "threshold": settings.NO_ANSWER_THRESHOLD,
            "unsupported_threshold": settings.NO_ANSWER_UNSUPPORTED_THRESHOLD,
        }


def no_answer_decide(*, query: str, result: RetrievalResult) -> NoAnswerDecision:
    """``query`` is what was searched (a follow-up with the question it follows)."""
    confidence = result.confidence
    best = result.hits[0] if result.hits else None
    covered = (
        coverage(terms(query), [f"{best.title} {best.heading_path} {best.text}"]) if best else 0.0
    )
    reason = None
    if confidence is None:
        reason = "nothing retrieved to judge by"
    elif confidence < settings.NO_ANSWER_THRESHOLD:
        reason = "below threshold"
    elif covered == 0 and confidence < settings.NO_ANSWER_UNSUPPORTED_THRESHOLD:
        reason = "the best passage shares no word with the question"
    return NoAnswerDecision(
        refuse=reason is not None,
        reason=reason,
        confidence=confidence,
        question_coverage=covered,
    )
