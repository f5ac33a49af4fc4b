"""The answering contract: what a generator is given (a `Prompt` of numbered `Source`s) and what it
streams back (`TextDelta`s, then one `GenerationDone`), behind one small `Generator` protocol.

The chat page and every provider module code against these names; change them only together.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from assistant.injection import SourceLabels
    from search.results import Hit


@dataclass(frozen=True)
class Source:
    """One retrieved passage as shown to the generator and cited on the page."""

    number: int  # 1-based; the answer cites it as [number]
    chunk_id: int
    document_id: int
    path: str  # e.g. "policies/refunds.md" (the citation id)
    title: str  # as it may be shown (``assistant.injection.source_labels``)
    section: str  # heading path, or the title when the chunk has none; as it may be shown
    updated_on: datetime.date | None
    text: str  # the passage as sent to the model (comments stripped, injections neutralised)
    char_start: int  # offsets of the chunk in the document body (for highlighting)
    char_end: int
    # Another section of a retrieved page, read beside the hits (``Hit.page_section``): no
    # retrieval leg ranked it, so it is trusted as a lesser part of its page's rank.
    page_section: bool = False
    ordinal: int = -1  # the chunk's place among its page's chunks (-1: not known)

    @classmethod
    def from_hit(
        cls, hit: Hit, *, number: int, text: str | None = None, labels: SourceLabels | None = None
    ) -> Source:
        """The hit as source ``number``; without ``text`` the hit's text is neutralised here, and
        without ``labels`` its title and heading path, so a Source never carries a passage or a
        name that was not made safe to show a customer or a model."""
        from assistant.injection import neutralise, source_labels

        if number < 1:
            raise ValueError(f"source numbers start at 1 (got {number})")
        if text is None:
            text = neutralise(hit.text).text
        if labels is None:
            labels = source_labels(title=hit.title, heading_path=hit.heading_path, path=hit.path)
        return cls(
            number=number,
            chunk_id=hit.chunk_id,
            document_id=hit.document_id,
            path=hit.path,
            title=labels.title,
            section=labels.section,
            updated_on=hit.updated_on,
            text=text,
            char_start=hit.char_start,
            char_end=hit.char_end,
            page_section=hit.page_section,
            ordinal=hit.ordinal,
        )


@dataclass(frozen=True)
class Turn:
    """An earlier exchange of the same conversation, oldest first."""

    question: str
    answer: str


@dataclass(frozen=True)
class Prompt:
    system: str  # rules
    messages: list[dict[str, str]]  # Messages API format: user/assistant alternate, last is "user"
    sources: list[Source]  # only the sources that fit the budget, numbered 1..n, best first
    nonce: str  # per-request random token used in the source delimiters
    neutralised: list[str]  # injection attempts neutralised in the sources (for logs/snapshot)
    # The question as it was searched: a follow-up with the question it follows, else None.
    search_query: str | None = None
    # The question's index lexemes and their IDF (``RetrievalResult.term_idfs``): how rare each
    # of its words is in the help center; empty when retrieval had no keyword leg.
    term_idfs: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class GenerationDone:
    stop_reason: str  # "end_turn", "max_tokens", "refusal", "stop_sequence", ...
    truncated: bool  # stop_reason == "max_tokens"
    refused: bool  # stop_reason == "refusal"

    @classmethod
    def for_stop_reason(cls, stop_reason: str) -> GenerationDone:
        return cls(
            stop_reason=stop_reason,
            truncated=stop_reason == "max_tokens",
            refused=stop_reason == "refusal",
        )


GenerationEvent = TextDelta | GenerationDone


class GenerationError(RuntimeError):
    """The generator could not produce an answer (after its retries): a one-line reason
    for people."""


@runtime_checkable
class Generator(Protocol):
    name: str  # e.g. "anthropic/claude-sonnet-4-6" or "extractive"
    quoted: bool  # True when the answer quotes passages instead of writing them (label it so)

    def stream(self, *, question: str, prompt: Prompt) -> Iterator[GenerationEvent]:
        """Yields TextDelta events as text is produced, then exactly one GenerationDone.
        Raises GenerationError."""
        ...
