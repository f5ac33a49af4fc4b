"""Indexing: embedding models, chunking and embedding, chunk replacement, background indexing."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import timedelta

import numpy as np
import structlog
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from kb.chunking import CHUNKER_VERSION, ChunkDraft, ChunkLimits, chunk_markdown, embedding_text
from kb.embedders import Embedder, EmbeddingError, embedder_for
from kb.models import (
    Chunk,
    Document,
    DocumentIndexState,
    EmbeddingModel,
    content_hash_of,
    text_hash_of,
    vector_literal,
)

log = structlog.get_logger("groundwork.kb")

# progress(done, total): how long-running work reports itself (a bar in the commands).
Progress = Callable[[int, int], None]


class EmbeddingModelMismatch(RuntimeError):
    """The configured embedder is not the active embedding model: vectors would not compare."""


# --- Embedding models -----------------------------------------------------------------------------


def embedding_model_register(*, embedder: Embedder) -> EmbeddingModel:
    """Record ``embedder``'s vector space (idempotent) and give it its partial HNSW index.

    The first model registered becomes active; later ones start as ``building``. The index is
    built after the row is committed, ``CONCURRENTLY`` when no transaction is open (a live
    database keeps taking writes to kb_chunk meanwhile), and while the model has no chunks yet.
    """
    with transaction.atomic():
        model, created = EmbeddingModel.objects.get_or_create(
            key=embedder.key,
            defaults={
                "provider": embedder.provider,
                "model_name": embedder.model_name,
                "dimensions": embedder.dimensions,
                "max_input_tokens": embedder.max_input_tokens,
            },
        )
        if model.dimensions != embedder.dimensions:
            raise EmbeddingModelMismatch(
                f"{embedder.key} is registered with {model.dimensions} dimensions but the "
                f"embedder produces {embedder.dimensions}"
            )
        if created and not EmbeddingModel.objects.active().exists():
            model.state = EmbeddingModel.State.ACTIVE
            model.activated_at = timezone.now()
            model.save(update_fields=["state", "activated_at"])
    if created or not hnsw_index_exists(model):
        hnsw_index_create(model)
    if created:
        log.info("embedding_model_registered", key=model.key, state=model.state)
    return model


def hnsw_index_exists(model: EmbeddingModel) -> bool:
    """True when the model's HNSW index exists and is valid (a failed concurrent build leaves
    an invalid one behind, which queries ignore)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE c.relname = %s",
            [model.hnsw_index_name],
        )
        row = cursor.fetchone()
    return bool(row and row[0])


def hnsw_index_create(model: EmbeddingModel) -> None:
    # Identifiers and the dimension are integers we control, never user input.
    definition = (
        f"{model.hnsw_index_name} ON kb_chunk "
        f"USING hnsw ((embedding::vector({int(model.dimensions)})) vector_cosine_ops) "
        f"WHERE embedding_model_id = {int(model.pk)}"
    )
    with connection.cursor() as cursor:
        if connection.in_atomic_block:
            # CREATE INDEX refuses to run while deferred foreign-key checks on kb_chunk are
            # queued in this transaction (chunks written earlier in it); run those checks now.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute(f"CREATE INDEX IF NOT EXISTS {definition}")
            return
        # Outside a transaction the build takes no lock that blocks writes to kb_chunk.
        cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {model.hnsw_index_name}")
        cursor.execute(f"CREATE INDEX CONCURRENTLY {definition}")


def embedding_model_for_indexing(*, embedder: Embedder) -> EmbeddingModel:
    """The registered model for ``embedder``; refuses to index into a space search doesn't use."""
    model = embedding_model_register(embedder=embedder)
    if model.state == EmbeddingModel.State.RETIRED:
        raise EmbeddingModelMismatch(
            f"embedding model {model.key} is retired; configure the active model instead"
        )
    return model


# --- Chunking and indexing ------------------------------------------------------------------------


def chunk_limits_for(embedder: Embedder) -> ChunkLimits:
    return ChunkLimits.for_window(embedder.max_input_tokens)


@dataclass(frozen=True)
class DocumentChunks:
    """One document version's chunks, and their vectors once ``chunks_embed`` has run.

    Built outside any transaction: chunking and embedding are slow, and a transaction held open
    across them would block writers for seconds.
    """

    title: str
    content_hash: str
    drafts: list[ChunkDraft]
    vectors: np.ndarray | None = None
    reused: int = 0  # vectors taken from chunks that already had the same embedded text

    def embedding_texts(self) -> list[str]:
        return [embedding_text(self.title, d.heading_path, d.text) for d in self.drafts]

    def text_hashes(self) -> list[str]:
        return [text_hash_of(text) for text in self.embedding_texts()]

    @property
    def embedded(self) -> int:
        """Texts this version sent to the embedder."""
        return len(self.drafts) - self.reused


def document_chunk(*, title: str, body: str, embedder: Embedder) -> DocumentChunks:
    drafts = chunk_markdown(
        title=title,
        body=body,
        limits=chunk_limits_for(embedder),
        count_tokens=embedder.count_tokens,
    )
    return DocumentChunks(
        title=title, content_hash=content_hash_of(title=title, body=body), drafts=drafts
    )


def chunks_embed(
    *,
    documents: Sequence[DocumentChunks],
    embedder: Embedder,
    embedding_model: EmbeddingModel | None = None,
    stored: Mapping[str, np.ndarray] | None = None,
) -> list[DocumentChunks]:
    """Embed several documents' chunks in one call, so batches span documents.

    A text the model has already embedded (same title, heading path and text, in any document)
    reuses the stored vector instead of being embedded again, so an edit or a chunking change
    embeds only the text that is new. The vectors come from ``stored`` (see ``vectors_stored``;
    for a caller that embeds on another thread than the one holding its database connection),
    or are looked up in ``embedding_model``.
    """
    if stored is None:
        stored = (
            vectors_stored(embedding_model=embedding_model, documents=documents)
            if embedding_model is not None
            else {}
        )
    hashes = [text_hash for document in documents for text_hash in document.text_hashes()]
    texts = [text for document in documents for text in document.embedding_texts()]
    missing = [index for index, text_hash in enumerate(hashes) if text_hash not in stored]
    fresh = embedder.embed_documents([texts[index] for index in missing])
    vectors = np.empty((len(texts), embedder.dimensions), dtype=np.float32)
    for index, text_hash in enumerate(hashes):
        if text_hash in stored:
            vectors[index] = stored[text_hash]
    if missing:
        vectors[missing] = fresh
    embedded, offset = [], 0
    for document in documents:
        count = len(document.drafts)
        reused = sum(text_hash in stored for text_hash in hashes[offset : offset + count])
        embedded.append(replace(document, vectors=vectors[offset : offset + count], reused=reused))
        offset += count
    return embedded


def vectors_stored(
    *, embedding_model: EmbeddingModel, documents: Sequence[DocumentChunks]
) -> dict[str, np.ndarray]:
    """The vectors ``embedding_model`` already holds for these documents' texts, by text hash."""
    text_hashes = {text_hash for document in documents for text_hash in document.text_hashes()}
    if not text_hashes:
        return {}
    rows = (
        Chunk.objects.filter(embedding_model=embedding_model, text_hash__in=text_hashes)
        .order_by("text_hash")
        .distinct("text_hash")
        .values_list("text_hash", "embedding")
    )
    return {text_hash: np.asarray(vector, dtype=np.float32) for text_hash, vector in rows}


def chunks_replace(
    *,
    document: Document,
    embedding_model: EmbeddingModel,
    chunks: DocumentChunks,
    document_is_new: bool = False,
) -> int:
    """Swap a document's chunks for one model. Call inside the transaction that saves the
    document, so a search sees either the old version or the new one, never a mix."""
    if chunks.content_hash != document.content_hash:
        raise ValueError(f"these chunks are for another version of {document.path}")
    if chunks.vectors is None:
        raise ValueError(f"the chunks of {document.path} have not been embedded")
    if not document_is_new:
        Chunk.objects.filter(document=document, embedding_model=embedding_model).delete()
    _chunks_insert_and_mark_indexed(document, embedding_model, chunks)
    return len(chunks.drafts)


_CHUNK_ROW = "(%s, %s, %s, %s, %s, %s, %s, %s, %s::vector, %s)"


def _chunks_insert_and_mark_indexed(
    document: Document, embedding_model: EmbeddingModel, chunks: DocumentChunks
) -> None:
    """Insert the chunks and upsert the index state in one statement.

    This runs once per changed document, beside the embedder on the same cores; as ORM calls
    (a bulk insert, then an upsert) it cost two round trips and most of its time in Python.
    """
    assert chunks.vectors is not None
    params: list[object] = []
    for draft, vector, text_hash in zip(
        chunks.drafts, chunks.vectors, chunks.text_hashes(), strict=True
    ):
        params += [
            document.pk,
            embedding_model.pk,
            draft.ordinal,
            draft.heading_path,
            draft.text,
            draft.char_start,
            draft.char_end,
            draft.token_count,
            vector_literal(vector),
            text_hash,
        ]
    insert_chunks = ""
    if chunks.drafts:
        rows = ", ".join([_CHUNK_ROW] * len(chunks.drafts))
        insert_chunks = f"""WITH new_chunks AS (
            INSERT INTO kb_chunk (document_id, embedding_model_id, ordinal, heading_path, text,
                                  char_start, char_end, token_count, embedding, text_hash)
            VALUES {rows}
            RETURNING 1
        ) """
    count = "(SELECT count(*) FROM new_chunks)" if chunks.drafts else "0"
    params += [document.pk, embedding_model.pk, chunks.content_hash, CHUNKER_VERSION]
    with connection.cursor() as cursor:
        cursor.execute(
            f"""{insert_chunks}
            INSERT INTO kb_documentindexstate
                (document_id, embedding_model_id, status, indexed_hash, chunker_version,
                 chunk_count, error, attempts, indexed_at, updated_at)
            VALUES (%s, %s, 'indexed', %s, %s, {count}, '', 0, now(), now())
            ON CONFLICT (document_id, embedding_model_id) DO UPDATE SET
                status = EXCLUDED.status, indexed_hash = EXCLUDED.indexed_hash,
                chunker_version = EXCLUDED.chunker_version, chunk_count = EXCLUDED.chunk_count,
                error = '', indexed_at = EXCLUDED.indexed_at, updated_at = EXCLUDED.updated_at""",
            params,
        )


def index_is_current(state: DocumentIndexState | None, *, content_hash: str) -> bool:
    """The skip key: the same content, chunked by the same chunker, is already indexed."""
    return (
        state is not None
        and state.status == DocumentIndexState.Status.INDEXED
        and state.indexed_hash == content_hash
        and state.chunker_version == CHUNKER_VERSION
    )


# --- Background indexing (saves from admin, imports, the shell) -----------------------------------

# A worker that died mid-task leaves its state "indexing"; after this long the sweep redoes it.
STALE_INDEXING_AFTER = timedelta(minutes=15)
MAX_INDEX_ATTEMPTS = 5


class IndexingFailed(RuntimeError):
    """Indexing a document failed; ``transient`` says whether trying again may succeed."""

    def __init__(self, message: str, *, transient: bool) -> None:
        super().__init__(message)
        self.transient = transient


# Set while code indexes documents into one model itself, in the transaction that saves them
# (kb_sync): a background request for that model would only re-check work that is already done.
# Other models that follow edits (one being built) still get their request; they are looked up
# once for the whole sync, not once per document.
_indexing_inline: ContextVar[tuple[EmbeddingModel, ...] | None] = ContextVar(
    "indexing_inline", default=None
)


@contextmanager
def indexing_inline(embedding_model: EmbeddingModel) -> Iterator[None]:
    others = tuple(EmbeddingModel.objects.indexing().exclude(pk=embedding_model.pk))
    token = _indexing_inline.set(others)
    try:
        yield
    finally:
        _indexing_inline.reset(token)


def document_index_request(*, document: Document) -> bool:
    """Mark ``document`` pending for every model that must follow it, in the caller's
    transaction, and enqueue its indexing once that transaction commits.

    The state row is the durable to-do list: if the broker is down the message is lost, the
    row is not, and ``index_sweep`` enqueues it again. Returns whether anything was pending.
    """
    inline_others = _indexing_inline.get()
    models = EmbeddingModel.objects.indexing() if inline_others is None else inline_others
    now = timezone.now()
    pending = False
    for embedding_model in models:
        state = DocumentIndexState.objects.filter(
            document=document, embedding_model=embedding_model
        ).first()
        if index_is_current(state, content_hash=document.content_hash):
            continue
        DocumentIndexState.objects.update_or_create(
            document=document,
            embedding_model=embedding_model,
            defaults={"status": DocumentIndexState.Status.PENDING, "queued_at": now},
        )
        pending = True
    if pending:
        document_id = document.pk
        transaction.on_commit(lambda: _enqueue_if_pending(document_id))
    return pending


def _enqueue_if_pending(document_id: int) -> None:
    """Send the task unless the committing code already indexed the document (kb_sync does)."""
    still_pending = DocumentIndexState.objects.filter(
        document_id=document_id, status=DocumentIndexState.Status.PENDING
    ).exists()
    if still_pending:
        index_enqueue(document_ids=[document_id])


def index_enqueue(*, document_ids: Sequence[int]) -> int:
    """Publish one indexing task per document; a broker outage is logged, never raised, because
    the pending rows stay and the sweep retries them. Returns how many were sent."""
    from kb.tasks import document_index_task

    sent = 0
    for document_id in document_ids:
        try:
            document_index_task.apply_async(
                args=[document_id],
                retry=True,
                retry_policy={"max_retries": 1, "interval_start": 0.2, "interval_step": 0.5},
            )
            sent += 1
        except Exception as exc:  # kombu raises several types when the broker is unreachable
            log.warning("index_enqueue_failed", document_id=document_id, error=str(exc)[:200])
            break
    return sent


def document_index(*, document_id: int, embedder: Embedder) -> str:
    """Bring one document's chunks up to date for ``embedder``'s model, which must be active or
    being built. Idempotent and versioned: a duplicate or late message finds the index current
    and does nothing; a message for a version that was edited again meanwhile leaves the work
    to the newer message.

    Returns what happened: ``indexed``, ``current``, ``stale`` or ``gone``.
    """
    embedding_model = EmbeddingModel.objects.indexing().filter(key=embedder.key).first()
    if embedding_model is None:
        raise IndexingFailed(
            f"{embedder.key} is neither the active embedding model nor one being built",
            transient=False,
        )
    document = Document.objects.filter(pk=document_id).first()
    if document is None:
        return "gone"
    states = DocumentIndexState.objects.filter(document=document, embedding_model=embedding_model)
    if index_is_current(states.first(), content_hash=document.content_hash):
        return "current"
    states.update(
        status=DocumentIndexState.Status.INDEXING,
        started_at=timezone.now(),
        attempts=F("attempts") + 1,
    )
    started = time.perf_counter()
    try:
        chunks = chunks_embed(
            documents=[document_chunk(title=document.title, body=document.body, embedder=embedder)],
            embedder=embedder,
            embedding_model=embedding_model,
        )[0]
    except EmbeddingError as exc:
        _index_failed(document, embedding_model, f"embedding failed: {exc}")
        raise IndexingFailed(str(exc), transient=True) from exc
    except ValueError as exc:  # the chunker cannot fit this document into the model's window
        _index_failed(document, embedding_model, f"cannot be chunked: {exc}")
        raise IndexingFailed(str(exc), transient=False) from exc
    with transaction.atomic():
        current = Document.objects.select_for_update().filter(pk=document_id).first()
        if current is None:
            return "gone"
        if current.content_hash != chunks.content_hash:
            return "stale"
        count = chunks_replace(document=current, embedding_model=embedding_model, chunks=chunks)
    log.info(
        "document_indexed",
        path=document.path,
        chunks=count,
        ms=round((time.perf_counter() - started) * 1000),
    )
    return "indexed"


def document_index_all_models(*, document_id: int) -> list[str]:
    """Index one document into every model that follows edits: the active one and any being
    built. Returns each model's outcome (see ``document_index``), in model order.

    A model whose embedder cannot even be built (a Voyage model without its key) is recorded
    as failed on the document, with the reason and an attempt counted, so the sweep gives up
    on it after ``MAX_INDEX_ATTEMPTS`` instead of resending it for ever. Raises a transient
    ``IndexingFailed`` after trying every model if any of them may succeed later.
    """
    outcomes: list[str] = []
    transient: IndexingFailed | None = None
    for model in EmbeddingModel.objects.indexing().order_by("pk"):
        try:
            outcomes.append(
                document_index(document_id=document_id, embedder=embedder_for(model.key))
            )
        except EmbeddingError as exc:
            DocumentIndexState.objects.filter(
                document_id=document_id, embedding_model=model
            ).update(
                status=DocumentIndexState.Status.FAILED,
                error=f"no embedder: {exc}"[:2000],
                attempts=F("attempts") + 1,
            )
            log.warning(
                "document_index_failed", document_id=document_id, model=model.key, error=str(exc)
            )
            outcomes.append("failed")
        except IndexingFailed as exc:
            transient = exc if exc.transient else transient
            outcomes.append("failed")
    if transient is not None:
        raise transient
    return outcomes


def _index_failed(document: Document, embedding_model: EmbeddingModel, error: str) -> None:
    DocumentIndexState.objects.filter(document=document, embedding_model=embedding_model).update(
        status=DocumentIndexState.Status.FAILED, error=error[:2000]
    )
    log.warning("document_index_failed", path=document.path, error=error[:200])


def index_sweep(*, older_than: timedelta = timedelta(minutes=2)) -> int:
    """Re-enqueue what a lost message or a dead worker left behind: pending or failed rows not
    touched for ``older_than``, and rows stuck "indexing" past ``STALE_INDEXING_AFTER``."""
    now = timezone.now()
    Status = DocumentIndexState.Status
    due = DocumentIndexState.objects.filter(
        Q(status=Status.PENDING, updated_at__lt=now - older_than)
        | Q(status=Status.FAILED, updated_at__lt=now - older_than, attempts__lt=MAX_INDEX_ATTEMPTS)
        | Q(status=Status.INDEXING, updated_at__lt=now - STALE_INDEXING_AFTER)
    )
    document_ids = sorted(set(due.values_list("document_id", flat=True)))
    if document_ids:
        # Touch the rows so the next sweep waits for these messages instead of resending them.
        due.update(queued_at=now, updated_at=now)
    sent = index_enqueue(document_ids=document_ids)
    if document_ids:
        log.info("index_sweep", due=len(document_ids), sent=sent)
    return sent
