"""The learned unit ranker's lab (`assistant.tooling.tuning.ranker`) and its features
(`assistant.tooling.tuning.unit_ranking`): what it is trained on must be what the answer step
would compute."""

from __future__ import annotations

import numpy as np

from assistant.tooling.tuning.quotes import dumped_unit
from assistant.tooling.tuning.ranker import RankerParams, labels, ranker_train
from assistant.tooling.tuning.unit_ranking import (
    RANKER_FEATURES,
    RankerUnit,
    dumped_ranker_units,
    ranker_features,
)
from assistant.units import unit_features, units_of
from tests.unit.test_answer_units import _source


def _dumped(question: str, sources, similarities) -> dict:
    units = units_of(sources)
    features = unit_features(question=question, units=units)
    return {
        "question": question,
        "answerable": True,
        "refused": False,
        "units": [
            dumped_unit(unit, similarity=float(similarity), features=list(row), vector=[0.0])
            for unit, similarity, row in zip(units, similarities, features, strict=True)
        ],
    }


def test_a_unit_holding_one_fact_of_an_all_case_is_a_good_lead() -> None:
    # given: a case needing two facts, one unit stating one of them
    row = {"facts": ["14 days", "no card"], "match": "all"}
    units = [
        {
            "source": 1,
            "position": 0,
            "kind": "sentence",
            "paragraph": 0,
            "text": "Trials last 14 days.",
        },
        {"source": 1, "position": 1, "kind": "item", "paragraph": 1, "text": "Plans differ."},
    ]

    # then: it is labelled a good lead; the unit stating neither is not
    assert labels(row, units).tolist() == [1.0, 0.0]


def test_the_features_of_dumped_units_are_those_of_the_answer_step_s_units() -> None:
    # given
    question = "How much does Growth cost?"
    sources = [
        _source("Growth is our most popular plan. It adds Smart Retries."),
        _source("| Plan | Price |\n| --- | --- |\n| Growth | $99 / month |", number=2),
    ]
    units = units_of(sources)
    similarities = np.linspace(0.6, 0.3, len(units))
    row = _dumped(question, sources, similarities)

    # when
    served = ranker_features(
        question=question,
        units=[
            RankerUnit(u.source.number, u.position, u.kind, u.paragraph, u.words_text)
            for u in units
        ],
        similarities=similarities,
        features=unit_features(question=question, units=units),
    )
    dumped = ranker_features(
        question=question,
        units=dumped_ranker_units(row["units"]),
        similarities=np.array([unit["similarity"] for unit in row["units"]]),
        features=np.array([unit["features"] for unit in row["units"]]),
    )

    # then
    assert served.shape == (len(units), len(RANKER_FEATURES))
    np.testing.assert_allclose(served, dumped, atol=1e-6)


def test_training_is_deterministic() -> None:
    # given: small groups where the unit holding a price states the fact
    rows = []
    for index in range(40):
        price = f"${20 + index} / month"
        sources = [
            _source(f"Plan {index} is our most popular plan for teams."),
            _source(f"| Plan | Price |\n| --- | --- |\n| Plan {index} | {price} |", number=2),
            _source(f"Plan {index} adds chat support and exports.", number=3),
        ]
        row = _dumped(f"How much does plan {index} cost?", sources, [0.6, 0.3, 0.5])
        rows.append({**row, "facts": [price], "match": "any", "half": "calibration"})
    params = RankerParams(leaves=3, rounds=10, min_leaf=5)

    # when
    first, second = ranker_train(rows, params), ranker_train(rows, params)

    # then
    assert first.booster.model_to_string() == second.booster.model_to_string()
