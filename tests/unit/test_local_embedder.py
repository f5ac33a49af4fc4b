from __future__ import annotations

import numpy as np
import pytest

from kb.embedders import EmbeddingError, get_embedder
from kb.embedders.base import Embedder, checked_unit_vectors
from kb.embedders.local import length_batches


def test_the_factory_builds_one_embedder_per_process() -> None:
    assert get_embedder() is get_embedder()
    assert isinstance(get_embedder(), Embedder)


def test_documents_become_unit_vectors_of_the_model_dimension(local_embedder) -> None:
    vectors = local_embedder.embed_documents(["Refunds take ten days.", "Rate limit: HTTP 429"])

    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_batching_and_order_do_not_change_vectors(local_embedder) -> None:
    texts = ["short", "a much longer sentence about annual plan refunds " * 5, "medium text here"]

    together = local_embedder.embed_documents(texts)
    one_by_one = np.stack([local_embedder.embed_documents([text])[0] for text in texts])

    assert np.allclose(together, one_by_one, atol=1e-4)


def test_similar_meanings_are_closer_than_unrelated_ones(local_embedder) -> None:
    query = local_embedder.embed_query("How do I get my money back?")
    refund, webhook = local_embedder.embed_documents(
        ["You can request a refund within 30 days.", "Webhook signatures use HMAC-SHA256."]
    )

    assert float(query @ refund) > float(query @ webhook) + 0.2


def test_empty_input_gives_an_empty_matrix(local_embedder) -> None:
    assert local_embedder.embed_documents([]).shape == (0, 384)


def test_token_count_excludes_special_tokens(local_embedder) -> None:
    assert local_embedder.count_tokens("money back") == 2
    assert local_embedder.count_tokens("") == 0
    assert local_embedder.count_tokens("invoice.paid") == 5  # in ##vo ##ice . paid


@pytest.mark.parametrize(
    ("vectors", "message"),
    [
        (np.ones((2, 3)), "shape"),
        (np.array([[np.nan, 0.0, 0.0, 0.0]]), "non-finite"),
        (np.array([[2.0, 0.0, 0.0, 0.0]]), "unit length"),
    ],
)
def test_malformed_provider_output_is_rejected(vectors: np.ndarray, message: str) -> None:
    with pytest.raises(EmbeddingError, match=message):
        checked_unit_vectors(vectors, count=len(vectors), dimensions=4, key="test/model")


def test_batches_hold_texts_of_like_length_within_the_word_piece_budget() -> None:
    lengths = [30, 200, 10, 120, 10, 600, 40, 10]

    batches = list(length_batches(lengths, texts=3, tokens=256))

    assert batches == [[2, 4, 7], [0, 6], [3], [1], [5]]
    # shortest first, every text once; each batch within both bounds, or one text alone
    assert [position for batch in batches for position in batch] == sorted(
        range(len(lengths)), key=lambda position: lengths[position]
    )
    for batch in batches:
        padded = len(batch) * max(lengths[position] for position in batch)
        assert len(batch) == 1 or (len(batch) <= 3 and padded <= 256)


def test_the_local_model_runs_long_texts_a_few_at_a_time(local_embedder, monkeypatch) -> None:
    runs: list[list[int]] = []  # the length of each text of each model run, in word pieces
    model_run = local_embedder._run

    def counted_run(token_ids: list[list[int]]) -> np.ndarray:
        runs.append([len(ids) for ids in token_ids])
        return model_run(token_ids)

    monkeypatch.setattr(local_embedder, "_run", counted_run)
    section = "Refunds for annual plans are prorated to the day you cancel. " * 12
    short = "Refunds take ten days."
    texts = [section] * 6 + [short] * 6

    vectors = local_embedder.embed_documents(texts)

    assert vectors.shape == (12, 384)
    # the six short texts in one run, each with its two special tokens
    assert runs[0] == [local_embedder.count_tokens(short) + 2] * 6
    assert all(len(batch) * max(batch) <= 512 for batch in runs[1:])
    assert sum(len(batch) for batch in runs) == 12 and len(runs) >= 3
