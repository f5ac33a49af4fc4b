from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from kb.embedders import Embedder, get_embedder

CORPUS_DIR = Path(__file__).resolve().parent.parent / "corpus"


class CountingEmbedder:
    """The real embedder, counting what it is asked to embed (and able to fail on demand)."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.key = inner.key
        self.provider = inner.provider
        self.model_name = inner.model_name
        self.dimensions = inner.dimensions
        self.max_input_tokens = inner.max_input_tokens
        self.embedded_texts: list[str] = []
        self.failure: Exception | None = None

    def count_tokens(self, text: str) -> int:
        return self._inner.count_tokens(text)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if self.failure is not None:
            raise self.failure
        self.embedded_texts.extend(texts)
        return self._inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        if self.failure is not None:
            raise self.failure
        return self._inner.embed_query(text)


@pytest.fixture(scope="session")
def local_embedder() -> Embedder:
    return get_embedder()


@pytest.fixture
def counting_embedder(local_embedder: Embedder) -> CountingEmbedder:
    return CountingEmbedder(local_embedder)
