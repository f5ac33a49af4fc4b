"""The synthetic index of ``search_bench`` loads into the schema as it is now: its documents and
chunks are written by set-based SQL, so a column added to kb_document or kb_chunk must be
filled there too (the 1M run once stopped on ``null value in column "aliases"``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from django.db import connection

from kb.embedders.hashing import HashingEmbedder
from kb.models import Chunk, Document
from kb.selectors.access import PUBLIC_AUDIENCES
from kb.services import embedding_model_add
from search.keywords import keyword_query
from search.services import hybrid_search
from search.tooling.benchmarks.synthetic import (
    chunks_insert,
    corpus_identifiers,
    documents_insert,
    seed_chunks,
    seeds_load,
    synthetic_vectors,
    vectors_copy,
)

pytestmark = pytest.mark.django_db

PAGES = {
    "billing/refunds.md": (
        "# Refunds\n\n## Monthly plans\n\nA monthly plan is refunded within 30 days. "
        "Ask from Settings > Billing.\n\n## Annual plans\n\nAn annual plan is refunded "
        "within 60 days.\n"
    ),
    "api/errors.md": (
        "# Errors\n\n## E4012\n\nE4012 means the card was declined. Retry with another "
        "card.\n\n## Webhooks\n\nThe invoice.paid event is sent when an invoice is paid.\n"
    ),
}


def test_a_synthetic_index_loads_into_the_current_schema_and_is_searchable(
    tmp_path: Path,
) -> None:
    for path, text in PAGES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    embedder = HashingEmbedder()
    model = embedding_model_add(embedder=embedder)
    seeds = seed_chunks(tmp_path, embedder)
    seed_vectors = np.asarray(
        embedder.embed_documents([seed.embedding_text for seed in seeds]), dtype=np.float32
    )
    chunks = 40
    rng = np.random.default_rng(1)

    with connection.cursor() as cursor:
        first_document = documents_insert(cursor, seeds, chunks // 10)
        seeds_load(cursor, seeds)
        vectors, seed_a, seed_b = synthetic_vectors(seed_vectors, chunks, rng)
        vectors_copy(cursor, vectors, seed_a, seed_b, first_row=0)
        chunks_insert(
            cursor, model, corpus_identifiers(seeds), first_document=first_document, batch=chunks
        )

    documents = list(Document.objects.all())
    assert len(documents) == 4
    assert all(document.aliases == [] and document.metadata == {} for document in documents)
    assert Chunk.objects.filter(embedding_model=model).count() == chunks
    found = hybrid_search(
        embedding_model=model,
        query_vector=embedder.embed_query("How long do I have to get a refund?"),
        keywords=keyword_query("How long do I have to get a refund?"),
        audiences=PUBLIC_AUDIENCES,
    )
    assert found.candidates
