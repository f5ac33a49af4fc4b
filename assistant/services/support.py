"""Support requests: a customer asks for a person from the chat page, with the conversation
they had attached, and staff read the request in the admin."""

from __future__ import annotations

import structlog
from django.core.exceptions import ValidationError
from django.core.validators import EmailValidator

from assistant.models import Conversation, SupportRequest
from assistant.services.questions import customer_text_clean

log = structlog.get_logger("groundwork.assistant")

SUPPORT_MESSAGE_MAX_CHARS = 5000
EMAIL_MAX_CHARS = 254  # RFC 5321's limit for a forward path, Django's EmailField default


class SupportRequestRejected(ValueError):
    """The request cannot be sent as it is. ``errors`` says why per field ("email",
    "message"), for the customer; nothing is stored."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{field}: {error}" for field, error in errors.items()))
        self.errors = errors


def support_request_clean(*, email: str, message: str) -> tuple[str, str]:
    """The email address and message as they will be stored. Raises ``SupportRequestRejected``
    saying what is wrong with each field."""
    email = customer_text_clean(email)
    text = customer_text_clean(message)
    errors: dict[str, str] = {}
    if not email:
        errors["email"] = "Please give the email address we should reply to."
    elif len(email) > EMAIL_MAX_CHARS or not _is_email(email):
        errors["email"] = "That doesn't look like an email address (for example name@example.com)."
    if not text:
        errors["message"] = "Please tell us what you need help with."
    elif len(text) > SUPPORT_MESSAGE_MAX_CHARS:
        errors["message"] = (
            f"Your message is {len(text):,} characters long; please keep it under "
            f"{SUPPORT_MESSAGE_MAX_CHARS:,} characters."
        )
    if errors:
        raise SupportRequestRejected(errors)
    return email, text


def support_request_create(
    *, client_hash: str, conversation: Conversation | None, email: str, message: str
) -> SupportRequest:
    """Store a request for staff. ``conversation`` must already be known to belong to this
    client (``conversation_for_client``). Raises ``SupportRequestRejected``."""
    email, text = support_request_clean(email=email, message=message)
    request = SupportRequest.objects.create(
        conversation=conversation, client_key_hash=client_hash, email=email, message=text
    )
    log.info(
        "support_requested",
        request=str(request.public_id),
        conversation=str(conversation.public_id) if conversation else None,
        chars=len(text),
    )
    return request


def _is_email(value: str) -> bool:
    try:
        EmailValidator()(value)
    except ValidationError:
        return False
    return True
