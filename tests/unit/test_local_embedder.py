from __future__ import annotations

import numpy as np
import pytest

from kb.embedders import EmbeddingError, get_embedder
from kb.embedders.base import Embedder, checked_unit_vectors


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
