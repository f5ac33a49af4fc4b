"""The offline answerer: quotes the sentences of the retrieved passages that best answer the
question, each with its [n] citation, under a label that says they are quotes.

It writes nothing of its own beyond the label, so it cannot state what the help center does not
say. Sentences are scored against the question by meaning (the local embedder, one batched call)
and by shared terms (which catch identifiers and numbers an embedding blurs). Lines that
`assistant.injection` flagged as instruction-like are never quoted.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import structlog

from assistant.contact import support_contact_url
from assistant.generators.base import (
    GenerationDone,
    GenerationEvent,
    Prompt,
    Source,
    TextDelta,
)
from assistant.injection import is_flagged
from assistant.prompting import NOT_COVERED_SENTENCE
from assistant.terms import overlap as _overlap
from assistant.terms import terms
from kb.chunking.sentences import split_sentences
from kb.embedders import Embedder, get_embedder
from kb.errors import one_line
from kb.selectors import passage_lines

log = structlog.get_logger("groundwork.assistant")

QUOTED_LABEL = "From our help center:"
MAX_QUOTES = 3
MAX_CANDIDATES = 60  # sentences embedded per answer
MAX_SOURCES = 5  # the passages read for sentences (calibration half: 4 → 5 stated 82% → 85%)
# Scores are cosine similarity plus term-overlap bonuses; calibrated on corpus/eval.jsonl, the
# quote margin and sources read on the calibration half of corpus/answer-eval.jsonl.
TERM_WEIGHT = 0.35
SECTION_TERM_WEIGHT = 0.1
QUANTITY_WEIGHT = 0.1  # for a sentence holding a number when the question asks for an amount
# A sentence most of whose words are link labels ("See Plans, Pricing and Limits.") is a pointer
# to another page, not a statement.
MAX_LINK_WORD_SHARE = 0.5
RELEVANCE_FLOOR = 0.3  # below this the best sentence is not about the question
EXTRA_QUOTE_MARGIN = 0.12  # further quotes must score this close to the best one
DUPLICATE_SIMILARITY = 0.9
MIN_SENTENCE_WORDS = 4  # words with letters in them
MIN_ROW_WORDS = 2

TABLE_ROW_MARK = "\x00row\x00"  # never in Markdown text: keeps a row out of sentence splitting
VERSION_WORDS = re.compile(
    r"\(.*?\)|\b(?:19|20)\d\d\b|\b(?:legacy|old|older|archived?|previous|deprecated)\b|[^\w\s]"
)
# Fences, headings, list items and table delimiters are recognised by kb (``passage_lines``),
# as the chunker saw them; these only take the markup off a line that is quoted.
LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s*")
TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
EMPHASIS = re.compile(r"\*\*|__")
HTML_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
WORDY = re.compile(r"\b[^\W\d_]{2,}")  # a word with letters in it
# A question asking for an amount, a duration or a limit is answered by a sentence holding a
# number ("How long is the free trial?" → "…starts with a 14-day free trial.").
QUANTITY_QUESTION = re.compile(
    r"\bhow (?:long|many|much|often|fast|soon|far|old|big|large)\b|\bwhen\b|\bwhat time\b"
    r"|\b(?:limit|maximum|minimum|max|min|cost|price|fee|fees|charge)\b",
    re.IGNORECASE,
)
NUMBER = re.compile(r"\d")
LINK_WORDS = re.compile(r"\[([^\]]+)\]\([^)]*\)")


@dataclass(frozen=True)
class _Sentence:
    source: Source
    position: int  # order within its source
    text: str  # as quoted: Markdown links and emphasis removed


class ExtractiveGenerator:
    """Quotes one to three sentences of the sources; says so when none is about the question."""

    name = "extractive"
    quoted = True

    def __init__(self, *, embedder: Embedder | None = None) -> None:
        self._embedder = embedder

    def stream(self, *, question: str, prompt: Prompt) -> Iterator[GenerationEvent]:
        started = time.monotonic()
        query = prompt.search_query or question  # a follow-up is scored with what it follows
        sentences = _shortlist(
            query,
            [
                sentence
                for source in prompt.sources[:MAX_SOURCES]
                for sentence in _sentences(source)
            ],
        )
        chosen, older = self._choose(
            query=query, sentences=sentences, newer=_newer_versions(prompt.sources)
        )
        log.info(
            "extractive_answered",
            candidates=len(sentences),
            quoted=len(chosen),
            sources=sorted({sentence.source.number for sentence in chosen}),
            older_pages=[source.number for source, _ in older],
            ms=round((time.monotonic() - started) * 1000),
        )
        if not chosen:
            yield TextDelta(not_covered_answer())
            yield GenerationDone.for_stop_reason("end_turn")
            return
        yield TextDelta(f"{QUOTED_LABEL}\n\n")
        pieces = [f"“{sentence.text}” [{sentence.source.number}]" for sentence in chosen]
        pieces.extend(_older_page_note(old, new) for old, new in older)
        for index, piece in enumerate(pieces):
            yield TextDelta(piece if index == len(pieces) - 1 else f"{piece}\n\n")
        yield GenerationDone.for_stop_reason("end_turn")

    def _choose(
        self, *, query: str, sentences: list[_Sentence], newer: dict[int, Source]
    ) -> tuple[list[_Sentence], list[tuple[Source, Source]]]:
        """The sentences to quote, and the older pages (with their newer versions) that were
        passed over although they spoke to the question."""
        if not sentences:
            return [], []
        scores, vectors = self.scores(query=query, sentences=sentences)
        # Without vectors only shared terms count: ask for half the question's terms.
        floor = RELEVANCE_FLOOR if vectors is not None else TERM_WEIGHT / 2
        order = [int(index) for index in np.argsort(-scores, kind="stable")]
        # An older version of a page among the sources is never quoted: the newer page wins.
        current = [index for index in order if sentences[index].source.number not in newer]
        if not current or scores[current[0]] < floor:
            return [], []
        best = scores[current[0]]
        picked = [current[0]]
        for index in current[1:]:
            if len(picked) == MAX_QUOTES or scores[index] < best - EXTRA_QUOTE_MARGIN:
                break
            if vectors is not None and any(
                float(vectors[index] @ vectors[other]) > DUPLICATE_SIMILARITY for other in picked
            ):
                continue
            if any(sentences[index].text == sentences[other].text for other in picked):
                continue  # overlapping chunks repeat their boundary blocks
            picked.append(index)
        # The best sentence opens the answer: it is the one most likely to hold the fact; the
        # others follow in the order their pages give them, so they read as its context.
        rest = sorted(
            picked[1:],
            key=lambda index: (sentences[index].source.number, sentences[index].position),
        )
        chosen = [sentences[index] for index in [picked[0], *rest]]
        # One note per older page, citing the newer version's passage that was quoted, if any.
        quoted_by_path = {sentence.source.path: sentence.source for sentence in chosen}
        older: dict[str, tuple[Source, Source]] = {}
        for index in order:
            source = sentences[index].source
            if source.number in newer and scores[index] >= best - EXTRA_QUOTE_MARGIN:
                latest = newer[source.number]
                latest = quoted_by_path.get(latest.path, latest)
                older.setdefault(source.path, (source, latest))
        return chosen, list(older.values())

    def scores(
        self, *, query: str, sentences: Sequence[_Sentence]
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Each sentence's score for ``query`` and its unit vector (None without an embedder)."""
        query_terms = terms(query)
        overlap = np.array([_overlap(query_terms, terms(s.text)) for s in sentences])
        section_overlap = np.array(
            [_overlap(query_terms, terms(s.source.section)) for s in sentences]
        )
        quantity = np.array(
            [
                bool(QUANTITY_QUESTION.search(query)) and bool(NUMBER.search(s.text))
                for s in sentences
            ],
            dtype=np.float32,
        )
        similarity, vectors = self._similarities(query, sentences)
        score = (
            similarity
            + TERM_WEIGHT * overlap
            + SECTION_TERM_WEIGHT * section_overlap
            + QUANTITY_WEIGHT * quantity
        )
        return score, vectors

    def _similarities(
        self, query: str, sentences: Sequence[_Sentence]
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Cosine similarity of each sentence (labelled with its section) to the query.

        One batched call with the query first: the local model encodes queries and passages the
        same way. Without an embedder the term overlap alone decides, which still quotes the
        sentence that names what was asked; the answer must not fail over a ranking aid.
        """
        texts = [query, *(f"{s.source.section}: {s.text}" for s in sentences)]
        try:
            embedder = self._embedder or get_embedder()
            vectors = np.asarray(embedder.embed_documents(texts), dtype=np.float32)
        except Exception as exc:  # the embedder is an aid here, not a dependency
            log.warning("extractive_embedder_failed", error=one_line(exc))
            return np.zeros(len(sentences), dtype=np.float32), None
        return vectors[1:] @ vectors[0], vectors[1:]


def _shortlist(query: str, sentences: list[_Sentence]) -> list[_Sentence]:
    """At most MAX_CANDIDATES sentences, those sharing most terms with the query, in order: one
    over-long passage must not make the embedder call slow (about 4 ms a sentence on 2 cores)."""
    if len(sentences) <= MAX_CANDIDATES:
        return sentences
    query_terms = terms(query)
    ranked = sorted(
        range(len(sentences)),
        key=lambda index: -_overlap(query_terms, terms(sentences[index].text)),
    )
    return [sentences[index] for index in sorted(ranked[:MAX_CANDIDATES])]


def _newer_versions(sources: Sequence[Source]) -> dict[int, Source]:
    """Source number -> a newer source that is another version of the same page.

    Versions are recognised by title: "Refund Policy (2023)" and "Refund Policy" name one page
    once years, parentheses and words like "legacy" are set aside.
    """
    newer: dict[int, Source] = {}
    for source in sources:
        for other in sources:
            if (
                other.path != source.path
                and source.updated_on is not None
                and other.updated_on is not None
                and other.updated_on > source.updated_on
                and _page_name(other.title) == _page_name(source.title)
            ):
                latest = newer.get(source.number)
                if latest is None or str(latest.updated_on) < str(other.updated_on):
                    newer[source.number] = other
    return newer


def _page_name(title: str) -> str:
    return " ".join(VERSION_WORDS.sub(" ", title.casefold()).split())


def _older_page_note(older: Source, newer: Source) -> str:
    return (
        f"Note: the older page “{older.title}” (updated {older.updated_on}) also covers this "
        f"[{older.number}]; where they differ, the newer “{newer.title}” "
        f"(updated {newer.updated_on}) applies [{newer.number}]."
    )


def not_covered_answer() -> str:
    return (
        f"{NOT_COVERED_SENTENCE} I couldn't find an answer to your question in our help center. "
        f"You can contact our support team and they will help: {support_contact_url()}"
    )


def _sentences(source: Source) -> list[_Sentence]:
    units = _units(source.text)
    found: list[_Sentence] = []
    for unit in units:
        # A table row is one statement, whatever punctuation its cells hold; its column names
        # make a short one ("Currency: GBP; Minimum: £0.30") complete.
        is_row = unit.startswith(TABLE_ROW_MARK)
        pieces = (
            [unit[len(TABLE_ROW_MARK) :]] if is_row else split_sentences(unit, abbreviations=True)
        )
        minimum = MIN_ROW_WORDS if is_row else MIN_SENTENCE_WORDS
        for piece in pieces:
            if _mostly_link_labels(piece):
                continue
            text = _clean(piece)
            # A lead-in ("…request a refund on 10 April:") promises what it does not say, and a
            # formula or a bare link reads as nothing on its own.
            if text.endswith(":") or len(WORDY.findall(text)) < minimum:
                continue
            found.append(_Sentence(source=source, position=len(found), text=text))
    return found


def _units(text: str) -> list[str]:
    """Paragraphs, list items and table rows of a passage; code, headings and flagged lines out.

    A list item is read with the sentence that introduces it ("If you've lost both your device
    and your recovery codes: contact support…"): alone, either half says little.
    """
    units: list[str] = []
    paragraph: list[str] = []
    table_header: list[str] | None = None
    lead_in: str | None = None  # the "...:" sentence before the current list
    in_list = False

    def flush() -> None:
        if paragraph:
            units.append(" ".join(paragraph))
            paragraph.clear()

    def start_list() -> str | None:
        """The lead-in of a list that starts now, taken off the paragraph it ended."""
        if (
            in_list
            or not units
            or not units[-1].endswith(":")
            or units[-1].startswith(TABLE_ROW_MARK)
        ):
            return lead_in if in_list else None
        *before, last = split_sentences(units.pop(), abbreviations=True)
        if before:
            units.append(" ".join(before))
        return last

    for passage_line in passage_lines(text):
        raw = passage_line.text
        if passage_line.in_code:  # code is an example, not a statement
            flush()
            table_header, in_list, lead_in = None, False, None
            continue
        line = passage_line.content
        if not line or is_flagged(line):
            flush()
            table_header = None
            continue
        if passage_line.is_heading:
            flush()
            table_header, in_list, lead_in = None, False, None
            continue
        if TABLE_ROW.match(line):
            flush()
            in_list, lead_in = False, None
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if passage_line.is_table_delimiter:
                continue
            if table_header is None:
                table_header = cells
            else:
                units.append(_table_row(table_header, cells))
            continue
        table_header = None
        if passage_line.is_list_item:
            flush()
            lead_in = start_list()
            in_list = True
            item = LIST_MARKER.sub("", line, count=1)
            paragraph.append(f"{lead_in} {item}" if lead_in else item)
            continue
        if in_list and not paragraph and raw[:1] not in (" ", "\t"):
            in_list, lead_in = False, None  # an unindented paragraph after a blank line
        paragraph.append(line)
    flush()
    return units


def _mostly_link_labels(text: str) -> bool:
    labels = sum(len(WORDY.findall(label)) for label in LINK_WORDS.findall(text))
    return labels > 0 and labels >= MAX_LINK_WORD_SHARE * len(WORDY.findall(_clean(text)))


def _table_row(header: Sequence[str], cells: Sequence[str]) -> str:
    """A row as one statement naming its columns: "Charge type: Annual plan charge; Window: …"."""
    described = [
        f"{name}: {cell}" if name else cell
        for name, cell in zip(header, cells, strict=False)
        if cell and cell not in {"—", "-"}
    ]
    return TABLE_ROW_MARK + "; ".join(described)


def _clean(text: str) -> str:
    text = IMAGE.sub("", text)
    text = LINK.sub(r"\1", text)
    text = HTML_BREAK.sub(" ", text)
    text = EMPHASIS.sub("", text)
    return " ".join(text.split())
