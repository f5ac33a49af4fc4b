"""Concurrent edits while searching: a search never sees a half-updated document.

A real Celery worker re-indexes a multi-chunk document as a writer keeps editing it; searches run
in other threads the whole time. Every chunk of one version carries that version's number, so
a search that mixed versions would show two numbers for one document.
"""

from __future__ import annotations

import re

from kb.models import Document, DocumentIndexState
from kb.services import document_index, embedding_model_register
from search.services import retrieve
from tests.support.celery_worker import until_worker_answers, worker_process
from tests.support.polling import until
from tests.support.searching import searching

SECTIONS = ("Refund window", "Prorated credits", "Chargebacks", "Annual renewals")
REVISION = re.compile(r"revision (\d+)")
EDITS = 4
SEARCH_THREADS = 2


def _body(revision: int) -> str:
    filler = " ".join(
        f"Clause {n} of this section applies under revision {revision} of the billing policy."
        for n in range(14)
    )  # each section is long enough to be its own chunk
    return "\n\n".join(f"## {name}\n\n{filler}" for name in SECTIONS)


def _revisions_found() -> set[int]:
    """The revision numbers one search finds in billing.md's chunks."""
    result = retrieve(question="billing policy revision clauses", limit=10)
    return {
        int(number)
        for hit in result.hits
        if hit.path == "billing.md"
        for number in REVISION.findall(hit.text)
    }


def test_no_search_ever_mixes_two_versions_of_a_document(transactional_db, local_embedder) -> None:
    # given a document indexed as four chunks of revision 0
    embedding_model_register(embedder=local_embedder)
    document = Document.objects.create(path="billing.md", title="Billing", body=_body(0))
    document_index(document_id=document.pk, embedder=local_embedder)
    assert DocumentIndexState.objects.get(document=document).chunk_count == len(SECTIONS)

    # The searches start once the worker answers: while it starts, nothing changes under them.
    with worker_process() as worker:
        until_worker_answers(worker)
        with searching(_revisions_found, threads=SEARCH_THREADS) as searches:
            # when a writer saves revision after revision (revision 0 is found first), each
            # re-indexed under the searches
            state = DocumentIndexState.objects.filter(document=document)
            for revision in range(EDITS + 1):
                if revision:
                    document.body = _body(revision)
                    document.save()
                    until(
                        lambda: state.filter(status="indexed", indexed_hash=document.content_hash),
                        seconds=90,
                        why=lambda: worker.stdout and worker.stdout.read(2000),
                    )
                # and the searches find it before the next edit: a few times over, so that a
                # search begun before the commit is not the last to report on this revision
                searched = len(searches.results)

                def found_by_searches(revision: int = revision, searched: int = searched) -> bool:
                    assert not searches.errors, searches.errors
                    return searches.results[searched:].count({revision}) >= 2 * SEARCH_THREADS

                until(found_by_searches, seconds=90, why=f"no search found revision {revision}")

    # then every search saw exactly one revision of the document, and the last one won
    assert not searches.errors, searches.errors
    found = searches.results
    assert len(found) > 20
    assert all(len(revisions) == 1 for revisions in found), [r for r in found if len(r) != 1][:5]
    seen = {next(iter(revisions)) for revisions in found}
    assert seen == set(range(EDITS + 1))  # every re-indexing happened under the searches
    assert found[-1] == {EDITS}
