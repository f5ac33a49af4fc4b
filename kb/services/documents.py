"""Writes to a document that change what customers are told: saving an edit, retiring (optionally
naming a successor), restoring and deleting.

Whether a page is current is a steward's decision: moving a page to or from ``retired``, or
changing its successor, needs ``kb.retire_document``. Every path that writes a document (the admin
form, its actions, history revert, import, ``kb_sync``) comes through here with the acting user,
or ``SYSTEM`` for a command run on the server, so no path can skip the check.

Retiring changes only the document row: retrieval filters on status and successor inside its
SQL, so the text stops being retrievable the moment the transaction commits, with no
re-embedding, and restoring brings it back just as fast. Undoing a retirement
(``document_retire_undo``) puts back the status and successor the page had before it, and
those of the pages it repointed, from the edit history.
"""

from __future__ import annotations

import structlog
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from kb.actors import SYSTEM, Actor, actor_has_perm, actor_name
from kb.models import Document, content_hash_of

log = structlog.get_logger("groundwork.kb")

RETIRE_PERMISSION = "kb.retire_document"
DELETE_PERMISSION = "kb.delete_document"


class DocumentActionError(ValueError):
    """The action would leave the documents inconsistent; the message says why, for people."""


class DocumentPermissionDenied(PermissionDenied):
    """The acting user may not make this change; the message says which change, for people."""


class DocumentEditConflict(DocumentActionError):
    """The edit was made on a version of the page that someone else has saved over since:
    saving it would silently undo their save. ``current`` is the page as stored now."""

    def __init__(self, message: str, *, current: Document) -> None:
        super().__init__(message)
        self.current = current


def may_retire(*, actor: Actor) -> bool:
    """Whether ``actor`` may retire, restore and name successors."""
    return actor_has_perm(actor, RETIRE_PERMISSION)


def document_lifecycle_check(
    *, actor: Actor, document: Document, status: str, successor_path: str | None
) -> None:
    """Raise ``DocumentPermissionDenied`` if giving ``document`` this status and successor is a
    steward's change and ``actor`` is not one: moving it to or from ``retired``, or changing
    which page supersedes it. Compared with the row as stored, not with ``document``, which may
    be an old version being reverted to. The successor is named by path, as an import file does."""
    if may_retire(actor=actor):
        return
    stored = (
        Document.objects.filter(pk=document.pk).values_list("status", "superseded_by__path").first()
        if document.pk is not None
        else None
    )
    old_status, old_successor_path = stored or (None, None)
    where = f"{document.path}: " if document.path else ""
    retired = Document.Status.RETIRED
    if (old_status == retired) != (status == retired):
        change = "restore a retired page" if old_status == retired else "retire a page"
        raise DocumentPermissionDenied(
            f"{where}only a policy steward may {change} "
            f"(status {old_status or '(new page)'} → {status})"
        )
    if old_successor_path != successor_path:
        raise DocumentPermissionDenied(
            f"{where}only a policy steward may change the page that supersedes it "
            f"({old_successor_path or 'none'} → {successor_path or 'none'})"
        )


@transaction.atomic
def document_save(
    *,
    document: Document,
    actor: Actor,
    updated_on_given: bool = False,
    expected_row_hash: str | None = None,
    synced: bool = False,
) -> Document:
    """Save an edit made by ``actor``: the admin form, a history revert, an import.

    A new title or body moves ``updated_on`` to today unless the writer set it in the same save
    (a different date than stored, or ``updated_on_given``: a file that states ``updated:``):
    the answer step lets the newer of two pages win, so a stale date would let an old page win.

    ``expected_row_hash`` is ``row_hash()`` of the page as the editor loaded it (the admin form
    carries it): if the stored row has changed since, someone saved in between and this edit,
    made on the older text, would undo theirs, so it raises ``DocumentEditConflict`` instead.

    ``synced``: the save is a folder sync's write, which records the row as it leaves it
    (``synced_row_hash``, ``kb.services.sync.provenance``) in the same write.

    Saving enqueues the page's indexing (the post-save signal, ``kb.signals``): in this
    transaction its index state turns pending in every model that follows edits and does not
    hold the new text, and the task is sent when the transaction commits.
    """
    stored = None
    if document.pk is not None:
        # Lock the row: a concurrent retire or edit must not slip between the check and the save.
        stored = (
            Document.objects.select_for_update()
            .filter(pk=document.pk)
            .values_list("content_hash", "updated_on")
            .first()
        )
        document_edit_check(document=document, expected_row_hash=expected_row_hash)
    document_lifecycle_check(
        actor=actor,
        document=document,
        status=document.status,
        successor_path=document.superseded_by.path if document.superseded_by is not None else None,
    )
    # save() sets it from the text as well; the date rule and row_hash() read it before then
    document.content_hash = content_hash_of(title=document.title, body=document.body)
    if stored is not None and not updated_on_given:
        stored_hash, stored_updated_on = stored
        text_changed = document.content_hash != stored_hash
        if text_changed and document.updated_on == stored_updated_on:
            document.updated_on = timezone.localdate()
    _record_actor(document, actor)
    if synced:
        document.synced_row_hash = document.row_hash()
    document.save()
    return document


def document_edit_check(*, document: Document, expected_row_hash: str | None) -> None:
    """Raise ``DocumentEditConflict`` if the stored page is no longer the version an edit was
    made on (``expected_row_hash``, its ``row_hash()`` when the editor loaded it): saving the
    edit would silently undo whatever was saved in between. No hash, no check (a new page)."""
    if not expected_row_hash or document.pk is None:
        return
    current = Document.objects.filter(pk=document.pk).first()
    if current is None or current.row_hash() == expected_row_hash:
        return
    last = current.history.select_related("history_user").first()
    who = last.history_user.get_username() if last and last.history_user else "someone"
    raise DocumentEditConflict(
        f"{current.path} was saved by {who} after you opened it, so your changes are not "
        "saved: compare the two versions below, keep what each needs, and save again.",
        current=current,
    )


def _record_actor(document: Document, actor: Actor) -> None:
    """Name the acting user in the document's history on every path, not only in admin requests
    (simple_history's middleware): a sync's conflict report says who changed the page."""
    if actor is not SYSTEM and getattr(actor, "pk", None) is not None:
        # simple_history reads this attribute; it has no types to declare it.
        document._history_user = actor  # type: ignore[attr-defined]


def _require_steward(*, actor: Actor, document: Document, action: str) -> None:
    if not may_retire(actor=actor):
        raise DocumentPermissionDenied(f"{document.path}: only a policy steward may {action} it")


def document_successor_check(*, document: Document, successor: Document | None) -> None:
    """Raise ``DocumentActionError`` unless ``successor`` (or none) may supersede ``document``:
    another page, published and current. A confirmation page asks before it shows."""
    if successor is None:
        return
    if successor.pk == document.pk:
        raise DocumentActionError(f"{document.path} cannot be superseded by itself")
    if successor.status != Document.Status.PUBLISHED or successor.superseded_by_id:
        raise DocumentActionError(
            f"the successor {successor.path} must be a published, current document"
        )


@transaction.atomic
def document_retire(
    *, document: Document, actor: Actor, successor: Document | None = None
) -> Document:
    """Retire ``document``, optionally naming the page that supersedes it; pages that named it
    as their successor now name that one. Saving enqueues indexing like every save (the
    post-save signal, ``kb.signals``), but the text is unchanged, so nothing turns pending."""
    _require_steward(actor=actor, document=document, action="retire")
    document_successor_check(document=document, successor=successor)
    document.status = Document.Status.RETIRED
    document.superseded_by = successor
    _record_actor(document, actor)
    document.save()
    # Pages that named this one as their successor now point at its successor.
    for predecessor in Document.objects.filter(superseded_by=document).exclude(pk=document.pk):
        predecessor.superseded_by = successor
        _record_actor(predecessor, actor)
        predecessor.save()
    log.info(
        "document_retired",
        path=document.path,
        successor=successor and successor.path,
        actor=actor_name(actor),
    )
    return document


# The history's reason on the saves an undo makes: the page's history says it was an undo.
UNDO_CHANGE_REASON = "Undo of a retirement"


def document_retirement_undoable(*, document: Document, history_id: int) -> bool:
    """Whether the history record ``history_id`` is a retirement of ``document`` that can still
    be undone: the page is still retired with the same successor, and was something else before."""
    record = document.history.filter(history_id=history_id).first()
    if record is None or record.status != Document.Status.RETIRED:
        return False
    previous = record.prev_record
    return (
        previous is not None
        and previous.status != Document.Status.RETIRED
        and Document.objects.filter(
            pk=document.pk, status=Document.Status.RETIRED, superseded_by=record.superseded_by_id
        ).exists()
    )


@transaction.atomic
def document_retire_undo(*, document: Document, actor: Actor, history_id: int) -> Document:
    """Undo the retirement that history record ``history_id`` holds: ``document`` gets back the
    status and successor it had just before, and the pages the retirement repointed from it to
    its successor name it again. Refused if the page changed status or successor since.

    Every save is recorded in the history (reason ``UNDO_CHANGE_REASON``) and enqueues the
    page's indexing (``kb.signals``): a model that does not hold its text (one built while it
    was retired, or an edit made meanwhile) indexes it before retrieval serves that text."""
    _require_steward(actor=actor, document=document, action="undo the retirement of")
    document = Document.objects.select_for_update().get(pk=document.pk)
    if not document_retirement_undoable(document=document, history_id=history_id):
        raise DocumentActionError(
            f"{document.path} changed since it was retired, so the retirement cannot be undone "
            "here; open the page to set its status"
        )
    record = document.history.get(history_id=history_id)
    previous = record.prev_record
    successor_id = record.superseded_by_id
    # The pages the retirement repointed: saved at or after it, from this page to its successor.
    # Only pages that ever named this one are read, each history row's previous one once: without
    # a successor the filter alone would match nearly every save since.
    repointed = []
    for later in Document.history.filter(
        history_date__gte=record.history_date,
        superseded_by_id=successor_id,
        id__in=Document.history.filter(superseded_by_id=document.pk).values("id"),
    ).exclude(id=document.pk):
        before = later.prev_record
        if before is not None and before.superseded_by_id == document.pk:
            repointed.append(later.id)
    document.status = previous.status
    document.superseded_by_id = previous.superseded_by_id
    _record_actor(document, actor)
    document._change_reason = UNDO_CHANGE_REASON  # type: ignore[attr-defined]
    document.save()
    for predecessor in Document.objects.filter(pk__in=repointed, superseded_by_id=successor_id):
        predecessor.superseded_by = document
        _record_actor(predecessor, actor)
        predecessor._change_reason = UNDO_CHANGE_REASON  # type: ignore[attr-defined]
        predecessor.save()
    log.info(
        "document_retirement_undone",
        path=document.path,
        status=document.status,
        repointed=len(repointed),
        actor=actor_name(actor),
    )
    return document


@transaction.atomic
def document_restore(*, document: Document, actor: Actor) -> Document:
    """Un-retire: published again and retrievable again, with no successor. Saving enqueues
    indexing like every save (``kb.signals``); the text is unchanged, so nothing turns pending."""
    _require_steward(actor=actor, document=document, action="restore")
    document.status = Document.Status.PUBLISHED
    document.superseded_by = None
    _record_actor(document, actor)
    document.save()
    log.info("document_restored", path=document.path, actor=actor_name(actor))
    return document


def may_delete(*, actor: Actor) -> bool:
    return actor_has_perm(actor, DELETE_PERMISSION)


@transaction.atomic
def document_delete(*, document: Document, actor: Actor) -> None:
    """Delete a page with what is derived from it (its chunks and index state, by cascade):
    deleting the page is the decision, the index follows it, so ``kb.delete_document`` is the
    one permission it needs. The edit history stays, so a deleted page can be looked up."""
    if not may_delete(actor=actor):
        raise DocumentPermissionDenied(f"{document.path}: you may not delete it")
    _record_actor(document, actor)
    path = document.path
    document.delete()
    log.info("document_deleted", path=path, actor=actor_name(actor))
