"""The Voyage embedder against a local server speaking Voyage's API."""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest

from kb.embedders import Embedder, EmbeddingError, embedder_for
from kb.embedders.voyage import BATCH_SIZE, VoyageEmbedder
from kb.voyage import VoyageAPI
from tests.support.voyage_stub import VoyageStub

API_KEY = "test-voyage-key"


@pytest.fixture
def stub() -> Iterator[VoyageStub]:
    with VoyageStub(api_key=API_KEY) as server:
        yield server


def _embedder(stub: VoyageStub, **options) -> VoyageEmbedder:
    api = VoyageAPI(
        api_key=API_KEY,
        base_url=stub.base_url,
        timeout=2.0,
        total_timeout=5.0,
        backoff_seconds=0.001,
        **options,
    )
    return VoyageEmbedder(api=api, model="voyage-3.5")


def test_it_is_an_embedder_named_after_its_vector_space(stub: VoyageStub) -> None:
    embedder = _embedder(stub)
    assert isinstance(embedder, Embedder)
    assert embedder.key == "voyage/voyage-3.5"
    assert (embedder.dimensions, embedder.max_input_tokens) == (1024, 32_000)
    assert embedder.count_tokens("Annual plans renew yearly.") > 0


def test_documents_go_out_in_batches_with_the_document_input_type(stub: VoyageStub) -> None:
    texts = [f"passage number {i}" for i in range(BATCH_SIZE + 5)]

    vectors = _embedder(stub).embed_documents(texts)

    assert vectors.shape == (len(texts), 1024) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    assert [len(r.body["input"]) for r in stub.requests] == [BATCH_SIZE, 5]
    assert {r.body["input_type"] for r in stub.requests} == {"document"}
    assert {r.body["model"] for r in stub.requests} == {"voyage-3.5"}
    assert stub.requests[0].headers["authorization"] == f"Bearer {API_KEY}"


def test_a_query_is_encoded_as_a_query(stub: VoyageStub) -> None:
    embedder = _embedder(stub)

    query = embedder.embed_query("refund window")
    document = embedder.embed_documents(["refund window"])[0]

    assert query.shape == (1024,)
    assert stub.requests[0].body["input_type"] == "query"
    assert not np.allclose(query, document)


def test_nothing_to_embed_sends_nothing(stub: VoyageStub) -> None:
    assert _embedder(stub).embed_documents([]).shape == (0, 1024)
    assert stub.requests == []


def test_rate_limits_and_server_errors_are_retried(stub: VoyageStub) -> None:
    stub.fail_next(status=429, times=1, retry_after=0)
    stub.fail_next(status=500, times=1)

    vectors = _embedder(stub, max_retries=3).embed_documents(["a", "b"])

    assert vectors.shape == (2, 1024)
    assert len(stub.requests) == 3


def test_a_provider_that_keeps_failing_is_an_embedding_error_without_the_key(
    stub: VoyageStub,
) -> None:
    stub.fail_next(status=503, times=10)

    with pytest.raises(EmbeddingError, match=r"HTTP 503.*gave up after 3 attempts") as failure:
        _embedder(stub, max_retries=2).embed_documents(["a"])

    assert API_KEY not in str(failure.value)


def test_vectors_of_the_wrong_dimension_never_reach_the_index() -> None:
    wrong_shape = r"shape \(1, 512\), expected \(1, 1024\)"
    with (
        VoyageStub(api_key=API_KEY, embedding_dimension=512) as stub,
        pytest.raises(EmbeddingError, match=wrong_shape),
    ):
        _embedder(stub).embed_documents(["a"])


def test_a_wrong_key_fails_at_once(stub: VoyageStub) -> None:
    api = VoyageAPI(api_key="wrong-key", base_url=stub.base_url, backoff_seconds=0.001)

    with pytest.raises(EmbeddingError, match="rejected the API key"):
        VoyageEmbedder(api=api).embed_documents(["a"])

    assert len(stub.requests) == 1


def test_an_unknown_model_is_refused_by_name() -> None:
    api = VoyageAPI(api_key=API_KEY)
    with pytest.raises(EmbeddingError, match="unknown Voyage embedding model 'voyage-9'"):
        VoyageEmbedder(api=api, model="voyage-9")


@pytest.fixture
def configured(settings, stub: VoyageStub) -> Iterator[VoyageStub]:
    """``VOYAGE_*`` settings pointing at the stub: the embedder ``embedder_for`` builds from them.

    Attempts time out after 0.3 s and a call may take 1 s in all, with retries to spare, so which
    deadline a call keeps shows in how long it goes on retrying a server that is too slow."""
    settings.VOYAGE_API_KEY = API_KEY
    settings.VOYAGE_BASE_URL = stub.base_url
    settings.VOYAGE_TIMEOUT = 0.3
    settings.VOYAGE_TOTAL_TIMEOUT = 1.0
    settings.VOYAGE_MAX_RETRIES = 20
    embedder_for.cache_clear()
    yield stub
    embedder_for.cache_clear()


def test_a_query_gives_up_at_the_query_deadline_not_the_indexing_one(
    configured: VoyageStub,
) -> None:
    # given a server that outlasts every attempt's timeout for the next 4 requests (the
    # indexing deadline would keep retrying through them: 3-6 s of backoff, then an answer)
    configured.fail_next(delay=1.0, times=4)
    embedder = embedder_for("voyage/voyage-3.5")

    # when a customer's question is embedded
    started = time.monotonic()
    with pytest.raises(EmbeddingError, match="timed out"):
        embedder.embed_query("how do refunds work")
    waited = time.monotonic() - started

    # then it fails within VOYAGE_TOTAL_TIMEOUT (1 s here; a little slack for a busy machine),
    # so the search degrades to the keyword leg instead of keeping the customer waiting
    assert waited < 1.8


def test_indexing_keeps_retrying_past_the_query_deadline(configured: VoyageStub) -> None:
    # given the same slow server, for fewer requests than indexing has time for
    configured.fail_next(delay=1.0, times=3)
    embedder = embedder_for("voyage/voyage-3.5")

    # when a document is embedded, then it outlasts the slow spell (past the 1 s query bound)
    started = time.monotonic()
    vectors = embedder.embed_documents(["Annual plans get a prorated refund."])

    assert vectors.shape == (1, 1024)
    assert time.monotonic() - started > 1.0
    assert len(configured.requests) == 4
