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
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.core.cache import cache
from django.db import transaction

from assistant.facts import MATCHES, facts_stated
from assistant.generators import Generator
from assistant.models import Message
from assistant.services.answer_cache import answer_cache_key
from assistant.services.answering import answer_complete
from assistant.services.conversations import conversation_start, message_ask
from kb.chunking.sentences import split_sentences
from kb.models import Chunk, Document
from kb.selectors.index_version import index_version
from search.services import PUBLIC_AUDIENCES

HALVES = ("calibration", "report")
EVAL_CLIENT = "answer-eval"  # the conversations' client hash (rolled back with them)
_QUOTED_LABEL = re.compile(r"^\s*From our help center:\s*")
_WORD = re.compile(r"\w+")
_CITATION = re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]")
# a code unit's block, under the file name its page gives it, right after its quoted lead-in
_QUOTED_BLOCK = re.compile(r"(?:`[^`\n]+`\n\n)?(`{3,}|~{3,})[^\n]*\n.*?\n\1(?=\n|$)", re.DOTALL)
# a table unit's rows, right after its quoted lead-in
_QUOTED_TABLE = re.compile(r"\|[^\n]*\|(?:\n\|[^\n]*\|)*")


class AnswerEvalError(ValueError):
    """A case file that cannot be read as answer-eval cases; the message names the line."""


@dataclass(frozen=True)
class AnswerCase:
    id: str
    half: str
    question: str
    facts: tuple[str, ...]  # empty: the help center does not answer it
    match: str = "all"  # "all": every fact must be stated; "any": one of them is an answer
    path: str | None = None  # the page, and the section of it, that states the facts
    section: str | None = None

    @property
    def answerable(self) -> bool:
        return bool(self.facts)

    @property
    def fact(self) -> str | None:
        """The facts as one line, for reports."""
        return f" {self.match.upper()} ".join(self.facts) if self.facts else None

    def stated_in(self, text: str) -> bool:
        """Whether ``text`` states this case's facts (all of them, or any, as the case says)."""
        return facts_stated(text, self.facts, match=self.match)


@dataclass(frozen=True)
class AnswerOutcome:
    case: AnswerCase
    refused: bool
    states_fact: bool  # the answer text states the facts
    cites_fact: bool  # a citation's passage states the facts
    answer: str
    cited: list[str]  # "path > section" of each citation, in order
    status: str
    lead_states_fact: bool = False  # the answer's first sentence (first quote) states them
    cites_section: bool = False  # a citation is the answering section
    # the answer's first citation (its lead's: sources are numbered in order of first citation)
    # is the answering section
    lead_cites_section: bool = False
    section_seen: bool = False  # the answering section was among the passages the answerer read
    words: int = 0  # words of the answer, citations and the quote label left out

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.case.id,
            "half": self.case.half,
            "question": self.case.question,
            "fact": self.case.fact,
            "section": f"{self.case.path} > {self.case.section}" if self.case.path else None,
            "status": self.status,
            "refused": self.refused,
            "states_fact": self.states_fact,
            "lead_states_fact": self.lead_states_fact,
            "cites_fact": self.cites_fact,
            "cites_section": self.cites_section,
            "lead_cites_section": self.lead_cites_section,
            "section_seen": self.section_seen,
            "words": self.words,
            "cited": self.cited,
            "answer": self.answer,
        }


@dataclass
class HalfSummary:
    """The shares the eval reports, for one half (or ``overall``)."""

    half: str
    answerable: int = 0
    unanswerable: int = 0
    stated: int = 0  # answerable answers that state the facts
    stated_and_cited: int = 0  # of those, the ones citing a passage that states them
    lead_stated: int = 0  # answerable answers whose first sentence states the facts
    answered: int = 0  # answerable questions not refused
    section_cited: int = 0  # of those, the ones citing the answering section
    lead_section_cited: int = 0  # of those, the ones whose lead cites it
    section_seen: int = 0  # answerable questions whose answering section the answerer read
    unanswerable_refused: int = 0
    answerable_refused: int = 0
    words: list[int] = field(default_factory=list)  # per answer not refused
    sources: list[int] = field(default_factory=list)  # citations per answer not refused
    failed: list[AnswerOutcome] = field(default_factory=list)

    @property
    def states_fact(self) -> float:
        return self.stated / self.answerable if self.answerable else 0.0

    @property
    def lead_states_fact(self) -> float:
        return self.lead_stated / self.answerable if self.answerable else 0.0

    @property
    def cites_fact(self) -> float:
        return self.stated_and_cited / self.stated if self.stated else 0.0

    @property
    def cites_section(self) -> float:
        return self.section_cited / self.answered if self.answered else 0.0

    @property
    def lead_cites_section(self) -> float:
        """How often the lead of an answer cites the answering section: with ``lead_states_fact``
        it tells a lead from the wrong section from a wrong lead of the right one."""
        return self.lead_section_cited / self.answered if self.answered else 0.0

    @property
    def sees_section(self) -> float:
        return self.section_seen / self.answerable if self.answerable else 0.0

    @property
    def refused_unanswerable(self) -> float:
        return self.unanswerable_refused / self.unanswerable if self.unanswerable else 0.0

    @property
    def refused_answerable(self) -> float:
        return self.answerable_refused / self.answerable if self.answerable else 0.0

    @property
    def median_words(self) -> float:
        return float(statistics.median(self.words)) if self.words else 0.0

    @property
    def mean_sources(self) -> float:
        return statistics.fmean(self.sources) if self.sources else 0.0

    def add(self, outcome: AnswerOutcome) -> None:
        if not outcome.refused:
            self.words.append(outcome.words)
            self.sources.append(len(outcome.cited))
        if outcome.case.answerable:
            self.answerable += 1
            self.stated += outcome.states_fact
            self.stated_and_cited += outcome.states_fact and outcome.cites_fact
            self.lead_stated += outcome.lead_states_fact
            self.section_seen += outcome.section_seen
            self.answerable_refused += outcome.refused
            if not outcome.refused:
                self.answered += 1
                self.section_cited += outcome.cites_section
                self.lead_section_cited += outcome.lead_cites_section
            if not (outcome.states_fact and outcome.cites_fact):
                self.failed.append(outcome)
        else:
            self.unanswerable += 1
            self.unanswerable_refused += outcome.refused
            if not outcome.refused:
                self.failed.append(outcome)

    def as_json(self) -> dict[str, Any]:
        return {
            "half": self.half,
            "answerable": self.answerable,
            "unanswerable": self.unanswerable,
            "states_fact": round(self.states_fact, 3),
            "lead_states_fact": round(self.lead_states_fact, 3),
            "cites_fact": round(self.cites_fact, 3),
            "cites_section": round(self.cites_section, 3),
            "lead_cites_section": round(self.lead_cites_section, 3),
            "sees_section": round(self.sees_section, 3),
            "refused_unanswerable": round(self.refused_unanswerable, 3),
            "refused_answerable": round(self.refused_answerable, 3),
            "median_words": self.median_words,
            "mean_sources": round(self.mean_sources, 2),
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
    """One case: ``"fact": "30 days"`` (the sample's form) or ``"facts": [...]`` with
    ``"match": "all" | "any"`` (the external sets'); null for a question not answered."""
    for name in ("id", "half", "question"):
        if not isinstance(row.get(name), str) or not row[name].strip():
            raise AnswerEvalError(f"{where}: {name!r} must be a non-empty string")
    if row["half"] not in HALVES:
        raise AnswerEvalError(f"{where}: 'half' must be one of {', '.join(HALVES)}")
    if "facts" in row and "fact" in row:
        raise AnswerEvalError(f"{where}: give 'fact' or 'facts', not both")
    facts = row.get("facts") if "facts" in row else row.get("fact")
    if isinstance(facts, str):
        facts = [facts]
    if facts is not None and (
        not isinstance(facts, list)
        or not facts
        or not all(isinstance(fact, str) and fact.strip() for fact in facts)
    ):
        raise AnswerEvalError(
            f"{where}: 'fact' must be a non-empty string, 'facts' a list of them, or null"
        )
    match = row.get("match") or "all"
    if match not in MATCHES:
        raise AnswerEvalError(f"{where}: 'match' must be one of {', '.join(MATCHES)}")
    if facts is not None:
        for name in ("path", "section"):
            if not isinstance(row.get(name), str) or (name == "path" and not row[name].strip()):
                raise AnswerEvalError(f"{where}: an answerable case needs {name!r}")
    return AnswerCase(
        id=row["id"],
        half=row["half"],
        question=row["question"],
        facts=tuple(facts or ()),
        match=match,
        path=row.get("path"),
        section=row.get("section"),
    )


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
                outcomes.append(_outcome(case, message, bodies=bodies, quoted=generator.quoted))
                transaction.set_rollback(True)
        finally:
            cache.delete(key)
    return outcomes


def _outcome(
    case: AnswerCase, message: Message, *, bodies: dict[str, str], quoted: bool
) -> AnswerOutcome:
    refused = message.status == Message.Status.NOT_IN_DOCS
    cited_passages = [
        bodies.get(citation["path"], "")[citation["char_start"] : citation["char_end"]]
        for citation in message.citations
    ]
    snapshot = message.snapshot or {}
    hits = snapshot.get("hits") or []  # the retrieval evidence is stored at the top level
    seen = hits[: snapshot.get("prompt_sources") or len(hits)]
    sections = _chunk_sections(
        [hit["chunk_id"] for hit in seen] + [c["chunk_id"] for c in message.citations]
    )
    wanted = (case.path, case.section)
    text = "" if refused else message.answer
    cited_sections = [sections.get(c["chunk_id"]) for c in message.citations]
    return AnswerOutcome(
        case=case,
        refused=refused,
        states_fact=case.stated_in(text),
        cites_fact=any(case.stated_in(passage) for passage in cited_passages),
        answer=message.answer,
        cited=[f"{c['path']} > {c['section']}" for c in message.citations],
        status=message.status,
        lead_states_fact=case.stated_in(lead_sentence(text, quoted=quoted)),
        cites_section=case.answerable and wanted in cited_sections,
        lead_cites_section=case.answerable and cited_sections[:1] == [wanted],
        section_seen=case.answerable and any(sections.get(h["chunk_id"]) == wanted for h in seen),
        words=len(_WORD.findall(_CITATION.sub("", _QUOTED_LABEL.sub("", text)))),
    )


def _chunk_sections(chunk_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
    """Chunk id -> (document path, heading path): what a case's ``path`` and ``section`` name."""
    rows = Chunk.objects.filter(id__in=set(chunk_ids)).values_list(
        "id", "document__path", "heading_path"
    )
    return {chunk_id: (path, heading_path) for chunk_id, path, heading_path in rows}


def lead_sentence(answer: str, *, quoted: bool) -> str:
    """What a reader takes in first: the first quote of a quoting answer (one sentence, list
    item, table row, procedure, or code block or table with the sentence that introduces it:
    the unit the answerer chose, as its replay in `answer_tuning` scores it), else the first
    sentence of the answer."""
    text = _QUOTED_LABEL.sub("", answer).strip()
    first, _, rest = text.partition("\n\n")
    if quoted:
        block = _QUOTED_BLOCK.match(rest) or _QUOTED_TABLE.match(rest)
        return f"{first}\n\n{block.group()}" if block else first
    sentences = split_sentences(first, abbreviations=True)
    return sentences[0] if sentences else first


def answer_eval_summarise(outcomes: Sequence[AnswerOutcome]) -> list[HalfSummary]:
    """One summary per half, then ``overall`` (both halves together)."""
    summaries = {half: HalfSummary(half=half) for half in (*HALVES, "overall")}
    for outcome in outcomes:
        summaries[outcome.case.half].add(outcome)
        summaries["overall"].add(outcome)
    return list(summaries.values())
