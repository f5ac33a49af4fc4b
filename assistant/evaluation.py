"""The answer eval: does an answer state the fact a correct answer must state, does its citation
point to a passage that states it, and is a question the help center cannot answer refused?

Cases are JSON lines (``corpus/answer-eval.jsonl``)::

    {"id": "refund-annual-window", "half": "calibration", "question": "…",
     "fact": "60 days", "path": "policies/refunds.md", "section": "Refund Policy > Annual plans"}
    {"id": "none-quickbooks", "half": "report", "question": "…", "fact": null}

``fact`` is null for a question the help center does not answer. ``half`` is the fixed split:
the no-answer rule's constants are chosen on the ``calibration`` half only, and the figures
that count are the ``report`` half's. Every question is answered by the real pipeline
(``answer_complete``: follow-up search, no-answer decision, generator, citation check), in a
transaction that is rolled back, with its answer-cache entry deleted before and after, so the
eval leaves nothing behind and never reads an old answer.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.core.cache import cache
from django.db import transaction

from assistant.generators import Generator
from assistant.models import Message
from assistant.services.answer_cache import answer_cache_key
from assistant.services.answering import answer_complete
from assistant.services.conversations import conversation_start, message_ask
from kb.models import Document
from kb.selectors import index_version
from search.services import PUBLIC_AUDIENCES

HALVES = ("calibration", "report")
EVAL_CLIENT = "answer-eval"  # the conversations' client hash (rolled back with them)
_MARKUP = re.compile(r"\*\*|__|`")
_DASHES = re.compile(r"[\u2010-\u2015\u2212]")


class AnswerEvalError(ValueError):
    """A case file that cannot be read as answer-eval cases; the message names the line."""


@dataclass(frozen=True)
class AnswerCase:
    id: str
    half: str
    question: str
    fact: str | None  # None: the help center does not answer it
    path: str | None = None  # the page, and the section of it, that states the fact
    section: str | None = None

    @property
    def answerable(self) -> bool:
        return self.fact is not None


@dataclass(frozen=True)
class AnswerOutcome:
    case: AnswerCase
    refused: bool
    states_fact: bool  # the answer text states the fact
    cites_fact: bool  # a citation's passage states the fact
    answer: str
    cited: list[str]  # "path > section" of each citation, in order
    status: str

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.case.id,
            "half": self.case.half,
            "question": self.case.question,
            "fact": self.case.fact,
            "status": self.status,
            "refused": self.refused,
            "states_fact": self.states_fact,
            "cites_fact": self.cites_fact,
            "cited": self.cited,
            "answer": self.answer,
        }


@dataclass
class HalfSummary:
    """The four shares the eval reports, for one half."""

    half: str
    answerable: int = 0
    unanswerable: int = 0
    stated: int = 0  # answerable answers that state the fact
    stated_and_cited: int = 0  # of those, the ones citing a passage that states it
    unanswerable_refused: int = 0
    answerable_refused: int = 0
    failed: list[AnswerOutcome] = field(default_factory=list)

    @property
    def states_fact(self) -> float:
        return self.stated / self.answerable if self.answerable else 0.0

    @property
    def cites_fact(self) -> float:
        return self.stated_and_cited / self.stated if self.stated else 0.0

    @property
    def refused_unanswerable(self) -> float:
        return self.unanswerable_refused / self.unanswerable if self.unanswerable else 0.0

    @property
    def refused_answerable(self) -> float:
        return self.answerable_refused / self.answerable if self.answerable else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "half": self.half,
            "answerable": self.answerable,
            "unanswerable": self.unanswerable,
            "states_fact": round(self.states_fact, 3),
            "cites_fact": round(self.cites_fact, 3),
            "refused_unanswerable": round(self.refused_unanswerable, 3),
            "refused_answerable": round(self.refused_answerable, 3),
        }


def answer_cases_load(path: Path) -> list[AnswerCase]:
    """The cases of a JSONL file; ``AnswerEvalError`` names the first bad line."""
    cases: list[AnswerCase] = []
    seen: set[str] = set()
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise AnswerEvalError(f"{where}: not JSON ({exc.msg})") from exc
            if not isinstance(row, dict):
                raise AnswerEvalError(f"{where}: expected a JSON object")
            case = _case(row, where=where)
            if case.id in seen:
                raise AnswerEvalError(f"{where}: the id {case.id!r} is used twice")
            seen.add(case.id)
            cases.append(case)
    if not cases:
        raise AnswerEvalError(f"{path}: no cases")
    return cases


def _case(row: dict[str, Any], *, where: str) -> AnswerCase:
    for name in ("id", "half", "question"):
        if not isinstance(row.get(name), str) or not row[name].strip():
            raise AnswerEvalError(f"{where}: {name!r} must be a non-empty string")
    if row["half"] not in HALVES:
        raise AnswerEvalError(f"{where}: 'half' must be one of {', '.join(HALVES)}")
    fact = row.get("fact")
    if fact is not None:
        if not isinstance(fact, str) or not fact.strip():
            raise AnswerEvalError(f"{where}: 'fact' must be a non-empty string or null")
        for name in ("path", "section"):
            if not isinstance(row.get(name), str) or not row[name].strip():
                raise AnswerEvalError(f"{where}: an answerable case needs {name!r}")
    return AnswerCase(
        id=row["id"],
        half=row["half"],
        question=row["question"],
        fact=fact,
        path=row.get("path"),
        section=row.get("section"),
    )


def fact_text(text: str) -> str:
    """``text`` as facts are compared: NFKC, casefolded, no emphasis or code marks, one kind of
    dash, single spaces ("5\u201310 **business days**" == "5-10 business days")."""
    text = unicodedata.normalize("NFKC", text)
    text = _DASHES.sub("-", _MARKUP.sub("", text)).replace("\u2019", "'")
    return " ".join(text.casefold().split())


def states(text: str, fact: str) -> bool:
    return fact_text(fact) in fact_text(text)


def answer_eval_run(
    cases: Sequence[AnswerCase],
    *,
    generator: Generator,
    progress: Callable[[Iterable[AnswerCase]], Iterable[AnswerCase]] = lambda cases: cases,
) -> list[AnswerOutcome]:
    """Answer every case as a first question, as an anonymous customer would ask it."""
    bodies = dict(Document.objects.values_list("path", "body"))
    outcomes = []
    for case in progress(cases):
        key = answer_cache_key(
            question=case.question,
            audiences=PUBLIC_AUDIENCES,
            generator=generator.name,
            version=index_version(),
        )
        cache.delete(key)
        try:
            with transaction.atomic():
                message = message_ask(
                    conversation=conversation_start(client_hash=EVAL_CLIENT), question=case.question
                )
                message = answer_complete(message=message, generator=generator)
                outcomes.append(_outcome(case, message, bodies=bodies))
                transaction.set_rollback(True)
        finally:
            cache.delete(key)
    return outcomes


def _outcome(case: AnswerCase, message: Message, *, bodies: dict[str, str]) -> AnswerOutcome:
    refused = message.status == Message.Status.NOT_IN_DOCS
    fact = case.fact
    cited_passages = [
        bodies.get(citation["path"], "")[citation["char_start"] : citation["char_end"]]
        for citation in message.citations
    ]
    return AnswerOutcome(
        case=case,
        refused=refused,
        states_fact=bool(fact) and not refused and states(message.answer, fact or ""),
        cites_fact=bool(fact) and any(states(passage, fact or "") for passage in cited_passages),
        answer=message.answer,
        cited=[f"{c['path']} > {c['section']}" for c in message.citations],
        status=message.status,
    )


def answer_eval_summarise(outcomes: Sequence[AnswerOutcome]) -> list[HalfSummary]:
    summaries = {half: HalfSummary(half=half) for half in HALVES}
    for outcome in outcomes:
        summary = summaries[outcome.case.half]
        if outcome.case.answerable:
            summary.answerable += 1
            summary.stated += outcome.states_fact
            summary.stated_and_cited += outcome.states_fact and outcome.cites_fact
            summary.answerable_refused += outcome.refused
            if not (outcome.states_fact and outcome.cites_fact):
                summary.failed.append(outcome)
        else:
            summary.unanswerable += 1
            summary.unanswerable_refused += outcome.refused
            if not outcome.refused:
                summary.failed.append(outcome)
    return [summaries[half] for half in HALVES]
