"""The answer lab's replay (``assistant.tooling.tuning.quotes``) chooses what the offline
answerer would quote: weights are fitted on replays, so a replay that drifted from the answerer
would fit constants for another answerer."""

from __future__ import annotations

import pytest

from assistant.generators.extractive import ExtractiveGenerator
from assistant.prompting import build_prompt
from assistant.tooling.tuning.quotes import QuoteChoice, dumped_units, replay
from assistant.units import UnitWeights
from kb.embedders import Embedder
from tests.unit.test_extractive_generator import CASES, DISTRACTORS, _answer, _passage, _quotes


@pytest.mark.parametrize(("question", "path", "passage", "expected"), CASES)
def test_the_replay_quotes_what_the_answerer_quotes(
    cached_embedder: Embedder, question: str, path: str, passage: str, expected: str
) -> None:
    # given: the answering passage among two others, as the answerer's own tests ask it
    hits = [
        _passage(cached_embedder, *DISTRACTORS[0]),
        _passage(cached_embedder, path, passage),
        _passage(cached_embedder, *DISTRACTORS[1]),
    ]
    prompt = build_prompt(question=question, hits=hits)
    row = {
        "question": question,
        "units": dumped_units(
            question=question, sources=prompt.sources, idfs={}, embedder=cached_embedder
        ),
    }

    # when
    replayed = replay(row, QuoteChoice(weights=UnitWeights()))
    deltas, _, _ = _answer(ExtractiveGenerator(embedder=cached_embedder), question, hits)

    # then: the same quotes, the lead first
    quoted = [sentence for sentence, _ in _quotes(deltas)]
    assert [unit["text"] for unit in replayed] == quoted
