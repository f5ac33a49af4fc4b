"""What a retirement from the "Policies needing attention" page reads and shows, apart from its
views (``attention_retire_admin``) and the page itself (``attention_admin``), which both use it:
the retire forms' parameters, the page and successor they name (``retire_choice_read``), and the
success notice with its Undo (``retired_notice``)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from django.http import HttpRequest, QueryDict
from django.urls import reverse

from kb.models import Document
from kb.services import (
    DocumentActionError,
    document_retirement_undoable,
    document_successor_check,
)

# Parameters of the retire forms; every other one is the attention page's own (its sorting),
# carried through the confirmation so the steward comes back to the page as it was.
RETIRE_PARAMETERS = {"document", "successor", "csrfmiddlewaretoken", "retired"}


@dataclass(frozen=True)
class RetireAttempt:
    """What a steward typed in a row's form, kept to show it again with the error."""

    document_id: int
    successor: str
    error: str


@dataclass(frozen=True)
class RetireChoice:
    document: Document
    successor: Document | None


@dataclass(frozen=True)
class RetiredNotice:
    """The attention page's success message after a retirement, with its Undo button while
    the retirement can still be undone."""

    document: Document
    successor: Document | None
    history_id: int
    undoable: bool


def attention_url(query: QueryDict | dict[str, str] | None = None, **extra: str) -> str:
    """The attention page, keeping its own parameters from ``query`` (sorting), plus ``extra``."""
    kept = {
        key: value
        for key, value in (query.items() if query is not None else [])
        if key not in RETIRE_PARAMETERS
    }
    parameters = urlencode({**kept, **extra})
    return reverse("admin:attention") + (f"?{parameters}" if parameters else "")


def retire_choice_read(data: QueryDict) -> RetireChoice | RetireAttempt:
    """The page and successor (by path; blank for none) a retire form names, or what is wrong
    with them, for people."""
    typed = data.get("successor", "").strip()
    try:
        document_id = int(data.get("document", ""))
    except ValueError:
        return RetireAttempt(document_id=0, successor=typed, error="No page was chosen.")
    document = Document.objects.select_related("superseded_by").filter(pk=document_id).first()
    if document is None:
        return RetireAttempt(document_id, typed, "That page no longer exists.")
    if document.status == Document.Status.RETIRED:
        return RetireAttempt(document_id, typed, f"{document.path} is already retired.")
    successor = None
    if typed:
        successor = Document.objects.filter(path=typed).first()
        if successor is None:
            return RetireAttempt(document_id, typed, f"No page has the path {typed!r}.")
    try:
        document_successor_check(document=document, successor=successor)
    except DocumentActionError as exc:
        return RetireAttempt(document_id, typed, f"{document.path} was not retired: {exc}.")
    return RetireChoice(document=document, successor=successor)


def retired_notice(request: HttpRequest) -> RetiredNotice | None:
    """The notice for ``?retired=<history id>`` (the redirect after a retirement), if that
    record is a retirement."""
    try:
        history_id = int(request.GET.get("retired", ""))
    except ValueError:
        return None
    record = (
        Document.history.filter(history_id=history_id, status=Document.Status.RETIRED)
        .select_related("superseded_by")
        .first()
    )
    document = Document.objects.filter(pk=record.id).first() if record is not None else None
    if record is None or document is None:
        return None
    return RetiredNotice(
        document=document,
        successor=Document.objects.filter(pk=record.superseded_by_id).first(),
        history_id=history_id,
        undoable=document_retirement_undoable(document=document, history_id=history_id),
    )
