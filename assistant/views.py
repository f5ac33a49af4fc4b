"""The chat page. Adapters only: read the request, call one service, render.

With JavaScript (htmx), asking returns the question bubble and an answer area that opens a
server-sent-events stream (``answer_events``) keyed by the pending message; the stream sends the
answer text as it is written (``delta`` events) and then the checked answer with its sources
(``final``). Without JavaScript the same form posts to the same URL, the answer is produced in
the request, and the browser is redirected to the page, which shows the whole conversation.

The stream is a plain ``StreamingHttpResponse`` over WSGI: under gunicorn's gthread workers
each open stream holds one thread until its answer is done (seconds), so size ``--threads`` for
the concurrent askers expected.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import structlog
from django.conf import settings
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
    StreamingHttpResponse,
)
from django.middleware.csrf import get_token
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import escape
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.middleware import HtmxDetails

from assistant.contact import support_contact_url, support_form_used
from assistant.models import Conversation, Message
from assistant.ratelimit import RateDecision, ask_rate_check, support_rate_check
from assistant.selectors import (
    chat_greeting,
    conversation_messages,
    message_for_client,
    related_pages_attach,
    suggested_questions,
)
from assistant.services import (
    AnswerDelta,
    AnswerReady,
    FeedbackRejected,
    QuestionRejected,
    SupportRequestRejected,
    answer_complete,
    answer_stream,
    client_key_hash,
    conversation_for_client,
    conversation_start,
    feedback_record,
    message_ask,
    question_normalise,
    support_request_clean,
    support_request_create,
)
from assistant.services.support import SUPPORT_MESSAGE_MAX_CHARS
from kb.errors import one_line
from kb.runtime.availability import UNAVAILABLE_MESSAGE, is_database_outage
from kb.selectors.access import audiences_for

log = structlog.get_logger("groundwork.assistant")

CLIENT_SESSION_KEY = "assistant_client"
CONVERSATION_SESSION_KEY = "assistant_conversation"
SUPPORT_SENT_SESSION_KEY = "assistant_support_sent"
STREAM_FAILED_ANSWER = (
    "Sorry, something went wrong while answering. Please reload the page, or contact support."
)


class HtmxHttpRequest(HttpRequest):
    """A request through django-htmx's middleware, which sets ``request.htmx``."""

    htmx: HtmxDetails


def _client_hash(request: HttpRequest) -> str | None:
    """This browser's client hash, or None before its first question: only asking creates one,
    so a visit that asks nothing (or a crawler) leaves no session behind."""
    token = request.session.get(CLIENT_SESSION_KEY)
    return client_key_hash(token) if token else None


def _client_hash_for_asking(request: HttpRequest) -> str:
    token = request.session.get(CLIENT_SESSION_KEY)
    if not token:
        token = secrets.token_urlsafe(18)
        request.session[CLIENT_SESSION_KEY] = token
    return client_key_hash(token)


def _client_message(request: HttpRequest, public_id: uuid.UUID) -> Message:
    """One of this browser's messages; anyone else's is a 404, like one that does not exist."""
    client_hash = _client_hash(request)
    message = client_hash and message_for_client(public_id=public_id, client_hash=client_hash)
    if not message:
        raise Http404
    return message


def _audiences(request: HttpRequest) -> Sequence[str]:
    # Staff who may read internal documents get answers from them too (the /docs pages' rule).
    return audiences_for(request.user)


def _current_conversation(request: HttpRequest, client_hash: str | None) -> Conversation | None:
    if client_hash is None:
        return None
    return conversation_for_client(
        client_hash=client_hash, public_id=request.session.get(CONVERSATION_SESSION_KEY)
    )


def _client_ip(request: HttpRequest) -> str:
    # REMOTE_ADDR only: X-Forwarded-For is whatever the client says unless a trusted proxy
    # rewrites it, and the deployment's proxy (if any) should set REMOTE_ADDR for us.
    return request.META.get("REMOTE_ADDR") or "unknown"


def _page_context(**extra: Any) -> dict[str, Any]:
    return {
        "question_max_chars": settings.QUESTION_MAX_CHARS,
        "support_url": support_contact_url(),
        "support_form": support_form_used(),
        **extra,
    }


@require_GET
@never_cache
def chat_page(request: HttpRequest) -> TemplateResponse:
    return chat_render(request, template_name="assistant/chat.html")


def chat_render(request: HttpRequest, *, template_name: str, **extra: Any) -> TemplateResponse:
    """This browser's current conversation in ``template_name``: the chat page, or the compact
    frame the website widget shows (``assistant.widget.views``), so both show the same turns."""
    client_hash = _client_hash(request)
    conversation = _current_conversation(request, client_hash)
    return _render_page(
        request,
        conversation=conversation,
        client_hash=client_hash,
        template_name=template_name,
        **extra,
    )


def _render_page(
    request: HttpRequest,
    *,
    conversation: Conversation | None,
    client_hash: str | None,
    status: int = 200,
    template_name: str = "assistant/chat.html",
    **extra: Any,
) -> TemplateResponse:
    messages = conversation_messages(conversation=conversation, client_hash=client_hash or "")
    related_pages_attach(messages=messages, audiences=_audiences(request))
    suggestions = [] if messages else suggested_questions()
    greeting = None if messages else chat_greeting()
    context = _page_context(
        conversation=conversation,
        messages=messages,
        suggestions=suggestions,
        greeting=greeting,
        **extra,
    )
    return TemplateResponse(request, template_name, context, status=status)


@require_POST
@never_cache
def ask(request: HtmxHttpRequest) -> HttpResponse:
    client_hash = _client_hash_for_asking(request)
    question = request.POST.get("question", "")
    conversation = conversation_for_client(
        client_hash=client_hash,
        public_id=request.POST.get("conversation") or request.session.get(CONVERSATION_SESSION_KEY),
    )
    try:
        question_normalise(question)
    except QuestionRejected as exc:
        return _ask_error(
            request,
            str(exc),
            status=400,
            conversation=conversation,
            client_hash=client_hash,
            question=question,
        )
    decision = ask_rate_check(client_hash=client_hash, ip_address=_client_ip(request))
    if not decision.allowed:
        response = _ask_error(
            request,
            _too_fast("You're asking questions faster than we can answer them.", decision),
            status=429,
            conversation=conversation,
            client_hash=client_hash,
            question=question,
        )
        response["Retry-After"] = str(decision.retry_after)
        return response

    if conversation is None:
        conversation = conversation_start(client_hash=client_hash)
    conversation_id = str(conversation.public_id)
    if request.session.get(CONVERSATION_SESSION_KEY) != conversation_id:
        # Assigning marks the session modified even for the same value: a write per ask.
        request.session[CONVERSATION_SESSION_KEY] = conversation_id
    message = message_ask(
        conversation=conversation, question=question, audiences=_audiences(request)
    )

    if request.htmx:
        get_token(request)  # the stream renders forms after the CSRF middleware has run
        context = _page_context(message=message, conversation=conversation)
        return TemplateResponse(request, "assistant/_ask_result.html", context)
    answer_complete(message=message, audiences=_audiences(request))
    return HttpResponseRedirect(f"{reverse('assistant:chat')}#message-{message.public_id}")


def _ask_error(
    request: HtmxHttpRequest,
    error: str,
    *,
    status: int,
    conversation: Conversation | None,
    client_hash: str,
    question: str,
) -> HttpResponse:
    """The reason in the page: as a fragment into the form's alert area for htmx, else the
    whole page with the question kept in the box so it can be shortened and sent again."""
    if request.htmx:
        response = TemplateResponse(
            request, "assistant/_ask_error.html", {"ask_error": error}, status=status
        )
        response["HX-Retarget"] = "#ask-error"
        response["HX-Reswap"] = "innerHTML"
        return response
    return _render_page(
        request,
        conversation=conversation,
        client_hash=client_hash,
        status=status,
        ask_error=error,
        question_value=question,
    )


@require_GET
def answer_events(request: HttpRequest, public_id: uuid.UUID) -> StreamingHttpResponse:
    """The answer to one of this client's messages as server-sent events. A reconnect after the
    answer is done gets the final event again, which closes the stream on the page.

    With the database down the stream is one final event saying so: the page shows it and stops,
    where a 503 would only make the browser retry a connection that cannot succeed."""
    try:
        message = _client_message(request, public_id)
    except Exception as exc:
        if not is_database_outage(exc):
            raise
        log.warning("answer_stream_unavailable", error=one_line(exc))
        events: Iterator[str] = iter([sse_event("final", _unavailable_html())])
    else:
        get_token(request)
        events = _event_stream(request, message)
    response = StreamingHttpResponse(events, content_type="text/event-stream; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx would otherwise hold the events back
    return response


def _event_stream(request: HttpRequest, message: Message) -> Iterator[str]:
    # A comment first: proxies and the browser see the stream open before retrieval starts.
    yield ": answering\n\n"
    try:
        for event in answer_stream(message=message, audiences=_audiences(request)):
            if isinstance(event, AnswerDelta):
                yield sse_event("delta", str(escape(event.text)))
            elif isinstance(event, AnswerReady):
                yield sse_event("final", _answer_html(request, event.message))
    except Exception as exc:  # the page must get a final event, or it would reconnect forever
        log.exception("answer_stream_failed", message=str(message.public_id), error=one_line(exc))
        if is_database_outage(exc):
            yield sse_event("final", _unavailable_html())
            return
        message.status = Message.Status.FAILED
        message.answer = STREAM_FAILED_ANSWER
        yield sse_event("final", _answer_html(request, message))


def sse_event(name: str, data: str) -> str:
    """One server-sent event. Each line of ``data`` gets its own ``data:`` field (the browser
    joins them with newlines); the space after the colon is the one the parser strips, so the
    text's own leading space survives."""
    lines = data.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return f"event: {name}\n" + "".join(f"data: {line}\n" for line in lines) + "\n"


def _unavailable_html() -> str:
    return render_to_string(
        "assistant/_unavailable.html", _page_context(notice=UNAVAILABLE_MESSAGE)
    )


def _answer_html(request: HttpRequest, message: Message) -> str:
    related_pages_attach(messages=[message], audiences=_audiences(request))
    context = _page_context(message=message)
    return render_to_string("assistant/_answer.html", context, request=request)


@require_POST
@never_cache
def feedback(request: HtmxHttpRequest, public_id: uuid.UUID) -> HttpResponse:
    message = _client_message(request, public_id)
    client_hash = message.conversation.client_key_hash
    context = _page_context(message=message, vote=request.POST.get("vote", ""))
    status = 200
    try:
        saved = feedback_record(
            message=message,
            client_hash=client_hash,
            vote=request.POST.get("vote", ""),
            comment=request.POST.get("comment", ""),
        )
    except FeedbackRejected as exc:
        context["feedback_error"] = str(exc)
        status = 400
    else:
        context.update(
            vote=saved.vote,
            comment=saved.comment,
            feedback_saved=True,
            comment_saved=bool(request.POST.get("comment", "").strip()),
        )
    if request.htmx:
        return TemplateResponse(request, "assistant/_feedback.html", context, status=status)
    if status != 200:
        return _render_page(
            request,
            conversation=message.conversation,
            client_hash=client_hash,
            status=status,
        )
    return HttpResponseRedirect(f"{reverse('assistant:chat')}#message-{message.public_id}")


@require_POST
def conversation_new(request: HttpRequest) -> HttpResponseRedirect:
    """Forget the current conversation: the next question starts a new one (no follow-up
    context). The old one stays stored for the admin."""
    request.session.pop(CONVERSATION_SESSION_KEY, None)
    return HttpResponseRedirect(reverse("assistant:chat"))


def _too_fast(what: str, decision: RateDecision) -> str:
    return f"{what} Please wait {decision.retry_after} seconds and try again."


@require_http_methods(["GET", "HEAD", "POST"])
@never_cache
def support(request: HtmxHttpRequest) -> HttpResponse:
    """The "Contact support" form: email, message, and the conversation it is sent from.

    With htmx the form is a fragment opened under an answer and replaced by its confirmation;
    without JavaScript it is a page of its own that posts, then redirects to itself showing
    the confirmation. ``SUPPORT_CONTACT_URL`` replaces all of this with the address it names."""
    if not support_form_used():
        return HttpResponseRedirect(support_contact_url())
    if request.method == "POST":
        return _support_send(request)
    client_hash = _client_hash(request)
    sent = bool(request.session.pop(SUPPORT_SENT_SESSION_KEY, False))
    conversation = None
    if client_hash is not None:
        conversation = conversation_for_client(
            client_hash=client_hash,
            public_id=request.GET.get("conversation")
            or request.session.get(CONVERSATION_SESSION_KEY),
        )
    return _support_form(request, conversation=conversation, sent=sent)


def _support_send(request: HtmxHttpRequest) -> HttpResponse:
    client_hash = _client_hash_for_asking(request)
    conversation = conversation_for_client(
        client_hash=client_hash, public_id=request.POST.get("conversation")
    )
    email, text = request.POST.get("email", ""), request.POST.get("message", "")
    form: dict[str, Any] = {"conversation": conversation, "email": email, "message_text": text}
    try:
        support_request_clean(email=email, message=text)
    except SupportRequestRejected as exc:
        return _support_form(request, errors=exc.errors, status=400, **form)
    # Counted once the request is valid: correcting a typo never uses up the allowance.
    decision = support_rate_check(client_hash=client_hash, ip_address=_client_ip(request))
    if not decision.allowed:
        error = _too_fast("You've sent several requests in a short time.", decision)
        response = _support_form(request, errors={"form": error}, status=429, **form)
        response["Retry-After"] = str(decision.retry_after)
        return response
    support_request_create(
        client_hash=client_hash, conversation=conversation, email=email, message=text
    )
    if request.htmx:
        return _support_form(request, conversation=conversation, sent=True)
    request.session[SUPPORT_SENT_SESSION_KEY] = True
    return HttpResponseRedirect(reverse("assistant:support"))


def _support_form(
    request: HtmxHttpRequest,
    *,
    conversation: Conversation | None,
    status: int = 200,
    **extra: Any,
) -> TemplateResponse:
    questions = (
        list(conversation.messages.order_by("created_at", "id").values_list("question", flat=True))
        if conversation
        else []
    )
    context = _page_context(
        conversation=conversation,
        attached_questions=questions,
        form_id=secrets.token_hex(4),  # ids stay unique with several forms open in the chat
        support_message_max_chars=SUPPORT_MESSAGE_MAX_CHARS,
        **extra,
    )
    template = "assistant/_support_form.html" if request.htmx else "assistant/support.html"
    return TemplateResponse(request, template, context, status=status)
