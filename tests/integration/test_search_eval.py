from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from kb.actors import SYSTEM
from kb.services.sync import corpus_sync

pytestmark = pytest.mark.django_db


@pytest.fixture
def indexed(tmp_path: Path, cached_embedder) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "refunds.md").write_text("# Refunds\n\nAnnual plans get a prorated refund.\n")
    (docs / "limits.md").write_text("# Rate limits\n\nToo many requests return HTTP 429.\n")
    corpus_sync(directory=docs, embedder=cached_embedder, actor=SYSTEM)
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
        call_command("search_eval", str(cases), "--legs", "vector,bogus")
    with pytest.raises(CommandError, match="--docs"):
        call_command("search_eval", str(cases), "--legs", "vector,bm25")


@pytest.fixture
def three_pages(tmp_path: Path) -> Path:
    docs = tmp_path / "pages"
    docs.mkdir()
    (docs / "refunds.md").write_text(
        "# Refunds\n\n## Annual plans\n\nAnnual plans get a prorated refund within 30 days.\n"
    )
    (docs / "limits.md").write_text(
        "# Rate limits\n\n## Errors\n\nToo many requests return HTTP 429 with Retry-After.\n"
    )
    (docs / "sso.md").write_text(
        "# Single sign-on\n\n## Okta\n\nConnect Okta with SAML from the security settings.\n"
    )
    return docs


def test_baselines_rank_the_obvious_page_first_at_page_and_section_level(
    three_pages: Path, tmp_path: Path, local_embedder, capsys: pytest.CaptureFixture[str]
) -> None:
    # given: no index at all; the baselines need only the pages and the embedder
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        '{"id": "r", "kind": "natural",'
        ' "question": "Can I have my money returned for a yearly subscription?",'
        ' "relevant": ["refunds.md"], "relevant_sections": ["Refunds > Annual plans"]}\n'
        '{"id": "l", "kind": "definition", "question": "too many requests HTTP 429",'
        ' "relevant": ["limits.md"], "relevant_sections": ["Rate limits > Errors"]}\n'
        '{"id": "s", "kind": "natural", "question": "How do I connect Okta?",'
        ' "relevant": ["sso.md"], "relevant_sections": ["Single sign-on > Okta"]}\n'
    )
    report = tmp_path / "report.json"

    # when
    call_command(
        "search_eval",
        str(cases),
        "--docs",
        str(three_pages),
        "--legs",
        "bm25,dense,rrf",
        "--json",
        str(report),
    )

    # then
    printed = capsys.readouterr().out
    rows = {row["row"]: row for row in json.loads(report.read_text())["rows"]}
    assert list(rows) == ["bm25", "dense", "rrf"]
    assert rows["dense"]["page"]["recall@1"] == 1.0
    assert rows["dense"]["section"]["recall@1"] == 1.0
    # BM25 has no word of the paraphrased refund question but "return", which is about 429s.
    assert rows["bm25"]["page"]["recall@1"] == pytest.approx(2 / 3)
    assert rows["bm25"]["by_kind"]["definition"]["section"]["ndcg@10"] == 1.0
    # RRF follows both: the quoted 429 question first, every page within the top 5.
    assert rows["rrf"]["by_kind"]["definition"]["section"]["recall@1"] == 1.0
    assert rows["rrf"]["page"]["recall@5"] == 1.0
    for name in rows:
        assert f"\n{name} " in printed
