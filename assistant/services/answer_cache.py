"""Cached answers, keyed by the normalised question and the version of the index.

The version (``kb.selectors.index_version``) changes whenever anything that decides what
retrieval may return changes, so a cached answer is never served over an index that would
answer differently, and nothing has to delete cache entries: a new version simply misses.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import structlog
from django.conf import settings
from django.core.cache import cache

from assistant.services.questions import question_cache_text
from kb.errors import shortened

log = structlog.get_logger("groundwork.assistant")

# Bump when the cached payload's shape changes, so old entries are never read as new ones.
CACHE_FORMAT = 1


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
        log.warning("answer_cache_unavailable", operation="get", error=shortened(str(exc)))
        return None


def answer_cache_put(*, key: str, payload: dict[str, Any]) -> None:
    try:
        cache.set(key, payload, timeout=settings.ANSWER_CACHE_SECONDS)
    except Exception as exc:
        log.warning("answer_cache_unavailable", operation="set", error=shortened(str(exc)))
