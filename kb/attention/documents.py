"""Pages needing a steward because of their own state: a review date that has passed or is
near, or an index that could not be built."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.utils import timezone

from kb.models import Document, DocumentIndexState, EmbeddingModel

# How far ahead a review date counts as due: a month gives a steward time to read the page and
# ask its owners before the date, which is what the date is for.
REVIEW_NOTICE = datetime.timedelta(days=30)


@dataclass(frozen=True)
class ReviewDue:
    document: Document
    review_by: datetime.date
    days_left: int  # negative once the date has passed

    @property
    def overdue(self) -> bool:
        return self.days_left < 0

    @property
    def days_overdue(self) -> int:
        return max(0, -self.days_left)


@dataclass(frozen=True)
class IndexFailure:
    document: Document
    embedding_model: str
    error: str
    attempts: int
    failed_at: datetime.datetime


def reviews_due(*, today: datetime.date | None = None) -> list[ReviewDue]:
    """Pages not retired whose review date has passed or falls within ``REVIEW_NOTICE``,
    the most overdue first."""
    today = today or timezone.localdate()
    documents = (
        Document.objects.exclude(status=Document.Status.RETIRED)
        .filter(review_by__lte=today + REVIEW_NOTICE)
        .defer("body")
        .order_by("review_by", "path")
    )
    return [
        ReviewDue(
            document=document,
            review_by=document.review_by,
            days_left=(document.review_by - today).days,
        )
        for document in documents
        if document.review_by is not None
    ]


def index_failures() -> list[IndexFailure]:
    """Pages whose indexing failed in a model that serves or is being built, with the error
    (a retired model's failures are moot), the latest first."""
    states = (
        DocumentIndexState.objects.filter(
            status=DocumentIndexState.Status.FAILED,
            embedding_model__in=EmbeddingModel.objects.indexing(),
        )
        .select_related("document", "embedding_model")
        .defer("document__body")
        .order_by("-updated_at", "document__path")
    )
    return [
        IndexFailure(
            document=state.document,
            embedding_model=state.embedding_model.key,
            error=state.error,
            attempts=state.attempts,
            failed_at=state.updated_at,
        )
        for state in states
    ]
