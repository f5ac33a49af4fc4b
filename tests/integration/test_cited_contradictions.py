"""Which cited passages contradict each other, for the chat's "Older page" notice: the rule of the
policy stewards' contradiction list (same subject by vector, a differing value), applied to the
passages one answer cites, over pages of the sample help center."""

from __future__ import annotations

import pytest

from kb.attention.contradictions import contradicting_chunks
from kb.models import Chunk
from tests.conftest import CachedEmbedder, corpus_pages_indexed

pytestmark = pytest.mark.django_db

PAGES = [
    "policies/refunds.md",
    "policies/refunds-2023.md",
    "policies/cancellation.md",
    "account/account-deletion-and-data-retention.md",
]


def _chunk(path: str, heading: str) -> int:
    return (
        Chunk.objects.filter(document__path=path, heading_path__endswith=heading)
        .values_list("id", flat=True)
        .get()
    )


@pytest.fixture
def pages(tmp_path, cached_embedder: CachedEmbedder) -> None:
    corpus_pages_indexed(tmp_path, PAGES, cached_embedder)


def test_the_old_and_new_monthly_refund_windows_contradict(pages) -> None:
    # 14 days on the 2023 page against 30 days on the current one, about the same refund
    old = _chunk("policies/refunds-2023.md", "Monthly subscriptions")
    new = _chunk("policies/refunds.md", "Monthly plans")

    assert contradicting_chunks(chunk_ids=[old, new]) == {frozenset({old, new})}


def test_account_deletion_and_cancellation_do_not_contradict(pages) -> None:
    # The example: both pages say 90 days of retention; the deletion page is older, and
    # its "Older page" notice told the reader the two might differ where they do not.
    deletion = _chunk(
        "account/account-deletion-and-data-retention.md", "Retention after cancellation"
    )
    cancellation = [
        chunk.pk for chunk in Chunk.objects.filter(document__path="policies/cancellation.md")
    ]

    assert contradicting_chunks(chunk_ids=[deletion, *cancellation]) == set()


def test_passages_of_one_page_are_never_a_contradiction(pages) -> None:
    own = list(
        Chunk.objects.filter(document__path="policies/refunds.md").values_list("id", flat=True)
    )

    assert len(own) >= 2
    assert contradicting_chunks(chunk_ids=own) == set()
