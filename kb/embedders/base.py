"""The embedder interface shared by indexing and querying."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


class EmbeddingError(RuntimeError):
    """The embedder failed or returned something unusable (wrong shape, NaN, not normalised)."""


@runtime_checkable
class Embedder(Protocol):
    key: str  # "local/all-MiniLM-L6-v2": names the vector space
    provider: str
    model_name: str
    dimensions: int
    max_input_tokens: int  # word pieces read per input, special tokens included
    # Not part of the protocol (a wrapper need not say): ``multilingual = True`` on a class that
    # places a question near its page whatever their languages; read by assistant.languages.

    def count_tokens(self, text: str) -> int:
        """Word pieces the model reads for ``text``, special tokens excluded."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """An (n, dimensions) float32 array of unit vectors, in the order of ``texts``."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """A (dimensions,) float32 unit vector, query-side encoding where the model has one."""
        ...


def checked_unit_vectors(
    vectors: np.ndarray, *, count: int, dimensions: int, key: str
) -> np.ndarray:
    """Validate what a provider returned: shape, finiteness and unit length.

    A malformed response must fail loudly here rather than reach the index, where a wrong
    dimension or a NaN would corrupt every search that touches it.
    """
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.shape != (count, dimensions):
        raise EmbeddingError(
            f"{key} returned shape {vectors.shape}, expected ({count}, {dimensions})"
        )
    if not np.isfinite(vectors).all():
        raise EmbeddingError(f"{key} returned non-finite values")
    norms = np.linalg.norm(vectors, axis=1)
    if count and not np.allclose(norms, 1.0, atol=1e-3):
        raise EmbeddingError(f"{key} returned vectors that are not unit length")
    return vectors
