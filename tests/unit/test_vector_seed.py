"""The vectors a fresh clone's test run starts from (``tests/support/remembered_vectors.py``):
copied in only when this machine's model gives the seed's probe vector, to the last places of
float32 arithmetic."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kb.embedders.local import LocalMiniLMEmbedder
from tests.support import remembered_vectors
from tests.support.remembered_vectors import (
    PROBE,
    SEED,
    seed_pack,
    vector_file,
    vector_read,
    vector_write,
    vectors_seeded,
)


def _cache_of(directory: Path, embedder: LocalMiniLMEmbedder, texts: list[str]) -> list[Path]:
    vectors = embedder.embed_documents(texts)
    paths = [vector_file(directory, embedder.key, "d", text) for text in texts]
    for path, vector in zip(paths, vectors, strict=True):
        vector_write(path, vector)
    return paths


def _seed_with(tmp_path: Path, embedder: LocalMiniLMEmbedder, **changed: np.ndarray) -> Path:
    """A seed of one text's vector, with ``changed`` parts."""
    _cache_of(tmp_path / "made", embedder, ["Refunds take 5 days."])
    seed = tmp_path / "seed.npz"
    seed_pack(tmp_path / "made", seed=seed)
    with np.load(seed) as packed:
        parts = {name: packed[name] for name in packed.files}
    np.savez_compressed(seed, **{**parts, **changed})
    return seed


def test_a_seed_made_by_this_model_here_fills_what_the_cache_lacks(
    tmp_path: Path, local_embedder: LocalMiniLMEmbedder
) -> None:
    # given a seed of two texts' vectors, and a cache that already holds one of them
    made = _cache_of(tmp_path / "made", local_embedder, ["Refunds take 5 days.", "Plans: Growth"])
    seed = tmp_path / "seed.npz"
    assert seed_pack(tmp_path / "made", seed=seed) == 2
    cache = tmp_path / "cache"
    vector_write(cache / made[0].name, vector_read(made[0]))  # type: ignore[arg-type]

    # when
    copied = vectors_seeded(cache, seed=seed)

    # then the other one is copied, bit for bit
    assert copied == 1
    assert np.array_equal(vector_read(cache / made[1].name), vector_read(made[1]))  # type: ignore[arg-type]


def test_a_seed_whose_probe_differs_only_in_the_arithmetic_s_last_places_is_used(
    tmp_path: Path, local_embedder: LocalMiniLMEmbedder
) -> None:
    # given a seed made on a machine that sums in another order: its probe vector differs from
    # the model's here by a few units in the last place (8e-8 seen between two machines)
    probe = local_embedder.embed_documents([PROBE])[0]
    elsewhere = probe + np.float32(8e-8) * np.sign(np.arange(probe.size) % 3 - 1)
    assert not np.array_equal(elsewhere, probe)
    seed = _seed_with(tmp_path, local_embedder, probe=elsewhere.astype(np.float32))

    # when / then: the seed is the same model's, and its vector is copied
    assert vectors_seeded(tmp_path / "cache", seed=seed) == 1


@pytest.mark.parametrize("change", [2e-6, 1e-3])
def test_a_seed_whose_probe_this_machine_does_not_reproduce_is_not_used(
    tmp_path: Path, local_embedder: LocalMiniLMEmbedder, change: float
) -> None:
    # given a seed whose probe vector differs from the model's in one component by more than
    # arithmetic does (1e-3: what the int8 model differs from its fp32 original by)
    probe = local_embedder.embed_documents([PROBE])[0].copy()
    probe[7] += np.float32(change)
    seed = _seed_with(tmp_path, local_embedder, probe=probe)

    # when / then: nothing is copied, and the run embeds as without a seed
    assert vectors_seeded(tmp_path / "cache", seed=seed) == 0
    assert not (tmp_path / "cache").exists()


def test_a_seed_of_another_model_or_none_at_all_is_not_used(
    tmp_path: Path, local_embedder: LocalMiniLMEmbedder
) -> None:
    seed = _seed_with(tmp_path, local_embedder, key=np.array("local/another-model"))

    assert vectors_seeded(tmp_path / "cache", seed=seed) == 0
    assert vectors_seeded(tmp_path / "cache", seed=tmp_path / "none.npz") == 0


def test_a_cache_that_holds_every_seeded_vector_runs_no_model_for_the_seed(
    tmp_path: Path, local_embedder: LocalMiniLMEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a seed whose vectors the cache holds already (any run after a checkout's first)
    seed = _seed_with(tmp_path, local_embedder)
    monkeypatch.setattr(
        remembered_vectors, "embedder_for", lambda key: pytest.fail("the model was loaded")
    )

    # when / then: nothing to copy, and the probe is not embedded
    assert vectors_seeded(tmp_path / "made", seed=seed) == 0


def test_the_committed_seed_is_of_the_configured_model_and_holds_the_sample_pages(
    local_embedder: LocalMiniLMEmbedder,
) -> None:
    with np.load(SEED) as packed:
        key, names, vectors = str(packed["key"]), packed["names"], packed["vectors"]

    assert key == local_embedder.key
    assert vectors.dtype == np.float32 and vectors.shape == (len(names), 384)
    assert len(set(names.tolist())) == len(names) > 400
