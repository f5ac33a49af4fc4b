"""The derived external eval sets (``eval_sets build NAME``): each loads with unique ids, every
case names its section, and, where the set's pages are staged, names only pages that exist."""

from __future__ import annotations

from pathlib import Path

import pytest

from search.tooling.evalsets.cases import cases_as_lines, cases_derive, cases_text
from search.tooling.evalsets.pages import pages_read
from search.tooling.evalsets.sources import sources_load, staged_verify
from search.tooling.evaluation import cases_load
from tests.conftest import CORPUS_DIR
from tests.support.staged_sets import pages_missing_from_staged, staged_folder

DERIVED = {  # cases file -> the staged set its paths are relative to
    CORPUS_DIR / "eval-sets" / "argo-cd.jsonl": "argo-cd",
    CORPUS_DIR / "eval-sets" / "hugo.jsonl": "hugo",
    CORPUS_DIR / "eval-sets" / "fly.jsonl": "fly",
    CORPUS_DIR / "eval-sets" / "starship-config.jsonl": "starship-config",
}


@pytest.mark.parametrize("path", list(DERIVED), ids=lambda p: p.name)
def test_a_derived_set_names_a_section_for_every_case_and_only_staged_pages(path: Path) -> None:
    cases = cases_load(path)

    assert len({case.id for case in cases}) == len(cases) >= 150
    assert all(case.relevant and case.relevant_sections for case in cases)
    assert pages_missing_from_staged(cases, DERIVED[path]) == set()


@pytest.mark.parametrize("path", list(DERIVED), ids=lambda p: p.name)
def test_a_derived_set_is_what_the_builder_derives_from_its_staged_pages(path: Path) -> None:
    # A parser or chunker change that moves a section, or a question that loses its words,
    # must show here as a re-derived set, not as a drift the figures silently rest on.
    source = sources_load()[DERIVED[path]]
    staged_folder(source.name)  # skipped where the set is not staged
    # the builder's own check: the staged pages are the pinned ones (else it refuses, and so do we)
    derivation = cases_derive(
        pages_read(staged_verify(source)), reference_folders=source.reference_folders
    )

    # byte for byte, as `eval_sets build` writes it
    derived = cases_text(cases_as_lines(derivation.cases))
    assert derived == path.read_text(encoding="utf-8"), f"run: eval_sets build {source.name}"
