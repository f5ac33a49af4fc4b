"""The local ranking stage: a LightGBM lambdarank model over the evidence retrieval already has
(``search.rerankers.features``), shipped as a file in the repository and run on the CPU.

No PyPI package ships cross-encoder weights, and none may be downloaded at run time; what the
legs computed, seen against the other candidates of the same question, is enough to reorder
them where the fixed fusion weights go wrong (a short FAQ page beside long manuals, a
setting's own section on a long reference page). The model scores corrections to the fused
score, not a new score from nothing (``base_scores``). The model is trained on the eval sets'
candidate dumps by ``manage.py search_ranker train`` and validated leave-one-set-out
(docs/retrieval.md, "The local ranking stage"); the file beside it records the training data's
checksum, the parameters and the held-out figures.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path

import lightgbm
import numpy as np

from search.rerankers.base import RerankError
from search.rerankers.features import (
    FEATURE_NAMES,
    RankedCandidate,
    RankingQuestion,
    candidate_features,
)
from search.results import Hit

MODEL_FILE = Path(__file__).resolve().parent / "models" / "ranker.txt"


class LocalRanker:
    """Scores the fused candidates with the shipped model; its scores order one question's
    candidates and mean nothing across questions."""

    scores_relevance = False

    def __init__(self, *, model_file: Path = MODEL_FILE) -> None:
        self.booster = _booster(model_file)
        self.name = f"local/{model_file.stem}"

    def rerank(self, *, question: RankingQuestion, hits: Sequence[Hit]) -> list[float]:
        if not hits:
            return []
        try:
            return [float(s) for s in stage_scores(self.booster, question, hits)]
        except Exception as exc:  # a model that cannot score keeps the fused order
            raise RerankError(f"the local ranking model failed: {exc}") from exc


def stage_scores(
    booster: lightgbm.Booster,
    question: RankingQuestion,
    candidates: Sequence[RankedCandidate],
    *,
    keep_page_order: bool = True,
) -> np.ndarray:
    """The stage's score of each candidate (given in fused order): the fused score plus the
    model's correction. With ``keep_page_order`` the model places pages, not sections: each
    page's scores are handed to its candidates in their fused order, so a page's sections keep
    the fusion's order among themselves (reordering them inside the right page cost the
    sample's answers their annual-refund section; docs/retrieval.md)."""
    features = candidate_features(question, candidates)
    scores = base_scores(features) + booster.predict(features, num_threads=1)
    if not keep_page_order:
        return scores
    by_page: dict[str, list[int]] = {}
    for i, candidate in enumerate(candidates):
        by_page.setdefault(candidate.path, []).append(i)
    slotted = np.empty_like(scores)
    for members in by_page.values():
        slotted[members] = sorted(scores[members], reverse=True)
    return slotted


def base_scores(features: np.ndarray) -> np.ndarray:
    """Where the model starts: the fused score. It is trained as corrections to it (LightGBM's
    initial scores), so a candidate's score moves only where the evidence the model learnt
    from several sets says the fusion got it wrong."""
    return np.array(features[:, FEATURE_NAMES.index("fused_score")], dtype=np.float64)


@functools.cache
def _booster(model_file: Path) -> lightgbm.Booster:
    """The model, loaded once per process (~1 ms), checked against the features this code
    computes: a model trained on other features would score garbage silently."""
    if not model_file.exists():
        raise RerankError(f"no local ranking model at {model_file}: run search_ranker train")
    booster = lightgbm.Booster(model_file=str(model_file))
    if tuple(booster.feature_name()) != FEATURE_NAMES:
        raise RerankError(
            f"{model_file.name} was trained on other features than search.rerankers.features "
            "computes: run search_ranker train again"
        )
    return booster


def model_metadata(model_file: Path = MODEL_FILE) -> dict[str, object]:
    """What the model was trained on (``search_ranker train`` writes it beside the model)."""
    data: dict[str, object] = json.loads(
        model_file.with_suffix(".json").read_text(encoding="utf-8")
    )
    return data
