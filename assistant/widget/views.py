"""The widget's frame: the chat, compact, for pages of one site key's allowed origins.

The host page's ``<script>`` (static/assistant/widget.js) opens ``/embed/<site_key>/`` in an
iframe. The browser enforces who may frame it (``frame-ancestors`` from the site's origins);
this view also refuses, with a page that says why, an unknown or switched-off key and a framing
page whose origin the request shows (``Referer`` on a cross-origin iframe load) to be off the
list. A refusal keeps the site's ``frame-ancestors 'none'``, so a frame shows nothing of ours.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import structlog
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from assistant.views import CONVERSATION_SESSION_KEY, chat_render
from assistant.widget.models import SITE_KEY_MAX_LENGTH
from assistant.widget.origins import origin_matches
from assistant.widget.policy import frame_policy
from assistant.widget.selectors import embed_site_for_key

log = structlog.get_logger("groundwork.assistant.widget")

UNKNOWN_KEY = (
    "No help widget has this site key. Copy the widget's tag again from the admin "
    "(Assistant, Embed sites): the key may have been mistyped or the site deleted."
)
SWITCHED_OFF = "The help widget of this site is switched off. Staff can switch it on in the admin."
ORIGIN_REFUSED = (
    "This website is not allowed to show this help widget. Staff can add its address "
    "({origin}) to the site's allowed origins in the admin (Assistant, Embed sites)."
)


@require_GET
@never_cache
def embed_frame(request: HttpRequest, site_key: str) -> HttpResponse:
    site = embed_site_for_key(site_key=site_key)
    if site is None:
        return _refused(
            request, site_key=site_key, status=404, reason="unknown_key", message=UNKNOWN_KEY
        )
    origins = site.origins
    if not site.active or not origins:
        return _refused(
            request, site_key=site_key, status=403, reason="switched_off", message=SWITCHED_OFF
        )
    framing = _framing_origin(request)
    if framing is not None and not origin_matches(framing, allowed=origins):
        message = ORIGIN_REFUSED.format(origin=framing)
        return _refused(
            request, site_key=site_key, status=403, reason="origin", message=message, origin=framing
        )
    response = chat_render(request, template_name="assistant/widget_frame.html", embed_site=site)
    response["Content-Security-Policy"] = frame_policy(origins=origins)
    # frame-ancestors decides who may frame this page; X-Frame-Options has no list to give.
    response.xframe_options_exempt = True
    return response


@require_POST
def embed_conversation_new(request: HttpRequest, site_key: str) -> HttpResponseRedirect:
    """The frame's "Start a new conversation": as the chat page's, but back to the frame (the
    chat page itself may not be framed)."""
    request.session.pop(CONVERSATION_SESSION_KEY, None)
    return HttpResponseRedirect(reverse("assistant:widget-frame", args=[site_key]))


def _framing_origin(request: HttpRequest) -> str | None:
    """The origin of the page that opened this frame, when the request shows it: an iframe
    load (``Sec-Fetch-Dest``) started by another origin (``Sec-Fetch-Site``), with a
    ``Referer``. A navigation inside the frame (a new conversation) is same-origin and passes;
    a host page sending no Referer is left to the browser's ``frame-ancestors`` check."""
    if request.headers.get("Sec-Fetch-Dest") not in ("iframe", "frame"):
        return None
    if request.headers.get("Sec-Fetch-Site") == "same-origin":
        return None
    referer = urlsplit(request.headers.get("Referer", ""))
    if not referer.scheme or not referer.netloc:
        return None
    return f"{referer.scheme}://{referer.netloc}"


def _refused(
    request: HttpRequest,
    *,
    site_key: str,
    status: int,
    reason: str,
    message: str,
    origin: str | None = None,
) -> TemplateResponse:
    # The key is public (it is in the host page); the origin tells staff which site to add.
    log.info(
        "widget_refused",
        reason=reason,
        site=site_key[:SITE_KEY_MAX_LENGTH],
        origin=origin,
    )
    return TemplateResponse(
        request, "assistant/widget_refused.html", {"message": message}, status=status
    )
