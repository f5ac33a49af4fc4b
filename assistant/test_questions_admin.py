"""The document editor's "answer the test questions on this draft": a fragment with each
question's live answer beside its answer on the unsaved text (``test_questions_draft_run``)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.template.response import TemplateResponse

from assistant.services.test_question_runs import test_questions_draft_run
from kb.chunking import ChunkingError
from kb.embedders import EmbeddingError
from kb.models import Document
from kb.parsing import MAX_DOCUMENT_BYTES, normalise_newlines
from kb.test_questions.services import may_run_test_questions

TEMPLATE = "admin/kb/document/_test_questions_draft.html"


def test_questions_draft_view(request: HttpRequest, document_id: int) -> HttpResponse:
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    document = Document.objects.filter(pk=document_id).first()
    if document is None:
        raise Http404("No such document.")
    if not may_run_test_questions(actor=request.user, document=document):
        raise PermissionDenied
    title = request.POST.get("title", "").strip() or document.title
    body = normalise_newlines(request.POST.get("body", ""))
    error = ""
    outcomes = []
    if len(body.encode()) > MAX_DOCUMENT_BYTES:
        error = f"The text is over {MAX_DOCUMENT_BYTES:,} bytes."
    else:
        try:
            outcomes = test_questions_draft_run(document=document, title=title, body=body)
        except ChunkingError as exc:
            error = f"The draft cannot be chunked: {exc}"
        except EmbeddingError as exc:
            error = f"The draft could not be embedded: {exc}. Try again in a minute."
    if not error and not outcomes:
        error = "This page has no test questions yet."
    return TemplateResponse(request, TEMPLATE, {"outcomes": outcomes, "error": error})
