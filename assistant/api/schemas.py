"""What the API reads and writes, as pydantic schemas: they validate requests and generate the
OpenAPI document (``/api/v1/openapi.json``), so the two cannot drift apart."""

from __future__ import annotations

import datetime
import uuid
from typing import Literal

from ninja import Field, Schema
from pydantic import ConfigDict

# Room for a question the limit refuses with its own message (question_normalise) rather than
# a schema error; anything longer is refused by the schema before it is cleaned.
QUESTION_SCHEMA_MAX_CHARS = 100_000
COMMENT_SCHEMA_MAX_CHARS = 100_000


class Strict(Schema):
    """Unknown fields are refused: a misspelt "conversaton" must not silently start a new thread."""

    model_config = ConfigDict(extra="forbid")


class AskIn(Strict):
    question: str = Field(
        ...,
        max_length=QUESTION_SCHEMA_MAX_CHARS,
        description="The question, at most QUESTION_MAX_CHARS characters once cleaned.",
    )
    conversation: uuid.UUID | None = Field(
        None,
        description="Continue this conversation (one of this key's): a follow-up is answered "
        "in its context. Omit to start a new one.",
    )


class Citation(Schema):
    number: int = Field(..., description="The [n] marker in the answer text.")
    path: str = Field(..., description="The cited document, e.g. policies/refunds.md.")
    title: str
    section: str
    url: str = Field(..., description="The document's page in the help center.")
    updated_on: datetime.date | None
    older: bool = Field(
        ..., description="A newer cited page contradicts this one: prefer the newer."
    )


class RelatedPage(Schema):
    path: str
    title: str
    url: str


class AnswerOut(Schema):
    message: uuid.UUID = Field(..., description="The answer's id, for feedback.")
    conversation: uuid.UUID = Field(..., description="Pass it back to ask a follow-up.")
    question: str = Field(..., description="The question as it was cleaned and answered.")
    status: Literal["answered", "not_in_docs", "flagged", "failed", "pending"]
    answer: str = Field(
        ..., description="Plain text with [n] citation markers; escape it before showing as HTML."
    )
    citations: list[Citation]
    related_pages: list[RelatedPage]
    degraded: bool = Field(..., description="A retrieval leg was down: quality may be lower.")
    cached: bool


class SearchHit(Schema):
    rank: int
    path: str
    title: str
    section: str
    url: str
    text: str = Field(..., description="The passage, up to 300 characters.")
    updated_on: datetime.date | None


class SearchOut(Schema):
    query: str
    degraded: bool
    hits: list[SearchHit]


class FeedbackIn(Strict):
    vote: Literal["up", "down"]
    comment: str = Field("", max_length=COMMENT_SCHEMA_MAX_CHARS)


class FeedbackOut(Schema):
    message: uuid.UUID
    vote: Literal["up", "down"]
    comment: str


class ConversationOut(Schema):
    conversation: uuid.UUID
    messages: list[AnswerOut]


class ErrorOut(Schema):
    error: str = Field(..., description="What was wrong, for a person to read.")
