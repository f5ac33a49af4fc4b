"""One bounded, retrying way to call Voyage AI, shared by the embedder and the reranker.

Retries are ours, not the SDK's. ``voyageai.Client`` (0.5.0) retries through tenacity only on
429, 502/503/504 and timeouts, never on a plain 500 or a refused or reset connection (urllib3 only
reconnects twice, silently, on https); it waits a fixed, unconfigurable ``1..16 s`` exponential,
ignores ``Retry-After``, has no overall deadline, and its ``max_retries`` is really the number of
attempts (``stop_after_attempt(max_retries)``). So the SDK runs with ``max_retries=0`` (exactly
one attempt) and ``VoyageAPI.call`` wraps each call in a bounded retry: exponential backoff with
jitter, ``Retry-After`` honoured, every attempt's timeout clamped to what is left of
``total_timeout``. A bad request, a rejected key or an unusable answer is not retried: it would
fail the same way.

The SDK's ``timeout`` goes straight to ``requests`` as both the connect and the read timeout, so
it bounds each wait for the server, not the whole response: a server trickling bytes could
outlast it. ``base_url`` is used verbatim as the prefix of ``/rerank`` and ``/embeddings``, so it
includes ``/v1``.
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from collections.abc import Callable, Mapping
from typing import TypeVar

import structlog
import voyageai
import voyageai.error

from kb.errors import DETAIL_CHARS, REASON_CHARS, shortened

log = structlog.get_logger("groundwork.voyage")

# Statuses worth another attempt: the request was fine, the service was not (yet).
RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
# A retry needs at least this long (or the whole per-attempt timeout, if shorter) to be worth it.
MIN_ATTEMPT_SECONDS = 0.05

Response = TypeVar("Response")
Parsed = TypeVar("Parsed")


class VoyageCallFailed(RuntimeError):
    """One failed attempt, or the whole call once retries are over: a one-line reason, whether
    another attempt could help, and how long the server asked us to wait."""

    def __init__(self, reason: str, *, retryable: bool, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.retry_after = retry_after


class VoyageAPI:
    """The connection settings and retry policy; ``call`` runs one operation under them."""

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout: float = 10.0,
        max_retries: int = 3,
        backoff_seconds: float = 0.5,
        max_backoff_seconds: float = 8.0,
        total_timeout: float = 30.0,
    ) -> None:
        # The SDK would quietly fall back to VOYAGE_API_KEY for an empty key; a misconfigured
        # deployment should fail here instead, naming the problem.
        if not api_key:
            raise ValueError("Voyage needs a non-empty api_key")
        if timeout <= 0 or total_timeout <= 0:
            raise ValueError("Voyage timeout and total_timeout must be positive")
        if max_retries < 0 or backoff_seconds < 0 or max_backoff_seconds < 0:
            raise ValueError("Voyage retry settings must not be negative")
        self._api_key = api_key
        self.base_url = base_url.rstrip("/") if base_url else None
        self._timeout = timeout
        self._max_retries = max_retries
        self._backoff_seconds = backoff_seconds
        self._max_backoff_seconds = max_backoff_seconds
        self._total_timeout = total_timeout
        self._random = random.Random()

    def call(
        self,
        operation: str,
        request: Callable[[voyageai.Client], Response],
        *,
        parse: Callable[[Response], Parsed],
        log_fields: Mapping[str, object] | None = None,
    ) -> Parsed:
        """Run ``request`` with retries and return ``parse`` of its response.

        ``parse`` raises ``VoyageCallFailed`` (not retryable) for an answer it cannot use; any
        other exception it raises is reported as a malformed response. Raises
        ``VoyageCallFailed`` with the final one-line reason when the call does not succeed.
        """
        started = time.monotonic()
        deadline = started + self._total_timeout
        attempts = 0
        fields = dict(log_fields or {})
        while True:
            attempts += 1
            # Never 0: the SDK turns a falsy timeout into its 600 s default.
            timeout = max(min(self._timeout, deadline - time.monotonic()), 0.001)
            try:
                result = parse(self._attempt(operation, request, timeout=timeout))
            except VoyageCallFailed as failure:
                outcome = failure
            except Exception as exc:  # the SDK reads response fields without checks
                outcome = VoyageCallFailed(
                    f"Voyage {operation} returned a malformed response ({exc!r})", retryable=False
                )
            else:
                self._log(operation, started=started, attempts=attempts, fields=fields)
                return result
            reason = outcome.reason
            delay = self._backoff(attempts)
            if outcome.retry_after is not None:
                delay = max(delay, outcome.retry_after)
            if not outcome.retryable:
                pass
            elif attempts > self._max_retries:
                reason += f" (gave up after {attempts} attempts)"
            elif delay + min(self._timeout, MIN_ATTEMPT_SECONDS) > deadline - time.monotonic():
                reason += f" (no time left to retry within {self._total_timeout:g}s)"
            else:
                time.sleep(delay)
                continue
            reason = self.scrub(reason)
            self._log(operation, started=started, attempts=attempts, error=reason, fields=fields)
            raise VoyageCallFailed(reason, retryable=outcome.retryable)

    def scrub(self, text: str, *, limit: int = REASON_CHARS) -> str:
        """One line, short, and never the key."""
        return shortened(text.replace(self._api_key, "[redacted]"), limit=limit)

    def _attempt(
        self, operation: str, request: Callable[[voyageai.Client], Response], *, timeout: float
    ) -> Response:
        # The SDK fixes the timeout when the client is built, so each attempt gets its own
        # client carrying what is left of the budget. Building one does no I/O, and the HTTP
        # session (the connection pool) lives in the SDK per thread, not per client.
        client = voyageai.Client(
            api_key=self._api_key, max_retries=0, timeout=timeout, base_url=self.base_url
        )
        try:
            return request(client)
        except voyageai.error.VoyageError as exc:
            raise self._classify(operation, exc, timeout) from exc
        except VoyageCallFailed:
            raise
        except (AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
            raise VoyageCallFailed(
                f"Voyage {operation} returned a malformed response ({exc!r})", retryable=False
            ) from exc
        except Exception as exc:  # anything else the SDK or requests raise
            raise VoyageCallFailed(
                f"Voyage {operation} failed: {type(exc).__name__}: {exc}", retryable=False
            ) from exc

    def _classify(
        self, operation: str, exc: voyageai.error.VoyageError, timeout: float
    ) -> VoyageCallFailed:
        status = exc.http_status if isinstance(exc.http_status, int) else None
        detail = self.scrub(exc.user_message or "", limit=DETAIL_CHARS)
        if isinstance(exc, voyageai.error.Timeout):
            return VoyageCallFailed(
                f"Voyage {operation} timed out after {timeout:.3g}s", retryable=True
            )
        if isinstance(exc, voyageai.error.APIConnectionError):
            # The SDK's text is a long urllib3 repr; where and what kind of failure says enough.
            where = self.base_url or "the default Voyage API"
            cause = type(exc.__cause__ or exc).__name__
            return VoyageCallFailed(
                f"could not reach Voyage {operation} at {where} ({cause})", retryable=True
            )
        if isinstance(exc, voyageai.error.AuthenticationError) or status in (401, 403):
            return VoyageCallFailed(
                f"Voyage rejected the API key (HTTP {status}): {detail}", retryable=False
            )
        if status == 200:
            return VoyageCallFailed(
                f"Voyage {operation} returned a response that is not JSON", retryable=False
            )
        retryable = (
            status in RETRYABLE_STATUSES
            or (status is not None and status >= 500)
            or isinstance(exc, voyageai.error.TryAgain)
        )
        return VoyageCallFailed(
            f"Voyage {operation} failed (HTTP {status}): {detail}",
            retryable=retryable,
            retry_after=_retry_after_seconds(exc.headers),
        )

    def _backoff(self, attempt: int) -> float:
        """Exponential with "equal jitter": at least half the step, so retries still spread out."""
        step = min(self._max_backoff_seconds, self._backoff_seconds * 2 ** (attempt - 1))
        return step / 2 + self._random.uniform(0, step / 2)

    def _log(
        self,
        operation: str,
        *,
        started: float,
        attempts: int,
        error: str | None = None,
        fields: Mapping[str, object],
    ) -> None:
        ms = round((time.monotonic() - started) * 1000)
        if error is None:
            log.info(f"{operation}_called", ms=ms, attempts=attempts, **fields)
        else:
            log.warning(f"{operation}_called", ms=ms, attempts=attempts, error=error, **fields)


def voyage_api_from_settings(*, min_total_timeout: float = 0.0) -> VoyageAPI:
    """The Voyage connection ``VOYAGE_*`` settings describe, for the embedder and the reranker.

    ``min_total_timeout`` raises the overall deadline for a caller that can wait longer than a
    customer (indexing); without it a call keeps ``VOYAGE_TOTAL_TIMEOUT``. The embedder holds one
    connection of each kind and sends queries through the tighter one."""
    from django.conf import settings

    return VoyageAPI(
        api_key=settings.VOYAGE_API_KEY,
        base_url=settings.VOYAGE_BASE_URL,
        timeout=settings.VOYAGE_TIMEOUT,
        max_retries=settings.VOYAGE_MAX_RETRIES,
        total_timeout=max(settings.VOYAGE_TOTAL_TIMEOUT, min_total_timeout),
    )


def _retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """``Retry-After`` as seconds: delta-seconds (fractions tolerated) or an HTTP date."""
    # The SDK hands over the `requests` headers, whose lookups ignore case.
    value = headers.get("retry-after") if headers else None
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = moment.timestamp() - time.time()
    return max(0.0, seconds) if math.isfinite(seconds) else None
