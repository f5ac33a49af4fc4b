"""What the local ranking stage reads of a question and its candidates: the evidence both legs
already computed (cosine, BM25, ranks, the fused score, the page's topic) seen relative to the
other candidates, and cheap facts about the passage (its page's length in chunks, its section's
depth, whether its headings hold the question's rare words).

One function computes them for serving (``search.rerankers.local``, from ``Hit``s) and for
training (``search.tooling.tuning.ranking``, from the candidate dumps), so a model never sees
features computed one way in the lab and another in production.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from search.fusion import FusionWeights
from search.lexemes import lexemes, words

# A rank a leg did not give: past every leg depth (40 chunks plus the pages' best chunks).
UNRANKED = 200

FEATURE_NAMES = (
    # the question
    "keyword_weight",  # the fusion's per-question trust in BM25 (FusionWeights.keyword_weight)
    "keyword_coverage",  # the most of the question's IDF one keyword hit holds
    "identifier",  # it carries a pasted code
    "question_terms",  # how many of its words the index knows
    "question_words",
    # the candidate's evidence, raw and against the other candidates
    "similarity",
    "similarity_gap",  # below the best cosine among the candidates
    "similarity_z",
    "bm25_share",  # its BM25 over the best BM25 among the candidates
    "bm25_z",
    "vector_rank",  # log of the leg's rank (UNRANKED when the leg missed it)
    "keyword_rank",
    "page_topic",  # the page's centroid cosine
    "page_topic_gap",  # below the best page's
    "fused_score",
    "fused_position",  # log of its place in the fused order
    "page_position",  # its page's place among the candidates' pages (fused order)
    "position_in_page",  # 0 for its page's best candidate
    "page_candidates",  # how many of the candidates are its page's
    # against the other candidates of its own page: which section of a page answers
    "similarity_page_gap",
    "bm25_page_gap",  # below its page's best BM25, over the best BM25 among the candidates
    "fused_page_gap",
    # the passage
    "page_chunks",  # log of its page's length in chunks: a long page is not a better page
    "token_count",
    "section_depth",  # heading levels above the passage (0: the page's opening text)
    "heading_idf_share",  # the question's IDF its heading path holds
    "title_idf_share",  # the question's IDF its page title holds
)


class RankedCandidate(Protocol):
    """What the stage reads of a candidate: ``search.results.Hit`` and the dumped candidates of
    ``search.tooling.tuning.fusion`` both have it."""

    @property
    def path(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def heading_path(self) -> str: ...
    @property
    def similarity(self) -> float | None: ...
    @property
    def keyword_score(self) -> float | None: ...
    @property
    def vector_rank(self) -> int | None: ...
    @property
    def keyword_rank(self) -> int | None: ...
    @property
    def page_topic(self) -> float | None: ...
    @property
    def fused_score(self) -> float: ...
    @property
    def token_count(self) -> int: ...
    @property
    def page_chunks(self) -> int | None: ...


class QuestionEvidence(Protocol):
    """What retrieval learnt of a question's words (``HybridRows``, ``RetrievalResult``)."""

    @property
    def keyword_coverage(self) -> float | None: ...
    @property
    def identifier_phrases(self) -> tuple[str, ...]: ...
    @property
    def term_idfs(self) -> dict[str, float]: ...


@dataclass(frozen=True)
class RankingQuestion:
    """The question as the stage sees it: its text and what retrieval learnt of its words."""

    text: str
    keyword_coverage: float = 0.0
    identifier: bool = False
    term_idfs: Mapping[str, float] = field(default_factory=dict)
    # How many of the ranked hits the caller reads (retrieve's ``limit``; the chat's answer step
    # reads ten): the stage keeps the fusion's choice of those and orders them. None: no edge.
    window: int | None = None

    @classmethod
    def of(
        cls, text: str, found: QuestionEvidence, *, window: int | None = None
    ) -> RankingQuestion:
        """``text`` with what retrieval found of its words (``search.results.HybridRows`` or
        ``RetrievalResult``: both carry the keyword coverage, the identifier phrases and the
        terms' IDFs)."""
        return cls(
            text=text,
            keyword_coverage=found.keyword_coverage or 0.0,
            identifier=bool(found.identifier_phrases),
            term_idfs=found.term_idfs,
            window=window,
        )

    @property
    def keyword_weight(self) -> float:
        return FusionWeights().keyword_weight(
            identifier=self.identifier, vector_leg=True, coverage=self.keyword_coverage
        )


def candidate_features(
    question: RankingQuestion, candidates: Sequence[RankedCandidate]
) -> np.ndarray:
    """One row of ``FEATURE_NAMES`` per candidate; ``candidates`` in fused order."""
    count = len(candidates)
    matrix = np.zeros((count, len(FEATURE_NAMES)), dtype=np.float64)
    if not count:
        return matrix
    similarities = np.array([c.similarity or 0.0 for c in candidates])
    bm25 = np.array([c.keyword_score or 0.0 for c in candidates])
    topics = np.array([np.nan if c.page_topic is None else c.page_topic for c in candidates])
    pages = _page_places(candidates)
    idfs = question.term_idfs
    total_idf = sum(idfs.values()) or 1.0
    best_topic = np.nanmax(topics) if not np.all(np.isnan(topics)) else np.nan
    question_row = (
        question.keyword_weight,
        question.keyword_coverage,
        float(question.identifier),
        float(len(idfs)),
        float(len(words(question.text))),
    )
    similarity_z = _z(similarities)
    bm25_z = _z(bm25)
    best_bm25 = float(bm25.max()) or 1.0
    fused = np.array([c.fused_score for c in candidates])
    page_best: dict[str, tuple[float, float, float]] = {}
    for i, candidate in enumerate(candidates):
        best = page_best.get(candidate.path, (-np.inf, -np.inf, -np.inf))
        page_best[candidate.path] = (
            max(best[0], similarities[i]),
            max(best[1], bm25[i]),
            max(best[2], fused[i]),
        )
    for i, candidate in enumerate(candidates):
        page_position, position_in_page, page_candidates = pages[i]
        matrix[i] = (
            *question_row,
            similarities[i],
            similarities.max() - similarities[i],
            similarity_z[i],
            bm25[i] / best_bm25,
            bm25_z[i],
            math.log(candidate.vector_rank or UNRANKED),
            math.log(candidate.keyword_rank or UNRANKED),
            topics[i],
            best_topic - topics[i],
            candidate.fused_score,
            math.log(i + 1),
            float(page_position),
            float(position_in_page),
            float(page_candidates),
            page_best[candidate.path][0] - similarities[i],
            (page_best[candidate.path][1] - bm25[i]) / best_bm25,
            page_best[candidate.path][2] - fused[i],
            np.nan if candidate.page_chunks is None else math.log(max(candidate.page_chunks, 1)),
            float(candidate.token_count),
            float(candidate.heading_path.count(" > ") + 1 if candidate.heading_path else 0),
            _idf_share(candidate.heading_path, idfs, total_idf),
            _idf_share(candidate.title, idfs, total_idf),
        )
    return matrix


def _z(values: np.ndarray) -> np.ndarray:
    spread = float(values.std()) or 1.0
    return (values - values.mean()) / spread


def _idf_share(text: str, idfs: Mapping[str, float], total: float) -> float:
    if not text or not idfs:
        return 0.0
    held = lexemes(text)
    return sum(idf for lexeme, idf in idfs.items() if lexeme in held) / total


def _page_places(candidates: Sequence[RankedCandidate]) -> list[tuple[int, int, int]]:
    """Per candidate (in fused order): its page's place among the pages, its own place among
    its page's candidates, and how many candidates its page has."""
    page_order: dict[str, int] = {}
    seen: dict[str, int] = {}
    for candidate in candidates:
        page_order.setdefault(candidate.path, len(page_order))
        seen[candidate.path] = seen.get(candidate.path, 0) + 1
    places, so_far = [], dict.fromkeys(seen, 0)
    for candidate in candidates:
        places.append((page_order[candidate.path], so_far[candidate.path], seen[candidate.path]))
        so_far[candidate.path] += 1
    return places
