"""Retrieval benchmark at scale: hybrid SQL latency and index use at N chunks, full retrieval.

Runs in a throwaway database (created and dropped here) filled with a synthetic index built from
the sample corpus: chunk texts are the corpus's own sentences (so the GIN index sees real
vocabulary and identifiers) and vectors are mixtures of the corpus's real embeddings plus noise
(so HNSW sees the clustered geometry of real embeddings; uniform random vectors make it look
unrealistically bad or good). Timings on shared machines are noisy: read them as a range.
"""

from __future__ import annotations

import json
import logging
import re
import statistics
import struct
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, connections
from django.db.backends.utils import CursorWrapper

from kb.embedders import Embedder, get_embedder
from kb.models import EmbeddingModel
from kb.parsing import parse_document
from kb.services import document_chunk, embedding_model_register, hnsw_index_create
from search.hybrid import hybrid_search
from search.keywords import keyword_query
from search.services import PUBLIC_AUDIENCES, retrieve

SQL_P50_TARGET_MS = 15.0
SQL_P95_TARGET_MS = 40.0
RETRIEVAL_P50_TARGET_MS = 250.0
WARM_UP = 20
BATCH_ROWS = 10_000
CHUNKS_PER_DOCUMENT = 10
CANDIDATES = 20  # what retrieve() asks hybrid_search for
GIN_INDEX = "kb_chunk_tsv_gin"
# Enough for the 100k-chunk HNSW graph to fit in memory while it is built: with the 64MB default
# it does not, and the build took 65 s instead of 22 s here.
BUILD_MAINTENANCE_WORK_MEM = "1GB"
# Noise norm relative to the mixture's norm. Measured: a question's best synthetic chunk sits at
# median cosine 0.57 (0.56 against the real corpus), a chunk's nearest neighbour at 0.81.
NOISE_RATIO = 0.45
DATABASE_NAME = "test_groundwork_search_bench"


@dataclass(frozen=True)
class SeedChunk:
    """A real chunk of the sample corpus: the source of synthetic text and vectors."""

    category: str
    title: str
    heading_path: str
    sentences: list[str]
    embedding_text: str  # exactly what kb_sync embeds for this chunk


class Command(BaseCommand):
    help = "Benchmark hybrid SQL and retrieval on a synthetic 100k-chunk index (make bench)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--chunks", type=int, default=100_000)
        parser.add_argument("--questions", type=int, default=200, help="timed, after a warm-up")
        parser.add_argument("--keep", action="store_true", help="keep the benchmark database")
        parser.add_argument("--corpus", type=Path, default=settings.BASE_DIR / "corpus")

    def handle(
        self,
        *args: object,
        chunks: int,
        questions: int,
        keep: bool,
        corpus: Path,
        **options: object,
    ) -> None:
        if chunks < 1000:
            raise CommandError("--chunks must be at least 1000")
        if questions < 10:
            raise CommandError("--questions must be at least 10")
        if not (corpus / "eval.jsonl").is_file():
            raise CommandError(f"no sample corpus at {corpus} (expected eval.jsonl and *.md)")
        run_started = time.perf_counter()
        self.verbosity = int(options.get("verbosity", 1))
        embedder = get_embedder()

        seeds = _seed_chunks(corpus, embedder)
        self._step(f"embedding {len(seeds)} sample-corpus chunks (the vectors' building blocks)")
        started = time.perf_counter()
        seed_vectors = embedder.embed_documents([seed.embedding_text for seed in seeds])
        self._done(started)
        identifiers = _corpus_identifiers(seeds)
        asked = _questions(corpus / "eval.jsonl", WARM_UP + questions)
        unique = sorted(set(asked))
        self._step(f"embedding {len(unique)} eval questions once (so only the SQL is timed)")
        started = time.perf_counter()
        question_vectors = dict(zip(unique, embedder.embed_documents(unique).tolist(), strict=True))
        self._done(started)

        creation = connection.creation
        old_name = connection.settings_dict["NAME"]
        old_test_name = connection.settings_dict["TEST"].get("NAME")
        # Its own name, so a concurrent kb_bench (test_groundwork) is never clobbered.
        connection.settings_dict["TEST"]["NAME"] = DATABASE_NAME
        self._step(f"creating the throwaway database {DATABASE_NAME}")
        creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
        report: dict[str, object] = {}
        try:
            model = embedding_model_register(embedder=embedder)
            report["build"] = self._build_index(
                model, seeds, seed_vectors, identifiers, chunks=chunks
            )
            report["settings"] = _search_settings()
            report["sql"] = self._time_hybrid(model, asked, question_vectors)
            report["explain"] = self._explain(model, unique, question_vectors)
            report["retrieval"] = self._time_retrieval(asked)
        finally:
            if keep:
                self.stdout.write(
                    f"kept database {DATABASE_NAME} (--keep); the next run replaces it, "
                    f"or: DROP DATABASE {DATABASE_NAME}"
                )
            else:
                creation.destroy_test_db(old_name, verbosity=0)
            connection.settings_dict["TEST"]["NAME"] = old_test_name
        self._print(report, chunks=chunks, seconds=time.perf_counter() - run_started)

    # --- Building the index -----------------------------------------------------------------------

    def _build_index(
        self,
        model: EmbeddingModel,
        seeds: list[SeedChunk],
        seed_vectors: np.ndarray,
        identifiers: list[str],
        *,
        chunks: int,
    ) -> dict[str, object]:
        hnsw_definition = _index_definition(model.hnsw_index_name)
        gin_definition = _index_definition(GIN_INDEX)
        documents = -(-chunks // CHUNKS_PER_DOCUMENT)
        with connection.cursor() as cursor:
            # Both indexes are built once after loading: faster than maintaining them per row.
            cursor.execute(f"DROP INDEX {model.hnsw_index_name}, {GIN_INDEX}")
            cursor.execute("SELECT setseed(0.20261129)")
            self._step(f"inserting {documents:,} documents (10% internal, 5% retired)")
            first_document = _documents_insert(cursor, seeds, documents)
            _seeds_load(cursor, seeds)
            rng = np.random.default_rng(20261129)
            loading = time.perf_counter()
            for first in range(0, chunks, BATCH_ROWS):
                count = min(BATCH_ROWS, chunks - first)
                vectors, seed_a, seed_b = synthetic_vectors(seed_vectors, count, rng)
                _vectors_copy(cursor, vectors, seed_a, seed_b, first_row=first)
                _chunks_insert(
                    cursor, model, identifiers, first_document=first_document, batch=count
                )
                done = first + count
                self.stdout.write(
                    f"  chunks {done:>9,}/{chunks:,} ({done / chunks:4.0%})  "
                    f"{time.perf_counter() - loading:6.1f} s"
                )
            cursor.execute("DROP TABLE bench_vector, bench_seed")

            self._step(f"building {GIN_INDEX}")
            started = time.perf_counter()
            cursor.execute(gin_definition)
            gin_seconds = self._done(started)

            self._step(
                f"building {model.hnsw_index_name} (maintenance_work_mem "
                f"{BUILD_MAINTENANCE_WORK_MEM} for the build only)"
            )
            cursor.execute("SET maintenance_work_mem = %s", [BUILD_MAINTENANCE_WORK_MEM])
            started = time.perf_counter()
            with self._index_build_progress():
                # The production statement, so the index is exactly what kb.services creates.
                hnsw_index_create(model)
            hnsw_seconds = self._done(started)
            cursor.execute("RESET maintenance_work_mem")
            if _index_definition(model.hnsw_index_name) != hnsw_definition:
                raise CommandError("the rebuilt HNSW index differs from the registered one")

            self._step("VACUUM (ANALYZE): planner statistics and a settled visibility map")
            started = time.perf_counter()
            cursor.execute("VACUUM (ANALYZE) kb_document, kb_chunk")
            self._done(started)
            cursor.execute(
                "SELECT pg_size_pretty(pg_relation_size(%s::regclass)), "
                "pg_size_pretty(pg_relation_size(%s::regclass)), "
                "pg_size_pretty(pg_table_size('kb_chunk'))",
                [model.hnsw_index_name, GIN_INDEX],
            )
            hnsw_size, gin_size, table_size = cursor.fetchone()
        self.stdout.write(
            f"  sizes: kb_chunk {table_size}, HNSW {hnsw_size}, GIN {gin_size}; "
            f"load, index builds and vacuum took {time.perf_counter() - loading:.1f} s"
        )
        return {"documents": documents, "gin_s": gin_seconds, "hnsw_s": hnsw_seconds}

    @contextmanager
    def _index_build_progress(self) -> Iterator[None]:
        """Report pg_stat_progress_create_index every 10 s from a second connection."""
        stop = threading.Event()

        def poll() -> None:
            try:
                while not stop.wait(10):
                    with connections["default"].cursor() as cursor:
                        cursor.execute(
                            "SELECT phase, blocks_done, blocks_total, tuples_done "
                            "FROM pg_stat_progress_create_index"
                        )
                        for phase, blocks_done, blocks_total, tuples_done in cursor.fetchall():
                            share = f"{blocks_done / blocks_total:.0%}" if blocks_total else "-"
                            self.stdout.write(
                                f"  ... {phase}: heap blocks {share}, {tuples_done:,} tuples"
                            )
            finally:
                connections["default"].close()

        poller = threading.Thread(target=poll, name="index-build-progress", daemon=True)
        poller.start()
        try:
            yield
        finally:
            stop.set()
            poller.join()

    # --- Measuring --------------------------------------------------------------------------------

    def _time_hybrid(
        self, model: EmbeddingModel, asked: list[str], vectors: dict[str, list[float]]
    ) -> dict[str, object]:
        self._step(
            f"hybrid SQL: {len(asked) - WARM_UP} questions after {WARM_UP} warm-up, audience public"
        )
        timings: list[tuple[float, str]] = []
        for number, question in enumerate(asked):
            keywords = keyword_query(question)
            started = time.perf_counter()
            hybrid_search(
                embedding_model=model,
                query_vector=vectors[question],
                keywords=keywords,
                audiences=PUBLIC_AUDIENCES,
                limit=CANDIDATES,
            )
            elapsed = (time.perf_counter() - started) * 1000
            if number >= WARM_UP:
                timings.append((elapsed, question))
        values = [ms for ms, _ in timings]
        for ms, question in sorted(timings, reverse=True)[:3]:
            self.stdout.write(f"  slow: {ms:7.1f} ms  {question[:90]}")
        # The keyword leg weighs differently when a question carries an identifier: time apart.
        by_kind: dict[str, list[float]] = {}
        for ms, question in timings:
            kind = "identifier" if keyword_query(question).identifiers else "plain"
            by_kind.setdefault(kind, []).append(ms)
        return {
            "p": percentiles(values),
            "by_kind": {kind: (len(ms), percentiles(ms)) for kind, ms in sorted(by_kind.items())},
        }

    def _explain(
        self, model: EmbeddingModel, questions: list[str], vectors: dict[str, list[float]]
    ) -> dict[str, object]:
        """EXPLAIN (ANALYZE, BUFFERS) of the exact statement hybrid_search sends, unforced."""
        self._step(f"EXPLAIN (ANALYZE, BUFFERS) of the hybrid SQL for {len(questions)} questions")
        plans: list[tuple[float, str, str]] = []
        for question in questions:
            capture = _StatementCapture()
            with connection.execute_wrapper(capture):
                hybrid_search(
                    embedding_model=model,
                    query_vector=vectors[question],
                    keywords=keyword_query(question),
                    audiences=PUBLIC_AUDIENCES,
                    limit=CANDIDATES,
                )
            sql, params = capture.statements[-1]
            with connection.cursor() as cursor:
                cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
                plan = "\n".join(row[0] for row in cursor.fetchall())
            match = re.search(r"Execution Time: ([\d.]+) ms", plan)
            plans.append((float(match.group(1)) if match else 0.0, question, plan))
        plans.sort()
        uses = {
            "hnsw": sum(model.hnsw_index_name in plan for _, _, plan in plans),
            "gin": sum(GIN_INDEX in plan for _, _, plan in plans),
            # Plain questions skip the keyword leg (no fusion weight): only the rest can use GIN.
            "keyword_plans": sum("tsv @@" in plan for _, _, plan in plans),
            "jit": sum("JIT:" in plan for _, _, plan in plans),
            "seq_scan": sum("Seq Scan on kb_chunk" in plan for _, _, plan in plans),
        }
        shown = [("median", plans[len(plans) // 2]), ("slowest", plans[-1])]
        for label, (ms, question, plan) in shown:
            self.stdout.write(f"  {label} plan ({ms:.1f} ms): {question[:80]}")
            lines = (
                [_VECTOR_LITERAL.sub("'[...]'", line) for line in plan.splitlines()]
                if self.verbosity >= 2
                else _relevant_lines(plan)
            )
            for line in lines:
                self.stdout.write(f"    {line}")
        legs = {
            leg: [ms for _, _, plan in plans if (ms := _cte_milliseconds(plan, leg)) is not None]
            for leg in ("vector_leg", "keyword_leg")
        }
        return {
            **uses,
            "plans": len(plans),
            "execution_ms": statistics.median(ms for ms, _, _ in plans),
            "leg_ms": {leg: percentiles(ms) for leg, ms in legs.items() if ms},
            "hnsw_index": model.hnsw_index_name,
        }

    def _time_retrieval(self, asked: list[str]) -> dict[str, object]:
        self._step(
            f"retrieve(): {len(asked) - WARM_UP} questions after {WARM_UP} warm-up, "
            "embedding each question live"
        )
        totals: list[float] = []
        stages: dict[str, list[float]] = {}
        reranker = "none"
        with _quiet("groundwork.search"):
            for number, question in enumerate(asked):
                result = retrieve(question=question)
                if number < WARM_UP:
                    continue
                if result.degraded:
                    raise CommandError(f"retrieval degraded during the benchmark: {result.errors}")
                reranker = result.reranker
                totals.append(result.timings_ms["total"])
                for stage, ms in result.timings_ms.items():
                    stages.setdefault(stage, []).append(ms)
        return {
            "p": percentiles(totals),
            "stages": {stage: statistics.median(ms) for stage, ms in stages.items()},
            "reranker": reranker,
        }

    # --- Output -----------------------------------------------------------------------------------

    def _step(self, message: str) -> None:
        self.stdout.write(f"{message}...")

    def _done(self, started: float) -> float:
        seconds = time.perf_counter() - started
        self.stdout.write(f"  done in {seconds:.1f} s")
        return seconds

    def _print(self, report: dict, *, chunks: int, seconds: float) -> None:
        build, sql, explain, retrieval = (
            report["build"],
            report["sql"],
            report["explain"],
            report["retrieval"],
        )
        sql_p, retrieval_p = sql["p"], retrieval["p"]

        def verdict(ok: bool) -> str:
            return "ok" if ok else "MISSED"

        def used(count: int) -> str:
            return "PASS" if count == explain["plans"] else "FAIL"

        rows = [
            ("HNSW index build", f"{build['hnsw_s']:.1f} s", "-", "info"),
            ("GIN index build", f"{build['gin_s']:.1f} s", "-", "info"),
            (
                "hybrid SQL p50",
                f"{sql_p[50]:.1f} ms",
                f"< {SQL_P50_TARGET_MS:.0f} ms",
                verdict(sql_p[50] < SQL_P50_TARGET_MS),
            ),
            (
                "hybrid SQL p95",
                f"{sql_p[95]:.1f} ms",
                f"< {SQL_P95_TARGET_MS:.0f} ms",
                verdict(sql_p[95] < SQL_P95_TARGET_MS),
            ),
            ("hybrid SQL p99", f"{sql_p[99]:.1f} ms", "-", "info"),
            *(
                (f"  {kind} ({count}) p50 / p95", f"{p[50]:.1f} / {p[95]:.1f}", "ms", "info")
                for kind, (count, p) in sql["by_kind"].items()
            ),
            (
                "EXPLAIN median execution",
                f"{explain['execution_ms']:.1f} ms",
                "-",
                "info",
            ),
            *(
                (f"  EXPLAIN {leg} p50 / p95", f"{p[50]:.1f} / {p[95]:.1f}", "ms", "info")
                for leg, p in explain["leg_ms"].items()
            ),
            (
                f"plans using {explain['hnsw_index']}",
                f"{explain['hnsw']}/{explain['plans']}",
                "all",
                used(explain["hnsw"]),
            ),
            (
                f"keyword-leg plans using {GIN_INDEX}",
                f"{explain['gin']}/{explain['keyword_plans']}",
                "all",
                "PASS" if explain["gin"] == explain["keyword_plans"] else "FAIL",
            ),
            (
                "  plans reading kb_chunk by seq scan",
                f"{explain['seq_scan']}/{explain['plans']}",
                "-",
                "info",
            ),
            (
                "retrieval p50",
                f"{retrieval_p[50]:.1f} ms",
                f"< {RETRIEVAL_P50_TARGET_MS:.0f} ms",
                verdict(retrieval_p[50] < RETRIEVAL_P50_TARGET_MS),
            ),
            ("retrieval p95", f"{retrieval_p[95]:.1f} ms", "-", "info"),
        ]
        rows += [
            (f"  retrieval median: {stage}", f"{ms:.1f} ms", "-", "info")
            for stage, ms in retrieval["stages"].items()
        ]
        self.stdout.write("")
        self.stdout.write(
            f"search_bench: {chunks:,} chunks over {build['documents']:,} documents; "
            f"{report['settings']}; reranker {retrieval['reranker']}"
        )
        if explain["jit"]:
            self.stdout.write(f"JIT compiled {explain['jit']}/{explain['plans']} plans")
        self.stdout.write(f"{'metric':<44}{'measured':>12}{'target':>12}  verdict")
        for name, measured, target, outcome in rows:
            self.stdout.write(f"{name:<44}{measured:>12}{target:>12}  {outcome}")
        self.stdout.write(f"whole run: {seconds:.0f} s")


# --- Synthetic data -------------------------------------------------------------------------------


def synthetic_vectors(
    seed_vectors: np.ndarray, count: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``count`` unit vectors, each a random mixture of 2-3 real embeddings plus gaussian noise.

    Returns the vectors and, per vector, its heaviest and second-heaviest seed: the chunk's
    text is drawn from those seeds' sentences, so both legs agree on what a chunk is about.
    """
    picks = rng.integers(0, len(seed_vectors), size=(count, 3))
    weights = rng.dirichlet([1.0, 1.0, 1.0], size=count)
    weights[rng.random(count) < 0.5, 2] = 0.0  # half the vectors mix two seeds, half three
    weights /= weights.sum(axis=1, keepdims=True)
    mixed = np.einsum("nk,nkd->nd", weights, seed_vectors[picks])
    dims = seed_vectors.shape[1]
    noise = rng.normal(0.0, 1.0 / np.sqrt(dims), size=mixed.shape)
    vectors = mixed + NOISE_RATIO * np.linalg.norm(mixed, axis=1, keepdims=True) * noise
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    order = np.argsort(-weights, axis=1)
    rows = np.arange(count)
    return vectors.astype(np.float32), picks[rows, order[:, 0]], picks[rows, order[:, 1]]


def percentiles(values: Sequence[float]) -> dict[int, float]:
    p50, p95, p99 = np.percentile(np.asarray(values, dtype=float), [50, 95, 99])
    return {50: float(p50), 95: float(p95), 99: float(p99)}


def _seed_chunks(corpus: Path, embedder: Embedder) -> list[SeedChunk]:
    seeds = []
    for path in sorted(corpus.rglob("*.md")):
        document = parse_document(path=path.relative_to(corpus).as_posix(), raw=path.read_bytes())
        chunked = document_chunk(title=document.title, body=document.body, embedder=embedder)
        for draft, embedding_text in zip(chunked.drafts, chunked.embedding_texts(), strict=True):
            sentences = [
                " ".join(part.split())
                for part in re.split(r"(?<=[.!?])\s+|\n+", draft.text)
                if part.strip()
            ]
            if sentences:
                seeds.append(
                    SeedChunk(
                        category=document.category,
                        title=document.title,
                        heading_path=draft.heading_path,
                        sentences=sentences,
                        embedding_text=embedding_text,
                    )
                )
    if not seeds:
        raise CommandError(f"no Markdown pages under {corpus}")
    return seeds


def _corpus_identifiers(seeds: list[SeedChunk]) -> list[str]:
    """Codes, event names and headers the sample corpus really uses (``invoice.paid``...)."""
    found = {
        identifier
        for seed in seeds
        for sentence in seed.sentences
        for identifier in keyword_query(sentence).identifiers
    }
    return sorted(found) or ["invoice.paid"]


def _questions(path: Path, count: int) -> list[str]:
    questions = [
        json.loads(line)["question"] for line in path.read_text().splitlines() if line.strip()
    ]
    return [questions[number % len(questions)] for number in range(count)]


def _documents_insert(cursor: CursorWrapper, seeds: list[SeedChunk], count: int) -> int:
    """``count`` documents in one statement; returns the first id (ids are consecutive)."""
    cursor.execute(
        """
        INSERT INTO kb_document (path, title, category, audience, status, updated_on, body,
                                 content_hash, created_at, modified_at)
        SELECT format('bench/%%s/page-%%s.md', category[1 + g %% cardinality(category)], g),
               title[1 + g %% cardinality(title)] || ' (' || g || ')',
               category[1 + g %% cardinality(category)],
               CASE WHEN g %% 20 IN (3, 13) THEN 'internal' ELSE 'public' END,
               CASE WHEN g %% 20 = 7 THEN 'retired' ELSE 'published' END,
               DATE '2025-01-01' + g %% 365, 'Synthetic page ' || g,
               encode(sha256(g::text::bytea), 'hex'), now(), now()
        FROM generate_series(0, %s - 1) AS g,
             (SELECT %s::text[] AS title, %s::text[] AS category) AS names
        ORDER BY g
        """,
        [
            count,
            [seed.title for seed in seeds],
            sorted({seed.category or "general" for seed in seeds}),
        ],
    )
    cursor.execute("SELECT min(id) FROM kb_document")
    return cursor.fetchone()[0]


def _seeds_load(cursor: CursorWrapper, seeds: list[SeedChunk]) -> None:
    numbers, ordinals, sentences = [], [], []
    for number, seed in enumerate(seeds):
        for ordinal, sentence in enumerate(seed.sentences):
            numbers.append(number)
            ordinals.append(ordinal)
            sentences.append(sentence)
    cursor.execute(
        "CREATE TEMP TABLE bench_vector "
        "(row_number integer, seed_a integer, seed_b integer, embedding vector)"
    )
    cursor.execute(
        """
        CREATE TEMP TABLE bench_seed AS
        SELECT s.seed, h.heading_path, array_agg(s.sentence ORDER BY s.ordinal) AS sentences
        FROM unnest(%s::int[], %s::int[], %s::text[]) AS s (seed, ordinal, sentence)
        JOIN unnest(%s::text[]) WITH ORDINALITY AS h (heading_path, seed) ON h.seed = s.seed + 1
        GROUP BY s.seed, h.heading_path
        """,
        [numbers, ordinals, sentences, [seed.heading_path for seed in seeds]],
    )
    cursor.execute("ALTER TABLE bench_seed ADD PRIMARY KEY (seed)")


def _vectors_copy(
    cursor: CursorWrapper,
    vectors: np.ndarray,
    seed_a: np.ndarray,
    seed_b: np.ndarray,
    *,
    first_row: int,
) -> None:
    """One batch of vectors into ``bench_vector`` by binary COPY, packed by numpy.

    Binary COPY rows are (int16 field count, then int32 length + bytes per field), big-endian;
    pgvector's binary ``vector`` is (uint16 dimensions, uint16 0, float4 values).
    """
    count, dims = vectors.shape
    row = np.dtype(
        [
            ("fields", ">i2"),
            ("row_length", ">i4"),
            ("row_number", ">i4"),
            ("seed_a_length", ">i4"),
            ("seed_a", ">i4"),
            ("seed_b_length", ">i4"),
            ("seed_b", ">i4"),
            ("vector_length", ">i4"),
            ("dimensions", ">u2"),
            ("unused", ">u2"),
            ("vector", ">f4", (dims,)),
        ]
    )
    records = np.zeros(count, dtype=row)
    records["fields"] = 4
    records["row_length"] = records["seed_a_length"] = records["seed_b_length"] = 4
    records["row_number"] = np.arange(first_row, first_row + count)
    records["seed_a"], records["seed_b"] = seed_a, seed_b
    records["vector_length"] = 4 + 4 * dims
    records["dimensions"] = dims
    records["vector"] = vectors
    header = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
    cursor.execute("TRUNCATE bench_vector")
    with cursor.cursor.copy(
        "COPY bench_vector (row_number, seed_a, seed_b, embedding) FROM STDIN (FORMAT BINARY)"
    ) as copy:
        copy.write(header + records.tobytes() + struct.pack(">h", -1))


def _chunks_insert(
    cursor: CursorWrapper,
    model: EmbeddingModel,
    identifiers: list[str],
    *,
    first_document: int,
    batch: int,
) -> None:
    """The batch in ``bench_vector`` as chunks: 3-5 sentences of the main seed, 1-2 of the
    second, and in some chunks an error code (E1234) or a real identifier of the corpus.

    Each seed sentence and heading recurs in hundreds of chunks, so every term is at least that
    common; error codes are redrawn per chunk so that, as in a real help center, a pasted code
    matches a handful of chunks rather than thousands.
    """
    cursor.execute(
        rf"""
        WITH drafted AS MATERIALIZED (
            SELECT v.row_number, v.embedding, a.heading_path,
                   concat_ws(' ',
                       a.sentences[1 + floor(random() * cardinality(a.sentences))::int],
                       a.sentences[1 + floor(random() * cardinality(a.sentences))::int],
                       a.sentences[1 + floor(random() * cardinality(a.sentences))::int],
                       CASE WHEN random() < 0.7 THEN
                           a.sentences[1 + floor(random() * cardinality(a.sentences))::int] END,
                       CASE WHEN random() < 0.4 THEN
                           a.sentences[1 + floor(random() * cardinality(a.sentences))::int] END,
                       b.sentences[1 + floor(random() * cardinality(b.sentences))::int],
                       CASE WHEN random() < 0.5 THEN
                           b.sentences[1 + floor(random() * cardinality(b.sentences))::int] END,
                       CASE WHEN random() < 0.25 THEN
                           'If you see error E' || (1000 + floor(random() * 9000))::int
                           || ', check the request and retry.' END,
                       CASE WHEN random() < 0.2 THEN
                           'This also applies to '
                           || (%s::text[])[1 + floor(random() * %s)::int] || '.' END
                   ) AS text
            FROM bench_vector v
            JOIN bench_seed a ON a.seed = v.seed_a
            JOIN bench_seed b ON b.seed = v.seed_b
        )
        INSERT INTO kb_chunk (document_id, embedding_model_id, ordinal, heading_path, text,
                              char_start, char_end, token_count, embedding)
        SELECT %s + row_number / {CHUNKS_PER_DOCUMENT}, {int(model.pk)},
               row_number %% {CHUNKS_PER_DOCUMENT},
               regexp_replace(heading_path, '\mE[0-9]{{4}}\M', drawn.code, 'g'),
               regexp_replace(text, '\mE[0-9]{{4}}\M', drawn.code, 'g'),
               0, length(text), length(text) / 4, embedding
        FROM drafted
        CROSS JOIN LATERAL (
            SELECT 'E' || (1000 + floor(random() * 9000))::int AS code WHERE row_number >= 0
        ) AS drawn
        """,
        [identifiers, len(identifiers), first_document],
    )
    if cursor.rowcount != batch:
        raise CommandError(f"inserted {cursor.rowcount} chunks, expected {batch}")


def _index_definition(name: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [name])
        row = cursor.fetchone()
    if row is None:
        raise CommandError(f"index {name} is missing: run the migrations")
    return row[0]


def _search_settings() -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('hnsw.ef_search'), current_setting('hnsw.iterative_scan'), "
            "current_setting('jit'), current_setting('work_mem'), "
            "(SELECT extversion FROM pg_extension WHERE extname = 'vector')"
        )
        ef_search, iterative_scan, jit, work_mem, pgvector = cursor.fetchone()
    return (
        f"pgvector {pgvector}, hnsw.ef_search {ef_search}, iterative_scan {iterative_scan}, "
        f"jit {jit}, work_mem {work_mem}"
    )


class _StatementCapture:
    """An execute wrapper that records the SQL and parameters Django sends."""

    def __init__(self) -> None:
        self.statements: list[tuple[str, object]] = []

    def __call__(
        self, execute: Callable, sql: str, params: object, many: bool, context: dict
    ) -> object:
        self.statements.append((sql, params))
        return execute(sql, params, many, context)


_PLAN_MARKERS = ("Scan", "Sort", "Index Cond", "Order By", "Recheck", "JIT", "Execution Time")
_VECTOR_LITERAL = re.compile(r"'\[[^\]]*\]'")


def _relevant_lines(plan: str) -> list[str]:
    """The scans, sorts and timings (where each leg's time goes), vector literals elided."""
    return [
        _VECTOR_LITERAL.sub("'[...]'", line)
        for line in plan.splitlines()
        if any(marker in line for marker in _PLAN_MARKERS)
    ]


def _cte_milliseconds(plan: str, name: str) -> float | None:
    """Actual total time of a CTE's top node: the line after ``CTE <name>`` in a text plan."""
    match = re.search(rf"CTE {name}\n[^\n]*actual time=[\d.]+\.\.([\d.]+)", plan)
    return float(match.group(1)) if match else None


@contextmanager
def _quiet(logger_name: str) -> Iterator[None]:
    """Silence one logger's INFO lines (one per retrieval) while timing; warnings still show."""
    logger = logging.getLogger(logger_name)
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)
