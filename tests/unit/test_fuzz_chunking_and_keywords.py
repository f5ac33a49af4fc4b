"""Properties of the chunker and the keyword-query builder under arbitrary input (hypothesis):
any Unicode, Markdown-shaped noise, huge inputs and binary decoded as text. Nothing may crash,
and what comes out must still satisfy the invariants the index relies on."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kb.chunking import ChunkLimits, chunk_markdown, embedding_text
from kb.embedders import get_embedder
from search.keywords import MAX_TERMS, keyword_query

MARKDOWN_PIECES = st.sampled_from(
    [
        "# ", "## ", "### ", "\n", "\n\n", "```", "```python\n", "~~~", "<!--", "-->",
        "| a | b |\n", "|---|---|\n", "- ", "1. ", "> ", "    ", "\t", "**", "[x](y)",
        "\u200b", "\u0000", "\r\n",
        "é", "日本語", "🙂", "\ufeff", "\u202e", "E4012", "invoice.paid", " ", "word ",
        "<div class=\"x\">", "</div>", "<br>", "<img src={x('a')} />", "<b onclick=y>", "`",
        "{{< x >}}", "<a id=\"z\"></a>",
    ]
)  # fmt: skip
MARKDOWNISH = st.lists(st.one_of(MARKDOWN_PIECES, st.text(max_size=40)), max_size=80).map("".join)
FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


# A CommonMark code span: a run of backticks, then anything up to the same run again.
INLINE_CODE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)


@pytest.fixture(scope="module")
def embedder():
    return get_embedder()


def _check_chunks(body: str, embedder) -> None:
    limits = ChunkLimits.for_window(embedder.max_input_tokens)
    chunks = chunk_markdown(
        title="Fuzz", body=body, limits=limits, count_tokens=embedder.count_tokens
    )
    for ordinal, chunk in enumerate(chunks):
        assert chunk.ordinal == ordinal
        assert 0 <= chunk.char_start <= chunk.char_end <= len(body)
        assert chunk.text.strip()
        if "```" not in chunk.text and "~~~" not in chunk.text:
            # comments never reach the index; code keeps its own, inline code spans included
            assert "<!--" not in INLINE_CODE.sub("", chunk.text)
        text = embedding_text("Fuzz", chunk.heading_path, chunk.text)
        assert chunk.token_count == embedder.count_tokens(text) <= limits.max_tokens


@FUZZ
@given(body=st.text())
def test_any_unicode_chunks_within_the_window(body: str, embedder) -> None:
    _check_chunks(body, embedder)


@FUZZ
@given(body=MARKDOWNISH)
@example(body="`<!--`")  # found by Hypothesis: a page writing about comments, in a code span
def test_markdown_shaped_noise_chunks_within_the_window(body: str, embedder) -> None:
    _check_chunks(body, embedder)


@FUZZ
@given(raw=st.binary(max_size=2000))
def test_binary_decoded_leniently_chunks_or_yields_nothing(raw: bytes, embedder) -> None:
    _check_chunks(raw.decode("utf-8", errors="replace"), embedder)


def test_a_comment_is_dropped_but_a_fenced_one_is_code(embedder) -> None:
    limits = ChunkLimits.for_window(embedder.max_input_tokens)
    body = "Visible <!-- hidden -->\n\n```html\n<!-- kept -->\n```\n"
    texts = [
        chunk.text
        for chunk in chunk_markdown(
            title="T", body=body, limits=limits, count_tokens=embedder.count_tokens
        )
    ]
    assert "hidden" not in " ".join(texts) and "<!-- kept -->" in " ".join(texts)


def test_a_huge_single_line_is_sliced_within_the_window(embedder) -> None:
    body = "refund " * 60_000 + "x" * 50_000  # ~470 kB, no sentence breaks at all
    _check_chunks(body, embedder)


@settings(max_examples=300, deadline=None)
@given(question=st.text(max_size=6000))
def test_keyword_query_never_fails_and_stays_bounded(question: str) -> None:
    query = keyword_query(question)
    assert len(query.terms) <= MAX_TERMS
    assert set(query.identifiers) <= set(query.terms)
    assert all(term and term.strip() == term for term in query.terms)
    lowered = [term.lower() for term in query.terms]
    assert len(lowered) == len(set(lowered))


@settings(max_examples=100, deadline=None)
@given(
    question=st.lists(
        st.sampled_from(["!", "&", "|", ":*", "'", '"', "(", ")", "<->", "--", ";", "DROP", "\\"]),
        max_size=30,
    ).map(" ".join)
)
def test_tsquery_and_sql_syntax_are_only_characters(question: str) -> None:
    query = keyword_query(question)
    assert all(ch.isalnum() or ch in "._-/:" for term in query.terms for ch in term)
