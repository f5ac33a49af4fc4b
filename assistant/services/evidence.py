"""What an answer rests on: the sources it cites, as shown, and the retrieval behind it, as
stored with the message for admin, content gaps and audits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assistant.generators import Source
from search.results import RetrievalResult


def cited_sources(*, sources: Sequence[Source], cited: Sequence[int]) -> list[dict[str, Any]]:
    """The sources the answer cites, by number, as stored and shown.

    A source is marked ``older`` when another cited source from a different document was
    updated later: the generator was told to prefer the later page when they disagree, and the
    reader should see which page is the older one. (Whether the two really disagree is the
    generator's call; the notice only states the dates.)"""
    wanted = set(cited)
    shown = sorted((s for s in sources if s.number in wanted), key=lambda s: s.number)
    entries = []
    for source in shown:
        newer = [
            other
            for other in shown
            if other.document_id != source.document_id
            and other.updated_on is not None
            and source.updated_on is not None
            and other.updated_on > source.updated_on
        ]
        newest = max(newer, key=lambda other: other.updated_on) if newer else None
        entries.append(
            {
                "number": source.number,
                "chunk_id": source.chunk_id,
                "document_id": source.document_id,
                "path": source.path,
                "title": source.title,
                "section": source.section,
                "char_start": source.char_start,
                "char_end": source.char_end,
                "updated_on": source.updated_on.isoformat() if source.updated_on else None,
                "older": newest is not None,
                "newer_number": newest.number if newest else None,
            }
        )
    return entries


def retrieval_snapshot(result: RetrievalResult) -> dict[str, Any]:
    """What retrieval found and how, kept with the message: the answer's evidence."""
    return {
        **result.evidence(),
        "hits": [{**hit.evidence(), "section": hit.section} for hit in result.hits],
    }
