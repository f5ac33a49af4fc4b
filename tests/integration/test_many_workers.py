"""Many workers, one truth: four worker processes that share only the database and broker
URLs index an import and a burst of edits with nothing lost, written twice or mixed."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.embedders.hashing import HashingEmbedder
from kb.models import EmbeddingModel
from kb.services import embedding_model_add
from kb.tooling.benchmarks.workers import workers_run

pytestmark = pytest.mark.django_db(transaction=True)


def test_four_workers_index_an_import_and_edits_exactly_once(tmp_path: Path) -> None:
    # given: the first model of the database, so it is active (feature hashing: the
    # bookkeeping is under test, not the model)
    model = embedding_model_add(embedder=HashingEmbedder())
    assert model.state == EmbeddingModel.State.ACTIVE

    # when
    run = workers_run(
        workers=4,
        documents=120,
        edits=40,
        embedding_model=model,
        log_dir=tmp_path,
        timeout=90,
    )

    # then
    assert (run.lost, run.indexed_twice, run.mixed) == (0, 0, 0), run
    # Every page was written at least once, and an edit's version is written by one worker.
    assert 120 <= run.writes <= 120 + 40, run
