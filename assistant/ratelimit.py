"""Asks per minute, counted in the shared cache (Redis) so every web process sees one count.

Two counters: one per client (the session's client token) at ``ASK_RATE_LIMIT_PER_MINUTE``, and
one per IP address at ``IP_ALLOWANCE`` times that, because a script that drops its cookies gets
a new session on every request while an office behind one address holds many honest people.
Fixed one-minute windows: simple, one atomic ``incr`` per counter, and a burst across a window
edge can reach at most twice the limit.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

import structlog
from django.conf import settings
from django.core.cache import cache

log = structlog.get_logger("groundwork.assistant")

WINDOW_SECONDS = 60
IP_ALLOWANCE = 5


@dataclass(frozen=True)
class RateDecision:
    allowed: bool
    retry_after: int  # seconds until the window ends (0 when allowed)


def ask_rate_check(*, client_hash: str, ip_address: str) -> RateDecision:
    """Count one ask for this client and address; refused when either is over its limit. The
    cache being down lets the ask through: losing the limiter must not take the chat down."""
    limit = settings.ASK_RATE_LIMIT_PER_MINUTE
    now = time.time()
    window = int(now // WINDOW_SECONDS)
    retry_after = max(int((window + 1) * WINDOW_SECONDS - now), 1)
    ip_hash = hashlib.sha256(ip_address.encode()).hexdigest()[:32]
    counters = [(f"assistant:rate:client:{client_hash}:{window}", limit)]
    counters.append((f"assistant:rate:ip:{ip_hash}:{window}", limit * IP_ALLOWANCE))
    try:
        for key, allowed in counters:
            # add() is a no-op when the key exists, so the expiry is set once per window.
            cache.add(key, 0, timeout=WINDOW_SECONDS + 5)
            if cache.incr(key) > allowed:
                log.info("ask_rate_limited", counter=key.split(":")[2], limit=allowed)
                return RateDecision(allowed=False, retry_after=retry_after)
    except Exception as exc:
        log.warning("rate_limit_unavailable", error=str(exc)[:200])
    return RateDecision(allowed=True, retry_after=0)
