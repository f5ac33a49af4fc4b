"""Asks, support requests and API requests (per key) per minute, counted in the shared cache
(Redis) so every web process sees one count.

Two counters per action: one per client (the session's client token) at the action's limit
(``ASK_RATE_LIMIT_PER_MINUTE``, ``SUPPORT_RATE_LIMIT_PER_MINUTE``), and one per IP address at
``IP_ALLOWANCE`` times that, because a script that drops its cookies gets
a new session on every request while an office behind one address holds many honest people.
Fixed one-minute windows: simple, one atomic ``incr`` per counter, and a burst across a window
edge can reach at most twice the limit.

While the shared cache is down each process counts for itself instead: a client spread over N
web processes may then get up to N times its limit, which is a limit still, where letting
every ask through would hand the generator (and its bill) to whoever asks fastest.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import structlog
from django.conf import settings
from django.core.cache import cache

from kb.errors import shortened

log = structlog.get_logger("groundwork.assistant")

WINDOW_SECONDS = 60
IP_ALLOWANCE = 5


@dataclass(frozen=True)
class RateDecision:
    allowed: bool
    retry_after: int  # seconds until the window ends (0 when allowed)


def ask_rate_check(*, client_hash: str, ip_address: str) -> RateDecision:
    """Count one ask for this client and address; refused when either is over its limit. The
    counts live in the shared cache, or in this process while the cache is down."""
    return _rate_check(
        action="ask",
        limit=settings.ASK_RATE_LIMIT_PER_MINUTE,
        client_hash=client_hash,
        ip_address=ip_address,
    )


def support_rate_check(*, client_hash: str, ip_address: str) -> RateDecision:
    """Count one support request, as ``ask_rate_check`` counts asks but on counters of its own:
    a customer who asked a lot can still reach a person, and a script cannot fill the queue."""
    return _rate_check(
        action="support",
        limit=settings.SUPPORT_RATE_LIMIT_PER_MINUTE,
        client_hash=client_hash,
        ip_address=ip_address,
    )


def api_key_rate_check(*, key_prefix: str, limit: int) -> RateDecision:
    """Count one API request for this key at its own limit (``ApiKey.rate_limit_per_minute``):
    one counter per key and none per address, since the key is the identity and one busy
    server behind one address may hold it."""
    now = time.time()
    window = int(now // WINDOW_SECONDS)
    retry_after = max(int((window + 1) * WINDOW_SECONDS - now), 1)
    counters = [(f"assistant:rate:api:client:{key_prefix}:{window}", limit)]
    try:
        allowed = _within_limits(counters, action="api", count=_shared_count)
    except Exception as exc:  # any cache backend's outage; the limit must still hold
        log.warning("rate_limit_shared_cache_down", error=shortened(str(exc)))
        allowed = _within_limits(counters, action="api", count=_process_counts.count)
    return RateDecision(allowed=allowed, retry_after=0 if allowed else retry_after)


def _rate_check(*, action: str, limit: int, client_hash: str, ip_address: str) -> RateDecision:
    now = time.time()
    window = int(now // WINDOW_SECONDS)
    retry_after = max(int((window + 1) * WINDOW_SECONDS - now), 1)
    ip_hash = hashlib.sha256(ip_address.encode()).hexdigest()[:32]
    prefix = f"assistant:rate:{action}"
    counters = [(f"{prefix}:client:{client_hash}:{window}", limit)]
    counters.append((f"{prefix}:ip:{ip_hash}:{window}", limit * IP_ALLOWANCE))
    try:
        allowed = _within_limits(counters, action=action, count=_shared_count)
    except Exception as exc:  # any cache backend's outage; the limit must still hold
        log.warning("rate_limit_shared_cache_down", error=shortened(str(exc)))
        allowed = _within_limits(counters, action=action, count=_process_counts.count)
    return RateDecision(allowed=allowed, retry_after=0 if allowed else retry_after)


def _within_limits(
    counters: list[tuple[str, int]], *, action: str, count: Callable[[str], int]
) -> bool:
    for key, allowed in counters:
        if count(key) > allowed:
            counter = "client" if ":client:" in key else "ip"
            log.info(f"{action}_rate_limited", counter=counter, limit=allowed)
            return False
    return True


def _shared_count(key: str) -> int:
    # add() is a no-op when the key exists, so the expiry is set once per window.
    cache.add(key, 0, timeout=WINDOW_SECONDS + 5)
    return cache.incr(key)


class ProcessCounters:
    """Fixed-window counts held in this process, for while the shared cache is down. Keys name
    their window; only the current window's are kept, so the memory stays bounded."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._window: int | None = None
        self._counts: dict[str, int] = {}

    def count(self, key: str) -> int:
        window = int(time.time() // WINDOW_SECONDS)
        with self._lock:
            if window != self._window:
                self._counts.clear()
                self._window = window
            self._counts[key] = self._counts.get(key, 0) + 1
            return self._counts[key]


_process_counts = ProcessCounters()
