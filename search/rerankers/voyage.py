"""Voyage AI's hosted reranker (rerank-2.5 by default) through the official ``voyageai`` SDK.

The call itself (bounded retries, ``Retry-After``, per-attempt timeouts, scrubbed one-line
errors) is ``kb.voyage.VoyageAPI``, shared with the Voyage embedder; this module builds the
request and checks the answer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import voyageai
from voyageai.object.reranking import RerankingObject

from kb.chunking import embedding_text
from kb.voyage import VoyageAPI, VoyageCallFailed
from search.rerankers.base import RerankError
from search.rerankers.features import RankingQuestion
from search.results import Hit

DEFAULT_MODEL = "rerank-2.5"


class VoyageReranker:
    """Scores passages with Voyage's rerank API; any failure becomes a one-line ``RerankError``."""

    scores_relevance = True  # rerank-2.5's relevance score, comparable across questions

    def __init__(self, *, api: VoyageAPI, model: str = DEFAULT_MODEL) -> None:
        self._api = api
        self.name = f"voyage/{model}"
        self.model = model

    def __repr__(self) -> str:
        return f"VoyageReranker(model={self.model!r}, base_url={self._api.base_url!r})"

    def rerank(self, *, question: RankingQuestion, hits: Sequence[Hit]) -> list[float]:
        """The hits' passages as the embedder read them (title, heading path, text)."""
        return self.rerank_passages(
            question=question.text,
            passages=[embedding_text(hit.title, hit.heading_path, hit.text) for hit in hits],
        )

    def rerank_passages(self, *, question: str, passages: Sequence[str]) -> list[float]:
        documents = list(passages)
        if not documents:
            return []

        def request(client: voyageai.Client) -> RerankingObject:
            try:
                return client.rerank(
                    query=question, documents=documents, model=self.model, truncation=True
                )
            except IndexError as exc:
                # The SDK looks each result's index up in `documents` before we can check it.
                raise _unusable(
                    f"Voyage rerank returned an index outside the {len(documents)} passages"
                ) from exc

        try:
            return self._api.call(
                "rerank",
                request,
                parse=lambda response: _scores_in_passage_order(
                    [(result.index, result.relevance_score) for result in response.results],
                    len(documents),
                ),
                log_fields={"model": self.model, "passages": len(documents)},
            )
        except VoyageCallFailed as exc:
            raise RerankError(exc.reason) from exc


def _scores_in_passage_order(
    results: list[tuple[object, object]], passage_count: int
) -> list[float]:
    """Map the API's best-first ``(index, score)`` list back onto the passages, checking it."""
    scores: list[float | None] = [None] * passage_count
    for index, score in results:
        if isinstance(index, bool) or not isinstance(index, int):
            raise _unusable(f"Voyage rerank returned a non-integer index {index!r}")
        if not 0 <= index < passage_count:
            raise _unusable(f"Voyage rerank returned index {index} for {passage_count} passages")
        if scores[index] is not None:
            raise _unusable(f"Voyage rerank returned passage index {index} twice")
        if (
            isinstance(score, bool)
            or not isinstance(score, int | float)
            or not math.isfinite(score)
        ):
            raise _unusable(f"Voyage rerank returned score {score!r} for passage {index}")
        scores[index] = float(score)
    missing = [index for index, score in enumerate(scores) if score is None]
    if missing:
        raise _unusable(f"Voyage rerank left out passage indexes {missing[:10]}")
    return [score for score in scores if score is not None]


def _unusable(reason: str) -> VoyageCallFailed:
    return VoyageCallFailed(reason, retryable=False)
