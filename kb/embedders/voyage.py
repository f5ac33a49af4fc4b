"""Voyage AI embeddings (voyage-3.5 by default) through the official ``voyageai`` SDK.

Documents and queries are encoded differently (``input_type``), texts go out in batches, every
call runs under ``kb.voyage.VoyageAPI``'s bounded retries, and what comes back is checked for
count, shape, finiteness and unit length before it can reach the index. Documents and queries
may run under different connections (``api`` and ``query_api``): one embedder object serves both
indexing, which can wait, and a customer's question, which cannot.

Voyage counts tokens with its own tokenizer, which the SDK downloads on first use; nothing here
may download at run time, so chunk sizes are measured in all-MiniLM's WordPiece tokens, which the
local model package carries. It is an estimate, and a safe one: chunks stay near the 350/500
defaults while voyage-3.5 reads 32,000 tokens per input.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from kb.embedders.base import EmbeddingError, checked_unit_vectors

if TYPE_CHECKING:
    from tokenizers import Tokenizer
from kb.voyage import VoyageAPI, VoyageCallFailed

# Models this embedder knows: output dimensions and input window (tokens).
KNOWN_MODELS = {
    "voyage-3.5": (1024, 32_000),
    "voyage-3.5-lite": (1024, 32_000),
    "voyage-3-large": (1024, 32_000),
}
# Texts per request: well inside Voyage's 1,000-text and token-per-request limits for chunks.
BATCH_SIZE = 128


class VoyageEmbedder:
    provider = "voyage"
    multilingual = True  # voyage-3.5 puts a question and its page close in any major language

    def __init__(
        self, *, api: VoyageAPI, query_api: VoyageAPI | None = None, model: str = "voyage-3.5"
    ) -> None:
        """``api`` embeds documents; ``query_api`` (default: ``api``) embeds queries."""
        if model not in KNOWN_MODELS:
            raise EmbeddingError(
                f"unknown Voyage embedding model {model!r}; known: {', '.join(KNOWN_MODELS)}"
            )
        self.model_name = model
        self.key = f"voyage/{model}"
        self.dimensions, self.max_input_tokens = KNOWN_MODELS[model]
        self._api = api
        self._query_api = query_api or api
        self._counter: Tokenizer | None = None
        self._counter_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"VoyageEmbedder(model={self.model_name!r}, base_url={self._api.base_url!r})"

    def count_tokens(self, text: str) -> int:
        with self._counter_lock:
            if self._counter is None:
                from kb.embedders.local import wordpiece_tokenizer

                self._counter = wordpiece_tokenizer()
            return len(self._counter.encode(text, add_special_tokens=False).ids)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        vectors = [
            self._embed(texts[start : start + BATCH_SIZE], input_type="document", api=self._api)
            for start in range(0, len(texts), BATCH_SIZE)
        ]
        if not vectors:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.concatenate(vectors)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], input_type="query", api=self._query_api)[0]

    def _embed(self, texts: list[str], *, input_type: str, api: VoyageAPI) -> np.ndarray:
        try:
            embeddings = api.call(
                "embed",
                lambda client: client.embed(
                    texts, model=self.model_name, input_type=input_type, truncation=True
                ),
                parse=lambda response: np.asarray(response.embeddings, dtype=np.float32),
                log_fields={"model": self.model_name, "texts": len(texts)},
            )
        except VoyageCallFailed as exc:
            raise EmbeddingError(exc.reason) from exc
        return checked_unit_vectors(
            embeddings, count=len(texts), dimensions=self.dimensions, key=self.key
        )
