"""Whether the help center answers a question at all, decided before any generator runs.

Two signals, because one similarity alone refused only a quarter of the unanswerable eval
questions while answering the rest:

- retrieval's ``confidence``: the best passage's similarity to the question (or its rerank
  score), already lowered when the question names something no visible page mentions;
- whether the best passage says anything the question asks about: the share of the question's
  content words it holds. A passage that shares *none* of them ("Who is on the billing on-call
  rota?" → a page about team roles) is only an answer when it is very close in meaning. Words
  more than half the pages mention (the company's name, "billing" in a billing help center) do
  not count as shared: "How many people work at Acme?" → "Acme has five roles" shares only
  the name every page holds. That cut is where Robertson and Sparck Jones's inverse document
  frequency stops being positive, not a tuned constant.

Refused: confidence below ``settings.NO_ANSWER_THRESHOLD``, or the best passage shares no content
word with the question (common words aside) and its confidence is below
``settings.NO_ANSWER_UNSUPPORTED_THRESHOLD``.
Both thresholds were chosen on the calibration half of corpus/answer-eval.jsonl (the report
half is what docs/answers.md quotes); the margin to the next page was tried as a further
signal and added nothing there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from assistant.terms import STOPWORDS, WORD, coverage, terms
from kb.selectors.access import PUBLIC_AUDIENCES
from search.results import RetrievalResult
from search.services import words_common_to_most_pages


@dataclass(frozen=True)
class NoAnswerDecision:
    refuse: bool
    reason: str | None  # why it was refused, for the snapshot and content gaps
    confidence: float | None
    question_coverage: float  # share of the question's content words in the best passage
    common_words: tuple[str, ...] = ()  # the question's words most pages mention, not counted

    def as_json(self) -> dict[str, Any]:
        return {
            "refuse": self.refuse,
            "reason": self.reason,
            "question_coverage": round(self.question_coverage, 3),
            "common_words": list(self.common_words),
            "threshold": settings.NO_ANSWER_THRESHOLD,
            "unsupported_threshold": settings.NO_ANSWER_UNSUPPORTED_THRESHOLD,
        }


def no_answer_decide(
    *, query: str, result: RetrievalResult, audiences: Sequence[str] = PUBLIC_AUDIENCES
) -> NoAnswerDecision:
    """``query`` is what was searched (a follow-up with the question it follows); ``audiences``
    are the asker's, whose visible pages tell which words are common."""
    confidence = result.confidence
    best = result.hits[0] if result.hits else None
    passage = [f"{best.title} {best.heading_path} {best.text}"] if best else []
    wanted = terms(query)
    covered = coverage(wanted, passage)
    common: set[str] = set()
    reason = None
    if confidence is None:
        reason = "nothing retrieved to judge by"
    elif confidence < settings.NO_ANSWER_THRESHOLD:
        reason = "below threshold"
    elif confidence < settings.NO_ANSWER_UNSUPPORTED_THRESHOLD:
        if covered > 0:
            # Only now does it matter which shared words are common: one bounded lookup.
            common = _common_words(query, wanted & terms(passage[0]), audiences)
            covered = coverage(wanted - {term for word in common for term in terms(word)}, passage)
        if covered == 0:
            reason = (
                "the best passage shares no word with the question"
                if not common
                else "the best passage shares only words most pages use"
            )
    return NoAnswerDecision(
        refuse=reason is not None,
        reason=reason,
        confidence=confidence,
        question_coverage=covered,
        common_words=tuple(sorted(common)),
    )


def _common_words(query: str, shared: set[str], audiences: Sequence[str]) -> set[str]:
    """The question's words behind the ``shared`` terms that most visible pages mention."""
    words = sorted({word for word in WORD.findall(query.lower()) if word not in STOPWORDS})
    candidates = [word for word in words if terms(word) & shared]
    return words_common_to_most_pages(words=candidates, audiences=audiences)
