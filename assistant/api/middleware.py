"""The answer API's edge: CORS only for the origins API keys allow, and errors as JSON.

Refusals made before a request reaches the API (a charset other than UTF-8, a NUL in a field,
a multipart body that does not parse, an unknown path) are HTML pages for the rest of the
site; under ``/api/`` they become ``{"error": "…"}`` with the same status, so a client reads
every refusal the same way. This middleware sits near the top of ``MIDDLEWARE`` for that.

CORS:
A browser's preflight (OPTIONS) carries no key, since the key travels in the Authorization
header the preflight asks permission to send. So the preflight is answered for an origin that
any active key allows; the real request is then checked against its own key's origins
(``ApiKeyAuth`` refuses another origin with a 403), and its response names the origin only when
that key allows it. Everything outside ``/api/`` is left alone: the chat page sets no CORS
headers and stays same-origin.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

import structlog
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import patch_vary_headers
from django.utils.html import strip_tags

from assistant.api.keys import origin_allowed_by_any_key, origin_allowed_for_key
from kb.errors import one_line
from kb.runtime.availability import UNAVAILABLE_MESSAGE, is_database_outage

log = structlog.get_logger("groundwork.api")

API_PATH_PREFIX = "/api/"
ALLOWED_METHODS = "GET, POST, OPTIONS"
ALLOWED_HEADERS = "Authorization, Content-Type, Accept"
EXPOSED_HEADERS = "Retry-After, X-Request-ID"
PREFLIGHT_MAX_AGE_SECONDS = 600


class ApiMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path_info.startswith(API_PATH_PREFIX):
            return self.get_response(request)
        origin = request.headers.get("Origin")
        if (
            origin
            and request.method == "OPTIONS"
            and "Access-Control-Request-Method" in request.headers
        ):
            return self._preflight(origin)
        response = _errors_as_json(self.get_response(request))
        if origin:
            api_key = getattr(request, "api_key", None)
            try:
                allowed = (
                    origin_allowed_for_key(api_key, origin)
                    if api_key is not None
                    else origin_allowed_by_any_key(origin)
                )
            except Exception as exc:
                if not is_database_outage(exc):
                    raise
                allowed = False  # the response (a 503 already, likely) goes out without CORS
            if allowed:
                response["Access-Control-Allow-Origin"] = origin
                response["Access-Control-Expose-Headers"] = EXPOSED_HEADERS
            patch_vary_headers(response, ["Origin"])
        return response

    def _preflight(self, origin: str) -> HttpResponse:
        try:
            allowed = origin_allowed_by_any_key(origin)
        except Exception as exc:
            if not is_database_outage(exc):
                raise
            log.warning("api_preflight_unavailable", error=one_line(exc))
            return JsonResponse({"error": UNAVAILABLE_MESSAGE}, status=503)
        if not allowed:
            response: HttpResponse = JsonResponse(
                {"error": f"No API key allows the origin {origin[:200]}."}, status=403
            )
        else:
            response = HttpResponse(status=204)
            response["Access-Control-Allow-Origin"] = origin
            response["Access-Control-Allow-Methods"] = ALLOWED_METHODS
            response["Access-Control-Allow-Headers"] = ALLOWED_HEADERS
            response["Access-Control-Max-Age"] = str(PREFLIGHT_MAX_AGE_SECONDS)
        patch_vary_headers(response, ["Origin"])
        return response


_BLANKS = re.compile(r"\s+")
ERROR_TEXT_CHARS = 500


def _errors_as_json(response: HttpResponse) -> HttpResponse:
    if response.status_code < 400 or response.streaming:
        return response
    if response.get("Content-Type", "").startswith("application/json"):
        return response
    text = _BLANKS.sub(" ", html.unescape(strip_tags(response.content.decode(errors="replace"))))
    message = text.strip()[:ERROR_TEXT_CHARS] or response.reason_phrase
    converted = JsonResponse({"error": message}, status=response.status_code)
    for header in ("Retry-After", "Allow", "WWW-Authenticate"):
        if header in response:
            converted[header] = response[header]
    return converted
