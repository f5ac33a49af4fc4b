"""A feature-hashing embedder for tests and benchmarks of the indexing machinery: words hashed
into 64 signed buckets, so it needs no model files and embeds thousands of chunks a second.

It is a real embedder (deterministic, unit vectors, nearby texts share buckets) but a poor one
for meaning, so only tests and benchmarks of queues, workers and bookkeeping use it, where
the model's quality is not what is measured. Production refuses it (``embedder_for``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from kb.embedders.base import checked_unit_vectors

DIMENSIONS = 64
MAX_INPUT_TOKENS = 256
_WORD = re.compile(r"\w+")


class HashingEmbedder:
    key = f"test/hashing-{DIMENSIONS}"
    provider = "test"
    multilingual = False
    model_name = f"hashing-{DIMENSIONS}"
    dimensions = DIMENSIONS
    max_input_tokens = MAX_INPUT_TOKENS

    def count_tokens(self, text: str) -> int:
        return len(_WORD.findall(text))

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        for row, text in enumerate(texts):
            vectors[row] = self._vector(text)
        return checked_unit_vectors(vectors, count=len(texts), dimensions=DIMENSIONS, key=self.key)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(DIMENSIONS, dtype=np.float32)
        for word in _WORD.findall(text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
            bucket = int.from_bytes(digest[:2], "little") % DIMENSIONS
            vector[bucket] += 1.0 if digest[2] & 1 else -1.0
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:  # no words (or words that cancel out): one fixed direction
            vector[0], norm = 1.0, 1.0
        return vector / norm
