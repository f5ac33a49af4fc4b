"""Writes to the questions the empty chat page suggests, a policy steward's decision.

The questions customers ask most that were answered are *proposed* (``suggestions_propose``,
run by a beat task): a proposal is what a visitor typed, so it reaches other visitors only once
a steward approves it. Writing a suggestion in admin, approving and declining all need
``assistant.approve_suggestedquestion`` (policy stewards); every path (the admin form, its list
editing, its actions) comes through here with the acting user.
"""

from __future__ import annotations

from collections.abc import Iterable

import structlog
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from assistant.models import SuggestedQuestion
from assistant.selectors import SUGGESTIONS_SHOWN, most_asked_questions
from assistant.services.questions import question_cache_text
from kb.actors import SYSTEM, Actor, actor_has_perm, actor_name

log = structlog.get_logger("groundwork.assistant")

APPROVE_PERMISSION = "assistant.approve_suggestedquestion"
# Proposals made per run: a few more than the page shows, so a steward has a choice.
PROPOSALS_PER_RUN = 3 * SUGGESTIONS_SHOWN


class SuggestionPermissionDenied(PermissionDenied):
    """The acting user may not put questions on the chat page; the message says so, for people."""


def may_approve_suggestions(*, actor: Actor) -> bool:
    """Whether ``actor`` may write, approve and decline the chat page's suggested questions."""
    return actor_has_perm(actor, APPROVE_PERMISSION)


def _require_approver(*, actor: Actor, action: str) -> None:
    if not may_approve_suggestions(actor=actor):
        raise SuggestionPermissionDenied(
            f"Only a policy steward may {action}: what the chat page suggests is shown to every "
            "visitor."
        )


@transaction.atomic
def suggestions_propose(*, limit: int = PROPOSALS_PER_RUN) -> list[SuggestedQuestion]:
    """Propose the most asked answered questions not yet known in any state (a declined one is
    never proposed again; an approved one is already on the page) and refresh the asker count
    of standing proposals. Returns the new proposals. Idempotent: a second run adds nothing."""
    known = {
        question_cache_text(suggestion.question): suggestion
        for suggestion in SuggestedQuestion.objects.select_for_update()
    }
    created = []
    for asked in most_asked_questions(limit=limit):
        existing = known.get(question_cache_text(asked.question))
        if existing is None:
            created.append(
                SuggestedQuestion.objects.create(
                    question=asked.question,
                    status=SuggestedQuestion.Status.PROPOSED,
                    askers=asked.askers,
                )
            )
        elif (
            existing.status == SuggestedQuestion.Status.PROPOSED and existing.askers != asked.askers
        ):
            existing.askers = asked.askers
            existing.save(update_fields=["askers"])
    if created:
        log.info("suggestions_proposed", count=len(created))
    return created


@transaction.atomic
def suggestions_review(
    *, suggestions: Iterable[SuggestedQuestion], actor: Actor, approve: bool
) -> int:
    """Approve (shown from now on, while active) or decline (never shown, never proposed again)
    ``suggestions``, as ``actor``. Returns how many changed."""
    _require_approver(actor=actor, action="approve or decline suggested questions")
    status = SuggestedQuestion.Status.APPROVED if approve else SuggestedQuestion.Status.DECLINED
    reviewer = None if actor is SYSTEM else actor
    changed = 0
    for suggestion in suggestions:
        if suggestion.status == status:
            continue
        suggestion.status = status
        suggestion.reviewed_by = reviewer  # type: ignore[assignment]  # a signed-in User
        suggestion.reviewed_at = timezone.now()
        suggestion.save(update_fields=["status", "reviewed_by", "reviewed_at"])
        changed += 1
        log.info(
            "suggestion_reviewed",
            suggestion=suggestion.pk,
            status=status,
            actor=actor_name(actor),
        )
    return changed


@transaction.atomic
def suggestion_save(*, suggestion: SuggestedQuestion, actor: Actor) -> SuggestedQuestion:
    """Save a suggestion written or edited in admin. A new one is approved: a steward wrote it.
    An edited one keeps its state (a proposal whose wording a steward fixed is still to be
    approved)."""
    _require_approver(actor=actor, action="write or change suggested questions")
    if suggestion.pk is None:
        suggestion.status = SuggestedQuestion.Status.APPROVED
        suggestion.reviewed_by = None if actor is SYSTEM else actor
        suggestion.reviewed_at = timezone.now()
    suggestion.save()
    return suggestion
