"""Follow-ups on real pages of the sample help center: a short follow-up alone lands on the
wrong page, and the follow-up search (which compares it alone with it joined to the question it
follows) takes the joined search, which lands on the right one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assistant.services import follow_up_search
from kb.actors import SYSTEM
from kb.services.sync import corpus_sync
from search.services import retrieve
from tests.conftest import CORPUS_DIR

pytestmark = pytest.mark.django_db

PAGES = (
    "policies/refunds.md",
    "policies/refunds-2023.md",
    "policies/cancellation.md",
    "plans/plans-and-limits.md",
    "plans/free-trial.md",
    "billing/failed-payments-and-dunning.md",
    "billing/discounts-and-coupons.md",
    "webhooks/retries.md",
    "webhooks/events.md",
    "api/rate-limits.md",
    "api/test-and-live-mode.md",
)

# (earlier question, follow-up, the page that answers the follow-up)
FOLLOW_UPS = [
    ("How do refunds work for monthly plans?", "and for annual plans?", "policies/refunds.md"),
    ("How long is the free trial?", "what happens when it ends?", "plans/free-trial.md"),
    ("What are the API rate limits?", "what about in test mode?", "api/rate-limits.md"),
    ("How do webhook retries work?", "how many times?", "webhooks/retries.md"),
]


@pytest.fixture
def sample_pages(tmp_path: Path, cached_embedder) -> None:
    for page in PAGES:
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CORPUS_DIR / page, tmp_path / page)
    assert corpus_sync(directory=tmp_path, embedder=cached_embedder, actor=SYSTEM).failed == []


def test_follow_ups_find_their_page_only_with_the_question_they_follow(sample_pages) -> None:
    # One test for all four: indexing the pages is most of its time.
    for earlier, follow_up, page in FOLLOW_UPS:
        # when
        alone = retrieve(question=follow_up)
        searched = follow_up_search(
            question=follow_up, anchor=earlier, search=lambda q: retrieve(question=q)
        )

        # then
        assert alone.hits[0].path != page, follow_up
        assert searched.follow_up, (follow_up, searched.evidence())
        assert searched.result.hits[0].path == page, follow_up
