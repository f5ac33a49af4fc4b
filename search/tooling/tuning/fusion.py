"""Offline fusion fitting over candidate dumps (see ``search_fusion dump`` and ``fit``).

A dump holds, per eval question, every candidate the two legs returned with its cosine
similarity, its BM25 score and which leg ranked it: exactly what ``search.fusion.fuse`` sees.
Re-sorting those candidates under another weight reproduces the product's ranking under that
weight, so a weight grid costs no database or embedder time.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from search.fusion import FusionWeights, fuse
from search.results import Hit, RetrievalResult
from search.tooling.evaluation import (
    EvalCase,
    ndcg_at,
    ranked_documents,
    recall_at,
    reciprocal_rank,
)

WEIGHT_GRID = tuple(round(step * 0.05, 2) for step in range(21))
TOPIC_GRID = tuple(round(step * 0.1, 1) for step in range(26))  # FusionWeights.page_topic
# FusionWeights.quoted_phrase
PHRASE_GRID = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 16.0)
SHIPPED = FusionWeights()


@dataclass(frozen=True)
class DumpedCandidate:
    path: str
    heading_path: str
    similarity: float
    keyword_score: float
    vector_ranked: bool
    keyword_ranked: bool
    page_topic: float | None = None  # the page's centroid cosine (dumps before it have none)
    # What the local ranking stage reads besides (search.rerankers.features); older dumps lack it.
    title: str = ""
    vector_rank: int | None = None
    keyword_rank: int | None = None
    fused_score: float = 0.0
    token_count: int = 0
    page_chunks: int | None = None
    phrase_share: float = 0.0  # of the question's phrases (dumps before it have none)
    refers_to: str | None = None  # the page a cross-reference names (search.references)


@dataclass(frozen=True)
class DumpedCase:
    id: str
    question: str
    kind: str
    relevant: tuple[str, ...]
    identifier: bool  # the question carries an identifier the index can find
    coverage: float  # see search.results.HybridRows.keyword_coverage
    candidates: tuple[DumpedCandidate, ...]
    relevant_sections: tuple[str, ...] = ()
    term_idfs: dict[str, float] = field(default_factory=dict)


def dumped_case(case: EvalCase, result: RetrievalResult, *, identifier: bool) -> DumpedCase:
    return DumpedCase(
        id=case.id,
        question=case.question,
        kind=case.kind,
        relevant=case.relevant,
        identifier=identifier,
        coverage=result.keyword_coverage or 0.0,
        relevant_sections=case.relevant_sections,
        term_idfs=dict(result.term_idfs),
        candidates=tuple(dumped_candidate(hit) for hit in result.hits),
    )


def dumped_candidate(hit: Hit) -> DumpedCandidate:
    return DumpedCandidate(
        path=hit.path,
        heading_path=hit.heading_path,
        similarity=hit.similarity or 0.0,
        keyword_score=hit.keyword_score or 0.0,
        vector_ranked=hit.vector_rank is not None,
        keyword_ranked=hit.keyword_rank is not None,
        page_topic=hit.page_topic,
        title=hit.title,
        vector_rank=hit.vector_rank,
        keyword_rank=hit.keyword_rank,
        fused_score=hit.fused_score,
        token_count=hit.token_count,
        page_chunks=hit.page_chunks,
        phrase_share=hit.phrase_share or 0.0,
        refers_to=hit.refers_to,
    )


def dump_write(path: Path, name: str, cases: Iterable[DumpedCase]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for case in cases:
            handle.write(json.dumps({"set": name, **asdict(case)}) + "\n")


def dump_load(path: Path) -> tuple[str, list[DumpedCase]]:
    name, cases = "", []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            raw = json.loads(line)
            name = raw.pop("set")
            raw["relevant"] = tuple(raw["relevant"])
            raw["relevant_sections"] = tuple(raw.get("relevant_sections", ()))
            raw["candidates"] = tuple(DumpedCandidate(**c) for c in raw["candidates"])
            cases.append(DumpedCase(**raw))
    return name, cases


Ranker = Callable[[DumpedCase], list[str]]


def z_ranker(*, plain: float, identifier: float, page_topic: float = SHIPPED.page_topic) -> Ranker:
    """The product's fusion (``search.fusion.fuse``) at the given keyword weights (and, unless
    told otherwise, the shipped page-topic weight)."""

    def rank(case: DumpedCase) -> list[str]:
        weight = identifier if case.identifier else plain
        return fused_order(case, keyword_weight=weight, page_topic=page_topic)

    return rank


def fused_order(
    case: DumpedCase,
    *,
    keyword_weight: float,
    page_topic: float,
    quoted_phrase: float | None = None,
) -> list[str]:
    """The case's pages in the order ``fuse`` gives them at these weights."""
    return ranked_documents(
        c.path
        for c in fused_candidates(
            case, keyword_weight=keyword_weight, page_topic=page_topic, quoted_phrase=quoted_phrase
        )
    )


def fused_candidates(
    case: DumpedCase,
    *,
    keyword_weight: float,
    page_topic: float,
    quoted_phrase: float | None = None,
) -> list[DumpedCandidate]:
    """The case's candidates in the order ``fuse`` gives them at these weights; the phrase
    weight (the shipped one unless given) counts as ``FusionWeights.phrase_weight`` says."""
    candidates = case.candidates
    weights = SHIPPED if quoted_phrase is None else replace(SHIPPED, quoted_phrase=quoted_phrase)
    scores = fuse(
        similarities=[c.similarity for c in candidates],
        keyword_scores=[c.keyword_score for c in candidates],
        vector_ranked=[c.vector_ranked for c in candidates],
        keyword_ranked=[c.keyword_ranked for c in candidates],
        keyword_weight=keyword_weight,
        pages=[c.path for c in candidates],
        page_topics=[c.page_topic for c in candidates],
        page_topic_weight=page_topic,
        phrase_shares=[c.phrase_share for c in candidates],
        phrase_weight=weights.phrase_weight(coverage=case.coverage),
        refers_to=[c.refers_to for c in candidates],
    )
    order = sorted(range(len(candidates)), key=lambda i: -scores[i])
    return [candidates[i] for i in order]


def rrf_ranker(*, keyword_weight: float, k: int = 60) -> Ranker:
    """Weighted Reciprocal Rank Fusion of the two legs' own orders, for comparison."""

    def rank(case: DumpedCase) -> list[str]:
        candidates = case.candidates
        by_vector = sorted(
            (i for i, c in enumerate(candidates) if c.vector_ranked),
            key=lambda i: -candidates[i].similarity,
        )
        by_keyword = sorted(
            (i for i, c in enumerate(candidates) if c.keyword_ranked),
            key=lambda i: -candidates[i].keyword_score,
        )
        scores = [0.0] * len(candidates)
        for position, i in enumerate(by_vector, start=1):
            scores[i] += (1 - keyword_weight) / (k + position)
        for position, i in enumerate(by_keyword, start=1):
            scores[i] += keyword_weight / (k + position)
        order = sorted(range(len(candidates)), key=lambda i: -scores[i])
        return ranked_documents(candidates[i].path for i in order)

    return rank


def metrics(cases: Sequence[DumpedCase], ranker: Ranker) -> dict[str, float]:
    answerable = [case for case in cases if case.relevant]
    totals = {"recall@1": 0.0, "recall@5": 0.0, "mrr@10": 0.0, "ndcg@10": 0.0}
    for case in answerable:
        ranked = ranker(case)
        totals["recall@1"] += recall_at(ranked, case.relevant, 1)
        totals["recall@5"] += recall_at(ranked, case.relevant, 5)
        totals["mrr@10"] += reciprocal_rank(ranked, case.relevant)
        totals["ndcg@10"] += ndcg_at(ranked, case.relevant)
    return {key: value / max(len(answerable), 1) for key, value in totals.items()}


def oracle_ndcg(cases: Sequence[DumpedCase]) -> float:
    """nDCG@10 if each question got its own best keyword weight: the ceiling of a per-question
    signal that tells how much to trust the keyword leg."""
    answerable = [case for case in cases if case.relevant]
    best_total = 0.0
    rankers = [z_ranker(plain=w, identifier=w) for w in WEIGHT_GRID]
    for case in answerable:
        best_total += max(ndcg_at(ranker(case), case.relevant) for ranker in rankers)
    return best_total / max(len(answerable), 1)


@dataclass(frozen=True)
class FoldResult:
    held_out: str
    plain: float
    identifier: float
    ndcg: float


def leave_one_set_out(sets: dict[str, list[DumpedCase]]) -> list[FoldResult]:
    """For each set: fit both weights on the other sets (mean nDCG@10 over them), test on it."""
    folds = []
    for held_out in sets:
        training = [cases for name, cases in sets.items() if name != held_out] or [sets[held_out]]
        plain, identifier = best_weights(training)
        ranker = z_ranker(plain=plain, identifier=identifier)
        folds.append(
            FoldResult(
                held_out=held_out,
                plain=plain,
                identifier=identifier,
                ndcg=metrics(sets[held_out], ranker)["ndcg@10"],
            )
        )
    return folds


def best_weights(training: Sequence[Sequence[DumpedCase]]) -> tuple[float, float]:
    """The plain and identifier keyword weights with the best mean nDCG@10 over the sets.

    The two are independent (a question is one kind or the other), so each is a 1-D search;
    ties go to the smaller weight (the stronger leg alone)."""

    def mean_ndcg(ranker: Ranker, kind: bool) -> float:
        values = []
        for cases in training:
            subset = [c for c in cases if c.identifier == kind and c.relevant]
            if subset:
                values.append(metrics(subset, ranker)["ndcg@10"])
        return sum(values) / len(values) if values else 0.0

    plain = max(WEIGHT_GRID, key=lambda w: (mean_ndcg(z_ranker(plain=w, identifier=w), False), -w))
    identifier = max(
        WEIGHT_GRID, key=lambda w: (mean_ndcg(z_ranker(plain=w, identifier=w), True), -w)
    )
    return plain, identifier


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else math.nan


# --- Weight policies: how the keyword weight is chosen per question --------------------------

COVERAGE_GRID = (0.5, 0.6, 0.7, 0.8, 0.9, 1.01)  # 1.01: never "quoted"


@dataclass(frozen=True)
class Policy:
    """Keyword weight ``quoted`` when the best keyword hit holds at least ``coverage`` of the
    question's IDF, else ``identifier`` for a question with an identifier, else ``plain``."""

    plain: float
    identifier: float
    quoted: float
    coverage: float

    def weight(self, case: DumpedCase) -> float:
        if case.coverage >= self.coverage:
            return self.quoted
        return self.identifier if case.identifier else self.plain


def ndcg_table(cases: Sequence[DumpedCase]) -> list[tuple[DumpedCase, list[float]]]:
    """nDCG@10 of every answerable case at every grid weight, computed once."""
    rankers = [z_ranker(plain=w, identifier=w) for w in WEIGHT_GRID]
    return [
        (case, [ndcg_at(ranker(case), case.relevant) for ranker in rankers])
        for case in cases
        if case.relevant
    ]


def policy_ndcg(table: Sequence[tuple[DumpedCase, list[float]]], policy: Policy) -> float:
    index = {w: i for i, w in enumerate(WEIGHT_GRID)}
    values = [row[index[policy.weight(case)]] for case, row in table]
    return sum(values) / max(len(values), 1)


def best_policy(tables: Sequence[Sequence[tuple[DumpedCase, list[float]]]]) -> Policy:
    """The policy with the best mean over sets of each set's nDCG@10 (ties: smaller weights).

    That objective is a sum over cases, each weighted by 1 / its set's size, and a case falls
    in exactly one bucket (quoted, identifier, plain) once the coverage cut is fixed, so each
    bucket's weight is fitted on its own cases: an exact search, not a greedy one.
    """
    best: tuple[float, Policy] | None = None
    for coverage in COVERAGE_GRID:
        buckets: dict[str, list[float]] = {
            name: [0.0] * len(WEIGHT_GRID) for name in ("quoted", "identifier", "plain")
        }
        for table in tables:
            share = 1.0 / max(len(table), 1) / len(tables)
            for case, row in table:
                if case.coverage >= coverage:
                    bucket = "quoted"
                elif case.identifier:
                    bucket = "identifier"
                else:
                    bucket = "plain"
                for i, value in enumerate(row):
                    buckets[bucket][i] += value * share
        chosen = {name: _best_weight(totals) for name, totals in buckets.items()}
        score = sum(buckets[name][i] for name, i in chosen.items())
        policy = Policy(
            plain=WEIGHT_GRID[chosen["plain"]],
            identifier=WEIGHT_GRID[chosen["identifier"]],
            quoted=WEIGHT_GRID[chosen["quoted"]],
            coverage=coverage,
        )
        if best is None or score > best[0] + 1e-9:
            best = (score, policy)
    assert best is not None
    return best[1]


def _best_weight(totals: Sequence[float]) -> int:
    """The index of the best total in WEIGHT_GRID; on a tie, the lower weight."""
    return max(range(len(WEIGHT_GRID)), key=lambda i: (totals[i], -i))


@dataclass(frozen=True)
class TopicFold:
    held_out: str
    page_topic: float
    ndcg: float  # the held-out set at that weight
    without: float  # the held-out set with no page topic


SHIPPED_POLICY = Policy(
    plain=SHIPPED.keyword_plain,
    identifier=SHIPPED.keyword_identifier,
    quoted=SHIPPED.keyword_quoted,
    coverage=SHIPPED.quoted_coverage,
)


def shipped_ndcg(
    cases: Sequence[DumpedCase], *, page_topic: float, quoted_phrase: float | None = None
) -> float:
    """nDCG@10 under the shipped keyword-weight policy (``FusionWeights.keyword_weight``'s
    buckets) at page-topic weight ``page_topic`` (and phrase weight ``quoted_phrase``)."""

    def rank(case: DumpedCase) -> list[str]:
        return fused_order(
            case,
            keyword_weight=SHIPPED_POLICY.weight(case),
            page_topic=page_topic,
            quoted_phrase=quoted_phrase,
        )

    return metrics(cases, rank)["ndcg@10"]


def page_topic_folds(sets: dict[str, list[DumpedCase]]) -> tuple[list[TopicFold], float]:
    """Leave-one-set-out over ``TOPIC_GRID`` with the shipped keyword weights: each set gets
    the weight best on the others (mean nDCG@10; ties: the smaller). Also returns the weight
    best on every set."""
    grid = {name: [shipped_ndcg(c, page_topic=t) for t in TOPIC_GRID] for name, c in sets.items()}

    def best(names: Sequence[str]) -> int:
        return max(range(len(TOPIC_GRID)), key=lambda i: (mean(grid[n][i] for n in names), -i))

    folds = []
    for held_out in sets:
        i = best([name for name in sets if name != held_out] or [held_out])
        folds.append(TopicFold(held_out, TOPIC_GRID[i], grid[held_out][i], grid[held_out][0]))
    return folds, TOPIC_GRID[best(list(sets))]


@dataclass(frozen=True)
class PhraseFold:
    held_out: str
    quoted_phrase: float
    ndcg: float  # the held-out set's page nDCG@10 at that weight
    without: float  # ... with no phrase bonus
    section_recall: float | None  # its section R@1 at that weight (None: no section labels)
    section_without: float | None


def section_recall_at_1(cases: Sequence[DumpedCase], *, quoted_phrase: float) -> float | None:
    """Section R@1 under the shipped weights at phrase weight ``quoted_phrase``: the first
    candidate's (page, heading path) is a labelled section; None without section labels."""
    labelled = [c for c in cases if c.relevant and c.relevant_sections]
    if not labelled:
        return None
    hits = 0.0
    for case in labelled:
        order = fused_candidates(
            case,
            keyword_weight=SHIPPED_POLICY.weight(case),
            page_topic=SHIPPED.page_topic,
            quoted_phrase=quoted_phrase,
        )
        units = {(p, s) for p in case.relevant for s in case.relevant_sections}
        hits += bool(order) and (order[0].path, order[0].heading_path) in units
    return hits / len(labelled)


def phrase_folds(sets: dict[str, list[DumpedCase]]) -> tuple[list[PhraseFold], float]:
    """Leave-one-set-out over ``PHRASE_GRID`` with every other weight shipped: each set gets the
    weight best on the others (mean page nDCG@10; ties: the smaller). Also returns the weight
    best on every set."""
    grid = {
        name: [shipped_ndcg(c, page_topic=SHIPPED.page_topic, quoted_phrase=p) for p in PHRASE_GRID]
        for name, c in sets.items()
    }

    def best(names: Sequence[str]) -> int:
        return max(range(len(PHRASE_GRID)), key=lambda i: (mean(grid[n][i] for n in names), -i))

    folds = []
    for held_out, cases in sets.items():
        i = best([name for name in sets if name != held_out] or [held_out])
        folds.append(
            PhraseFold(
                held_out,
                PHRASE_GRID[i],
                grid[held_out][i],
                grid[held_out][0],
                section_recall_at_1(cases, quoted_phrase=PHRASE_GRID[i]),
                section_recall_at_1(cases, quoted_phrase=0.0),
            )
        )
    return folds, PHRASE_GRID[best(list(sets))]
