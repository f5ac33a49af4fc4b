"""How many lines of each page the assistant will not quote, for the document list: counting
reads the whole body and costs ~70 ms per 10 kB of text (the sample help center's pages), so a
list of 100 pages took seconds. A count is cached by the page's ``content_hash`` (a sha256 of its
title and body, on the row) and by the rules and domains that made it (``reader_checks_key``):
the same text under the same rules always gives the same count, so a cached one is never out of
date, and a list reads the bodies of only the pages it has not counted."""

from __future__ import annotations

from collections.abc import Sequence

from django.core.cache import cache

from kb.content_checks import reader_checks_key, reader_directed_lines
from kb.models import Document

# An entry is never wrong, only unused once its page changes: it may as well stay a while.
FLAGGED_LINES_SECONDS = 30 * 24 * 3600


def flagged_lines_count(*, documents: Sequence[Document]) -> dict[int, int]:
    """The number of flagged lines of each of ``documents``, by id, from the cache where it
    holds them (their bodies may be deferred); the rest are counted from their bodies, read in
    one query, and cached."""
    checks = reader_checks_key()
    keys = {document.pk: _key(checks, document.content_hash) for document in documents}
    cached = cache.get_many(list(keys.values()))
    counts = {pk: cached[key] for pk, key in keys.items() if key in cached}
    uncounted = [pk for pk in keys if pk not in counts]
    fresh = {}
    rows = Document.objects.filter(pk__in=uncounted).values_list("pk", "content_hash", "body")
    for pk, content_hash, body in rows:
        # The hash read with the body, not the listed row's: the page may have been saved since.
        counts[pk] = fresh[_key(checks, content_hash)] = len(reader_directed_lines(body))
    if fresh:
        cache.set_many(fresh, timeout=FLAGGED_LINES_SECONDS)
    return counts


def _key(checks: str, content_hash: str) -> str:
    return f"flagged-lines:{checks}:{content_hash}"
