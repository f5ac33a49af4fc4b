"""The hand-written external eval sets (paraphrased questions over Argo CD, Hugo, Fly.io and
Plausible pages): each loads, has unique ids and both kinds, and, where the set's pages are staged
(``eval_sets stage NAME``), names only pages that exist."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from search.tooling.evaluation import cases_load
from tests.conftest import CORPUS_DIR
from tests.support.staged_sets import pages_missing_from_staged

SETS = {  # cases file -> the staged set its paths are relative to
    CORPUS_DIR / "eval-large-docs.jsonl": "argo-cd",
    CORPUS_DIR / "eval-sets" / "hugo-paraphrases.jsonl": "hugo",
    CORPUS_DIR / "eval-sets" / "fly-paraphrases.jsonl": "fly",
    CORPUS_DIR / "eval-sets" / "plausible-questions.jsonl": "plausible",
}
# Smaller sets, each over one staged set: they load and name only staged pages.
SMALL_SETS = {
    CORPUS_DIR / "eval-sets" / "flask-questions.jsonl": "flask",
    CORPUS_DIR / "eval-sets" / "autohotkey-questions.jsonl": "autohotkey",
}


@pytest.mark.parametrize("path", list(SETS), ids=lambda p: p.name)
def test_a_hand_written_set_loads_with_unique_ids_and_both_kinds(path: Path) -> None:
    cases = cases_load(path)
    raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]

    assert len({case.id for case in cases}) == len(cases) == len(raw)
    assert all("id" in line for line in raw)  # no case is named by its line number alone
    answerable = [case for case in cases if case.answerable]
    assert len(answerable) >= 60
    assert len(cases) - len(answerable) >= 8
    # an unanswerable case says so by its kind, and an answerable one is never that kind
    assert all((case.kind == "unanswerable") == (not case.answerable) for case in cases)
    # the questions spread over the docs: no page answers more than a tenth of them
    first_pages = [case.relevant[0] for case in answerable]
    assert max(first_pages.count(page) for page in first_pages) <= len(answerable) // 10


@pytest.mark.parametrize("path", list(SETS), ids=lambda p: p.name)
def test_every_labelled_page_is_a_staged_page(path: Path) -> None:
    assert pages_missing_from_staged(cases_load(path), SETS[path]) == set()


@pytest.mark.parametrize("path", list(SMALL_SETS), ids=lambda p: p.name)
def test_a_small_hand_written_set_loads_and_names_only_staged_pages(path: Path) -> None:
    cases = cases_load(path)

    assert len({case.id for case in cases}) == len(cases) >= 15
    assert all(case.relevant for case in cases)
    assert pages_missing_from_staged(cases, SMALL_SETS[path]) == set()
