"""What retrieval returns: ranked hits with every leg's evidence, timings and degradation."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

LEGS = ("vector", "keyword")
# Taken off the confidence when the question names something (Klarna, QuickBooks) that no
# visible page mentions. Measured on corpus/eval.jsonl at threshold 0.35: unanswerable
# questions refused 29% -> 57%, answerable ones kept unchanged at 96% (the two answerable
# questions with such a name, GCS and France, keep 0.60 and 0.41).
UNKNOWN_NAME_PENALTY = 0.2


class RetrievalUnavailable(RuntimeError):
    """Every retrieval leg failed: there is nothing to answer from."""


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk with every leg's evidence: ``search.services.hybrid_search`` returns
    them in fused order, ``retrieve`` reranks them (setting ``rerank_score``)."""

    chunk_id: int
    document_id: int
    path: str  # the citation id, e.g. policies/refunds.md
    title: str
    heading_path: str
    text: str
    char_start: int
    char_end: int
    updated_on: datetime.date | None  # lets the answer step prefer the newer of two pages
    vector_rank: int | None  # 1-based rank in the vector leg, None when the leg missed it
    keyword_rank: int | None
    fused_score: float  # the legs' z-scored scores combined (see search.fusion.fuse)
    similarity: float | None  # cosine similarity to the question (None without a vector leg)
    keyword_score: float | None = None  # BM25 against the question (None without a keyword leg)
    rerank_score: float | None = None  # set when a reranker ordered the candidates
    page_topic: float | None = None  # the page's centroid cosine (FusionWeights.page_topic)
    token_count: int = 0  # the chunk's length in the model's word pieces
    page_chunks: int | None = None  # how many chunks its page has (None without the page topic)
    # The share of the question's phrases it holds as written: read only for a question that
    # quotes the docs, in three phrases or more (``search.terms``); None otherwise.
    phrase_share: float | None = None
    # The page this chunk sends the reader to, when it is a cross-reference to another candidate
    # ("See [Logging](…) for …", ``search.references``): that page ranks at least as high.
    refers_to: str | None = None
    # Not retrieved but read beside the hits: another section of a page they come from
    # (``search.services.with_page_sections``); no leg ranked it and its fused score is 0.
    page_section: bool = False
    # Its place among its page's chunks (-1: not known): a long section is cut into chunks one
    # after the other, and the answer step reads two of them together as the page does.
    ordinal: int = -1

    @property
    def section(self) -> str:
        return self.heading_path or self.title

    def evidence(self) -> dict[str, Any]:
        """Where the hit is and how each stage scored it, as JSON: the debug endpoint shows it
        and an answer keeps it, so both always report the same evidence."""
        return {
            "chunk_id": self.chunk_id,
            "document_id": self.document_id,
            "path": self.path,
            "char_start": self.char_start,
            "char_end": self.char_end,
            "ordinal": self.ordinal,
            "updated_on": self.updated_on.isoformat() if self.updated_on else None,
            "vector_rank": self.vector_rank,
            "keyword_rank": self.keyword_rank,
            "fused_score": self.fused_score,
            "similarity": self.similarity,
            "keyword_score": self.keyword_score,
            "rerank_score": self.rerank_score,
            "page_topic": self.page_topic,
            "token_count": self.token_count,
            "page_chunks": self.page_chunks,
            "phrase_share": self.phrase_share,
            "refers_to": self.refers_to,
            "page_section": self.page_section,
        }


@dataclass(frozen=True)
class HybridRows:
    """The hybrid statement's candidates, fused (``search.services.hybrid_search``)."""

    candidates: list[Hit]  # fused order, not yet reranked
    vector_candidates: int
    keyword_candidates: int
    # The share of the question's IDF that the best-covering keyword hit holds: near 1 when a
    # passage has every rare word of the question (it quotes the page), low for a paraphrase;
    # words no chunk holds count against it.
    keyword_coverage: float | None = None
    identifier_phrases: tuple[str, ...] = ()  # the codes boosted, named numbers included
    # The question's lexemes that some chunk holds, with their IDF (``search.terms``): the
    # answerer weighs the question's words by them.
    term_idfs: dict[str, float] = field(default_factory=dict)


@dataclass
class RetrievalResult:
    question: str
    hits: list[Hit]  # best first, at most `limit`
    candidates: int  # fused candidates handed to the reranker
    vector_candidates: int
    keyword_candidates: int
    embedding_model: str
    reranker: str  # "none" when the fused order was kept
    # The reranker's scores are relevance on a fixed scale (Voyage), so the best one is the
    # confidence; a learned order's scores are not (search.rerankers.base.Reranker).
    rerank_scores_relevance: bool = False
    degraded: bool = False
    failed_stages: list[str] = field(default_factory=list)  # e.g. ["embed"] or ["rerank"]
    errors: dict[str, str] = field(default_factory=dict)  # stage -> one-line reason
    timings_ms: dict[str, float] = field(default_factory=dict)  # stage -> milliseconds
    unknown_names: list[str] = field(default_factory=list)  # names no visible page mentions
    keyword_coverage: float | None = None  # see HybridRows
    identifier_phrases: tuple[str, ...] = ()  # the pasted codes the keyword leg boosted
    # The question's index lexemes with their IDF (see ``HybridRows``).
    term_idfs: dict[str, float] = field(default_factory=dict)

    @property
    def confidence(self) -> float | None:
        """How sure retrieval is that something answers: the top rerank score when a reranker
        that scores relevance ordered them, else the best cosine similarity among the hits;
        None when there is nothing to judge by.
        Compared with the calibrated "no answer" threshold; lowered when the question names
        something no visible page mentions."""
        if not self.hits:
            return None
        if self.rerank_scores_relevance and self.hits[0].rerank_score is not None:
            score = self.hits[0].rerank_score
        else:
            similarities = [hit.similarity for hit in self.hits if hit.similarity is not None]
            if not similarities:
                return None
            score = max(similarities)
        return score - UNKNOWN_NAME_PENALTY if self.unknown_names else score

    def evidence(self) -> dict[str, Any]:
        """How retrieval went, as JSON, without the hits (each caller shows them its own way;
        ``Hit.evidence`` is their common part)."""
        return {
            "confidence": self.confidence,
            "unknown_names": self.unknown_names,
            "degraded": self.degraded,
            "failed_stages": self.failed_stages,
            "errors": self.errors,
            "embedding_model": self.embedding_model,
            "reranker": self.reranker,
            "candidates": self.candidates,
            "vector_candidates": self.vector_candidates,
            "keyword_candidates": self.keyword_candidates,
            "identifier_phrases": list(self.identifier_phrases),
        }
