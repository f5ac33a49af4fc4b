"""Choosing what the offline answerer quotes, by measurement over several answer eval sets.

``quotes_dump`` answers each case as far as the quote choice (retrieval, the no-answer signals,
the units of the passages and every unit's features) and writes what it saw; ``quotes_fit``
replays the choice over the dumps for a grid of weights, so a weight is chosen in seconds over
every set, never by re-running the pipeline. Weights are chosen by leave-one-set-out on the
calibration halves; the report halves are only scored.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from assistant.facts import states as fact_stated
from assistant.generators.base import Source
from assistant.generators.extractive import (
    DUPLICATE_SIMILARITY,
    EXTRA_QUOTE_MARGIN,
    MAX_CANDIDATES,
    MAX_QUOTES,
    MAX_SOURCES,
    RELEVANCE_FLOOR,
)
from assistant.no_answer import no_answer_decide
from assistant.prompting import ANSWER_PASSAGES, build_prompt
from assistant.tooling.evaluation import AnswerCase
from assistant.units import (
    CONTINUED_UNITS,
    FEATURES,
    FOLLOWING_KINDS,
    POINTING_KINDS,
    Place,
    QuestionShape,
    Taken,
    Unit,
    UnitWeights,
    another_term,
    brings_next,
    brought_by,
    brought_with,
    continued,
    continues,
    illustrates,
    opposite_action,
    points_back,
    question_as_read,
    quote_runs,
    quoted_with,
    read_to_paragraph_end,
    run_text,
    shortlist,
    taken_by,
    unit_features,
    unlabelled,
    unquoted,
    weighted,
)
from assistant.units import units_of as units_from
from kb.embedders import Embedder, get_embedder
from kb.models import Chunk
from search.services import retrieve, with_page_sections

WORD_COST = 0.001
DUMP_SOURCES = ANSWER_PASSAGES  # passages retrieved per case, as the answer step retrieves
MAX_DUMPED_UNITS = 240


@dataclass(frozen=True)
class QuoteChoice:
    """What the replay varies, each a constant of the answerer: the weights of the features,
    how many passages are read, how close to the lead a further quote must score."""

    weights: UnitWeights
    sources: int = MAX_SOURCES
    margin: float = EXTRA_QUOTE_MARGIN
    max_quotes: int = MAX_QUOTES


def quotes_dump(
    cases: Sequence[AnswerCase],
    *,
    output: Path,
    progress: Callable[[Iterable[AnswerCase]], Iterable[AnswerCase]] = lambda cases: cases,
) -> None:
    """One JSON line per case: the no-answer signals and the units of its first passages."""
    embedder = get_embedder()
    with output.open("w", encoding="utf-8") as handle:
        for case in progress(cases):
            result = retrieve(question=case.question, limit=DUMP_SOURCES)
            decision = no_answer_decide(query=case.question, result=result)
            hits = with_page_sections(result)
            sections = dict(
                (chunk_id, (path, heading))
                for chunk_id, path, heading in Chunk.objects.filter(
                    id__in=[hit.chunk_id for hit in hits]
                ).values_list("id", "document__path", "heading_path")
            )
            # the passages as the answer step is given them: those that fit the prompt
            sources = build_prompt(question=case.question, hits=hits).sources
            row = {
                "id": case.id,
                "question": case.question,
                "half": case.half,
                "answerable": case.answerable,
                "match": case.match,
                "facts": list(case.facts),
                "confidence": result.confidence,
                "coverage": decision.question_coverage,
                "idfs": result.term_idfs,
                "refused": decision.refuse,
                "sections_seen": [
                    sections.get(source.chunk_id) == (case.path, case.section) for source in sources
                ],
                "sources": [
                    {
                        "number": source.number,
                        "path": source.path,
                        "section": source.section,
                        "page_section": source.page_section,
                    }
                    for source in sources
                ],
                "units": dumped_units(
                    question=case.question,
                    sources=sources,
                    idfs=result.term_idfs,
                    embedder=embedder,
                ),
            }
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def dumped_units(
    *, question: str, sources: Sequence[Source], idfs: Mapping[str, float], embedder: Embedder
) -> list[dict[str, Any]]:
    """The units of ``sources`` as a dump keeps them: what the answerer scores them by (their
    cosine to the question, their features, their vector) and what it quotes."""
    units = units_from(sources)[:MAX_DUMPED_UNITS]
    if not units:
        return []
    # the question as the answerer gives it to the embedder, its typing slips read as unit words
    read = question_as_read(question, units)
    texts = [read, *(f"{unit.source.section}: {unit.words_text}" for unit in units)]
    vectors = np.asarray(embedder.embed_documents(texts), dtype=np.float32)
    features = unit_features(question=question, units=units, idfs=idfs)
    return [
        dumped_unit(
            unit,
            similarity=float(vectors[index + 1] @ vectors[0]),
            # four decimals keep a dump small and change no choice the replay makes
            features=[round(float(value), 4) for value in features[index]],
            vector=[round(float(value), 4) for value in vectors[index + 1]],
        )
        for index, unit in enumerate(units)
    ]


def dumped_unit(
    unit: Unit, *, similarity: float, features: Sequence[float], vector: Sequence[float]
) -> dict[str, Any]:
    """One unit as a dump keeps it: what it is, where it stands, and what it is scored by."""
    return {
        "source": unit.source.number,
        "position": unit.position,
        "kind": unit.kind,
        "holds": list(unit.holds),
        "paragraph": unit.paragraph,
        "label": unit.label,
        "last": unit.last,
        "section": unit.source.section,
        # where its passage lies on its page (``assistant.units.continues``)
        "document": unit.source.document_id,
        "ordinal": unit.source.ordinal,
        "text": unit.words_text,
        "similarity": similarity,
        "features": [float(value) for value in features],
        "vector": [float(value) for value in vector],
    }


def dump_load(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def dump_half(
    dumps: Mapping[str, list[dict[str, Any]]], half: str
) -> dict[str, list[dict[str, Any]]]:
    """Each dump's cases of one half ("calibration" or "report"), by the dump's name."""
    return {name: [row for row in rows if row["half"] == half] for name, rows in dumps.items()}


def states(text: str, row: dict[str, Any]) -> bool:
    """Whether ``text`` states the dumped case's facts, as ``AnswerCase.stated_in`` reads them."""
    found = [fact_stated(text, fact) for fact in row["facts"]]
    return bool(found) and (all(found) if row["match"] == "all" else any(found))


# Orders a dumped case's shortlisted units: (row, units, their unit_features rows, their
# cosines) -> one score per unit, higher first (a learned ranker,
# ``assistant.tooling.tuning.unit_ranking``).
Orderer = Callable[[dict[str, Any], list[dict[str, Any]], np.ndarray, np.ndarray], np.ndarray]


def shortlisted(
    row: dict[str, Any], sources: int = MAX_SOURCES
) -> tuple[list[dict[str, Any]], np.ndarray]:
    """The dumped units the answerer would score (its shortlist), with their features."""
    every = [unit for unit in row["units"] if unit["source"] <= sources]
    features = np.array([_features(row, unit) for unit in every], dtype=np.float32)
    kept = shortlist(features, limit=MAX_CANDIDATES)
    return [every[index] for index in kept], features[kept] if kept else features


def replay(
    row: dict[str, Any], choice: QuoteChoice, *, orderer: Orderer | None = None
) -> list[dict[str, Any]]:
    """The units the answerer would quote for the dumped case under ``choice``: the same
    shortlist, scores and rules as ``ExtractiveGenerator._choose``, on the dumped units, except
    the steps a how-to question is given when another unit leads (``_steps_wanted``), which
    this replay leaves out: no weight or margin it tunes decides them. With an ``orderer`` its
    best unit leads; the weighted scores still decide whether any unit is about the question
    and which may follow the lead."""
    units, features = shortlisted(row, choice.sources)
    if not units:
        return []
    similarities = np.array([unit["similarity"] for unit in units], dtype=np.float32)
    scores = similarities + weighted(features, choice.weights)
    order = [int(index) for index in np.argsort(-scores, kind="stable")]
    best = scores[order[0]]
    if best < RELEVANCE_FLOOR:
        return []
    lead = order[0]
    if orderer is not None:
        lead = int(np.argmax(orderer(row, units, features, similarities)))
    picked = [lead]
    bringing = {id(unit) for unit in _brought(units[lead], units, lead=True)}
    for index in order:
        if index == lead:
            continue
        if scores[index] < best - choice.margin:
            break
        unit = units[index]
        if id(unit) in bringing or any(
            _repeats(unit, units[other], units)
            or float(np.dot(unit["vector"], units[other]["vector"])) > DUPLICATE_SIMILARITY
            for other in picked
        ):
            continue
        full = len(picked) >= choice.max_quotes  # as ``_choose``: a unit opens one quote at most
        if full and len(_quoted(units, [*picked, index])) > choice.max_quotes:
            break
        picked.append(index)
        bringing.update(id(other) for other in _brought(unit, units))
    return _quoted(units, picked)


def _quoted(units: Sequence[dict[str, Any]], picked: Sequence[int]) -> list[dict[str, Any]]:
    """The quotes of the ``picked`` units, lead first, as ``extractive._quoted`` makes them."""
    # as ``_choose``: the lead, then the others in page order, each with the unit after it
    # unless that one is quoted already, and the quotes the page has one after the other as one
    rest = sorted(picked[1:], key=lambda index: (units[index]["source"], units[index]["position"]))
    taken = taken_by(units[index] for index in picked)
    order = [picked[0], *rest]
    spans = [
        quoted_span(units[index], units, taken, lead=place == 0)
        for place, index in enumerate(order)
    ]
    runs = quote_runs([(first, last) for _, first, last in spans], lambda u: _next(u, units))
    return [
        {
            **units[order[min(run)]],
            "text": run_text([(spans[index][0], str(spans[index][2]["text"])) for index in run]),
        }
        for run in runs
    ]


def as_quoted(unit: dict[str, Any], units: Sequence[dict[str, Any]], taken: Taken) -> str:
    """A dumped unit's text as the answerer quotes it (``quoted_span``)."""
    return quoted_span(unit, units, taken)[0]


def quoted_span(
    unit: dict[str, Any], units: Sequence[dict[str, Any]], taken: Taken, *, lead: bool = False
) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """A dumped unit's text as the answerer quotes it, as ``extractive._after_sentence_before``
    then ``_joined`` build it: after the sentence before it in its paragraph or item, then
    the unit after it and those that go on from that one, each unless quoted already (``taken``,
    the marks of the units quoted or brought so far, to which theirs are added), the ``lead``
    after the rest of its paragraph; and the first and last of the units it quotes. The
    sentence before comes first, so the unit after drops a list's lead-in the two share."""
    before = unquoted(_preceding(unit, units), taken)
    text, end = str(unit["text"]), unit
    if before is not None:
        text = quoted_with(str(before["text"]), text)
    if lead:
        text, end = read_to_paragraph_end(text, unit, lambda one: _next(one, units), taken)
    after = unquoted(_following(end, units), taken)
    text = quoted_with(text, None if after is None else str(after["text"]))
    last = after
    for _ in range(CONTINUED_UNITS):
        more = None if last is None else unquoted(_continuing(last, units), taken)
        if last is None or more is None:
            break
        text, last = quoted_with(text, continued(str(last["text"]), str(more["text"]))), more
    return text, unit if before is None else before, end if last is None else last


def _repeats(unit: dict[str, Any], other: dict[str, Any], units: Sequence[dict[str, Any]]) -> bool:
    """As ``assistant.generators.extractive._overlaps``, on dumped units."""
    if unit["text"] == other["text"]:
        return True
    if unit["source"] != other["source"]:
        return False
    if unit["position"] in other["holds"] or other["position"] in unit["holds"]:
        return True
    return any(
        unit["position"] in whole["holds"] and other["position"] in whole["holds"]
        for whole in units
        if whole["kind"] == "procedure" and whole["source"] == unit["source"]
    )


def _features(row: dict[str, Any], unit: dict[str, Any]) -> list[float]:
    """A dumped unit's features. A dump made before the last text rules (a price for a money
    question, the opposite action, an example) gets them from the unit's text and the
    question."""
    features = list(unit["features"])
    if len(features) == len(FEATURES):
        return features
    example = float(illustrates(unit["kind"], unit["text"], unit.get("label", "")))
    if len(features) == FEATURES.index("example"):
        return [*features, example]
    features = features[: FEATURES.index("opposite")]
    question = row.get("question", "")
    features[FEATURES.index("quantity")] = float(
        QuestionShape.of(question).answered_by(unit["text"])
    )
    return [*features, float(opposite_action(question, unit["text"])), example]


def _brought(
    unit: dict[str, Any], units: Sequence[dict[str, Any]], *, lead: bool = False
) -> list[dict[str, Any]]:
    """As ``assistant.units.brought_units``, on dumped units."""
    return brought_with(
        unit,
        before=_preceding(unit, units),
        after=lambda one: _next(one, units),
        following=lambda one: _following(one, units),
        going_on=lambda last: _continuing(last, units),
        lead=lead,
    )


def _following(lead: dict[str, Any], units: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """As ``assistant.units.following_unit``, on dumped units."""
    if lead["kind"] not in FOLLOWING_KINDS:
        return None
    unit = _next(lead, units)
    return unit if unit is not None and brings_next(lead["kind"], unit["kind"]) else None


def _continuing(unit: dict[str, Any], units: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """As ``assistant.units.continuing_unit``, on dumped units."""
    if unit["kind"] not in POINTING_KINDS:
        return None
    other = _next(unit, units)
    if other is None:
        return None
    if another_term(str(unit.get("label", "")), str(other.get("label", ""))):
        return None
    said = continued(str(unit["text"]), str(other["text"]))
    return other if points_back(other["kind"], said, str(other.get("label", ""))) else None


def _preceding(lead: dict[str, Any], units: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """As ``assistant.units.preceding_sentence``, on dumped units."""
    if lead["kind"] not in POINTING_KINDS:
        return None
    unit = _at(units, lead["source"], lead["position"] - 1)
    if unit is None:
        return None
    paragraphs = (unit.get("paragraph", -1), lead.get("paragraph", -1))
    return unit if brought_by(unit["kind"], *paragraphs) else None


def _next(unit: dict[str, Any], units: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """As ``assistant.units.next_unit``, on dumped units."""
    if not unit.get("last", False):
        other = _at(units, unit["source"], unit["position"] + 1)
        if other is not None and unit["position"] in other.get("holds", ()):
            return _next(other, units)
        return other
    then = next((o for o in _passages(units) if continues(_place(unit), _place(o))), None)
    if then is None:
        return None
    source = then["source"]
    said = _unlabelled(unit)
    copy = next((o for o in units if o["source"] == source and _unlabelled(o) == said), None)
    if copy is not None:
        return _at(units, source, copy["position"] + 1)
    first = _at(units, source, 0)
    repeated = {_unlabelled(o) for o in units if o["source"] == unit["source"]}
    return None if first is None or _unlabelled(first) in repeated else first


def _unlabelled(unit: dict[str, Any]) -> str:
    return unlabelled(str(unit["text"]), str(unit.get("label", "")))


def _at(units: Sequence[dict[str, Any]], source: int, position: int) -> dict[str, Any] | None:
    return next(
        (unit for unit in units if unit["source"] == source and unit["position"] == position),
        None,
    )


def _passages(units: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One unit of each passage."""
    return list({unit["source"]: unit for unit in units}.values())


def _place(unit: dict[str, Any]) -> Place:
    return (int(unit.get("document", -1)), int(unit.get("ordinal", -1)), str(unit["section"]))


@dataclass
class ReplayScore:
    answerable: int = 0
    stated: int = 0
    lead: int = 0
    seen: int = 0
    lead_seen: int = 0  # answers whose lead is a unit of the answering section
    words: list[int] | None = None  # one per answer given (answerable, not refused)

    @property
    def states_fact(self) -> float:
        return self.stated / self.answerable if self.answerable else 0.0

    @property
    def lead_states_fact(self) -> float:
        return self.lead / self.answerable if self.answerable else 0.0

    @property
    def sees_section(self) -> float:
        return self.seen / self.answerable if self.answerable else 0.0

    @property
    def answered(self) -> int:
        return len(self.words) if self.words else 0

    @property
    def lead_in_section(self) -> float:
        """How often the lead is a unit of the answering section, of the answers given: with
        ``lead_states_fact`` it tells a lead from another section from a wrong lead of the right
        one, as ``answer_eval``'s "lead cites section" does."""
        return self.lead_seen / self.answered if self.answered else 0.0

    @property
    def median_words(self) -> float:
        return float(statistics.median(self.words)) if self.words else 0.0

    @property
    def objective(self) -> float:
        """What a choice is judged by: facts stated, with the lead counted as much, less a
        little for length (ten more words in the median answer cost one point in a hundred)."""
        return self.states_fact + self.lead_states_fact - WORD_COST * self.median_words


def replay_score(
    rows: Sequence[dict[str, Any]], choice: QuoteChoice, *, orderer: Orderer | None = None
) -> ReplayScore:
    score = ReplayScore(words=[])
    for row in rows:
        if not row["answerable"] or row["refused"]:
            if row["answerable"]:
                score.answerable += 1
            continue
        score.answerable += 1
        seen = row["sections_seen"][: choice.sources]
        score.seen += any(seen)
        quoted = replay(row, choice, orderer=orderer)
        lead = int(quoted[0]["source"]) if quoted else 0  # its passage's number, 1 the first
        score.lead_seen += 0 < lead <= len(seen) and bool(seen[lead - 1])
        text = " ".join(unit["text"] for unit in quoted)
        score.stated += states(text, row)
        score.lead += bool(quoted) and states(quoted[0]["text"], row)
        assert score.words is not None
        score.words.append(len(text.split()))
    return score


# The number of quotes is not in the grid, and the margin stops at the shipped 0.18: at the
# objective's price of a word, every leave-one-set-out fold chooses five quotes within 0.4,
# about twice the words (docs/answers.md, round twenty-two). How long an answer may be is the
# product's choice, made on the measured frontier, not a fitted constant.
GRID: dict[str, Sequence[float]] = {
    "terms": (0.1, 0.2, 0.35, 0.5, 0.7),
    "headings": (0.0, 0.1, 0.2, 0.3, 0.45),
    "pairs": (0.0, 0.1, 0.2, 0.3),
    "quantity": (0.0, 0.05, 0.1, 0.2, 0.3),
    "procedure": (0.0, 0.1, 0.2, 0.3),
    "decides": (0.0, 0.05, 0.1, 0.2),
    "rank": (0.0, 0.05, 0.1, 0.2),
    "opposite": (0.0, -0.1, -0.2, -0.4),
    "example": (0.0, -0.05, -0.1, -0.2),
    "sources": (3, 5, 8, 10, 16),
    "margin": (0.06, 0.09, 0.12, 0.18),
}


def _with(choice: QuoteChoice, name: str, value: float) -> QuoteChoice:
    if name in {field.name for field in fields(UnitWeights)}:
        return dataclasses.replace(
            choice, weights=dataclasses.replace(choice.weights, **{name: value})
        )
    changed: dict[str, Any] = {name: int(value) if name == "sources" else value}
    return dataclasses.replace(choice, **changed)


def _objective(sets: Sequence[Sequence[dict[str, Any]]], choice: QuoteChoice) -> float:
    """The mean over sets (each set counts once, whatever its size)."""
    return statistics.fmean(replay_score(rows, choice).objective for rows in sets)


def quotes_fit(sets: Sequence[Sequence[dict[str, Any]]], *, start: QuoteChoice) -> QuoteChoice:
    """Coordinate ascent over ``GRID`` from ``start``, two passes: one value at a time, the
    best kept (ties keep the current value)."""
    choice = start
    best = _objective(sets, choice)
    for _ in range(2):
        for name, values in GRID.items():
            for value in values:
                tried = _with(choice, name, value)
                score = _objective(sets, tried)
                if score > best + 1e-9:
                    choice, best = tried, score
    return choice


def quotes_fit_report(dumps: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Per set: today's choice, the one fitted on every set's calibration half, and the one
    fitted without the set (leave-one-set-out), each scored on the set's report half."""
    start = QuoteChoice(weights=UnitWeights())
    calibration = dump_half(dumps, "calibration")
    report = dump_half(dumps, "report")
    shipped = quotes_fit(list(calibration.values()), start=start)
    lines = [f"fitted on every calibration half: {shipped}"]
    lines.append(
        f"{'set':<28}{'choice':<10}{'states':>8}{'lead':>8}{'lead sec':>9}{'sees':>8}{'words':>7}"
    )
    for name in dumps:
        others = [rows for other, rows in calibration.items() if other != name]
        held_out = quotes_fit(others, start=start) if others else shipped
        lines.append(f"  left out {name}: {held_out}")
        for label, choice in (("today", start), ("all sets", shipped), ("LOSO", held_out)):
            score = replay_score(report[name], choice)
            lines.append(
                f"{name:<28}{label:<10}{score.states_fact:>8.1%}{score.lead_states_fact:>8.1%}"
                f"{score.lead_in_section:>9.1%}{score.sees_section:>8.1%}{score.median_words:>7.0f}"
            )
    return lines


# How long an answer may be is the product's choice (the grid above stops at today's margin):
# the settings that make answers longer, each replayed, so the choice is made on measured
# figures (docs/answers.md, "Choosing the weights").
FRONTIER_MARGINS = (0.12, EXTRA_QUOTE_MARGIN, 0.22, 0.25, 0.3)
FRONTIER_PLACES = (MAX_QUOTES, MAX_QUOTES + 1)


@dataclass(frozen=True)
class FrontierPoint:
    """One length setting replayed on one half of every set: per set, its ``ReplayScore``."""

    half: str
    choice: QuoteChoice
    scores: dict[str, ReplayScore]

    def mean(self, field: str) -> float:
        """The mean over the sets (each counts once) of a ``ReplayScore`` property."""
        return statistics.fmean(getattr(score, field) for score in self.scores.values())


def length_frontier(dumps: dict[str, list[dict[str, Any]]]) -> list[FrontierPoint]:
    """Facts stated against words, per half, at each margin and number of places."""
    start = QuoteChoice(weights=UnitWeights())
    points = []
    for half in ("calibration", "report"):
        rows = dump_half(dumps, half)
        for places in FRONTIER_PLACES:
            for margin in FRONTIER_MARGINS:
                choice = dataclasses.replace(start, margin=margin, max_quotes=places)
                scores = {name: replay_score(half_rows, choice) for name, half_rows in rows.items()}
                points.append(FrontierPoint(half=half, choice=choice, scores=scores))
    return points


def length_frontier_report(dumps: dict[str, list[dict[str, Any]]]) -> list[str]:
    """``length_frontier`` as lines: the mean over the sets, then each set's facts stated and
    median words; today's setting marked."""
    lines = [
        "length frontier: facts stated / lead states / median words (mean over the sets), "
        "then each set's facts stated and median words; * today"
    ]
    names = list(dumps)
    for point in length_frontier(dumps):
        today = (point.choice.margin, point.choice.max_quotes) == (EXTRA_QUOTE_MARGIN, MAX_QUOTES)
        label = f"{point.half:<12}margin {point.choice.margin:<5} places {point.choice.max_quotes}"
        sets = "  ".join(
            f"{name} {point.scores[name].states_fact:.1%}/{point.scores[name].median_words:.0f}"
            for name in names
        )
        lines.append(
            f"{'*' if today else ' '} {label}  {point.mean('states_fact'):6.1%} "
            f"{point.mean('lead_states_fact'):6.1%} {point.mean('median_words'):6.1f}   {sets}"
        )
    return lines
