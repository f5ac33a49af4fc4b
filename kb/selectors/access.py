"""Who may read what: the audiences a user may see, and the documents a reader of those
audiences may open. The one owner of that rule: pages, chat answers, debug search and evals all
ask here."""

from __future__ import annotations

from kb.actors import SYSTEM, Actor, actor_has_perm
from kb.models import Document, DocumentQuerySet
from kb.parsing import alias_path

# Who may read internal pages (and the text of retired ones): active staff holding this.
STAFF_READER_PERMISSION = "kb.view_document"
PUBLIC_AUDIENCES: tuple[str, ...] = (Document.Audience.PUBLIC.value,)
ALL_AUDIENCES: tuple[str, ...] = tuple(audience.value for audience in Document.Audience)


def reader_is_staff(user: Actor) -> bool:
    """Active staff holding ``kb.view_document`` (or the system, running a command): the readers
    of what customers are not shown, internal pages and the text of retired ones."""
    if user is SYSTEM:
        return True
    return bool(getattr(user, "is_staff", False) and actor_has_perm(user, STAFF_READER_PERMISSION))


def audiences_for(user: Actor) -> tuple[str, ...]:
    """The audiences whose pages ``user`` may see: in /docs pages, chat answers, debug search
    and evals alike. The one place this is decided; everyone else must not learn internal pages
    exist."""
    return ALL_AUDIENCES if reader_is_staff(user) else PUBLIC_AUDIENCES


def documents_readable(*, audiences: tuple[str, ...]) -> DocumentQuerySet:
    # Retired pages stay reachable: old links and old answers point at them, and the page says
    # it was retired (customers get the notice, not the text). Drafts are never shown.
    return Document.objects.exclude(status=Document.Status.DRAFT).filter(audience__in=audiences)


def document_for_reader(*, path: str, audiences: tuple[str, ...]) -> Document | None:
    """The document at ``path`` if a reader of ``audiences`` may open it, else None (404)."""
    return documents_readable(audiences=audiences).filter(path=path).first()


def document_for_alias(*, path: str, audiences: tuple[str, ...]) -> Document | None:
    """The document a reader of ``audiences`` may open that was once at ``path`` (its front
    matter's `aliases`): a GIN lookup; the first by path if two pages claim the address."""
    alias = alias_path(path)
    if not alias:
        return None
    return (
        documents_readable(audiences=audiences)
        .filter(aliases__contains=[alias])
        .order_by("path")
        .first()
    )


def document_successor_for_reader(
    *, document: Document, audiences: tuple[str, ...]
) -> Document | None:
    """The page that replaced ``document``, when there is one the reader may open."""
    if document.superseded_by_id is None:
        return None
    return documents_readable(audiences=audiences).filter(pk=document.superseded_by_id).first()
