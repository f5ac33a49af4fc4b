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

from search.hybrid import CANDIDATES
from search.rerankers.base import RerankError
from search.rerankers.features import (
    FEATURE_NAMES,
    RankedCandidate,
    RankingQuestion,
    candidate_features,
)
from search.results import Hit

MODEL_FILE = Path(__file__).resolve().parent / "models" / "ranker.txt"
# The fused candidates the model scores: those retrieval hands a reranker, which it learnt on.
DEPTH = CANDIDATES


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
    depth: int = DEPTH,
) -> np.ndarray:
    """The stage's score of each candidate (given in fused order): the fused score plus the
    model's correction, for the first ``depth`` candidates (``DEPTH``, what the model was
    trained on; the benchmark asks for more to time it); any further ones follow them in their
    fused order.

    The candidates the fusion put within the caller's ``window`` (the passages the answer
    step reads) stay within it, reordered among themselves, and so do the others: letting the
    stage bring a passage into those ten lowered the answers on two of five sets (the sample's
    report half 93.8% -> 90.6% facts stated) while raising the answering section seen on three
    (docs/retrieval.md, "The local ranking stage"), so what is read stays the fusion's choice and
    the stage decides its order.

    The stage places pages; a page's own passages keep their fused order (``pages_placed``)."""
    head = candidates[:depth]
    features = candidate_features(question, head)
    scores = base_scores(features) + booster.predict(features, num_threads=1)
    scores = pages_placed(scores, [candidate.path for candidate in head])
    scores = np.concatenate(
        [scores, scores.min() - 1.0 - np.arange(len(candidates) - len(head), dtype=np.float64)]
    )
    window = question.window
    if window is not None and 0 < window < len(scores):
        scores[:window] += scores.max() - scores[window:].min() + 1.0
    return scores


def pages_placed(scores: np.ndarray, paths: Sequence[str]) -> np.ndarray:
    """``scores`` (of candidates in fused order) with each page's scores handed to its own
    candidates in their fused order, best first: where the stage puts a page stands, and which
    of the page's passages comes first stays the fusion's.

    The model's gain is in placing pages: it lifts a page that several candidates come from, by
    lifting that page's lesser chunks, and so on a help center of a few pages, whose candidates
    are nearly all of one page, it turned the page's order over ("Refund Policy > Annual plans"
    fell from first to seventh for "We paid for a year up front. Until when can we still get a
    refund?"). Within one page it is no better than the fusion, held out (section MRR@10 0.881
    against 0.886 over the six sets with sections, each case read as its relevant page's
    candidates alone); a model held to score a chunk lower the further it is below its page's
    best lost every gain over the fusion (docs/retrieval.md, "The local ranking stage")."""
    placed = np.array(scores, dtype=np.float64)
    pages: dict[str, list[int]] = {}
    for index, path in enumerate(paths):
        pages.setdefault(path, []).append(index)
    for indexes in pages.values():
        placed[indexes] = sorted(scores[indexes], reverse=True)
    return placed


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
