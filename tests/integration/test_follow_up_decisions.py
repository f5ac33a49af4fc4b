"""The follow-up decision on the labelled pairs of tests/data/follow_ups.jsonl, on the sample
help center's public pages: a question is searched with the one before it only when its wording
leans back and that search finds the closer passage."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assistant.follow_ups import follow_up_search
from kb.actors import SYSTEM
from kb.services.sync import corpus_sync
from search.services import retrieve
from tests.conftest import CORPUS_DIR, CachedEmbedder

pytestmark = pytest.mark.django_db

LABELLED = Path(__file__).resolve().parent.parent / "data" / "follow_ups.jsonl"
REQUIRED_SHARE = 0.95


def _pairs() -> list[dict]:
    with LABELLED.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture
def public_pages(tmp_path: Path, cached_embedder: CachedEmbedder) -> None:
    pages = sorted({pair["page"] for pair in _pairs()})
    for page in pages:
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CORPUS_DIR / page, tmp_path / page)
    assert corpus_sync(directory=tmp_path, embedder=cached_embedder, actor=SYSTEM).failed == []


def test_the_labelled_set_has_both_kinds_and_the_2fa_sequence() -> None:
    pairs = _pairs()
    kinds = [pair["follow_up"] for pair in pairs]
    asked_after_2fa = {
        pair["question"]
        for pair in pairs
        if pair["earlier"] == "How do I turn on two-factor authentication?"
    }

    assert len(pairs) >= 40 and kinds.count(True) >= 15 and kinds.count(False) >= 15
    assert {
        "Which currencies do you support?",
        "Is there a free trial?",
        "How do I export my data?",
    } <= asked_after_2fa


def test_follow_ups_are_decided_from_evidence(public_pages) -> None:
    # One test for the whole set: indexing the pages is most of its time.
    wrong = []
    for pair in _pairs():
        # when
        searched = follow_up_search(
            question=pair["question"], anchor=pair["earlier"], search=lambda q: retrieve(question=q)
        )

        # then
        if searched.follow_up != pair["follow_up"]:
            wrong.append((pair["earlier"], pair["question"], searched.evidence()))
        if not searched.follow_up:
            assert searched.query == pair["question"]

    share = 1 - len(wrong) / len(_pairs())
    assert share >= REQUIRED_SHARE, f"{share:.0%} decided right; wrong: {wrong}"
