"""The offline answerer: quotes the units of the retrieved passages that best answer the
question (a sentence, a list item with its lead-in, a table row with its header, a numbered
procedure whole), each with its [n] citation, under a label that says they are quotes.

It writes nothing of its own beyond the label, so it cannot state what the help center does not
say. What to quote is chosen by how well each unit answers this question (`assistant.units`:
meaning, the question's rare words, its headings, the question's kind), not by its passage's
rank alone; the best unit leads, and another follows only when it adds what the question asks.
Lines that `assistant.injection` flagged as instruction-like are never quoted.
"""

from __future__ import annotations

import collections
import dataclasses
import re
import threading
import time
from collections.abc import Iterator, Sequence

import numpy as np
import structlog

from assistant.contact import support_contact_url
from assistant.facts import fact_text
from assistant.follow_ups import anchor_of
from assistant.generators.base import (
    GenerationDone,
    GenerationEvent,
    Prompt,
    Source,
    TextDelta,
)
from assistant.injection import as_written
from assistant.languages import ENGLISH, question_language, reads
from assistant.prompting import ANSWER_PASSAGES, NOT_COVERED_SENTENCE
from assistant.units import (
    BLOCK_KINDS,
    CONTINUED_UNITS,
    FEATURES,
    STEP_KINDS,
    WORDY,
    QuestionShape,
    Taken,
    Unit,
    UnitWeights,
    brought_units,
    continued,
    continuing_unit,
    following_unit,
    last_heading,
    next_unit,
    preceding_sentence,
    question_as_read,
    quote_runs,
    quoted_with,
    read_to_paragraph_end,
    read_under,
    run_text,
    shortlist,
    taken_by,
    unit_features,
    units_of,
    unquoted,
    weighted,
)
from kb.chunking.markup import CODE_SPAN
from kb.embedders import Embedder, get_embedder
from kb.errors import one_line
from search.services import SECTION_PAGES, SECTIONS_PER_PAGE

log = structlog.get_logger("groundwork.assistant")

QUOTED_LABEL = "From our help center:"
# Quotes per answer; units that the page has one after the other are one quote (``quote_runs``).
MAX_QUOTES = 3
# Units embedded per answer, those holding most of the question's words (about 4 ms each on an
# idle 2-core machine). Fewer lose the answers to paraphrased questions, whose answering unit
# shares few of their words: facts stated on the sample 84.6% at 20 units, 89.2% at 30, 90.8% at
# 60; on Plausible 34.8% at 30, 40.4% at 60.
MAX_CANDIDATES = 60
# The passages read for units (those retrieved and the page sections read beside them,
# search.services.with_page_sections), and how close to the best a further quote must score:
# chosen with the weights by leave-one-set-out over the answer eval sets (docs/answers.md).
MAX_SOURCES = ANSWER_PASSAGES + SECTION_PAGES * SECTIONS_PER_PAGE
RELEVANCE_FLOOR = 0.3  # below this the best unit is not about the question
EXTRA_QUOTE_MARGIN = 0.18
OLDER_PAGE_MARGIN = 0.12  # cosine: an older version this close to the lead is noted
DUPLICATE_SIMILARITY = 0.9
# Words outside its code spans a heading may have and still be the name of what its section
# describes ("`kill_timeout` option", "The `deploy` section").
NAMING_HEADING_WORDS = 2
# A heading written without code marks that is one identifier (reST headings hold none): a
# snake_case or CONSTANT name (not `_emphasis_`), a dotted one, a camelCase one, a kebab-case
# one in small letters (Argo CD's components and notification templates, `argocd-repo-server`,
# `app-sync-failed`, Hugo's shortcodes: the 21 such headings of the staged sets are all names),
# an HTTP header (`X-…`, or three Title-Case parts: a two-part "Non-Goals" is a hyphenated word)
IDENTIFIER_HEADING = re.compile(
    r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[A-Za-z]\w*(?:\.\w+)+|[a-z]+(?:[A-Z][a-z0-9]*)+"
    r"|[a-z][a-z0-9]*(?:-[a-z0-9]+)+"
    r"|X-[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*|[A-Z][a-z0-9]*(?:-[A-Z][a-z0-9]*){2,}"
)
VERSION_WORDS = re.compile(
    r"\(.*?\)|\b(?:19|20)\d\d\b|\b(?:legacy|old|older|archived?|previous|deprecated)\b|[^\w\s]"
)


class ExtractiveGenerator:
    """Quotes one to three units of the sources; says so when none is about the question."""

    name = "extractive"
    quoted = True

    def __init__(
        self,
        *,
        embedder: Embedder | None = None,
        weights: UnitWeights | None = None,
        follow_up_rules: bool = True,
    ) -> None:
        # False reads a follow-up without its two rules (``FollowedQuestion``, ``_as_asked``'s
        # drift): the lab's comparison (``assistant.tooling.tuning.follow_ups``)
        self._embedder = embedder
        self._weights = weights
        self._follow_up_rules = follow_up_rules

    def stream(self, *, question: str, prompt: Prompt) -> Iterator[GenerationEvent]:
        started = time.monotonic()
        # A follow-up is answered by its own words, read with what it follows.
        context = prompt.search_query if prompt.search_query not in (None, question) else None
        follows = (
            FollowedQuestion.of(prompt, question=question)
            if context and self._follow_up_rules
            else None
        )
        every = units_of(prompt.sources[:MAX_SOURCES])
        features = unit_features(
            question=question, units=every, idfs=prompt.term_idfs, context=context
        )
        # One long passage must not make the embedder call slow: the units holding most of
        # the question's words are the ones embedded.
        kept = shortlist(features, limit=MAX_CANDIDATES)
        units = [every[index] for index in kept]
        chosen, older = self._choose(
            question=question,
            # read against every unit's words, as the features read it, not only the kept ones
            read=question_as_read(question, every),
            context=context,
            follows=follows,
            units=units,
            features=features[kept],
            newer=_newer_versions(prompt.sources),
        )
        log.info(
            "extractive_answered",
            candidates=len(units),
            quoted=len(chosen),
            kinds=[unit.kind for unit in chosen],
            sources=sorted({unit.source.number for unit in chosen}),
            older_pages=[source.number for source, _ in older],
            ms=round((time.monotonic() - started) * 1000),
        )
        if not chosen:
            yield TextDelta(not_covered_answer())
            yield GenerationDone.for_stop_reason("end_turn")
            return
        yield TextDelta(f"{QUOTED_LABEL}\n\n")
        pieces = [_quote(unit) for unit in _named(chosen)]
        pieces.extend(_older_page_note(old, new) for old, new in older)
        for index, piece in enumerate(pieces):
            yield TextDelta(piece if index == len(pieces) - 1 else f"{piece}\n\n")
        yield GenerationDone.for_stop_reason("end_turn")

    def _choose(
        self,
        *,
        question: str,
        read: str,
        context: str | None,
        units: list[Unit],
        features: np.ndarray,
        newer: dict[int, Source],
        follows: FollowedQuestion | None = None,
    ) -> tuple[list[Unit], list[tuple[Source, Source]]]:
        """The units to quote, and the older pages (with their newer versions) that were passed
        over although they spoke to the question (``read``: the question as the embedder is
        given it, `question_as_read`).

        The best unit leads, with the unit after it when both are sentences or items;
        another follows only if it scores close to it, is not a repeat of one quoted and is not
        a unit one of them brings (``brought_units``: it is quoted with that one), while the
        answer holds at most ``MAX_QUOTES`` quotes, those the page has one after the other
        counted once (``quote_runs``). A follow-up (``follows``) does not quote again what the
        answer before it opened with."""
        if not units:
            return [], []
        queries = [read] if context is None else [read, f"{context} {read}"]
        if follows is not None and follows.anchor:
            queries.append(follows.anchor)
        similarities, vectors = self._similarities(
            queries, units, language=question_language(question)
        )
        similarity, drift = _as_asked(similarities)
        scores = similarity + weighted(features, self._weights)
        # Without vectors only shared words count: ask for half their weight.
        weights = self._weights or UnitWeights()
        floor = RELEVANCE_FLOOR if vectors is not None else weights.terms / 2
        order = [int(index) for index in np.argsort(-scores, kind="stable")]
        # An older version of a page among the sources is never quoted: the newer page wins.
        # Without the units' meaning only what retrieval brought is quoted: the page sections
        # read beside it are there for a section the question's meaning points to, and the
        # words alone favour any long one that names the question's terms and a number
        # ("Example: a Growth account … pays $32.00 overage" for "¿Cuánto cuesta el plan
        # Growth?", over the Growth price row).
        current = [
            index
            for index in order
            if units[index].source.number not in newer
            and (vectors is not None or not units[index].source.page_section)
            and not (follows is not None and follows.opened_with(units[index]))
        ]
        if not current:
            return [], []
        # A follow-up's lead answers it, not the question it follows (``_as_asked``); the
        # quotes after it are chosen as for any answer.
        first = max(current, key=lambda index: scores[index] - drift[index])
        if scores[first] < floor:
            return [], []
        best = scores[first]
        picked = [first if vectors is not None else _kind_lead(current, scores, features)]
        # a unit a quote brings (``brought_units``) is quoted with it, not on its own
        bringing = {id(unit) for unit in brought_units(units[picked[0]], units, lead=True)}
        for index in current:
            if index == picked[0]:
                continue
            if scores[index] < best - EXTRA_QUOTE_MARGIN:
                break
            if id(units[index]) in bringing or any(
                _overlaps(units[index], units[other], units) for other in picked
            ):
                continue
            if vectors is not None and any(
                float(vectors[index] @ vectors[other]) > DUPLICATE_SIMILARITY for other in picked
            ):
                continue
            # a unit that the page has right before or after a quote joins it (``quote_runs``):
            # only one that would open a quote of its own past the last place stops the choice
            # (a unit opens one quote at most, so fewer picks than places need no count)
            if len(picked) >= MAX_QUOTES and len(_quoted(units, [*picked, index])) > MAX_QUOTES:
                break
            picked.append(index)
            bringing.update(id(unit) for unit in brought_units(units[index], units))
        steps = _steps_wanted(question, units, current, picked=picked, similarity=similarity)
        if steps is not None:  # the lead and the steps answer the question's two asks
            picked = [picked[0], steps]
        chosen = _quoted(units, picked)
        older = _older_pages(
            chosen=chosen,
            units=[units[index] for index in order],
            similarity=similarity[order],
            lead_similarity=similarity[picked[0]],
            newer=newer,
        )
        return chosen, older

    def _similarities(
        self, queries: Sequence[str], units: Sequence[Unit], *, language: str = ENGLISH
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Cosine similarity of each unit (labelled with its section) to each query, one column
        per query (``_as_asked`` makes them one figure), and the units' vectors.

        One batched call with the queries first: the local model encodes queries and passages
        the same way. Without an embedder, or with one that does not read the question's
        ``language`` (``assistant.languages.reads``), the shared words and the question's kind
        alone decide, which still quotes the unit that names what was asked; the answer
        must not fail over a ranking aid.
        """
        texts = [f"{unit.source.section}: {unit.words_text}" for unit in units]
        try:
            embedder = self._embedder or get_embedder()
            if not reads(embedder, language):
                # An English-only model places a Spanish question nowhere near the English unit
                # that answers it (the Growth price row 0.21, "Growth is our most popular plan."
                # 0.49 to "¿Cuánto cuesta el plan Growth al mes?"): its cosine is no evidence,
                # and the question's words and kind decide, as without an embedder.
                return np.zeros((len(units), len(queries)), dtype=np.float32), None
            asked, found = UNIT_VECTORS.embedded(embedder, queries=queries, texts=texts)
        except Exception as exc:  # the embedder is an aid here, not a dependency
            log.warning("extractive_embedder_failed", error=one_line(exc))
            return np.zeros((len(units), len(queries)), dtype=np.float32), None
        return found @ asked.T, found


def _as_asked(similarities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each unit's closeness to what was asked, from its cosines to the queries of
    ``ExtractiveGenerator._choose``, and how far it drifts to the question a follow-up follows.

    The closeness is the cosine to the question alone; for a follow-up, averaged with the cosine
    to the question read after what it follows, so that neither drowns the other. When the
    earlier question is known (the third query), a unit closer to it alone than to the two read
    together answers the earlier question, not this one: by that difference it is passed over
    for the lead. After "Can I get a refund on a monthly plan?", "what if we had paid for the
    whole year instead?" scored the monthly rules above the annual one only through the question
    it follows ("Later monthly renewals are not refundable.": 0.69 to it, 0.65 to the two
    together, 0.17 to the follow-up alone). The quotes after the lead are not held to it: one
    that also answers the earlier question's ask ("…within 60 days of the annual charge" for
    "How long do I have…") still follows."""
    asked = similarities[:, :2].mean(axis=1)
    if similarities.shape[1] < 3:
        return asked, np.zeros_like(asked)
    joined, earlier = similarities[:, 1], similarities[:, 2]
    return asked, np.maximum(earlier - joined, 0.0)


@dataclasses.dataclass(frozen=True)
class FollowedQuestion:
    """What a follow-up follows: the earlier question it was searched with, and the first quote
    of the answer the customer read last (the prompt's latest assistant turn; spaces made one,
    "" when that answer quoted nothing)."""

    anchor: str | None
    first_quote: str

    @classmethod
    def of(cls, prompt: Prompt, *, question: str) -> FollowedQuestion:
        answers = [
            message["content"] for message in prompt.messages[:-1] if message["role"] == "assistant"
        ]
        return cls(
            anchor=anchor_of(query=prompt.search_query or question, question=question),
            first_quote=_first_quote(answers[-1]) if answers else "",
        )

    def opened_with(self, unit: Unit) -> bool:
        """Whether the answer before opened with ``unit``: its first quote holds it (the lead,
        or the unit quoted after it). A follow-up asks for more than that quote told, so it is
        not quoted again; the other quotes may be: after an answer that quoted the monthly rule
        and then the annual one, "and for annual plans?" is answered with the annual rule
        again, alone."""
        return bool(self.first_quote) and _spaced(unit.text) in self.first_quote


def _first_quote(answer: str) -> str:
    """The first quote of an answer this generator wrote, "" for any other answer."""
    opening = f"{QUOTED_LABEL} “"
    answer = _spaced(answer)
    return answer[len(opening) :].split("”", 1)[0] if answer.startswith(opening) else ""


def _spaced(text: str) -> str:
    return " ".join(text.split())


class _UnitVectors:
    """The vectors of units embedded lately, by the embedder's key (which names its vector
    space) and the text: a help center's popular
    pages are quoted from again and again, and embedding their units is most of an offline
    answer's time (about 4 ms a unit on an idle 2-core machine, up to ``MAX_CANDIDATES`` an
    answer). Least recently used first out, past ``UNIT_VECTORS_KEPT`` (about 15 MB of
    384-dimension vectors); safe across threads."""

    def __init__(self, kept: int) -> None:
        self._kept = kept
        self._vectors: collections.OrderedDict[tuple[str, str], np.ndarray] = (
            collections.OrderedDict()
        )
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._vectors.clear()

    def embedded(
        self, embedder: Embedder, *, queries: Sequence[str], texts: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray]:
        """The queries' vectors and the texts', in one embedder call for the queries and the
        texts not kept (the local model encodes queries and passages the same way)."""
        key = getattr(embedder, "key", type(embedder).__name__)
        with self._lock:
            kept = {text: self._vectors.get((key, text)) for text in texts}
        missing = list(dict.fromkeys(text for text, vector in kept.items() if vector is None))
        vectors = np.asarray(embedder.embed_documents([*queries, *missing]), dtype=np.float32)
        fresh = dict(zip(missing, vectors[len(queries) :], strict=True))
        with self._lock:
            for text, vector in fresh.items():
                self._vectors[(key, text)] = vector
            for text in kept:
                if (key, text) in self._vectors:  # another answer may have pushed it out
                    self._vectors.move_to_end((key, text))
            while len(self._vectors) > self._kept:
                self._vectors.popitem(last=False)
        asked = vectors[: len(queries)]
        found = [fresh[text] if kept[text] is None else kept[text] for text in texts]
        return asked, np.asarray(found, dtype=np.float32).reshape(len(texts), asked.shape[1])


UNIT_VECTORS_KEPT = 10_000
UNIT_VECTORS = _UnitVectors(UNIT_VECTORS_KEPT)


@dataclasses.dataclass(frozen=True)
class _Quote:
    """A quote as the answer shows it (``unit``: the text of the units it quotes, and the
    block it ends with, if any), and the first and the last of the page's units it quotes."""

    unit: Unit
    first: Unit
    last: Unit


def _alone(unit: Unit) -> _Quote:
    return _Quote(unit, first=unit, last=unit)


def _after_sentence_before(unit: Unit, units: Sequence[Unit], taken: Taken) -> _Quote:
    """``unit`` after the sentence before it in its paragraph or item (``preceding_sentence``),
    unless that one is quoted already. First only for a lead that points back to it ("It will
    also destroy it when it's no longer needed…", 46 of 495 leads of the six answer sets); then
    for every lead that does not open its paragraph: replayed over the six sets' dumps, 43 of
    the calibration halves' leads change, and the answers state 4 facts more there and 2 more
    on the report halves, with 4 and 3 more leads stating one, none fewer on any set
    (docs/answers.md, round twenty-three); then for every quote: Fly.io's "Use "Full" or "Full
    (Strict)" SSL mode" before a further quote's ""Flexible" mode can cause redirect loops."
    (round twenty-six)."""
    before = unquoted(preceding_sentence(unit, units), taken)
    if before is None:
        return _alone(unit)
    quoted = dataclasses.replace(unit, text=quoted_with(before.text, unit.text))
    return _Quote(quoted, first=before, last=unit)


def _joined(quote: _Quote, units: Sequence[Unit], taken: Taken, *, lead: bool = False) -> _Quote:
    """``quote`` with the unit after it (``following_unit``), unless that one is in ``taken``
    (the marks of the units quoted already, ``unquoted``, to which its own are then added). A
    help center gives a rule's number or exception in the next sentence or item, whichever
    quote states the rule. Chosen on the five answer sets' calibration halves (the objective
    of ``answer_tuning fit``, replayed, 0.693 → 0.706); on their report halves the answers
    state more facts on three sets (Plausible 29 → 33 of 68, Hugo 5 → 6 of 21, Argo CD 3 → 4
    of 29) and fewer on none, at 4 to 16 more words in the median answer (docs/answers.md).
    The unit after may be the steps or the code block that act on the quote
    (``FOLLOWER_KINDS``): a code block is then shown after the joined text, as after its own
    lead-in. The units after it that go on from it, pointing back, come too
    (``continuing_unit``, ``CONTINUED_UNITS``). The ``lead`` first reads on to the end of its
    paragraph (``paragraph_rest``), and the unit after it is then the one after the paragraph's
    last sentence."""
    unit = quote.unit
    text, last = unit.text, unit
    if lead:
        text, last = read_to_paragraph_end(text, unit, lambda one: next_unit(one, units), taken)
    after = unquoted(following_unit(last, units), taken)
    if after is not None:
        text, last = quoted_with(text, after.text), after
        for _ in range(CONTINUED_UNITS):
            more = unquoted(continuing_unit(last, units), taken)
            if more is None:
                break
            text, last = quoted_with(text, continued(last.text, more.text)), more
    if last is unit:
        return quote
    # a code block or table the unit after brings is shown after the text
    return dataclasses.replace(
        quote, unit=_ending_with(unit, text, last if after is None else after), last=last
    )


def _ending_with(unit: Unit, text: str, block: Unit) -> Unit:
    """``unit`` quoting ``text``, and then ``block``'s code block or table, if it has one: a
    block is quoted after the text, as after its own lead-in."""
    if block.kind not in BLOCK_KINDS:
        return dataclasses.replace(unit, text=text)
    return dataclasses.replace(
        unit,
        text=text,
        kind=block.kind,
        code=block.code,
        language=block.language,
        caption=block.caption,
    )


def _runs_joined(quotes: Sequence[_Quote], units: Sequence[Unit]) -> list[Unit]:
    """The quotes, each run of them that the page has one right after the other quoted as one
    (``quote_runs``), in page order where the first of them stands in the answer, and each
    further quote of a run without the lead-in it shares with the unit before it ("Common
    mistakes: Listening on `127.0.0.1`…; Port mismatch…"). Replayed over the six answer sets'
    dumps, the leads state a fact in 7 to 10 more answers in a hundred on Plausible's and
    Flask's halves and on Fly.io's and Hugo's report halves, and none fewer on any half; the
    joining makes no answer longer (docs/answers.md, round twenty-eight)."""
    spans = [(quote.first, quote.last) for quote in quotes]
    return [
        # the quote the answer had first stands for the run
        _ending_with(
            quotes[min(run)].unit,
            run_text([(quotes[index].unit.text, quotes[index].last.text) for index in run]),
            quotes[run[-1]].unit,
        )
        for run in quote_runs(spans, lambda unit: next_unit(unit, units))
    ]


def _quoted(units: Sequence[Unit], picked: Sequence[int]) -> list[Unit]:
    """The quotes of the ``picked`` units (their places in ``units``, the best first). The best
    unit opens the answer: it is the one most likely to hold the fact; the others follow in the
    order their pages give them, so they read as its context. Each comes after the sentence
    before it in its paragraph and brings the sentence or item after it, the lead's first,
    unless that one is quoted already, the lead after the rest of its paragraph; quotes the
    page has one right after the other are then one quote (``_runs_joined``)."""
    rest = sorted(picked[1:], key=lambda index: (units[index].source.number, units[index].position))
    taken = taken_by(units[index] for index in picked)
    return _runs_joined(
        [
            _joined(
                _after_sentence_before(units[index], units, taken), units, taken, lead=place == 0
            )
            for place, index in enumerate([picked[0], *rest])
        ],
        units,
    )


def _kind_lead(order: Sequence[int], scores: np.ndarray, features: np.ndarray) -> int:
    """The unit to lead with when no embedder gave the units' meaning (``order``: best first):
    the best one holding the kind of amount the question asks for ("how much", "how long"),
    among those close to the best, else the best. Shared words and the passage's rank alone
    cannot tell "Growth is our most popular plan." from the Growth price row for "¿Cuánto cuesta
    el plan Growth?"; the cosine usually does, and without it the question's kind is the
    surest sign of which unit answers."""
    kind = FEATURES.index("quantity")
    best = scores[order[0]]
    for index in order:
        if scores[index] < best - EXTRA_QUOTE_MARGIN:
            break
        if features[index, kind] > 0:
            return index
    return order[0]


def _steps_wanted(
    question: str,
    units: Sequence[Unit],
    order: Sequence[int],
    *,
    picked: Sequence[int],
    similarity: np.ndarray,
) -> int | None:
    """The steps a how-to question still lacks: when it asks how to do something and no unit
    picked is a procedure (or a code block), the best-scoring one (``order``) that is at least
    as close in meaning to the question as the lead. "how do i cancel my subscription, is there
    a notice period?" is led by the sentence that decides the second ask ("...no notice
    period."), while the steps, which only share the question's common words, answer the first."""
    if not QuestionShape.of(question).how_to:
        return None
    if any(units[index].kind in STEP_KINDS for index in picked):
        return None
    lead = similarity[picked[0]]
    for index in order:
        if (
            units[index].kind in STEP_KINDS
            and similarity[index] >= lead
            and not _overlaps(units[index], units[picked[0]], units)  # the lead is one step
        ):
            return index
    return None


def _older_pages(
    *,
    chosen: Sequence[Unit],
    units: Sequence[Unit],
    similarity: np.ndarray,
    lead_similarity: np.float32,
    newer: dict[int, Source],
) -> list[tuple[Source, Source]]:
    """One note per older page passed over, citing the newer version's passage that was quoted,
    if any. An older page is noted when it speaks to the question about as closely in meaning as
    the quote that leads (its own words and rank are what made it lose); ``units`` come best
    first, with their ``similarity``."""
    quoted_by_path = {unit.source.path: unit.source for unit in chosen}
    older: dict[str, tuple[Source, Source]] = {}
    for unit, close in zip(units, similarity, strict=True):
        source = unit.source
        if source.number in newer and close >= lead_similarity - OLDER_PAGE_MARGIN:
            latest = newer[source.number]
            latest = quoted_by_path.get(latest.path, latest)
            older.setdefault(source.path, (source, latest))
    return list(older.values())


def _named(chosen: Sequence[Unit]) -> list[Unit]:
    """The quotes, each under its section's heading when that heading names what the section
    describes and the quote does not: an identifier in a code span, as a reference page heads
    each header, option, function or setting ("`X-Forwarded-For`", "`kill_timeout` option",
    "`os.path.join(path, *paths)`"), or one identifier without code marks ("X-Frame-Options",
    ``IDENTIFIER_HEADING``), and then describes it without its name ("A comma separated list
    of IP addresses…"). Once a section: a second quote of it reads under the first. A heading
    that says more than the name ("How Do I Fix `invalid cookie…`?") is a question or a
    sentence about it, and is not quoted."""
    named: list[Unit] = []
    headed: set[str] = set()
    for unit in chosen:
        heading = last_heading(unit)
        spans = [span.group().strip("`").strip() for span in CODE_SPAN.finditer(heading)]
        identifier = not spans and bool(IDENTIFIER_HEADING.fullmatch(heading.strip()))
        if identifier:
            spans = [heading.strip()]
        # the heading is the name, not a sentence about it ("How Do I Fix `invalid cookie`?")
        naming = (
            identifier or len(WORDY.findall(CODE_SPAN.sub(" ", heading))) <= NAMING_HEADING_WORDS
        )
        said = fact_text(unit.words_text)
        if (
            unit.source.section not in headed
            and spans
            and naming
            and not any(fact_text(span) in said for span in spans if span)
        ):
            headed.add(unit.source.section)
            unit = dataclasses.replace(unit, text=read_under(heading, unit.text))
        named.append(unit)
    return named


def _quote(unit: Unit) -> str:
    """A unit as quoted: in quotation marks with its citation; a code unit's block follows its
    lead-in as the page shows it, under the file name its page shows above it, if any; a
    table unit's rows follow its lead-in as a table."""
    quoted = f"“{as_written(unit.text)}” [{unit.source.number}]"
    if unit.kind == "table":
        return f"{quoted}\n\n{as_written(unit.code)}"
    if unit.kind != "code":
        return quoted
    if unit.caption:
        quoted = f"{quoted}\n\n`{as_written(unit.caption)}`"
    fence = "~~~" if "```" in unit.code else "```"
    return f"{quoted}\n\n{fence}{unit.language}\n{as_written(unit.code)}\n{fence}"


def _overlaps(unit: Unit, other: Unit, units: Sequence[Unit]) -> bool:
    """Whether quoting both would quote one text twice: the same words (overlapping chunks
    repeat their boundary blocks), a procedure and one of its own steps, or two steps of one
    procedure (each carries the lead-in; the steps belong together or not at all)."""
    if unit.text == other.text:
        return True
    if unit.source.number != other.source.number:
        return False
    if unit.position in other.holds or other.position in unit.holds:
        return True
    return any(
        unit.position in whole.holds and other.position in whole.holds
        for whole in units
        if whole.kind == "procedure" and whole.source.number == unit.source.number
    )


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
