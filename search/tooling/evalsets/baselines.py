"""Plain baselines on the same pages the product indexes: BM25, dense and their RRF, per section.

Each section (the parser + `split_sections`, as the eval cases label them) is one unit, its text
`embedding_text(title, heading path, section text)` for both legs. `bm25` is the `bm25s` library
(Lucene's BM25, k1=1.2, b=0.75) over Snowball-stemmed English words without stop words; `dense`
is the embedding model applied per section (truncated at the model's window by the model itself)
with the query-side encoding for questions; `rrf` fuses the two section rankings with k=60.
A page ranks by its best section (first appearance), exactly as the product's hits are scored.

Section vectors are cached on disk keyed by sha256(model key, text), so a rerun embeds nothing.
"""

from __future__ import annotations

import hashlib
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tqdm import tqdm

from kb.chunking import embedding_text
from kb.embedders import Embedder
from search.tooling.evalsets.pages import PageSection

BASELINES = ("bm25", "dense", "rrf")
BM25_K1 = 1.2
BM25_B = 0.75
RRF_K = 60
# Sections per ranking: deep enough that the page ranking has 10 distinct pages.
RANKING_DEPTH = 200
_EMBED_BATCH = 256


class BaselineUnavailable(RuntimeError):
    """The baselines' libraries (development dependencies) are not installed."""


def _bm25s():  # -> the bm25s module
    try:
        import bm25s
        import Stemmer  # noqa: F401  (bm25s stems with it)
    except ImportError as exc:
        raise BaselineUnavailable(
            f"the baselines need {exc.name}: pip install -r requirements-dev.txt"
        ) from exc
    return bm25s


class VectorCache:
    """Vectors on disk by sha256(model key, text); one SQLite file, committed per batch so an
    interrupted run keeps what it embedded."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._connection = sqlite3.connect(path)
        self._connection.execute(
            "CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)"
        )

    @staticmethod
    def key(model_key: str, text: str) -> str:
        return hashlib.sha256(f"{model_key}\n{text}".encode()).hexdigest()

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), 500):
            batch = list(keys[start : start + 500])
            marks = ",".join("?" * len(batch))
            rows = self._connection.execute(
                f"SELECT key, vector FROM vectors WHERE key IN ({marks})", batch
            )
            for key, blob in rows:
                found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, items: dict[str, np.ndarray]) -> None:
        with self._connection:
            self._connection.executemany(
                "INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)",
                [(key, np.asarray(v, dtype=np.float32).tobytes()) for key, v in items.items()],
            )

    def close(self) -> None:
        self._connection.close()


def section_text(section: PageSection) -> str:
    """What both baselines score for a section: the text the product would embed for it."""
    return embedding_text(section.title, section.label, section.text)


def bm25_tokenize(texts: Sequence[str]) -> list[list[str]]:
    import Stemmer

    tokens = _bm25s().tokenize(
        list(texts),
        stopwords="en",
        stemmer=Stemmer.Stemmer("english"),
        return_ids=False,
        show_progress=False,
    )
    return [list(words) for words in tokens]


class SectionBaselines:
    """The three baseline rankers over one list of sections."""

    def __init__(
        self,
        sections: Sequence[PageSection],
        *,
        embedder: Embedder | None,
        cache: VectorCache | None,
        progress: bool = True,
    ) -> None:
        self.sections = list(sections)
        texts = [section_text(section) for section in self.sections]
        self._bm25 = _bm25s().BM25(method="lucene", k1=BM25_K1, b=BM25_B)
        self._bm25.index(bm25_tokenize(texts), show_progress=False)
        self._embedder = embedder
        self._cache = cache
        self._vectors = (
            self._embed(texts, progress=progress) if embedder is not None else np.zeros((0, 0))
        )

    def hits(self, row: str, question: str) -> list[tuple[str, str]]:
        """(path, label) of the best sections for `question`, best first."""
        if row == "bm25":
            order = self._bm25_order(question)
        elif row == "dense":
            order = self._dense_order(question)
        elif row == "rrf":
            order = rrf_fuse([self._bm25_order(question), self._dense_order(question)])
        else:
            raise ValueError(f"unknown baseline {row!r}")
        return [(self.sections[i].path, self.sections[i].label) for i in order[:RANKING_DEPTH]]

    def _bm25_order(self, question: str) -> list[int]:
        words = bm25_tokenize([question])[0]
        if not words:
            return []
        scores = np.asarray(self._bm25.get_scores(words))
        order = np.argsort(-scores, kind="stable")[:RANKING_DEPTH]
        return [int(i) for i in order if scores[i] > 0]

    def _dense_order(self, question: str) -> list[int]:
        if self._embedder is None:
            raise ValueError("the dense baseline needs an embedder")
        scores = self._vectors @ self._query_vector(question)
        return [int(i) for i in np.argsort(-scores, kind="stable")[:RANKING_DEPTH]]

    def _query_vector(self, question: str) -> np.ndarray:
        assert self._embedder is not None
        key = VectorCache.key(f"{self._embedder.key}\nquery", question)
        if self._cache is not None:
            cached = self._cache.get_many([key])
            if key in cached:
                return cached[key]
        vector = self._embedder.embed_query(question)
        if self._cache is not None:
            self._cache.put_many({key: vector})
        return vector

    def _embed(self, texts: list[str], *, progress: bool) -> np.ndarray:
        assert self._embedder is not None
        keys = [VectorCache.key(self._embedder.key, text) for text in texts]
        found = self._cache.get_many(keys) if self._cache is not None else {}
        unique = {key: text for key, text in zip(keys, texts, strict=True) if key not in found}
        # Similar lengths together: padding is wasted work.
        missing = sorted(unique.items(), key=lambda item: (len(item[1]), item[0]))
        with tqdm(
            total=len(missing),
            desc="embedding sections",
            unit="text",
            file=sys.stderr,
            disable=not progress or not missing,
        ) as bar:
            for start in range(0, len(missing), _EMBED_BATCH):
                batch = missing[start : start + _EMBED_BATCH]
                vectors = self._embedder.embed_documents([text for _, text in batch])
                embedded = {key: vector for (key, _), vector in zip(batch, vectors, strict=True)}
                found.update(embedded)
                if self._cache is not None:
                    self._cache.put_many(embedded)
                bar.update(len(batch))
        if not keys:
            return np.zeros((0, self._embedder.dimensions), dtype=np.float32)
        return np.vstack([found[key] for key in keys]).astype(np.float32)


def rrf_fuse(rankings: Sequence[Sequence[int]], *, k: int = RRF_K) -> list[int]:
    """Reciprocal Rank Fusion: sum of 1 / (k + rank) over the rankings, best first; ties keep
    the order of first appearance."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda item: -scores[item])
