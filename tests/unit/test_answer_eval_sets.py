"""The answer labels of the external eval sets (``corpus/eval-sets/answers/``): written by reading
the pages before any tuning, so they change only by a reviewed edit that updates ``SHA256SUMS``.
Each lines up with its question set, and, where the set's pages are staged, each fact is stated
in the section its case names."""

from __future__ import annotations

import hashlib

import pytest

from assistant.facts import states
from assistant.tooling.evaluation import answer_cases_load
from search.tooling.evalsets.pages import pages_read
from search.tooling.evaluation import cases_load
from tests.conftest import CORPUS_DIR
from tests.support.staged_sets import staged_folder

ANSWERS = CORPUS_DIR / "eval-sets" / "answers"
SETS = {  # answer labels -> (the question set they label, the staged set of its pages)
    "argo-cd-paraphrases.jsonl": (CORPUS_DIR / "eval-large-docs.jsonl", "argo-cd"),
    "hugo-paraphrases.jsonl": (CORPUS_DIR / "eval-sets" / "hugo-paraphrases.jsonl", "hugo"),
    "fly-paraphrases.jsonl": (CORPUS_DIR / "eval-sets" / "fly-paraphrases.jsonl", "fly"),
    "plausible-questions.jsonl": (
        CORPUS_DIR / "eval-sets" / "plausible-questions.jsonl",
        "plausible",
    ),
    "flask-answer-questions.jsonl": (
        CORPUS_DIR / "eval-sets" / "flask-answer-questions.jsonl",
        "flask",
    ),
    "actual-questions.jsonl": (CORPUS_DIR / "eval-sets" / "actual-questions.jsonl", "actual"),
}


def test_the_labels_are_the_ones_recorded_before_tuning() -> None:
    recorded = dict(
        reversed(line.split("  ", 1))
        for line in (ANSWERS / "SHA256SUMS").read_text().splitlines()
        if line
    )

    found = {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(ANSWERS.glob("*.jsonl"))
    }

    assert found == recorded
    assert set(found) == set(SETS)


@pytest.mark.parametrize("name", list(SETS))
def test_labels_line_up_with_their_question_set(name: str) -> None:
    questions = cases_load(SETS[name][0])
    labels = answer_cases_load(ANSWERS / name)

    assert [(c.id, c.question) for c in labels] == [(c.id, c.question) for c in questions]
    # a question is labelled unanswerable exactly when its set says so
    assert [c.answerable for c in labels] == [c.answerable for c in questions]
    assert all(c.path in q.relevant for c, q in zip(labels, questions, strict=True) if c.path)
    halves = [c.half for c in labels]
    assert halves.count("report") >= len(labels) // 3 <= halves.count("calibration")


@pytest.mark.parametrize("name", list(SETS))
def test_every_fact_is_stated_in_its_labelled_section(name: str) -> None:
    folder = staged_folder(SETS[name][1])
    sections = {(s.path, s.label): s.text for s in pages_read(folder).sections}

    wrong = [
        (case.id, fact)
        for case in answer_cases_load(ANSWERS / name)
        for fact in case.facts
        if not states(sections.get((case.path or "", case.section or ""), ""), fact)
    ]

    assert wrong == []
