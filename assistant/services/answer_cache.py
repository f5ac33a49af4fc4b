"""Cached answers, keyed by the normalised question and the version of the index.

The index version changes whenever anything that decides what retrieval may return changes:
a document saved (edit, retire, restore, supersede, audience: ``modified_at``), a document
deleted (the count), chunks rewritten or an index state moved (``DocumentIndexState.updated_at``
and its count), or another embedding model activated. So a cached answer is never served over
an index that would answer differently, and nothing has to delete cache entries: a new version
simply misses. (A raw ``QuerySet.update()`` on documents bypasses ``modified_at``; every
service path saves the row.)
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import structlog
from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Max

from assistant.services.questions import question_cache_text
from kb.models import Document, DocumentIndexState, EmbeddingModel

log = structlog.get_logger("groundwork.assistant")

# Bump when the cached payload's shape changes, so old entries are never read as new ones.
CACHE_FORMAT = 1


def index_version() -> str:
    documents = Document.objects.aggregate(count=Count("id"), last=Max("modified_at"))
    states = DocumentIndexState.objects.aggregate(count=Count("id"), last=Max("updated_at"))
    active = list(EmbeddingModel.objects.active().values_list("id", "activated_at").order_by("id"))
    raw = f"{documents}|{states}|{active}"
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


def answer_cache_key(
    *, question: str, audiences: Sequence[str], generator: str, version: str
) -> str:
    """Audiences are part of the key: an answer a staff member got from internal pages must
    never be served to a customer. The generator is too: switching it means new answers."""
    normalised = question_cache_text(question)
    digest = hashlib.sha256(
        "\x00".join([normalised, ",".join(sorted(audiences)), generator]).encode()
    ).hexdigest()
    return f"assistant:answer:{CACHE_FORMAT}:{version}:{digest}"


def answer_cache_get(*, key: str) -> dict[str, Any] | None:
    """A cache outage costs the saving, never the answer."""
    try:
        return cache.get(key)
    except Exception as exc:
        log.warning("answer_cache_unavailable", operation="get", error=str(exc)[:200])
        return None


def answer_cache_put(*, key: str, payload: dict[str, Any]) -> None:
    try:
        cache.set(key, payload, timeout=settings.ANSWER_CACHE_SECONDS)
    except Exception as exc:
        log.warning("answer_cache_unavailable", operation="set", error=str(exc)[:200])
