"""The answer API's endpoints: adapters over the chat page's services, so an API answer goes
through the same retrieval, refusal, citation check and injection defences as a page answer.
What a key may read is ``api_key_audiences`` (public pages, or public and internal ones).

Errors are JSON ``{"error": "…"}`` with a 4xx status for anything the caller can fix; a
schema violation is a 400 that names the field."""

from __future__ import annotations

import uuid
from typing import Any

import structlog
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from ninja import NinjaAPI, Query, Status
from ninja.errors import HttpError
from ninja.errors import ValidationError as NinjaValidationError

from assistant.api.auth import ApiError, ApiKeyAuth
from assistant.api.keys import api_key_audiences, api_key_client_hash
from assistant.api.models import ApiKey
from assistant.api.schemas import (
    AnswerOut,
    AskIn,
    ConversationOut,
    ErrorOut,
    FeedbackIn,
    FeedbackOut,
    SearchOut,
)
from assistant.api.streams import (
    answer_as_json,
    answer_event_stream,
    answers_as_json,
    document_url,
)
from assistant.models import Message
from assistant.selectors import conversation_messages, message_for_client
from assistant.services import (
    FeedbackRejected,
    QuestionRejected,
    answer_complete,
    conversation_for_client,
    conversation_start,
    feedback_record,
    message_ask,
    question_normalise,
)
from kb.errors import one_line
from kb.runtime.availability import UNAVAILABLE_MESSAGE, is_database_outage
from search.results import RetrievalUnavailable
from search.services import retrieve
from search.views import MAX_LIMIT, hit_preview

log = structlog.get_logger("groundwork.api")

api = NinjaAPI(
    title="Groundwork answer API",
    version="1",
    description="Answers from the help center with cited sources; see docs/api.md.",
    auth=ApiKeyAuth(),
    urls_namespace="api-v1",
    openapi_url="/openapi.json",
    docs_url="/docs",
)

ERRORS: dict[int, Any] = {
    400: ErrorOut,
    401: ErrorOut,
    403: ErrorOut,
    404: ErrorOut,
    429: ErrorOut,
    503: ErrorOut,
}


def _error(status: int, message: str, **headers: str) -> JsonResponse:
    response = JsonResponse({"error": message}, status=status)
    for name, value in headers.items():
        response[name] = value
    return response


@api.exception_handler(ApiError)
def _api_error(request: HttpRequest, exc: ApiError) -> HttpResponse:
    response = _error(exc.status, exc.message)
    if exc.status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="api"'
    if exc.retry_after is not None:
        response["Retry-After"] = str(exc.retry_after)
    return response


@api.exception_handler(NinjaValidationError)
def _invalid(request: HttpRequest, exc: NinjaValidationError) -> HttpResponse:
    """A schema violation as one sentence naming the field, with pydantic's list beside it."""
    first = exc.errors[0] if exc.errors else {}
    where = ".".join(str(part) for part in first.get("loc", ()) if part not in ("body",))
    message = f"{where}: {first.get('msg', 'invalid')}" if where else first.get("msg", "invalid")
    details = [
        {"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", ""))}
        for e in exc.errors
    ]
    return JsonResponse({"error": message, "detail": details}, status=400)


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    # ninja's own refusals (a body that is not JSON, say) in the API's error shape.
    return _error(exc.status_code, str(exc))


@api.exception_handler(Exception)
def _unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
    if is_database_outage(exc):
        log.warning("api_database_unavailable", path=request.path, error=one_line(exc))
        return _error(503, UNAVAILABLE_MESSAGE, **{"Retry-After": "30"})
    log.exception("api_request_failed", path=request.path, error=one_line(exc))
    return _error(500, "Something went wrong on our side; it has been logged.")


def _key(request: HttpRequest) -> ApiKey:
    api_key: ApiKey = request.auth  # type: ignore[attr-defined]
    return api_key


def _pending_message(api_key: ApiKey, body: AskIn) -> Message:
    """The question recorded in its conversation (this key's, or a new one), not yet answered."""
    try:
        question_normalise(body.question)
    except QuestionRejected as exc:
        raise ApiError(400, str(exc)) from exc
    client_hash = api_key_client_hash(api_key)
    if body.conversation is not None:
        conversation = conversation_for_client(client_hash=client_hash, public_id=body.conversation)
        if conversation is None:
            raise ApiError(404, "No conversation with that id for this key.")
    else:
        conversation = conversation_start(client_hash=client_hash)
    return message_ask(
        conversation=conversation, question=body.question, audiences=api_key_audiences(api_key)
    )


@api.post("/ask", response={200: AnswerOut, **ERRORS}, summary="Ask a question")
def ask(request: HttpRequest, body: AskIn) -> dict[str, Any]:
    """The whole answer at once, with its citations."""
    api_key = _key(request)
    message = _pending_message(api_key, body)
    audiences = api_key_audiences(api_key)
    answer_complete(message=message, audiences=audiences)
    return answer_as_json(message, audiences=audiences)


@api.post(
    "/ask/stream",
    response=ERRORS,
    summary="Ask a question, streamed as server-sent events",
    openapi_extra={
        "responses": {
            "200": {
                "description": 'text/event-stream: `delta` events `{"text": …}` while the '
                "answer is written, then one `final` event holding an AnswerOut object (or "
                '`{"error": …}` when the service is unavailable).',
                "content": {"text/event-stream": {"schema": {"type": "string"}}},
            }
        }
    },
)
def ask_stream(request: HttpRequest, body: AskIn) -> StreamingHttpResponse:
    api_key = _key(request)
    message = _pending_message(api_key, body)
    events = answer_event_stream(message=message, audiences=api_key_audiences(api_key))
    response = StreamingHttpResponse(events, content_type="text/event-stream; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx would otherwise hold the events back
    return response


@api.get("/search", response={200: SearchOut, **ERRORS}, summary="Search the help center")
def search(
    request: HttpRequest,
    q: str = Query(..., max_length=100_000, description="What to search for."),
    limit: int = Query(5, ge=1, le=MAX_LIMIT, description="How many passages, best first."),
) -> dict[str, Any]:
    """The passages retrieval ranks first for ``q``, from the pages this key may read."""
    try:
        query = question_normalise(q)
    except QuestionRejected as exc:
        raise ApiError(400, str(exc).replace("question", "query")) from exc
    try:
        result = retrieve(question=query, audiences=api_key_audiences(_key(request)), limit=limit)
    except RetrievalUnavailable as exc:
        log.warning("api_search_unavailable", error=one_line(exc))
        raise ApiError(503, "Search is unavailable right now; try again in a minute.") from exc
    return {
        "query": query,
        "degraded": result.degraded,
        "hits": [
            {
                "rank": rank,
                "path": hit.path,
                "title": hit.title,
                "section": hit.section,
                "url": document_url(hit.path),
                "text": hit_preview(hit.text),
                "updated_on": hit.updated_on,
            }
            for rank, hit in enumerate(result.hits, start=1)
        ],
    }


@api.post(
    "/answers/{message_id}/feedback",
    response={200: FeedbackOut, **ERRORS},
    summary="Rate an answer",
)
def feedback(request: HttpRequest, message_id: uuid.UUID, body: FeedbackIn) -> dict[str, Any]:
    """One vote per answer per key; voting again changes it."""
    client_hash = api_key_client_hash(_key(request))
    message = message_for_client(public_id=message_id, client_hash=client_hash)
    if message is None:
        raise ApiError(404, "No answer with that id for this key.")
    try:
        saved = feedback_record(
            message=message, client_hash=client_hash, vote=body.vote, comment=body.comment
        )
    except FeedbackRejected as exc:
        raise ApiError(400, str(exc)) from exc
    return {"message": message.public_id, "vote": saved.vote, "comment": saved.comment}


@api.post(
    "/conversations",
    response={201: ConversationOut, **ERRORS},
    summary="Start a conversation",
)
def conversation_new(request: HttpRequest) -> Status:
    """An empty conversation to ask in; asking without one starts one too."""
    conversation = conversation_start(client_hash=api_key_client_hash(_key(request)))
    return Status(201, {"conversation": conversation.public_id, "messages": []})


@api.get(
    "/conversations/{conversation_id}",
    response={200: ConversationOut, **ERRORS},
    summary="A conversation's questions and answers",
)
def conversation_detail(request: HttpRequest, conversation_id: uuid.UUID) -> dict[str, Any]:
    api_key = _key(request)
    client_hash = api_key_client_hash(api_key)
    conversation = conversation_for_client(client_hash=client_hash, public_id=conversation_id)
    if conversation is None:
        raise ApiError(404, "No conversation with that id for this key.")
    audiences = api_key_audiences(api_key)
    messages = conversation_messages(conversation=conversation, client_hash=client_hash)
    return {
        "conversation": conversation.public_id,
        "messages": answers_as_json(messages, audiences=audiences),
    }
