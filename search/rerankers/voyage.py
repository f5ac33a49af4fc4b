"""Voyage AI's hosted reranker (rerank-2.5 by default) through the official ``voyageai`` SDK.

Retries are ours, not the SDK's. ``voyageai.Client`` (0.5.0) retries through tenacity only on
429, 502/503/504 and timeouts, never on a plain 500 or a refused or reset connection (urllib3 only
reconnects twice, silently, on https); it waits a fixed, unconfigurable ``1..16 s`` exponential,
ignores ``Retry-After``, has no overall deadline, and its ``max_retries`` is really the number of
attempts (``stop_after_attempt(max_retries)``). So the SDK runs with ``max_retries=0`` (exactly
one attempt) and this module wraps each call in a bounded retry: exponential backoff with jitter,
``Retry-After`` honoured, every attempt's timeout clamped to what is left of ``total_timeout``.
A bad request, a rejected key or an unusable answer is not retried: it would fail the same way.

The SDK's ``timeout`` goes straight to ``requests`` as both the connect and the read timeout, so
it bounds each wait for the server, not the whole response: a server trickling bytes could
outlast it. ``base_url`` is used verbatim as the prefix of ``/rerank``, so it includes ``/v1``.
"""

from __future__ import annotations

import email.utils
import math
import random
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import structlog
import voyageai
import voyageai.error

from search.rerankers.base import RerankError

log = structlog.get_logger("groundwork.search")

DEFAULT_MODEL = "rerank-2.5"
# Statuses worth another attempt: the request was fine, the service was not (yet).
RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
# The server's own words are kept short, so the outcome we append after them survives.
MAX_DETAIL_CHARS = 160
MAX_REASON_CHARS = 300
# A retry needs at least this long (or the whole per-attempt timeout, if shorter) to be worth it.
MIN_ATTEMPT_SECONDS = 0.05


@dataclass(frozen=True)
class _Failure:
    """One failed attempt: why, whether another attempt could help, and how long to wait first."""

    reason: str
    retryable: bool
    retry_after: float | None = None


class VoyageReranker:
    """Scores passages with Voyage's rerank API; any failure becomes a one-line ``RerankError``."""

    def __init__(
        self,
        *,
        api_key: str,
        model: str = DEFAULT_MODEL,
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
            raise ValueError("VoyageReranker needs a non-empty api_key")
        if timeout <= 0 or total_timeout <= 0:
            raise ValueError("VoyageReranker timeout and total_timeout must be positive")
        if max_retries < 0 or backoff_seconds < 0 or max_backoff_seconds < 0:
            raise ValueError("VoyageReranker retry settings must not be negative")
        self.name = f"voyage/{model}"
        self.model = model
        self._api_key = api_key
        self._base_url = base_url.rstrip("/") if base_url else None
        self._timeout = timeout
        self._max_retries = max_retries
        self._backoff_seconds = backoff_seconds
        self._max_backoff_seconds = max_backoff_seconds
        self._total_timeout = total_timeout
        self._random = random.Random()

    def __repr__(self) -> str:
        return f"VoyageReranker(model={self.model!r}, base_url={self._base_url!r})"

    def rerank(self, *, question: str, passages: Sequence[str]) -> list[float]:
        documents = list(passages)
        started = time.monotonic()
        if not documents:
            self._log_call(passages=0, started=started, attempts=0)
            return []
        deadline = started + self._total_timeout
        attempts = 0
        while True:
            attempts += 1
            # Never 0: the SDK turns a falsy timeout into its 600 s default.
            timeout = max(min(self._timeout, deadline - time.monotonic()), 0.001)
            outcome = self._attempt(question, documents, timeout=timeout)
            if isinstance(outcome, list):
                self._log_call(passages=len(documents), started=started, attempts=attempts)
                return outcome
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
            reason = self._scrub(reason)
            self._log_call(
                passages=len(documents), started=started, attempts=attempts, error=reason
            )
            raise RerankError(reason)

    def _log_call(
        self, *, passages: int, started: float, attempts: int, error: str | None = None
    ) -> None:
        fields = {"model": self.model, "passages": passages, "attempts": attempts}
        ms = round((time.monotonic() - started) * 1000)
        if error is None:
            log.info("rerank_called", ms=ms, **fields)
        else:
            log.warning("rerank_called", ms=ms, error=error, **fields)

    def _attempt(
        self, question: str, documents: list[str], *, timeout: float
    ) -> list[float] | _Failure:
        # The SDK fixes the timeout when the client is built, so each attempt gets its own
        # client carrying what is left of the budget. Building one does no I/O, and the HTTP
        # session (the connection pool) lives in the SDK per thread, not per client.
        client = voyageai.Client(
            api_key=self._api_key, max_retries=0, timeout=timeout, base_url=self._base_url
        )
        try:
            response = client.rerank(
                query=question, documents=documents, model=self.model, truncation=True
            )
        except voyageai.error.VoyageError as exc:
            return self._classify(exc, timeout)
        except IndexError:
            # The SDK looks each result's index up in `documents` before we can check it.
            return _Failure(
                f"Voyage rerank returned an index outside the {len(documents)} passages", False
            )
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            # The SDK reads `data[*].index`, `relevance_score` and `usage` without checks.
            return _Failure(f"Voyage rerank returned a malformed response ({exc!r})", False)
        except Exception as exc:  # anything else the SDK or requests raise
            return _Failure(f"Voyage rerank failed: {type(exc).__name__}: {exc}", False)
        return _scores_in_passage_order(
            [(result.index, result.relevance_score) for result in response.results],
            len(documents),
        )

    def _classify(self, exc: voyageai.error.VoyageError, timeout: float) -> _Failure:
        status = exc.http_status if isinstance(exc.http_status, int) else None
        detail = self._scrub(exc.user_message or "", limit=MAX_DETAIL_CHARS)
        if isinstance(exc, voyageai.error.Timeout):
            return _Failure(f"Voyage rerank timed out after {timeout:.3g}s", True)
        if isinstance(exc, voyageai.error.APIConnectionError):
            # The SDK's text is a long urllib3 repr; where and what kind of failure says enough.
            where = self._base_url or "the default Voyage API"
            cause = type(exc.__cause__ or exc).__name__
            return _Failure(f"could not reach Voyage rerank at {where} ({cause})", True)
        if isinstance(exc, voyageai.error.AuthenticationError) or status in (401, 403):
            return _Failure(f"Voyage rejected the API key (HTTP {status}): {detail}", False)
        if status == 200:
            return _Failure("Voyage rerank returned a response that is not JSON", False)
        retryable = (
            status in RETRYABLE_STATUSES
            or (status is not None and status >= 500)
            or isinstance(exc, voyageai.error.TryAgain)
        )
        return _Failure(
            f"Voyage rerank failed (HTTP {status}): {detail}",
            retryable,
            retry_after=_retry_after_seconds(exc.headers),
        )

    def _backoff(self, attempt: int) -> float:
        """Exponential with "equal jitter": at least half the step, so retries still spread out."""
        step = min(self._max_backoff_seconds, self._backoff_seconds * 2 ** (attempt - 1))
        return step / 2 + self._random.uniform(0, step / 2)

    def _scrub(self, text: str, *, limit: int = MAX_REASON_CHARS) -> str:
        return _one_line(text.replace(self._api_key, "[redacted]"), limit=limit)


def _scores_in_passage_order(
    results: list[tuple[object, object]], passage_count: int
) -> list[float] | _Failure:
    """Map the API's best-first ``(index, score)`` list back onto the passages, checking it."""
    scores: list[float | None] = [None] * passage_count
    for index, score in results:
        if isinstance(index, bool) or not isinstance(index, int):
            return _Failure(f"Voyage rerank returned a non-integer index {index!r}", False)
        if not 0 <= index < passage_count:
            return _Failure(
                f"Voyage rerank returned index {index} for {passage_count} passages", False
            )
        if scores[index] is not None:
            return _Failure(f"Voyage rerank returned passage index {index} twice", False)
        if (
            isinstance(score, bool)
            or not isinstance(score, int | float)
            or not math.isfinite(score)
        ):
            return _Failure(f"Voyage rerank returned score {score!r} for passage {index}", False)
        scores[index] = float(score)
    missing = [index for index, score in enumerate(scores) if score is None]
    if missing:
        return _Failure(f"Voyage rerank left out passage indexes {missing[:10]}", False)
    return [score for score in scores if score is not None]


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


def _one_line(text: str, *, limit: int) -> str:
    flat = re.sub(r"\s+", " ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
