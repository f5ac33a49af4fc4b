"""What an answer rests on: the sources it cites, as shown, and the retrieval behind it, as
stored with the message for admin, content gaps and audits."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from assistant.citations import CitationCheck
from assistant.generators import GenerationDone, Source
from search.results import Hit, RetrievalResult


def cited_sources(
    *,
    sources: Sequence[Source],
    cited: Sequence[int],
    contradicting: Collection[frozenset[int]] = (),
) -> list[dict[str, Any]]:
    """The sources the answer cites, as stored and shown: ``cited`` holds their prompt numbers
    in order of first citation, and each is listed under its position there (``number``, 1..n,
    what ``citations_renumber`` rewrites the markers to); ``source_number`` keeps the prompt's.

    A source is marked ``older`` when a cited source of another document was updated later and
    the two passages contradict each other: ``contradicting`` holds those pairs of chunk ids
    (``kb.attention.contradictions.contradicting_chunks``, the rule the policy steward's list
    uses). A later page that states no other value of the same thing is no reason to warn: on
    the sample, Account Deletion was marked older than Cancellation, which it does not deny."""
    by_number = {source.number: source for source in sources}
    shown = [by_number[number] for number in dict.fromkeys(cited) if number in by_number]
    position = {source.number: index for index, source in enumerate(shown, start=1)}
    entries = []
    for source in shown:
        newer = [
            (other.updated_on, other)
            for other in shown
            if other.document_id != source.document_id
            and frozenset({source.chunk_id, other.chunk_id}) in contradicting
            and other.updated_on is not None
            and source.updated_on is not None
            and other.updated_on > source.updated_on
        ]
        newest = max(newer, key=lambda dated: dated[0])[1] if newer else None
        entries.append(
            {
                "number": position[source.number],
                "source_number": source.number,
                "chunk_id": source.chunk_id,
                "document_id": source.document_id,
                "path": source.path,
                "title": source.title,
                "section": source.section,
                "char_start": source.char_start,
                "char_end": source.char_end,
                "updated_on": source.updated_on.isoformat() if source.updated_on else None,
                "older": newest is not None,
                "newer_number": position[newest.number] if newest else None,
            }
        )
    return entries


def retrieval_snapshot(
    result: RetrievalResult, *, hits: Sequence[Hit] | None = None
) -> dict[str, Any]:
    """What retrieval found and how, kept with the message: the answer's evidence. ``hits``:
    the passages offered to the answer step when they are more than the result's hits (the
    page sections read beside them, ``Hit.page_section``)."""
    return {
        **result.evidence(),
        "hits": [
            {**hit.evidence(), "section": hit.section}
            for hit in (result.hits if hits is None else hits)
        ],
    }


@dataclass(frozen=True)
class GenerationEvidence:
    """How generation ended and what the citation check changed."""

    stop_reason: str  # "missing" when the generator never said why it stopped
    truncated: bool
    refused: bool
    removed_citations: list[str]
    cited: list[int]
    flag: str | None

    @classmethod
    def of(cls, *, check: CitationCheck, done: GenerationDone | None) -> GenerationEvidence:
        return cls(
            stop_reason=done.stop_reason if done else "missing",
            truncated=bool(done and done.truncated),
            refused=bool(done and done.refused),
            removed_citations=check.removed,
            cited=check.cited,
            flag=check.flag,
        )


@dataclass
class AnswerSnapshot:
    """Everything an answer rests on, filled in as the answer is made and stored with the
    message (``as_json``) for the admin, content gaps and audits. A field left None is a step
    the answer never reached, and is left out of the stored form."""

    retrieval_query: str
    audiences: list[str]
    history_turns: int
    threshold: float
    cached: bool = False
    retrieval: dict[str, Any] | None = None  # ``retrieval_snapshot`` of what was retrieved
    follow_up: dict[str, Any] | None = None  # the two searches' evidence, for a leaning question
    no_answer: dict[str, Any] | None = None  # the no-answer decision's signals
    language: dict[str, Any] | None = None  # ``LanguageSupport.as_json`` of the question
    prompt_sources: int | None = None  # the hits that fit the prompt
    neutralised: list[str] | None = None  # injection attempts neutralised in those sources
    source_numbers: dict[int, int] | None = None  # chunk id -> its [n] in the prompt
    generation: GenerationEvidence | None = None
    not_in_docs_reason: str | None = None
    flags: list[str] = field(default_factory=list)  # why a shown answer is not confident
    failed_stage: str | None = None  # "generator", "retrieval" or "generation"
    failure: str | None = None  # its one-line reason
    cached_from: str | None = None  # the public id of the message whose answer was reused
    original_timings_ms: dict[str, float] | None = None  # that message's timings
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def confidence(self) -> float | None:
        return self.retrieval["confidence"] if self.retrieval else None

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "retrieval_query": self.retrieval_query,
            "audiences": self.audiences,
            "history_turns": self.history_turns,
            "threshold": self.threshold,
            "cached": self.cached,
        }
        if self.retrieval is not None:
            data.update(self.retrieval)
            if self.source_numbers is not None:
                data["hits"] = [
                    {**hit, "source_number": self.source_numbers.get(hit["chunk_id"])}
                    for hit in self.retrieval["hits"]
                ]
        reached = {
            "follow_up": self.follow_up,
            "no_answer": self.no_answer,
            "language": self.language,
            "prompt_sources": self.prompt_sources,
            "neutralised": self.neutralised,
            "generation": dataclasses.asdict(self.generation) if self.generation else None,
            "not_in_docs_reason": self.not_in_docs_reason,
            "flags": self.flags or None,
            "failed_stage": self.failed_stage,
            "failure": self.failure,
            "cached_from": self.cached_from,
            "original_timings_ms": self.original_timings_ms,
        }
        data.update({name: value for name, value in reached.items() if value is not None})
        data["timings_ms"] = self.timings_ms
        return data
