"""Training and validating the local ranking stage (``search.rerankers.local``) on the eval sets'
candidate dumps (``search_fusion dump``).

A dump holds, per question, the fused candidates with every leg's evidence: exactly what the
stage sees in production, in the same order. The stage reorders the first ``DEPTH`` of them
(``search.hybrid.CANDIDATES``, 20); the rest keep their fused order. A candidate's label is 2
when it is a labelled section of a relevant page, 1 when it is another chunk of a relevant
page, 0 otherwise; LightGBM's lambdarank optimises nDCG over each question's candidates.

Every figure is measured leave-one-set-out: the model that scores a set never saw it, nor any
other set over the same documentation (a set named "hugo/paraphrases" is held out with
"hugo/derived": they share pages, and a model may learn a corpus). Each set counts once in
training (its questions weighted by one over its size), so the three 300-case
mechanical sets do not outvote the hand-written ones.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import lightgbm
import numpy as np

from search.rerankers.features import FEATURE_NAMES, RankingQuestion, candidate_features
from search.rerankers.local import DEPTH, base_scores, stage_scores
from search.tooling.evaluation import ranked_documents, ranking_metrics
from search.tooling.tuning.fusion import DumpedCandidate, DumpedCase, dump_load

SEED = 7
# Tiny trees, a slow rate: the model learns corrections to the fused score (its starting
# score, ``search.rerankers.local.base_scores``), and only corrections that hold across sets.
# Chosen by the held-out sets' mean and worst set over a small grid (docs/retrieval.md): larger
# trees (15 leaves, 300 rounds) gained more on the mean (page nDCG@10 +0.011) but lost up to
# 0.032 on one held-out set; 40 candidates instead of 20 gained less.
PARAMS: dict[str, object] = {
    "objective": "lambdarank",
    "metric": "ndcg",
    "ndcg_eval_at": [10],
    "learning_rate": 0.03,
    "num_leaves": 4,
    "min_data_in_leaf": 80,
    "feature_fraction": 0.8,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 1.0,
    "seed": SEED,
    "deterministic": True,
    "num_threads": 1,
    "verbosity": -1,
}
ROUNDS = 300

Order = Callable[[DumpedCase], list[int]]  # candidate indexes, best first


def ranking_question(case: DumpedCase) -> RankingQuestion:
    return RankingQuestion(
        text=case.question,
        keyword_coverage=case.coverage,
        identifier=case.identifier,
        term_idfs=case.term_idfs,
    )


def labels(case: DumpedCase, candidates: Sequence[DumpedCandidate]) -> list[int]:
    sections = set(case.relevant_sections)
    return [
        (2 if c.heading_path in sections else 1) if c.path in case.relevant else 0
        for c in candidates
    ]


@dataclass(frozen=True)
class TrainingData:
    features: np.ndarray
    labels: np.ndarray
    groups: list[int]  # candidates per question, in order
    weights: np.ndarray  # per question: one over its set's trained questions

    @property
    def sha256(self) -> str:
        digest = hashlib.sha256()
        for array in (self.features, self.labels, np.array(self.groups), self.weights):
            digest.update(np.ascontiguousarray(array).tobytes())
        return digest.hexdigest()


def training_data(sets: Mapping[str, Sequence[DumpedCase]], *, depth: int = DEPTH) -> TrainingData:
    """The first ``depth`` candidates of every question that has a relevant one among them."""
    rows, targets, groups, weights = [], [], [], []
    for cases in sets.values():
        usable = [
            case
            for case in cases
            if case.relevant and any(c.path in case.relevant for c in case.candidates[:depth])
        ]
        for case in usable:
            candidates = case.candidates[:depth]
            rows.append(candidate_features(ranking_question(case), candidates))
            targets.extend(labels(case, candidates))
            groups.append(len(candidates))
            weights.append(1.0 / len(usable) / len(sets))
    if not rows:
        raise ValueError("no question has a relevant candidate to learn from")
    return TrainingData(
        features=np.vstack(rows),
        labels=np.array(targets, dtype=np.float64),
        groups=groups,
        weights=np.array(weights) * sum(groups) / len(groups),
    )


def train(
    data: TrainingData, *, params: Mapping[str, object] = PARAMS, rounds: int = ROUNDS
) -> lightgbm.Booster:
    dataset = lightgbm.Dataset(
        data.features,
        label=data.labels,
        group=data.groups,
        init_score=base_scores(data.features),
        feature_name=list(FEATURE_NAMES),
        free_raw_data=False,
    )
    # lambdarank weighs a question's pairs by the weight of its first row.
    dataset.set_weight(np.repeat(data.weights, data.groups))
    return lightgbm.train(dict(params), dataset, num_boost_round=rounds)


def model_order(booster: lightgbm.Booster, *, window: int | None = None) -> Order:
    """The stage's order of a case's candidates (``stage_scores``: the first ``DEPTH`` by the
    model, the rest as fused), for a caller reading ``window`` hits (None: the eval's view)."""

    def order(case: DumpedCase) -> list[int]:
        if not case.candidates:
            return []
        asked = dataclasses.replace(ranking_question(case), window=window)
        scores = stage_scores(booster, asked, case.candidates)
        return sorted(range(len(scores)), key=lambda i: (-scores[i], i))

    return order


def one_page(case: DumpedCase) -> DumpedCase | None:
    """The case as a help center of one page would pose it: only its relevant page's
    candidates, when sections are labelled and the page has two or more (else None). Every
    eval corpus has hundreds of pages, so no set shows what the stage does where all the
    candidates are of one page, as on a help center of a few pages; this view does: which of
    the page's sections it puts first. The shipped stage keeps a page's own order
    (``search.rerankers.local.pages_placed``), so its row equals the fused one but where a case
    has two relevant pages; a stage that reorders inside a page shows here first."""
    if not case.relevant_sections:
        return None
    candidates = tuple(c for c in case.candidates[:DEPTH] if c.path in case.relevant)
    if len(candidates) < 2:
        return None
    return dataclasses.replace(case, candidates=candidates)


def fused(case: DumpedCase) -> list[int]:
    return list(range(len(case.candidates)))


def leg(name: str) -> Order:
    """One leg's own order among the candidates (the vector leg by cosine, the keyword leg by
    BM25), the candidates it did not rank after."""

    def order(case: DumpedCase) -> list[int]:
        ranks = [c.vector_rank if name == "vector" else c.keyword_rank for c in case.candidates]
        return sorted(range(len(ranks)), key=lambda i: (ranks[i] is None, ranks[i] or 0, i))

    return order


METRICS = ("recall@1", "mrr@10", "ndcg@10")


def scores(cases: Iterable[DumpedCase], order: Order) -> dict[str, float]:
    """Page and section R@1, MRR@10 and nDCG@10 over the answerable cases."""
    totals: dict[str, float] = {}
    count = 0
    for case in cases:
        if not case.relevant:
            continue
        count += 1
        ranked = [case.candidates[i] for i in order(case)]
        page = ranking_metrics(ranked_documents(c.path for c in ranked), case.relevant)
        units = list(dict.fromkeys((c.path, c.heading_path) for c in ranked))
        wanted = [(p, s) for p in case.relevant for s in case.relevant_sections]
        section = ranking_metrics(units, wanted) if wanted else page
        for key in METRICS:
            totals[f"page {key}"] = totals.get(f"page {key}", 0.0) + page[key]
            totals[f"section {key}"] = totals.get(f"section {key}", 0.0) + section[key]
    return {key: value / max(count, 1) for key, value in totals.items()}


@dataclass(frozen=True)
class Fold:
    held_out: str
    rows: dict[str, dict[str, float]]  # "fused", "vector leg", "keyword leg", "stage", ...
    one_page_cases: int = 0  # the cases of the "one page" rows (``one_page``)


ANSWER_WINDOW = 10  # the passages the chat's answer step reads (assistant ANSWER_PASSAGES)


def leave_one_set_out(
    sets: Mapping[str, Sequence[DumpedCase]],
    *,
    params: Mapping[str, object] = PARAMS,
    rounds: int = ROUNDS,
) -> list[Fold]:
    folds = []
    for held_out, cases in sets.items():
        others = {name: c for name, c in sets.items() if corpus(name) != corpus(held_out)}
        booster = train(training_data(others), params=params, rounds=rounds)
        single = [view for view in map(one_page, cases) if view is not None]
        folds.append(
            Fold(
                held_out=held_out,
                rows={
                    "fused": scores(cases, fused),
                    "vector leg": scores(cases, leg("vector")),
                    "keyword leg": scores(cases, leg("keyword")),
                    "stage": scores(cases, model_order(booster)),
                    "stage, 10 read": scores(cases, model_order(booster, window=ANSWER_WINDOW)),
                    "fused, one page": scores(single, fused),
                    "stage, one page": scores(single, model_order(booster)),
                },
                one_page_cases=len(single),
            )
        )
    return folds


def corpus(set_name: str) -> str:
    """The documentation a set is written over: its name up to the first "/"."""
    return set_name.split("/", 1)[0]


def dumps_load(paths: Iterable[Path]) -> dict[str, list[DumpedCase]]:
    return dict(dump_load(path) for path in paths)


def dumps_checksum(paths: Iterable[Path]) -> str:
    """sha256 over the dumps' bytes, in name order: the data a shipped model was trained on."""
    digest = hashlib.sha256()
    for path in sorted(paths, key=lambda p: p.name):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def model_save(booster: lightgbm.Booster, path: Path, *, metadata: Mapping[str, object]) -> None:
    """The model as LightGBM's text format, and beside it what it was trained on and how."""
    booster.save_model(str(path))
    path.with_suffix(".json").write_text(
        json.dumps({**metadata, "features": list(FEATURE_NAMES)}, indent=2) + "\n",
        encoding="utf-8",
    )
