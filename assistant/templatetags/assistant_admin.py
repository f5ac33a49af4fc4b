"""Assistant records shown on other admin pages: the questions a document's answers served."""

from __future__ import annotations

from typing import Any

from django import template

from assistant.selectors import CITING_QUESTIONS_SHOWN, questions_citing_document

register = template.Library()


@register.inclusion_tag("admin/assistant/_questions_citing.html", takes_context=True)
def questions_citing(context: template.Context, document: Any) -> dict[str, Any]:
    """On a document's edit page: the latest questions whose answers cited it, with their
    feedback, so a writer sees what a change would touch. Customers' questions are shown only
    to staff who may read answers (``assistant.view_message``)."""
    request = context["request"]
    allowed = request.user.has_perm("assistant.view_message")
    return {
        "allowed": allowed,
        "questions": questions_citing_document(document_id=document.pk) if allowed else [],
        "shown": CITING_QUESTIONS_SHOWN,
        # A start for the page's test questions, where the editor may add them.
        "may_add_test_questions": bool(context.get("may_edit_test_questions")),
    }
