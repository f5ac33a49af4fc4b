"""Retrieval results built by hand, for the decisions that read them (follow-ups, no-answer)."""

from __future__ import annotations

from search.results import Hit, RetrievalResult


def one_hit_result(
    *,
    question: str = "",
    path: str,
    title: str,
    text: str,
    similarity: float | None,
    heading_path: str = "",
    embedding_model: str = "test",
) -> RetrievalResult:
    """A result with one hit that both legs ranked (the vector leg only with a similarity)."""
    hit = Hit(
        chunk_id=1,
        document_id=1,
        path=path,
        title=title,
        heading_path=heading_path,
        text=text,
        char_start=0,
        char_end=len(text),
        updated_on=None,
        vector_rank=1 if similarity is not None else None,
        keyword_rank=1,
        fused_score=1.0,
        similarity=similarity,
    )
    return RetrievalResult(
        question=question,
        hits=[hit],
        candidates=1,
        vector_candidates=1,
        keyword_candidates=1,
        embedding_model=embedding_model,
        reranker="none",
    )
