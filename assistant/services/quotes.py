"""Which sentences of each cited passage the answer drew on, as offsets into the page's body.

A citation names a chunk (up to eight blocks); the document page should highlight the sentences
the answer rests on, under the name of the section they are in. Each stretch of the answer that
cites ``[n]`` (a quote, or a sentence of a written answer) is matched to the sentence of source
n's passage that shares most of its content words. A quote matches its own sentence exactly;
a written sentence matches the one it paraphrases, or none when no sentence is close enough,
and then the whole passage stays the highlight, as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from assistant.citations import MARKER, marker_numbers
from assistant.injection import shown_heading_path
from assistant.terms import terms
from kb.chunking.sentences import split_sentences
from kb.chunking.spans import BodySentence, body_sentences
from kb.models import Document

# Dice overlap of content words at which a sentence of the passage counts as the one cited. A
# quote scores 1 (its Markdown links and emphasis aside); a paraphrase of one sentence ~0.5-0.8.
QUOTE_MATCH_FLOOR = 0.5
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_QUOTES = "\u201c\u201d\"'"
# A table row as the offline answerer quotes it: "Plan: Growth; Monthly billing: $99 / month".
_TABLE_ROW_CLAIM = re.compile(r"^[^;:]+: [^;]+(?:; [^;:]+: [^;]+)+$")


def citations_with_quotes(
    *, answer: str, citations: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The citations, each with ``quotes`` (``[[start, end], ...]`` in its document's body,
    possibly empty) and ``quote_section`` (the heading path of the first, or "")."""
    if not citations:
        return []
    bodies = dict(
        Document.objects.filter(pk__in={c["document_id"] for c in citations}).values_list(
            "pk", "body"
        )
    )
    claims = claims_by_source(answer)
    enriched = []
    for citation in citations:
        body = bodies.get(citation["document_id"], "")
        sentences = body_sentences(body, start=citation["char_start"], end=citation["char_end"])
        chosen = [
            sentence
            for claim in claims.get(citation["number"], [])
            if (sentence := best_sentence(claim, sentences)) is not None
        ]
        spans = sorted({(sentence.start, sentence.end) for sentence in chosen})
        first = min(chosen, key=lambda sentence: sentence.start) if chosen else None
        enriched.append(
            {
                **citation,
                "quotes": [list(span) for span in spans],
                # A label shown under the answer, so through the rules a source's name goes
                # through ("" lets the page fall back to the source's own section).
                "quote_section": shown_heading_path(first.section) if first else "",
            }
        )
    return enriched


def claims_by_source(answer: str) -> dict[int, list[str]]:
    """Source number -> the stretches of the answer that cite it, markers removed.

    A stretch is a sentence of a paragraph; a marker standing alone after a sentence's end
    (``“…refundable.” [1]``) belongs to that sentence."""
    claims: dict[int, list[str]] = {}
    for paragraph in re.split(r"\n\s*\n", answer):
        stretches: list[str] = []
        for sentence in split_sentences(paragraph, abbreviations=True):
            if stretches and not re.search(r"\w", MARKER.sub("", sentence)):
                stretches[-1] += f" {sentence}"
            else:
                stretches.append(sentence)
        # A quote of several sentences ("“Rule. Its number.” [1]") cites as a whole: the
        # sentences before a marker that carry none of their own belong to its claim.
        waiting: list[str] = []
        for stretch in stretches:
            numbers: list[int] = []
            for match in MARKER.finditer(stretch):
                numbers += marker_numbers(match.group("body")) or []
            text = MARKER.sub("", stretch).strip().strip(_QUOTES).strip()
            if not numbers:
                waiting.append(text)
                continue
            for number in dict.fromkeys(numbers):
                claims.setdefault(number, []).extend([*waiting, text])
            waiting = []
    return claims


def best_sentence(claim: str, sentences: Sequence[BodySentence]) -> BodySentence | None:
    """The sentence sharing most content words with ``claim`` (Dice), if it reaches the floor.

    A quoted table row is matched by its cells alone: its column names are the header row's
    words, and with them the header ties with (and, first, beats) the row that was quoted."""
    claim_terms = _claim_terms(claim)
    best: BodySentence | None = None
    best_score = 0.0
    for sentence in sentences:
        sentence_terms = terms(_LINK_TARGET.sub("]", sentence.text))
        if not claim_terms or not sentence_terms:
            continue
        score = 2 * len(claim_terms & sentence_terms) / (len(claim_terms) + len(sentence_terms))
        if score >= QUOTE_MATCH_FLOOR and score > best_score:  # ties: the first sentence
            best, best_score = sentence, score
    return best


def _claim_terms(claim: str) -> set[str]:
    if not _TABLE_ROW_CLAIM.match(claim):
        return terms(claim)
    cells = [part.split(": ", 1)[1] for part in claim.split("; ")]
    return terms(" ".join(cells))
