"""Cached answers, keyed by the normalised question and the version of the index.

The version (``kb.selectors.index_version.index_version``) changes whenever anything that
decides what retrieval may return changes, so a cached answer is never served over an index that
would answer differently, and nothing has to delete cache entries: a new version simply misses.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from django.conf import settings
from django.core.cache import cache

from assistant.services.evidence import AnswerSnapshot
from assistant.services.questions import question_cache_text
from kb.errors import shortened

log = structlog.get_logger("groundwork.assistant")

# Bump when the cached payload's shape changes, so old entries are never read as new ones.
# 2: a pickled ``CachedAnswer`` instead of a dict.
CACHE_FORMAT = 2


@dataclass(frozen=True)
class CachedAnswer:
    """What a later asking of the same first question reuses: the answer as it was shown and
    the evidence it rests on."""

    message_id: str  # the public id of the message that was answered
    answer: str
    status: str
    citations: list[dict[str, Any]]
    generator: str
    quoted: bool
    snapshot: AnswerSnapshot


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


def answer_cache_get(*, key: str) -> CachedAnswer | None:
    """A cache outage costs the saving, never the answer."""
    try:
        cached = cache.get(key)
    except Exception as exc:
        log.warning("answer_cache_unavailable", operation="get", error=shortened(str(exc)))
        return None
    return cached if isinstance(cached, CachedAnswer) else None


def answer_cache_put(*, key: str, cached: CachedAnswer) -> None:
    try:
        cache.set(key, cached, timeout=settings.ANSWER_CACHE_SECONDS)
    except Exception as exc:
        log.warning("answer_cache_unavailable", operation="set", error=shortened(str(exc)))
