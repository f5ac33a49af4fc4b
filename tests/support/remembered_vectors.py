"""The local model's vectors, remembered per text for the code under test in a test process.

Code under test reaches the local model through ``embedder_for`` (a question asked on the chat
page or through the API, ``kb_sync`` and the other commands, a model build): the same questions
and sample pages test after test, which cost ~30 s of CPU per run of the suite when each was
embedded again. ``vectors_remembered`` makes every ``LocalMiniLMEmbedder`` of this process
remember what the model gave for each text, in memory and in the directory the parallel
workers share (the files of ``CachedEmbedder``: same names, same vectors), and give it back for
the same text. What the code under test does with the vectors is unchanged; only the model's
arithmetic for a text it has already seen is skipped.

The instances in ``REAL_MODEL`` always run the model: the ``local_embedder`` fixture's own, so
tests of embedding itself (batching, order, counts, failures) see every call reach the model.
Processes the tests start (gunicorn, Celery workers, ``manage.py``) run the model as always.
"""

from __future__ import annotations

import hashlib
import os
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from kb.embedders.local import LocalMiniLMEmbedder

REAL_MODEL: weakref.WeakSet[LocalMiniLMEmbedder] = weakref.WeakSet()


def vector_file(directory: Path, key: str, kind: str, text: str) -> Path:
    """Where a vector of ``key`` for ``text`` is kept (``kind``: "d" document, "q" query)."""
    digest = hashlib.sha256(f"{key}\0{kind}\0{text}".encode()).hexdigest()
    return directory / f"{digest}.npy"


def vector_read(path: Path) -> np.ndarray | None:
    if not path.exists():
        return None
    try:
        return np.load(path)
    except (OSError, ValueError):  # a file cut short: embed the text again
        return None


def vector_write(path: Path, vector: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    with partial.open("wb") as handle:
        np.save(handle, vector)
    partial.replace(path)  # whole files only, whichever worker writes last


def _remembering(
    embed: Callable[[LocalMiniLMEmbedder, Sequence[str]], np.ndarray], directory: Path
) -> Callable[[LocalMiniLMEmbedder, Sequence[str]], np.ndarray]:
    memory: dict[str, np.ndarray] = {}

    def known(key: str, text: str) -> bool:
        if text not in memory:
            vector = vector_read(vector_file(directory, key, "d", text))
            if vector is None:
                return False
            memory[text] = vector
        return True

    def embed_documents(embedder: LocalMiniLMEmbedder, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if embedder in REAL_MODEL or not texts:
            return embed(embedder, texts)
        missing = list(dict.fromkeys(text for text in texts if not known(embedder.key, text)))
        if missing:
            for text, vector in zip(missing, embed(embedder, missing), strict=True):
                memory[text] = vector
                vector_write(vector_file(directory, embedder.key, "d", text), vector)
        return np.stack([memory[text] for text in texts])

    return embed_documents


@contextmanager
def vectors_remembered(directory: Path) -> Iterator[None]:
    """Within the block, local models outside ``REAL_MODEL`` remember their vectors per text
    (in ``directory`` too); ``embed_query`` goes through ``embed_documents``, so questions
    are remembered as well."""
    original = LocalMiniLMEmbedder.embed_documents
    LocalMiniLMEmbedder.embed_documents = _remembering(original, directory)  # type: ignore[method-assign]
    try:
        yield
    finally:
        LocalMiniLMEmbedder.embed_documents = original  # type: ignore[method-assign]
