"""Top topics and unanswered topics: the latest askings of the period grouped by the words they
share, with examples.

Bounded and deterministic on purpose: the page reads at most ``TOPIC_SAMPLE`` askings (the
latest of the period that match the filters), groups at most ``TOPIC_QUESTIONS`` distinct
questions (the most asked first), and uses the answering side's own content words
(``assistant.terms.terms``) weighted by their rarity within the sample, with no model call. The
content-gaps page groups unanswered questions by embedding instead, for writers, over 30 days.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Exists, OuterRef, Q, QuerySet

from assistant.analytics.selectors import AnalyticsFilters, day_bounds
from assistant.models import Message
from assistant.services.questions import question_cache_text
from assistant.terms import terms
from kb.models import Document

TOPIC_SAMPLE = 2000  # latest askings read per list
TOPIC_QUESTIONS = 300  # distinct questions grouped per list, the most asked first
TOPICS_SHOWN = 8
TOPIC_EXAMPLES = 3
# Cosine similarity of a question's term vector (rarity-weighted) to a group's summed vector at
# which it joins the group. Measured on the content-gaps set (41 askings of 13 needs, tests/
# integration/test_content_gaps.py), pairwise, mean of 5 orders: 0.25 -> precision 0.60 /
# recall 0.47; 0.35 -> 0.83 / 0.38; 0.50 -> 0.89 / 0.18 (the embedder at content gaps' 0.55:
# 0.86 / 0.43). Precision first, as there: a rephrasing that shares no word with the others
# ("crypto" / "bitcoin") starts its own row rather than joining another need's.
TOPIC_SIMILARITY = 0.35


@dataclass
class TopicExample:
    question: str
    count: int
    message_id: int


@dataclass
class Topic:
    examples: list[TopicExample]  # most asked first
    count: int  # askings in the sample
    answered: int  # of them, answered
    cited_paths: Counter[str] = field(default_factory=Counter)

    @property
    def label(self) -> str:
        return self.examples[0].question

    @property
    def top_page(self) -> str:
        """The page its answers cited most (empty when none cited one)."""
        return self.cited_paths.most_common(1)[0][0] if self.cited_paths else ""


@dataclass(frozen=True)
class TopicReport:
    topics: list[Topic]
    sampled: int  # askings read (at most TOPIC_SAMPLE)
    matching: int  # askings of the period that match, when it fits in the sample; else -1
    grouped: int  # distinct questions grouped (at most TOPIC_QUESTIONS)


def question_topics(filters: AnalyticsFilters, *, unanswered: bool = False) -> TopicReport:
    """The largest groups of the latest askings in the period: every question, or with
    ``unanswered`` those refused ("not in our docs"), flagged or failed."""
    askings = _askings(filters, unanswered=unanswered)
    latest = askings.order_by("-created_at", "-id")
    rows: list[dict[str, Any]] = [
        dict(row) for row in latest.values("id", "question", "status", "citations")[:TOPIC_SAMPLE]
    ]
    distinct: dict[str, list[dict[str, Any]]] = {}
    for row in rows:  # newest first: each question's first row is its latest asking
        distinct.setdefault(question_cache_text(row["question"]), []).append(row)
    ordered = sorted(distinct.items(), key=lambda item: (-len(item[1]), item[0]))
    ordered = ordered[:TOPIC_QUESTIONS]
    groups = _groups([terms(key) for key, _ in ordered], [len(rows) for _, rows in ordered])
    topics = [_topic([ordered[index][1] for index in members]) for members in groups]
    topics.sort(key=lambda topic: (-topic.count, topic.label))
    return TopicReport(
        topics=topics[:TOPICS_SHOWN],
        sampled=len(rows),
        matching=len(rows) if len(rows) < TOPIC_SAMPLE else -1,
        grouped=len(ordered),
    )


def _askings(filters: AnalyticsFilters, *, unanswered: bool) -> QuerySet[Message]:
    start, end = day_bounds(filters)
    askings = Message.objects.filter(created_at__gte=start, created_at__lt=end)
    if filters.audience is not None:
        askings = askings.filter(audience=filters.audience)
    if unanswered:
        askings = askings.filter(status__in=Message.UNANSWERED)
    if filters.category is not None:
        ids = list(Document.objects.filter(category=filters.category).values_list("pk", flat=True))
        cites = Q(pk__in=[])
        for document_id in ids:
            cites |= Q(citations__contains=[{"document_id": document_id}])
        askings = askings.filter(Exists(Message.objects.filter(pk=OuterRef("pk")).filter(cites)))
    return askings


def _weights(term_sets: list[set[str]], counts: list[int]) -> list[dict[str, float]]:
    """Each question's terms weighted by their rarity among the sample's questions (a word
    every question shares says nothing about the topic), as unit vectors."""
    seen = Counter(term for each in term_sets for term in each)
    total = len(term_sets)
    vectors = []
    for each in term_sets:
        # sorted: a set's order differs between processes, and float sums follow it
        vector = {term: math.log((1 + total) / (1 + seen[term])) + 1.0 for term in sorted(each)}
        norm = math.sqrt(sum(weight * weight for weight in vector.values())) or 1.0
        vectors.append({term: weight / norm for term, weight in vector.items()})
    return vectors


def _groups(term_sets: list[set[str]], counts: list[int]) -> list[list[int]]:
    """Greedy, in order (most asked first): a question joins the group whose summed vector is
    most similar at or above ``TOPIC_SIMILARITY``, else starts one; ties go to the older
    group, so the same sample always gives the same groups."""
    vectors = _weights(term_sets, counts)
    groups: list[list[int]] = []
    sums: list[dict[str, float]] = []
    norms: list[float] = []
    for index, vector in enumerate(vectors):
        best, best_score = -1, TOPIC_SIMILARITY
        for group_index, total in enumerate(sums):
            score = sum(weight * total.get(term, 0.0) for term, weight in vector.items())
            score /= norms[group_index] or 1.0
            if score > best_score or (best < 0 and score >= best_score):
                best, best_score = group_index, score
        if best < 0 or not vector:
            groups.append([index])
            sums.append({term: weight * counts[index] for term, weight in vector.items()})
            norms.append(counts[index])
            continue
        groups[best].append(index)
        total = sums[best]
        for term, weight in vector.items():
            total[term] = total.get(term, 0.0) + weight * counts[index]
        norms[best] = math.sqrt(sum(weight * weight for weight in total.values()))
    return groups


def _topic(questions: list[list[dict[str, Any]]]) -> Topic:
    topic = Topic(examples=[], count=0, answered=0)
    for askings in questions:
        latest = askings[0]
        topic.examples.append(
            TopicExample(question=latest["question"], count=len(askings), message_id=latest["id"])
        )
        topic.count += len(askings)
        for asking in askings:
            if asking["status"] == Message.Status.ANSWERED:
                topic.answered += 1
            citations = asking["citations"] if isinstance(asking["citations"], list) else []
            for path in {cited.get("path") for cited in citations if isinstance(cited, dict)}:
                if path:
                    topic.cited_paths[path] += 1
    topic.examples = topic.examples[:TOPIC_EXAMPLES]
    return topic
