"""A local stand-in for Voyage AI's HTTP API, so the real SDK can be tested without the network.

It is a real HTTP server on 127.0.0.1 (any free port, a background thread) answering
``POST /v1/rerank`` and ``POST /v1/embeddings`` with the real API's response shapes and
predictable content: a rerank score is the share of the query's words found in the document, an
embedding is a unit vector seeded by a hash of the text and its ``input_type``. It records every
request and can be told to misbehave for the next few requests::

    with VoyageStub(api_key="test-key") as stub:
        reranker = VoyageReranker(api=VoyageAPI(api_key="test-key", base_url=stub.base_url))
        stub.fail_next(status=429, times=2, retry_after=0)
        ...
        assert len(stub.requests) == 3
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import random
import re
import struct
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Literal

from tests.support.stub_server import Misbehaviour, QuietHandler, StubServer

Corruption = Literal[
    "malformed_json", "missing_index", "duplicate_index", "out_of_range_index", "nan_score"
]

DEFAULT_API_KEY = "test-voyage-key"
DEFAULT_EMBEDDING_DIMENSION = 1024  # voyage-3.5's default output_dimension
# Voyage prepends these to the text for input_type "query" / "document", so the vectors differ.
INPUT_TYPE_PROMPTS = {
    None: "",
    "query": "Represent the query for retrieving supporting documents: ",
    "document": "Represent the document for retrieval: ",
}
WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class VoyageMisbehaviour(Misbehaviour):
    retry_after: float | None = None  # seconds, sent as Retry-After with an error status
    corrupt: Corruption | None = None


def rerank_score(query: str, document: str) -> float:
    """The share of the query's distinct words that occur in the document (0.0 to 1.0)."""
    query_words = set(WORD.findall(query.lower()))
    if not query_words:
        return 0.0
    return len(query_words & set(WORD.findall(document.lower()))) / len(query_words)


def stub_embedding(text: str, *, input_type: str | None, dimension: int) -> list[float]:
    """A deterministic unit vector for one text; no meaning, only identity."""
    prompt = INPUT_TYPE_PROMPTS.get(input_type, "")
    seed = hashlib.sha256(f"{prompt}{text}".encode()).digest()
    generator = random.Random(seed)
    vector = [generator.gauss(0.0, 1.0) for _ in range(dimension)]
    norm = math.sqrt(sum(value * value for value in vector)) or 1.0
    return [value / norm for value in vector]


def _token_count(texts: list[str]) -> int:
    return sum(len(WORD.findall(text)) for text in texts)


class VoyageStub(StubServer[VoyageMisbehaviour]):
    """The server and its script; a context manager that starts and stops it."""

    normal = VoyageMisbehaviour()

    def __init__(
        self,
        *,
        api_key: str = DEFAULT_API_KEY,
        embedding_dimension: int = DEFAULT_EMBEDDING_DIMENSION,
    ) -> None:
        self.api_key = api_key
        self.embedding_dimension = embedding_dimension
        super().__init__()

    @property
    def base_url(self) -> str:
        """What the SDK's ``base_url`` takes: it appends ``/rerank``, so this ends in ``/v1``."""
        return f"{self.origin}/v1"

    # --- script and record -----------------------------------------------------------------

    def fail_next(
        self,
        *,
        status: int | None = None,
        delay: float | None = None,
        corrupt: Corruption | None = None,
        times: int = 1,
        retry_after: float | None = None,
    ) -> None:
        """Misbehave on the next ``times`` requests, in one of three ways.

        ``status``: answer with that HTTP status and a Voyage-style ``{"detail": ...}`` body; a 429
        always carries ``Retry-After`` (``retry_after``, default 0), other statuses only when
        ``retry_after`` is given. ``delay``: wait that many seconds, then answer normally (to
        outlast a client timeout). ``corrupt``: answer 200 with a broken body (the index
        corruptions need two or more results to show).
        """
        if status == HTTPStatus.TOO_MANY_REQUESTS and retry_after is None:
            retry_after = 0
        misbehaviour = VoyageMisbehaviour(
            status=status, retry_after=retry_after, delay=delay, corrupt=corrupt
        )
        self._misbehave_next(misbehaviour, times=times, ways=("status", "delay", "corrupt"))


class _Handler(QuietHandler):
    stub: VoyageStub  # set on the subclass made per server

    def do_POST(self) -> None:
        received = self.receive()
        if received is None:
            return  # shutting down: nobody is waiting for this answer any more
        request, misbehaviour = received
        headers, body = request.headers, request.body
        if misbehaviour.status is not None:
            extra = {}
            if misbehaviour.retry_after is not None:
                extra["Retry-After"] = f"{misbehaviour.retry_after:g}"
            phrase = HTTPStatus(misbehaviour.status).phrase
            self._send_json(misbehaviour.status, {"detail": f"stub: {phrase}"}, extra)
            return
        if headers.get("authorization") != f"Bearer {self.stub.api_key}":
            self._send_json(401, {"detail": "Provided API key is invalid."})
            return
        if not isinstance(body, dict):
            self._send_json(400, {"detail": "Request body must be a JSON object."})
            return

        if self.path == "/v1/rerank":
            status, payload = self._rerank(body)
        elif self.path == "/v1/embeddings":
            status, payload = self._embeddings(body)
        else:
            status, payload = 404, {"detail": "Not Found"}
        if status == 200 and misbehaviour.corrupt is not None:
            self._send_text(200, _corrupted(payload, misbehaviour.corrupt))
        else:
            self._send_json(status, payload)

    def _rerank(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        query, documents = body.get("query"), body.get("documents")
        if not isinstance(query, str) or not isinstance(documents, list) or not documents:
            return 400, {"detail": "query must be a string and documents a non-empty list"}
        if not all(isinstance(document, str) for document in documents):
            return 400, {"detail": "documents must be strings"}
        results = [
            {"relevance_score": rerank_score(query, document), "index": index}
            for index, document in enumerate(documents)
        ]
        results.sort(key=lambda result: (-result["relevance_score"], result["index"]))
        top_k = body.get("top_k")
        if isinstance(top_k, int) and top_k > 0:
            results = results[:top_k]
        if body.get("return_documents"):
            for result in results:
                result["document"] = documents[result["index"]]
        return 200, {
            "object": "list",
            "data": results,
            "model": body.get("model"),
            "usage": {"total_tokens": _token_count([query, *documents])},
        }

    def _embeddings(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            return 400, {"detail": "input must be a string or a non-empty list of strings"}
        input_type = body.get("input_type")
        if input_type not in INPUT_TYPE_PROMPTS:
            return 400, {"detail": "input_type must be null, 'query' or 'document'"}
        dimension = body.get("output_dimension") or self.stub.embedding_dimension
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
            return 400, {"detail": "output_dimension must be a positive integer"}
        if body.get("output_dtype") not in (None, "float"):
            return 400, {"detail": "the stub only answers output_dtype 'float'"}
        encoding_format = body.get("encoding_format")
        if encoding_format not in (None, "base64"):
            return 400, {"detail": "encoding_format must be null or 'base64'"}
        data = [
            {
                "object": "embedding",
                "embedding": _encoded(
                    stub_embedding(text, input_type=input_type, dimension=dimension),
                    encoding_format,
                ),
                "index": index,
            }
            for index, text in enumerate(texts)
        ]
        return 200, {
            "object": "list",
            "data": data,
            "model": body.get("model"),
            "usage": {"total_tokens": _token_count(texts)},
        }

    def _send_json(
        self, status: int, payload: dict[str, Any], extra_headers: dict[str, str] | None = None
    ) -> None:
        self._send_text(status, json.dumps(payload), extra_headers)

    def _send_text(
        self, status: int, text: str, extra_headers: dict[str, str] | None = None
    ) -> None:
        encoded = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(encoded)))
        for name, value in (extra_headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(encoded)


def _corrupted(payload: dict[str, Any], corrupt: Corruption) -> str:
    """The payload broken the way the test asked; NaN goes out as the bare token Python emits."""
    if corrupt == "malformed_json":
        return '{"object": "list", "data": [{"relevance_score": 0.5,'
    results = [dict(result) for result in payload["data"]]
    if corrupt == "missing_index":
        results = results[:-1]
    elif corrupt == "duplicate_index":
        results[-1]["index"] = results[0]["index"]
    elif corrupt == "out_of_range_index":
        results[-1]["index"] = len(results)
    elif corrupt == "nan_score" and "relevance_score" in results[0]:
        results[0]["relevance_score"] = float("nan")
    elif corrupt == "nan_score":
        embedding = results[0]["embedding"]
        encoding_format = "base64" if isinstance(embedding, str) else None
        vector = _decoded(embedding) if encoding_format else embedding
        results[0]["embedding"] = _encoded([math.nan, *vector[1:]], encoding_format)
    return json.dumps({**payload, "data": results})


def _encoded(vector: list[float], encoding_format: str | None) -> list[float] | str:
    """As the API sends it: a JSON list, or base64 of little-endian float32 (what the SDK asks)."""
    if encoding_format == "base64":
        return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
    return vector


def _decoded(encoded: str) -> list[float]:
    raw = base64.b64decode(encoded)
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


VoyageStub.handler = _Handler
