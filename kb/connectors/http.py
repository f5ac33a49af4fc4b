"""The one way a connector calls an upstream API: JSON over HTTP, retried within bounds.

A 429 or a 5xx that says the service is busy (500, 502, 503, 504), a timeout or a refused
connection is tried again, up to ``max_attempts`` in all: after the ``Retry-After`` the server
asked for (seconds or an HTTP date; Intercom's ``X-RateLimit-Reset`` epoch when there is none),
else after an exponential backoff. A wait longer than ``max_retry_wait`` is not waited out: the
call fails at once, the run stops after the last page it wrote, and the next run resumes from
its checkpoint (a worker asleep for an hour holds a slot on the bulk queue for nothing). A 404
is ``UpstreamNotFound`` (a deleted article); any other error, or a body that is not JSON, fails
without a retry: it would fail the same way.

``get_page`` is the website connector's GET of a page: the same retries, every other status
returned to it (a 304 to a conditional GET, a 404 or 410 for a page gone).

Only URLs on the configured origin are fetched: a ``next`` link pointing elsewhere is refused
rather than sent the credentials.
"""

from __future__ import annotations

import email.utils
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import structlog
from django.conf import settings

from kb.parsing import MAX_HTML_BYTES

log = structlog.get_logger("groundwork.connectors")

RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504})
# Characters of an error body quoted in a message: enough for the API's own reason.
ERROR_BODY_CHARS = 200
MAX_PAGE_BYTES = MAX_HTML_BYTES  # a web page read past this is refused by the parser
_T = TypeVar("_T")


class ConnectorHTTPError(RuntimeError):
    """A call that failed for good (after its retries, or at once when a retry cannot help)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class UpstreamNotFound(ConnectorHTTPError):
    """404: the thing asked for is not there (an article deleted or archived upstream)."""


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    backoff_seconds: float = 1.0  # first wait without a Retry-After; doubles each time
    max_retry_wait: float = 120.0  # the longest single wait honoured
    timeout: float = 30.0  # per attempt: connect and each read


def retry_policy_from_settings() -> RetryPolicy:
    return RetryPolicy(
        max_attempts=settings.CONNECTOR_MAX_ATTEMPTS,
        backoff_seconds=settings.CONNECTOR_BACKOFF_SECONDS,
        max_retry_wait=settings.CONNECTOR_MAX_RETRY_WAIT,
        timeout=settings.CONNECTOR_TIMEOUT,
    )


class UpstreamClient:
    """GET JSON from one API origin with fixed headers (credentials, API version)."""

    def __init__(
        self, *, base_url: str, headers: Mapping[str, str], policy: RetryPolicy | None = None
    ) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self._origin = (parsed.scheme, parsed.netloc)
        self._headers = {"Accept": "application/json", **headers}
        self.policy = policy or RetryPolicy()
        self.requests_made = 0
        self.retries = 0

    def get_json(self, path_or_url: str, params: Mapping[str, Any] | None = None) -> Any:
        """The JSON body of a GET of ``path_or_url`` (a path under the base URL, or a full URL
        on its origin, such as a ``next`` link), retried as the module says."""
        url = self._url(path_or_url, params)
        return self._retrying(url, lambda: self._get_once(url))

    def get_page(self, path_or_url: str, *, headers: Mapping[str, str] | None = None) -> Fetched:
        """A GET of a web page (the website connector's), retried as ``get_json`` is. Every
        answer but a retryable one is returned, not raised: a 304 (``headers`` sent a
        validator), a 404 or 410 (the page is gone) and any other status are the caller's to
        read. A redirect is followed; ``Fetched.url`` is where it ended."""
        url = self._url(path_or_url, None)
        return self._retrying(url, lambda: self._fetch_once(url, headers or {}))

    def on_origin(self, url: str) -> bool:
        parsed = urllib.parse.urlsplit(url)
        return (parsed.scheme, parsed.netloc) == self._origin

    def _retrying(self, url: str, once: Callable[[], _T]) -> _T:
        attempt = 1
        while True:
            try:
                return once()
            except _Retryable as exc:
                wait = exc.wait if exc.wait is not None else self._backoff(attempt)
                if attempt >= self.policy.max_attempts:
                    raise ConnectorHTTPError(
                        f"{exc.reason} from {_shown(url)}, still after {attempt} attempts",
                        status=exc.status,
                    ) from None
                if wait > self.policy.max_retry_wait:
                    raise ConnectorHTTPError(
                        f"{exc.reason} from {_shown(url)}: asked to wait {wait:.0f} s, longer "
                        f"than CONNECTOR_MAX_RETRY_WAIT ({self.policy.max_retry_wait:.0f} s)",
                        status=exc.status,
                    ) from None
                log.info("connector_retry", url=_shown(url), reason=exc.reason, wait=wait)
                self.retries += 1
                attempt += 1
                time.sleep(max(wait, 0.0))

    def _url(self, path_or_url: str, params: Mapping[str, Any] | None) -> str:
        if path_or_url.startswith(("http://", "https://")):
            url = path_or_url
            parsed = urllib.parse.urlsplit(url)
            if (parsed.scheme, parsed.netloc) != self._origin:
                raise ConnectorHTTPError(
                    f"refused to follow {_shown(url)}: not on {self.base_url} (the API's "
                    "pagination should stay on its own origin)"
                )
        else:
            url = self.base_url + "/" + path_or_url.lstrip("/")
        if params:
            url += ("&" if "?" in url else "?") + urllib.parse.urlencode(params)
        return url

    def _get_once(self, url: str) -> Any:
        self.requests_made += 1
        request = urllib.request.Request(url, headers=self._headers, method="GET")
        try:
            with urllib.request.urlopen(request, timeout=self.policy.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            body = exc.read()[:ERROR_BODY_CHARS].decode("utf-8", "replace")
            if exc.code in RETRYABLE_STATUSES:
                raise _Retryable(f"HTTP {exc.code}", exc.code, _retry_after(exc.headers)) from None
            if exc.code == 404:
                raise UpstreamNotFound(f"HTTP 404 from {_shown(url)}", status=404) from None
            raise ConnectorHTTPError(
                f"HTTP {exc.code} from {_shown(url)}: {body.strip() or exc.reason}"
                + (" (check the connector's credentials)" if exc.code in (401, 403) else ""),
                status=exc.code,
            ) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            reason = getattr(exc, "reason", exc)
            raise _Retryable(f"no answer ({reason})", None, None) from None
        try:
            return json.loads(raw)
        except ValueError:
            raise ConnectorHTTPError(f"{_shown(url)} did not answer JSON") from None

    def _fetch_once(self, url: str, headers: Mapping[str, str]) -> Fetched:
        self.requests_made += 1
        request = urllib.request.Request(url, headers={**self._headers, **headers}, method="GET")
        try:
            with urllib.request.urlopen(request, timeout=self.policy.timeout) as response:
                return Fetched(
                    status=response.status,
                    url=response.geturl(),
                    headers={name.lower(): value for name, value in response.headers.items()},
                    body=response.read(MAX_PAGE_BYTES + 1),
                )
        except urllib.error.HTTPError as exc:
            if exc.code in RETRYABLE_STATUSES:
                raise _Retryable(f"HTTP {exc.code}", exc.code, _retry_after(exc.headers)) from None
            return Fetched(
                status=exc.code,
                url=url,
                headers={name.lower(): value for name, value in exc.headers.items()},
                body=b"",
            )
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            reason = getattr(exc, "reason", exc)
            raise _Retryable(f"no answer ({reason})", None, None) from None

    def _backoff(self, attempt: int) -> float:
        return float(self.policy.backoff_seconds * 2 ** (attempt - 1))


@dataclass(frozen=True)
class Fetched:
    """A web page as ``get_page`` received it (the body cut one byte past MAX_PAGE_BYTES)."""

    status: int
    url: str  # after redirects
    headers: Mapping[str, str]  # names lower-cased
    body: bytes


class _Retryable(Exception):
    def __init__(self, reason: str, status: int | None, wait: float | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.wait = wait


def _retry_after(headers: Any) -> float | None:
    """Seconds the server asked us to wait: ``Retry-After`` (seconds or an HTTP date), else an
    ``X-RateLimit-Reset`` epoch (Intercom's 429s), else None."""
    value = (headers.get("Retry-After") or "").strip()
    if value:
        try:
            return max(float(value), 0.0)
        except ValueError:
            try:
                parsed = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError):
                return None
            return max(parsed.timestamp() - time.time(), 0.0)
    reset = (headers.get("X-RateLimit-Reset") or "").strip()
    if reset.isdigit():
        return max(int(reset) - time.time(), 0.0)
    return None


def _shown(url: str) -> str:
    """``url`` as a message shows it: without its query (a token may ride in one)."""
    return url.split("?", 1)[0]
