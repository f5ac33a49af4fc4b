"""Fusing the two legs' scores: a convex combination of z-scored scores with a keyword weight
chosen per question, plus each page's topic on its best candidate (``FusionWeights``).
``search.hybrid`` scores every candidate by both legs and ``search.services.hybrid_search``
calls ``fuse`` on those scores; ``search.tooling.tuning.fusion`` replays it offline to choose
the weights."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class FusionWeights:
    """How the legs are combined: a convex combination of each leg's z-scored scores,
    ``(1 - w) * z(cosine) + w * z(BM25)``, with the keyword weight ``w`` chosen per question.

    Rank fusion (RRF) at any fixed weight lost to a leg alone on real documentation, and
    silencing the keyword leg lost the questions that reuse a page's own words: scores carry
    how far apart two candidates are, ranks do not. Which leg to trust depends on the question:
    when one passage holds nearly all of the question's rare words (coverage, see
    ``HybridRows.keyword_coverage``) the question quotes the docs and BM25 is right; a pasted
    identifier is BM25's too; a paraphrase is the vector leg's. The four values below were
    chosen by leave-one-set-out cross-validation over five eval sets (``search_fusion fit``;
    the figures are in docs/retrieval.md); with two paraphrase sets written later, six of the
    seven folds still choose the plain weight 0.3 and five the coverage cut 0.9.
    """

    keyword_plain: float = 0.3  # a natural-language question
    keyword_identifier: float = 0.55  # it carries an identifier (E4012, invoice.paid)
    keyword_quoted: float = 0.8  # one passage holds >= quoted_coverage of its IDF
    quoted_coverage: float = 0.9
    identifier_bonus: float = 1.0  # times the rarest term's IDF, for a chunk matching the phrase
    # The page's topic: each page's best candidate gains this times the vector share (1 - w)
    # times the z-score, among the candidates' pages, of its page's centroid cosine (the mean of
    # all the page's chunk vectors against the question): a page about the question as a whole
    # moves up, one that mentions it in passing down, and a page's other chunks keep their
    # place, so the passages an answer quotes change only with the page order. Chosen with the
    # weights above fixed (``search_fusion fit``, five eval sets): nDCG@10 mean 0.842 -> 0.849,
    # leave-one-set-out 0.842 -> 0.846 (figures in docs/retrieval.md).
    page_topic: float = 1.3
    # A question that quotes the docs (as for keyword_quoted) quotes a passage's words in their
    # order: each candidate gains this times the share of the question's phrases (neighbouring
    # words, ``search.terms.Phrase``) it holds so, in z units. BM25 weighs each word alone, so a
    # short section naming the question's rarest words twice outranked the table row that
    # says the whole sentence ("The symbol used before displaying the Docker context." found
    # the module's introduction, not its options). Chosen by leave-one-set-out over twelve
    # eval sets (``search_fusion fit``; docs/retrieval.md); paraphrases hold few phrases, and
    # for them a bonus at any weight cost the hand-written sets, so it is for quotes only.
    quoted_phrase: float = 8.0

    def phrase_weight(self, *, coverage: float) -> float:
        """The phrase bonus's weight for a question whose best keyword hit holds ``coverage``
        of its IDF: ``quoted_phrase`` when it quotes the docs, else 0."""
        return self.quoted_phrase if coverage >= self.quoted_coverage else 0.0

    def keyword_weight(self, *, identifier: bool, vector_leg: bool, coverage: float = 0.0) -> float:
        """``w`` for a question that carries an identifier phrase (or not) and whose best
        keyword hit holds ``coverage`` of its IDF."""
        if not vector_leg:
            return 1.0
        if coverage >= self.quoted_coverage:
            return self.keyword_quoted
        return self.keyword_identifier if identifier else self.keyword_plain


def fuse(
    *,
    similarities: Sequence[float | None],
    keyword_scores: Sequence[float | None],
    vector_ranked: Sequence[bool],
    keyword_ranked: Sequence[bool],
    keyword_weight: float,
    pages: Sequence[object] = (),
    page_topics: Sequence[float | None] = (),
    page_topic_weight: float = 0.0,
    phrase_shares: Sequence[float | None] = (),
    phrase_weight: float = 0.0,
    refers_to: Sequence[object | None] = (),
) -> list[float]:
    """``(1 - w) * z(cosine) + w * z(BM25)`` per candidate, plus its phrases and the page
    topic; a page that a cross-reference candidate names ranks at least as high as it.

    Each leg's scores are standardised by the mean and spread of the candidates that leg
    ranked itself (its own top list), so a leg that is confident (one hit far above its
    others) says so loudly and a leg whose hits are all alike barely moves the order. A leg
    that did not run scores nothing; with one leg the order is that leg's.

    A candidate only the keyword leg found scores, on the vector side, no lower than the
    vector leg's last-ranked candidate: below the nearest neighbours a cosine says that the
    passage is not among them, not how far it is from the question (the tail of a small
    embedder's similarities is noise), so a passage holding the question's rare words is not
    buried by it. The keyword side keeps its own scores: a BM25 of 0 is evidence, the passage
    holds none of the words. Page nDCG@10 under the shipped weights, five eval sets: mean
    0.849 -> 0.852, no set lower, the Argo CD paraphrases 0.752 -> 0.764; leave-one-set-out
    0.836 -> 0.843 (docs/retrieval.md).

    ``pages`` names each candidate's page and ``page_topics`` that page's centroid cosine; the
    topics are standardised over the distinct pages (a page counts once, however many of its
    chunks are candidates) and ``page_topic_weight * (1 - w) * z(topic)`` is added to each
    page's best candidate only, and only when both legs ran.

    ``phrase_shares`` is each candidate's share of the question's phrases (``search.terms``);
    ``phrase_weight`` times it is added before the pages' best candidates are chosen, so a
    page's best is the one holding the question's words as written.

    ``refers_to`` names, for a candidate that only sends the reader to another candidate page
    ("See [Logging](…) for how to e-mail errors to admins.", ``search.references``), that page;
    the page's best candidate then scores at least just above it, whatever the cross-reference
    scored: its closeness to the question is the other page's. Only when both legs ran, as for
    the page topic.
    """
    vector = _standardised(similarities, vector_ranked, floor_at_own=True)
    keyword = _standardised(keyword_scores, keyword_ranked)
    if vector is None:
        return keyword or [0.0] * len(similarities)
    if keyword is None:
        return vector
    fused = [
        (1 - keyword_weight) * v + keyword_weight * k for v, k in zip(vector, keyword, strict=True)
    ]
    if phrase_weight and phrase_shares:
        fused = [
            f + phrase_weight * (share or 0.0)
            for f, share in zip(fused, phrase_shares, strict=True)
        ]
    topic = _page_topic(pages, page_topics) if page_topic_weight else None
    if topic is not None:
        for i in _page_bests(fused, pages).values():
            fused[i] += page_topic_weight * (1 - keyword_weight) * topic[i]
    if any(page is not None for page in refers_to):
        fused = _referred_pages_raised(fused, pages, refers_to)
    return fused


def _referred_pages_raised(
    fused: list[float], pages: Sequence[object], refers_to: Sequence[object | None]
) -> list[float]:
    """``fused`` with each referred page's best candidate raised to just above the best
    cross-reference naming it (``fuse``). One step: a page raised so does not pass the rise on
    to a page it refers to in turn."""
    best = _page_bests(fused, pages)
    raised = list(fused)
    for i, page in enumerate(refers_to):
        if page is not None and page in best:
            target = best[page]
            raised[target] = max(raised[target], math.nextafter(fused[i], math.inf))
    return raised


def _page_bests(fused: Sequence[float], pages: Sequence[object]) -> dict[object, int]:
    """Each page's best-scoring candidate (the first of equals)."""
    best: dict[object, int] = {}
    for i, page in enumerate(pages):
        if page not in best or fused[i] > fused[best[page]]:
            best[page] = i
    return best


def _page_topic(pages: Sequence[object], topics: Sequence[float | None]) -> list[float] | None:
    """Each candidate's page topic as a z-score over the candidates' distinct pages (0 for a
    page without one); None when no page has a topic."""
    by_page = {page: float(t) for page, t in zip(pages, topics, strict=True) if t is not None}
    if not by_page:
        return None
    values = list(by_page.values())
    mean = sum(values) / len(values)
    spread = math.sqrt(sum((t - mean) ** 2 for t in values) / len(values)) or 1.0
    return [(by_page[page] - mean) / spread if page in by_page else 0.0 for page in pages]


def _standardised(
    scores: Sequence[float | None], ranked: Sequence[bool], *, floor_at_own: bool = False
) -> list[float] | None:
    """Each score as a z-score over the leg's own list; with ``floor_at_own`` none lower than
    the lowest of that list."""
    if not scores or any(score is None for score in scores):
        return None
    own = [float(s) for s, r in zip(scores, ranked, strict=True) if r and s is not None]
    if not own:
        return None
    mean = sum(own) / len(own)
    spread = math.sqrt(sum((s - mean) ** 2 for s in own) / len(own)) or 1.0
    lowest = (min(own) - mean) / spread if floor_at_own else -math.inf
    return [max((float(s) - mean) / spread, lowest) for s in scores if s is not None]
