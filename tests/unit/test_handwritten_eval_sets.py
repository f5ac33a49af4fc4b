"""The hand-written external eval sets (paraphrased questions over Argo CD, Hugo, Fly.io,
Plausible and CSC pages): each loads, has unique ids and both kinds, and, where the set's pages are
staged (``eval_sets stage NAME``), names only pages that exist."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from search.tooling.evalsets.pages import pages_read
from search.tooling.evaluation import cases_load
from tests.conftest import CORPUS_DIR
from tests.support.staged_sets import pages_missing_from_staged, staged_folder

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


# Short FAQ answers among long manuals (issue #25): each question has one FAQ entry of the staged
# `csc-faq` set as its only answer, labelled with the section that answers it. Written before any
# retrieval was run on it; it changes only by a reviewed edit that updates this checksum and
# corpus/eval-sets/README.txt.
CSC_FAQ = CORPUS_DIR / "eval-sets" / "csc-faq-paraphrases.jsonl"
CSC_FAQ_SHA256 = "06816cf8c7a1b456fbe2ed0db27d36e15f6b552157b2c6beb3cf1126b250e217"


def test_the_csc_faq_set_asks_for_one_faq_entry_per_question_over_most_entries() -> None:
    cases = cases_load(CSC_FAQ)
    raw = [json.loads(line) for line in CSC_FAQ.read_text(encoding="utf-8").splitlines() if line]

    assert hashlib.sha256(CSC_FAQ.read_bytes()).hexdigest() == CSC_FAQ_SHA256
    assert len({case.id for case in cases}) == len(cases) >= 110
    assert all(line["kind"] == "paraphrase" and line["origin"] == "hand-written" for line in raw)
    assert all(len(case.relevant) == 1 and len(case.relevant_sections) == 1 for case in cases)
    entries = [case.relevant[0] for case in cases]
    assert all(e.startswith("support/faq/") and e != "support/faq/index.md" for e in entries)
    assert len(set(entries)) >= 79  # of the folder's 86 entries
    assert max(entries.count(entry) for entry in entries) <= len(cases) // 10


def test_every_csc_faq_label_is_a_section_of_its_staged_page() -> None:
    folder = staged_folder("csc-faq")
    cases = cases_load(CSC_FAQ)
    labels = {
        (page.path, section.label) for page in pages_read(folder).pages for section in page.sections
    }

    assert pages_missing_from_staged(cases, "csc-faq") == set()
    assert {(c.relevant[0], c.relevant_sections[0]) for c in cases} - labels == set()
