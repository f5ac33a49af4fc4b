"""Writes of the assistant: conversations, questions, the answer pipeline, the answer cache and
feedback. Views, the benchmark and tests import from here."""

from __future__ import annotations

from assistant.follow_ups import follow_up_search, joined_query, leans_on_previous
from assistant.services.answer_cache import answer_cache_key
from assistant.services.answering import (
    GENERATION_FAILED_ANSWER,
    NOT_IN_DOCS_ANSWER,
    RETRIEVAL_FAILED_ANSWER,
    AnswerDelta,
    AnswerEvent,
    AnswerReady,
    answer_complete,
    answer_stream,
)
from assistant.services.conversations import (
    FeedbackRejected,
    client_key_hash,
    conversation_for_client,
    conversation_start,
    feedback_record,
    message_ask,
)
from assistant.services.evidence import cited_sources, retrieval_snapshot
from assistant.services.expiry import EXPIRED_ANSWER, pending_answers_expire
from assistant.services.questions import (
    QuestionRejected,
    customer_text_clean,
    question_cache_text,
    question_normalise,
)
from assistant.services.support import (
    SupportRequestRejected,
    support_request_clean,
    support_request_create,
)

__all__ = [
    "EXPIRED_ANSWER",
    "GENERATION_FAILED_ANSWER",
    "NOT_IN_DOCS_ANSWER",
    "RETRIEVAL_FAILED_ANSWER",
    "AnswerDelta",
    "AnswerEvent",
    "AnswerReady",
    "FeedbackRejected",
    "QuestionRejected",
    "SupportRequestRejected",
    "answer_cache_key",
    "answer_complete",
    "answer_stream",
    "cited_sources",
    "client_key_hash",
    "conversation_for_client",
    "conversation_start",
    "customer_text_clean",
    "feedback_record",
    "follow_up_search",
    "joined_query",
    "leans_on_previous",
    "message_ask",
    "pending_answers_expire",
    "question_cache_text",
    "question_normalise",
    "retrieval_snapshot",
    "support_request_clean",
    "support_request_create",
]
