"""A learned order of the answer units: a LightGBM lambdarank model over what the answerer
already knows of each unit (issue #24).

``ranker_features`` is the one place the model's inputs are computed, from the answer step's
units (``assistant.units.Unit``) and from the lab's dumps alike, so the model is served on the
features it was trained on: the unit's cosine and the hand signals of ``unit_features``, where it
stands among the question's units (its cosine against the best one's, against its passage's
best), what it is (its kind, its length in words, whether it holds a number or a price), where
it stands in its passage (its position, whether it opens the passage or its paragraph), the
passage's rank, and the question's shape. ``answer_tuning ranker`` trains the model and
replays it over the dumps; no model is shipped: none beat the hand weights by leave-one-set-out
(docs/answers.md, "Round four"), so this module lives with the lab: serving code imports no lab
code, and the answer step computes none of these features today.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from assistant.units import FEATURES, MONEY, NUMBER, WORDY, QuestionShape, UnitWeights, weighted

KINDS = ("sentence", "item", "row", "procedure", "code")
RANKER_FEATURES = (
    "similarity",
    *FEATURES,
    "score",  # the shipped weights' score (``assistant.units.units_score``)
    "score_gap",  # the best unit's score less this one's
    "score_order",  # 0 for the best-scoring unit, 1 for the last
    "similarity_gap",  # the best unit's cosine less this one's
    "similarity_order",  # 0 for the closest unit, 1 for the farthest
    "passage_gap",  # its passage's best unit cosine less this one's
    "passage_best",  # its passage's best unit cosine
    *(f"kind_{kind}" for kind in KINDS),
    "words",
    "has_number",
    "has_money",
    "position",  # in its passage, 0 first
    "opens_passage",
    "opens_paragraph",
    "source",  # the passage's number (its rank)
    "ask_quantity",
    "ask_money",
    "ask_how_to",
    "ask_yes_no",
    "question_words",
)


@dataclass(frozen=True)
class RankerUnit:
    """What the features read of one unit, from a ``Unit`` or a dumped one."""

    source: int
    position: int
    kind: str
    paragraph: int
    text: str  # its words, code included (``Unit.words_text``)


def ranker_features(
    *,
    question: str,
    units: Sequence[RankerUnit],
    similarities: np.ndarray,
    features: np.ndarray,
) -> np.ndarray:
    """One row per unit, one column per name in ``RANKER_FEATURES``; ``features`` are the
    units' ``unit_features`` rows, ``similarities`` their cosines to the question."""
    count = len(units)
    similarities = np.asarray(similarities, dtype=np.float32).reshape(count)
    features = np.asarray(features, dtype=np.float32).reshape(count, len(FEATURES))
    if count == 0:
        return np.zeros((0, len(RANKER_FEATURES)), dtype=np.float32)
    shape = QuestionShape.of(question)
    best = float(similarities.max())
    order = _order(similarities)
    scores = similarities + weighted(features, UnitWeights())
    best_score = float(scores.max())
    score_order = _order(scores)
    passage_best: dict[int, float] = {}
    for unit, unit_similarity in zip(units, similarities, strict=True):
        passage_best[unit.source] = max(passage_best.get(unit.source, -1.0), float(unit_similarity))
    first_in_paragraph: dict[tuple[int, int], int] = {}
    for unit in units:
        if unit.paragraph >= 0:
            key = (unit.source, unit.paragraph)
            first_in_paragraph[key] = min(first_in_paragraph.get(key, unit.position), unit.position)
    asked = (
        float(shape.quantity),
        float(shape.money),
        float(shape.how_to),
        float(shape.yes_no),
        float(len(question.split())),
    )
    rows = np.zeros((count, len(RANKER_FEATURES)), dtype=np.float32)
    for index, unit in enumerate(units):
        similarity = float(similarities[index])
        opens_paragraph = unit.paragraph >= 0 and (
            first_in_paragraph[(unit.source, unit.paragraph)] == unit.position
        )
        rows[index] = (
            similarity,
            *features[index],
            float(scores[index]),
            best_score - float(scores[index]),
            score_order[index],
            best - similarity,
            order[index],
            passage_best[unit.source] - similarity,
            passage_best[unit.source],
            *(float(unit.kind == kind) for kind in KINDS),
            float(len(WORDY.findall(unit.text))),
            float(bool(NUMBER.search(unit.text))),
            float(bool(MONEY.search(unit.text))),
            float(unit.position),
            float(unit.position == 0),
            float(opens_paragraph),
            float(unit.source),
            *asked,
        )
    return rows


def _order(values: np.ndarray) -> np.ndarray:
    """Each value's place from the highest, 0 for the highest and 1 for the lowest."""
    order = np.empty(len(values), dtype=np.float32)
    order[np.argsort(-values, kind="stable")] = np.arange(len(values), dtype=np.float32)
    return order / max(len(values) - 1, 1)


def dumped_ranker_units(units: Sequence[dict[str, Any]]) -> list[RankerUnit]:
    return [
        RankerUnit(
            source=unit["source"],
            position=unit["position"],
            kind=unit["kind"],
            paragraph=unit.get("paragraph", -1),
            text=unit["text"],
        )
        for unit in units
    ]


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class UnitRanker:
    """The trained model: ``score`` orders the units of one question, higher first."""

    def __init__(self, model_text: str, *, features: Sequence[str] = RANKER_FEATURES) -> None:
        import lightgbm

        self.booster = lightgbm.Booster(model_str=model_text)
        if tuple(features) != RANKER_FEATURES or self.booster.num_feature() != len(features):
            raise ValueError("the ranker model was trained on other features than these")

    def score(self, rows: np.ndarray) -> np.ndarray:
        if len(rows) == 0:
            return np.zeros(0, dtype=np.float32)
        return np.asarray(self.booster.predict(rows, num_threads=1), dtype=np.float32)
