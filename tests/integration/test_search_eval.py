from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from kb.actors import SYSTEM
from kb.ingestion import corpus_sync

pytestmark = pytest.mark.django_db


@pytest.fixture
def indexed(tmp_path: Path, local_embedder) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "refunds.md").write_text("# Refunds\n\nAnnual plans get a prorated refund.\n")
    (docs / "limits.md").write_text("# Rate limits\n\nToo many requests return HTTP 429.\n")
    corpus_sync(directory=docs, embedder=local_embedder, actor=SYSTEM)
    return tmp_path


def test_search_eval_prints_every_row_and_writes_results(
    indexed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = indexed / "cases.jsonl"
    cases.write_text(
        '{"id": "r", "question": "money back on a yearly plan", "relevant": ["refunds.md"]}\n'
        '{"id": "l", "question": "HTTP 429", "relevant": ["limits.md"]}\n'
        '{"id": "u", "question": "do you take bitcoin", "relevant": []}\n'
    )
    output = indexed / "out.jsonl"

    call_command("search_eval", str(cases), "--output", str(output))

    printed = capsys.readouterr().out
    for row in ("vector", "keyword", "hybrid", "rerank"):
        assert f"\n{row} " in printed
    results = [json.loads(line) for line in output.read_text().splitlines()]
    assert [r["id"] for r in results] == ["r", "l", "u"]
    assert results[1]["ranked"][0] == "limits.md"
    assert set(results[0]) == {"id", "question", "ranked", "sections", "degraded"}


def test_search_eval_rejects_unknown_legs(indexed: Path) -> None:
    cases = indexed / "cases.jsonl"
    cases.write_text('{"question": "q", "relevant": ["a.md"]}\n')

    with pytest.raises(CommandError, match="--legs"):
        call_command("search_eval", str(cases), "--legs", "vector,bm25")
