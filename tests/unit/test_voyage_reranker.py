"""The Voyage reranker, driven through the real voyageai SDK against a local stub of the API."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import structlog

from kb import voyage as kb_voyage
from kb.voyage import VoyageAPI
from search.rerankers.base import Reranker, RerankError
from search.rerankers.voyage import VoyageReranker
from tests.support.voyage_stub import VoyageStub

API_KEY = "pa-test-key-7f3c9e"
QUESTION = "how do refunds work"
# Word overlap with QUESTION: 0, 2 and 4 of its 4 words; the stub answers best first.
PASSAGES = ["Webhooks are retried hourly.", "Refunds work in ten days.", "How do refunds work?"]
EXPECTED_SCORES = [0.0, 0.5, 1.0]

MakeReranker = Callable[..., VoyageReranker]


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[VoyageStub]:
    # A proxy configured on the machine must not swallow requests meant for the local stub.
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    with VoyageStub(api_key=API_KEY) as running:
        yield running


@pytest.fixture
def make_reranker(stub: VoyageStub) -> MakeReranker:
    """A reranker pointed at the stub, with backoff shrunk so retry tests take milliseconds."""

    def make(**api_overrides: Any) -> VoyageReranker:
        options: dict[str, Any] = {
            "api_key": API_KEY,
            "base_url": stub.base_url,
            "timeout": 5.0,
            "backoff_seconds": 0.001,
        }
        return VoyageReranker(api=VoyageAPI(**{**options, **api_overrides}))

    return make


@pytest.fixture
def logged_events(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    with structlog.testing.capture_logs() as events:
        # Loggers are cached on first use; a fresh one picks up the capturing configuration.
        monkeypatch.setattr(kb_voyage, "log", structlog.get_logger("groundwork.voyage"))
        yield events


def test_it_is_a_reranker_named_after_its_model() -> None:
    reranker = VoyageReranker(api=VoyageAPI(api_key=API_KEY), model="rerank-2.5-lite")

    assert isinstance(reranker, Reranker)
    assert reranker.name == "voyage/rerank-2.5-lite"
    assert API_KEY not in repr(reranker)


def test_scores_come_back_in_the_order_the_passages_were_given(
    make_reranker: MakeReranker,
) -> None:
    scores = make_reranker().rerank_passages(question=QUESTION, passages=PASSAGES)

    assert scores == EXPECTED_SCORES


def test_the_request_carries_model_query_documents_and_truncation(
    stub: VoyageStub, make_reranker: MakeReranker
) -> None:
    make_reranker().rerank_passages(question=QUESTION, passages=tuple(PASSAGES))

    (request,) = stub.requests
    assert request.path == "/v1/rerank"
    assert request.body["model"] == "rerank-2.5"
    assert request.body["query"] == QUESTION
    assert request.body["documents"] == PASSAGES
    assert request.body["truncation"] is True


def test_the_request_is_authorised_with_the_api_key_as_bearer_token(
    stub: VoyageStub, make_reranker: MakeReranker
) -> None:
    make_reranker().rerank_passages(question=QUESTION, passages=PASSAGES)

    assert stub.requests[0].headers["authorization"] == f"Bearer {API_KEY}"


def test_no_passages_means_no_request(stub: VoyageStub, make_reranker: MakeReranker) -> None:
    assert make_reranker().rerank_passages(question=QUESTION, passages=[]) == []
    assert stub.requests == []


def test_each_call_logs_one_event_without_the_key(
    make_reranker: MakeReranker, logged_events: list[dict[str, Any]]
) -> None:
    make_reranker().rerank_passages(question=QUESTION, passages=PASSAGES)

    (event,) = logged_events
    assert event["event"] == "rerank_called"
    assert event["model"] == "rerank-2.5"
    assert event["passages"] == 3
    assert event["attempts"] == 1
    assert isinstance(event["ms"], int)
    assert API_KEY not in repr(event)


def test_rate_limited_requests_are_retried_until_one_succeeds(
    stub: VoyageStub, make_reranker: MakeReranker, logged_events: list[dict[str, Any]]
) -> None:
    stub.fail_next(status=429, times=2)

    scores = make_reranker().rerank_passages(question=QUESTION, passages=PASSAGES)

    assert scores == EXPECTED_SCORES
    assert len(stub.requests) == 3
    assert [event["attempts"] for event in logged_events] == [3]


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_server_errors_are_retried(
    stub: VoyageStub, make_reranker: MakeReranker, status: int
) -> None:
    stub.fail_next(status=status)

    assert make_reranker().rerank_passages(question=QUESTION, passages=PASSAGES) == EXPECTED_SCORES
    assert len(stub.requests) == 2


def test_a_timed_out_request_is_retried(stub: VoyageStub, make_reranker: MakeReranker) -> None:
    stub.fail_next(delay=5.0)  # cut short when the stub stops

    scores = make_reranker(timeout=0.5).rerank_passages(question=QUESTION, passages=PASSAGES)

    assert scores == EXPECTED_SCORES
    assert len(stub.requests) == 2


def test_a_server_that_keeps_failing_is_given_up_after_max_retries(
    stub: VoyageStub, make_reranker: MakeReranker, logged_events: list[dict[str, Any]]
) -> None:
    stub.fail_next(status=503, times=10)

    with pytest.raises(RerankError, match=r"HTTP 503.*gave up after 3 attempts"):
        make_reranker(max_retries=2).rerank_passages(question=QUESTION, passages=PASSAGES)

    assert len(stub.requests) == 3
    (event,) = logged_events
    assert event["attempts"] == 3 and event["log_level"] == "warning"


def test_retry_after_is_waited_out_even_when_the_backoff_is_shorter(
    stub: VoyageStub, make_reranker: MakeReranker
) -> None:
    stub.fail_next(status=429, retry_after=0.3)
    started = time.monotonic()

    make_reranker().rerank_passages(question=QUESTION, passages=PASSAGES)

    assert time.monotonic() - started >= 0.3
    assert len(stub.requests) == 2


def test_a_retry_after_beyond_the_time_budget_fails_at_once(
    stub: VoyageStub, make_reranker: MakeReranker
) -> None:
    stub.fail_next(status=429, retry_after=60)
    started = time.monotonic()

    with pytest.raises(RerankError, match="no time left to retry"):
        make_reranker(total_timeout=5.0).rerank_passages(question=QUESTION, passages=PASSAGES)

    assert len(stub.requests) == 1
    assert time.monotonic() - started < 2.0


def test_the_whole_call_stays_within_the_total_timeout(
    stub: VoyageStub, make_reranker: MakeReranker
) -> None:
    stub.fail_next(delay=5.0, times=20)
    started = time.monotonic()

    with pytest.raises(RerankError, match="timed out"):
        make_reranker(timeout=0.2, total_timeout=0.5, max_retries=20).rerank_passages(
            question=QUESTION, passages=PASSAGES
        )

    assert time.monotonic() - started < 1.5
    assert 2 <= len(stub.requests) <= 4


@pytest.mark.parametrize(
    ("corrupt", "reason"),
    [
        ("malformed_json", "not JSON"),
        ("missing_index", r"left out passage indexes \[0\]"),
        ("duplicate_index", "returned passage index 2 twice"),
        ("out_of_range_index", "index outside the 3 passages"),
        ("nan_score", "score nan"),
    ],
)
def test_an_unusable_answer_is_an_error_and_is_not_retried(
    stub: VoyageStub, make_reranker: MakeReranker, corrupt: Any, reason: str
) -> None:
    stub.fail_next(corrupt=corrupt)

    with pytest.raises(RerankError, match=reason) as caught:
        make_reranker().rerank_passages(question=QUESTION, passages=PASSAGES)

    assert "\n" not in str(caught.value)
    assert len(stub.requests) == 1


@pytest.mark.parametrize("status", [400, 422])
def test_a_rejected_request_is_not_retried(
    stub: VoyageStub, make_reranker: MakeReranker, status: int
) -> None:
    stub.fail_next(status=status)

    with pytest.raises(RerankError, match=f"HTTP {status}"):
        make_reranker().rerank_passages(question=QUESTION, passages=PASSAGES)

    assert len(stub.requests) == 1


def test_a_wrong_key_fails_at_once_and_never_shows_the_key(
    stub: VoyageStub, make_reranker: MakeReranker, logged_events: list[dict[str, Any]]
) -> None:
    wrong_key = "pa-wrong-key-0d1e2f"

    with pytest.raises(RerankError, match="rejected the API key") as caught:
        make_reranker(api_key=wrong_key).rerank_passages(question=QUESTION, passages=PASSAGES)

    assert len(stub.requests) == 1
    assert wrong_key not in str(caught.value) and "\n" not in str(caught.value)
    assert wrong_key not in repr(logged_events)


def test_an_unreachable_server_is_retried_then_an_error(make_reranker: MakeReranker) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago refuses connections
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]

    with pytest.raises(
        RerankError,
        match=r"could not reach Voyage rerank at http://127.0.0.1.*gave up after 2 attempts",
    ):
        make_reranker(base_url=f"http://127.0.0.1:{closed_port}/v1", max_retries=1).rerank_passages(
            question=QUESTION, passages=PASSAGES
        )


def test_an_empty_key_is_refused_at_construction() -> None:
    # The SDK would silently fall back to the VOYAGE_API_KEY environment variable.
    with pytest.raises(ValueError, match="api_key"):
        VoyageReranker(api=VoyageAPI(api_key=""))


def test_the_factory_builds_the_configured_voyage_reranker(settings, stub: VoyageStub) -> None:
    # given Voyage configured as the reranker
    from search.rerankers import get_reranker

    settings.RERANKER = "voyage"
    settings.VOYAGE_API_KEY = API_KEY
    settings.VOYAGE_BASE_URL = stub.base_url
    settings.VOYAGE_RERANK_MODEL = "rerank-2.5-lite"
    get_reranker.cache_clear()
    try:
        # when the process asks for its reranker
        reranker = get_reranker()

        # then it talks to the configured server with the configured model and key
        assert isinstance(reranker, VoyageReranker) and reranker.name == "voyage/rerank-2.5-lite"
        assert reranker.rerank_passages(question=QUESTION, passages=PASSAGES) == EXPECTED_SCORES
        (request,) = stub.requests
        assert request.body["model"] == "rerank-2.5-lite"
        assert request.headers["authorization"] == f"Bearer {API_KEY}"
    finally:
        get_reranker.cache_clear()
