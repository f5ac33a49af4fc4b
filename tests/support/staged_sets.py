"""An eval set's staged folder (``manage.py eval_sets stage NAME``) for the tests that read it: a
test of a set that is not staged is skipped, never passed."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from search.tooling.evalsets import sources
from search.tooling.evaluation import EvalCase


def staged_folder(name: str) -> Path:
    folder = sources.staged_folder(name)  # where `eval_sets stage` puts it
    if not folder.is_dir():
        pytest.skip(f"stage it first: manage.py eval_sets stage {name}")
    return folder


def pages_missing_from_staged(cases: Iterable[EvalCase], name: str) -> set[str]:
    """The pages ``cases`` name that the staged set ``name`` lacks."""
    folder = staged_folder(name)
    return {page for case in cases for page in case.relevant if not (folder / page).is_file()}
