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

from kb.embedders import LOCAL_MODEL_KEY, embedder_for
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


# --- The vectors a fresh clone starts with ------------------------------------------------------
#
# On a fresh clone the test processes embed every text they need (the sample help center's 427
# chunks, the questions asked of it, the units its answers quote, and the pages and questions of
# the other tests) before any test can reuse them. With only the sample's texts seeded (766 of
# the 1,280 a run embeds) the other 514 still cost ~50 s of a 2-core machine's four minutes
# (2026-12-07, one machine: pytest 4 min 31 s, against 3 min 43 s with all of them seeded).
# ``SEED`` holds what the model gave for those texts when the seed was made (``make
# test-vectors``: a whole run from an empty cache), by the same file names as the shared
# directory. A worker copies them in only when the model, run on this machine, gives the seed's
# probe text the vector the seed holds for it, to the last places of float32 arithmetic
# (``PROBE_TOLERANCE``): the same model on a machine with another instruction set sums in
# another order, while another model, another quantisation or a changed tokenizer gives another
# vector, and the run then embeds everything itself, as without a seed. A text the seed lacks (a
# page edited since) is embedded as always. A checkout whose cache holds every seeded vector
# already (any run after the first) neither reads the vectors nor loads the model for it.

SEED = Path(__file__).resolve().parents[1] / "data" / "sample-vectors.npz"
PROBE = "Refunds: annual plans can be refunded within 60 days of purchase."
# How far a component of the probe's vector may be from the seed's and still be the same
# model's: two machines of one kind, the same int8 model and ONNX Runtime, differ by 8e-8 at
# most (2026-12-06: the seed was not used there, and pytest embedded the sample itself, about
# 50 s more); the int8 model against its fp32 original differs by about 1e-3 (cosine 0.999).
PROBE_TOLERANCE = 1e-6


def vectors_seeded(directory: Path, seed: Path = SEED) -> int:
    """Copy the seed's vectors that ``directory`` lacks into it, if the seed is of the local
    model and its probe vector is what the model gives here; how many were copied."""
    if not seed.exists():
        return 0
    with np.load(seed) as packed:
        paths = [directory / f"{name}.npy" for name in packed["names"]]  # as ``vector_file``
        lacking = [index for index, path in enumerate(paths) if not path.exists()]
        if not lacking or str(packed["key"]) != LOCAL_MODEL_KEY:
            return 0
        probe = embedder_for(LOCAL_MODEL_KEY).embed_documents([str(packed["probe_text"])])[0]
        if not np.allclose(probe, packed["probe"], rtol=0.0, atol=PROBE_TOLERANCE):
            return 0
        vectors = packed["vectors"]
        for index in lacking:
            vector_write(paths[index], vectors[index])
    return len(lacking)


def seed_pack(directory: Path, seed: Path = SEED) -> int:
    """Write the local model's vectors of ``directory`` (one file per text, as the tests leave
    them) and the probe's into ``seed``; how many texts it holds."""
    paths = sorted(directory.glob("*.npy"))
    vectors = [vector_read(path) for path in paths]
    kept = [
        (path.stem, vector)
        for path, vector in zip(paths, vectors, strict=True)
        if vector is not None
    ]
    np.savez_compressed(
        seed,
        key=np.array(LOCAL_MODEL_KEY),
        probe_text=np.array(PROBE),
        probe=embedder_for(LOCAL_MODEL_KEY).embed_documents([PROBE])[0],
        names=np.array([name for name, _ in kept]),
        vectors=np.stack([vector for _, vector in kept]).astype(np.float32),
    )
    return len(kept)


if __name__ == "__main__":  # make test-vectors: python -m tests.support.remembered_vectors DIR
    import sys

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    print(f"{SEED}: {seed_pack(Path(sys.argv[1]))} vectors")
