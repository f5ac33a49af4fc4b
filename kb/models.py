"""The content: documents, their chunks, the embedding models, and per-model index state."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.core.exceptions import ValidationError
from django.db import connections, models
from django.db.models import F, Func, Q
from django.db.models.expressions import CombinedExpression
from pgvector.django import VectorField
from simple_history.models import HistoricalRecords

from kb import document_choices
from kb.chunking import CHUNKER_VERSION
from kb.parsing import document_path_problem


def vector_literal(vector: Sequence[float]) -> str:
    """A vector as pgvector text. Nine significant digits round-trip a float32 exactly; pgvector's
    own formatting writes 17, which only costs time to send and parse."""
    values = np.asarray(vector, dtype=np.float32).tolist()
    return "[" + ",".join(format(value, ".9g") for value in values) + "]"


def content_hash_of(*, title: str, body: str) -> str:
    """Hash of what the chunks are built from: a change here means re-chunk and re-embed."""
    return hashlib.sha256(f"{title}\x00{body}".encode()).hexdigest()


def document_path_validator(path: str) -> None:
    """The admin form's check of a path: the same rule an upload, a zip entry and a folder sync
    apply (``document_path_problem``), so no way in accepts a path another refuses."""
    problem = document_path_problem(path)
    if problem is not None:
        raise ValidationError(f"invalid document path: {problem}", code="invalid_path")


class EmbeddingModelQuerySet(models.QuerySet["EmbeddingModel"]):
    def active(self) -> EmbeddingModelQuerySet:
        return self.filter(state=EmbeddingModel.State.ACTIVE)

    def indexing(self) -> EmbeddingModelQuerySet:
        """Models whose chunks must follow every edit: the one serving and one being built."""
        return self.filter(state__in=[EmbeddingModel.State.ACTIVE, EmbeddingModel.State.BUILDING])


class EmbeddingModel(models.Model):
    """One embedding model's vector space. Vectors of different models are never compared."""

    class State(models.TextChoices):
        BUILDING = "building", "Building"
        ACTIVE = "active", "Active"
        RETIRED = "retired", "Retired"

    key = models.CharField(max_length=200, unique=True, help_text="e.g. local/all-MiniLM-L6-v2")
    provider = models.CharField(max_length=50)
    model_name = models.CharField(max_length=200)
    dimensions = models.PositiveIntegerField()
    max_input_tokens = models.PositiveIntegerField(
        help_text="Word pieces the model reads per input, special tokens included."
    )
    state = models.CharField(max_length=20, choices=State.choices, default=State.BUILDING)
    created_at = models.DateTimeField(auto_now_add=True)
    activated_at = models.DateTimeField(null=True, blank=True)
    retired_at = models.DateTimeField(null=True, blank=True)

    objects = EmbeddingModelQuerySet.as_manager()

    class Meta:
        permissions = [("manage_embedding_models", "Can register, activate and drop models")]
        constraints = [
            models.UniqueConstraint(
                fields=["state"], condition=Q(state="active"), name="kb_one_active_embedding_model"
            ),
            models.CheckConstraint(
                condition=Q(dimensions__gt=0, dimensions__lte=16000), name="kb_dimensions_in_range"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.state})"

    @property
    def hnsw_index_name(self) -> str:
        return f"kb_chunk_embedding_hnsw_m{self.pk}"


# Bookkeeping of the sync, not content: kept out of the history a steward reads and reverts.
PROVENANCE_FIELDS = (
    "origin",
    "sync_folder",
    "synced_file_hash",
    "synced_row_hash",
    "synced_status",
    "synced_superseded_by",
)


# A current page: published and superseded by nothing, the pages retrieval answers from and the
# ones that may be named as a successor. The ORM form of the rule (``DocumentQuerySet.current``,
# ``.visible_to``) and the partial index ``kb_document_searchable`` are built on it;
# ``kb.visibility`` holds its SQL form (the module's docstring says who uses which).
CURRENT_DOCUMENT = Q(status=document_choices.Status.PUBLISHED, superseded_by__isnull=True)


class DocumentQuerySet(models.QuerySet["Document"]):
    def published(self) -> DocumentQuerySet:
        return self.filter(status=Document.Status.PUBLISHED)

    def current(self) -> DocumentQuerySet:
        """Published and superseded by nothing (``CURRENT_DOCUMENT``)."""
        return self.filter(CURRENT_DOCUMENT)

    def visible_to(self, audiences: Sequence[str]) -> DocumentQuerySet:
        """The current pages of ``audiences``: what a reader of those audiences is answered
        from (``kb.visibility.visible_document_sql`` is the same rule in SQL)."""
        return self.current().filter(audience__in=list(audiences))


class Document(models.Model):
    """A help-center page. ``path`` is its citation id, e.g. ``policies/refunds.md``."""

    # Defined apart so that the front-matter parser, which imports no model, shares them.
    Audience = document_choices.Audience
    Status = document_choices.Status

    class Origin(models.TextChoices):
        FOLDER = "folder", "Folder sync"
        IMPORT = "import", "Import"
        ADMIN = "admin", "Admin"
        # Rows that existed before provenance was recorded (migration 0007).
        UNKNOWN = "unknown", "Unknown (before provenance)"

    path = models.CharField(max_length=500, unique=True, validators=[document_path_validator])
    title = models.CharField(max_length=500)
    category = models.CharField(max_length=200, blank=True, default="")
    audience = models.CharField(max_length=20, choices=Audience.choices, default=Audience.PUBLIC)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PUBLISHED)
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )
    updated_on = models.DateField(
        null=True,
        blank=True,
        help_text="Shown to the model so the newer page wins a contradiction.",
    )
    review_by = models.DateField(null=True, blank=True)
    body = models.TextField(help_text="Markdown.")
    content_hash = models.CharField(
        max_length=64, help_text="sha256 of the title and body: what the chunks are built from."
    )
    # What the source's static-site tool said that has no field here (slug, weight, tags,
    # unknown keys), as written; kept by every sync and shown read-only in admin.
    metadata = models.JSONField(default=dict, blank=True)
    # Earlier addresses (front-matter `aliases`, `redirect_from`) as /docs/ paths: they redirect.
    aliases = ArrayField(models.CharField(max_length=1000), default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    modified_at = models.DateTimeField(auto_now=True)
    # Provenance: where the row came from and, for a folder sync, what the sync last wrote, so a
    # later sync can tell "the file changed" from "someone changed the database copy".
    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.ADMIN)
    sync_folder = models.CharField(
        max_length=1000, blank=True, default="", help_text="The folder a folder sync read it from."
    )
    synced_file_hash = models.CharField(
        max_length=64, blank=True, default="", help_text="sha256 of the file last synced."
    )
    synced_row_hash = models.CharField(
        max_length=64,
        blank=True,
        default="",
        help_text="row_hash() as the last sync left the row; any other value means an edit since.",
    )
    synced_status = models.CharField(max_length=20, blank=True, default="")
    synced_superseded_by = models.CharField(
        max_length=500, blank=True, default="", help_text="The successor path the file named."
    )

    history = HistoricalRecords(excluded_fields=["content_hash", "modified_at", *PROVENANCE_FIELDS])
    objects = DocumentQuerySet.as_manager()

    class Meta:
        ordering = ["path"]
        indexes = [
            models.Index(fields=["status", "audience"], name="kb_document_status_audience"),
            # Retrieval checks every candidate chunk's page against this (published, current,
            # the asker's audience): a lookup here reads only the index, where the table's
            # rows carry whole bodies (at 100k chunks a hash join on the table cost ~4 ms).
            models.Index(
                fields=["id"],
                include=["audience"],
                condition=CURRENT_DOCUMENT,
                name="kb_document_searchable",
            ),
            GinIndex(fields=["aliases"], name="kb_document_aliases_gin"),
        ]
        permissions = [("retire_document", "Can retire, supersede and restore documents")]

    def __str__(self) -> str:
        return self.path

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Keep ``content_hash`` true to the text. Saving requests the row's indexing (the
        post-save signal, ``kb.signals``) in the caller's transaction: save through a service
        (``kb.services.document_save``), which opens one, so the row and its pending index
        state commit together."""
        self.content_hash = content_hash_of(title=self.title, body=self.body)
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and {"title", "body"} & set(update_fields):
            kwargs["update_fields"] = {*update_fields, "content_hash"}
        super().save(*args, **kwargs)

    def row_hash(self) -> str:
        """Hash of everything a person can change on the row (path, text, metadata, lifecycle):
        equal to ``synced_row_hash`` while no one has changed it since the last sync. Read from a
        row as saved: ``content_hash`` stands for the title and body, so the body may be deferred.
        (Migration 0010 holds a copy of this: a change here needs a migration like it.)"""
        fields = (
            self.path,
            self.content_hash,
            self.category,
            self.audience,
            self.status,
            str(self.superseded_by_id or ""),
            str(self.updated_on or ""),
            str(self.review_by or ""),
        )
        return hashlib.sha256("\x00".join(fields).encode()).hexdigest()


class Category(models.Model):
    """The name readers see for a category: documents carry a short value (``getting-started``,
    ``api``) and staff name it here ("Getting started", "API"). A folder sync adds names from
    the folder's ``categories.json`` but never changes one that exists."""

    slug = models.CharField(
        max_length=200,
        unique=True,
        help_text="The category as documents give it (their front matter's 'category').",
    )
    label = models.CharField(max_length=200, help_text="What readers see, e.g. Getting started.")

    class Meta:
        ordering = ["label"]
        verbose_name_plural = "categories"

    def __str__(self) -> str:
        return self.label


class ConnectorState(models.Model):
    """Where one connector's sync of one upstream help center stands (``kb.connectors``).

    ``cursor`` is the upstream updated-at mark the last complete run reached: the next run asks
    only for what changed since. ``checkpoint`` is empty between runs; during one it holds the
    page to resume from and what the run has seen so far, saved after each page is written, so
    a run that dies halfway is finished by the next one from there instead of starting over."""

    connector = models.CharField(max_length=50, help_text="e.g. zendesk, intercom")
    source = models.CharField(
        max_length=1000,
        unique=True,
        help_text="The upstream, as its documents' sync_folder names it: zendesk:acme.",
    )
    cursor = models.DateTimeField(null=True, blank=True)
    checkpoint = models.JSONField(default=dict, blank=True)
    run_started_at = models.DateTimeField(null=True, blank=True)
    run_finished_at = models.DateTimeField(null=True, blank=True)
    last_summary = models.TextField(blank=True, default="")
    last_error = models.TextField(blank=True, default="")

    class Meta:
        verbose_name = "connector state"

    def __str__(self) -> str:
        return self.source


class WebPageValidators(models.Model):
    """What a website's page last answered (``kb.connectors.website``): its ``ETag`` and
    ``Last-Modified``, sent back as ``If-None-Match`` / ``If-Modified-Since`` so an unchanged
    page answers 304 and is neither read in full nor re-embedded. Saved only once the page's
    document holds what was read, so a page whose write failed or conflicted is read again."""

    source = models.CharField(max_length=1000, help_text="The connector's source: website:host.")
    url = models.CharField(max_length=2000)
    etag = models.CharField(max_length=1000, blank=True, default="")
    last_modified = models.CharField(max_length=100, blank=True, default="")
    # The page's links on our origin, for a crawl (no sitemap) to follow past a 304.
    links = models.JSONField(default=list, blank=True)
    checked_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "web page validators"
        verbose_name_plural = "web page validators"
        constraints = [
            models.UniqueConstraint(fields=["source", "url"], name="web_page_validators_unique")
        ]

    def __str__(self) -> str:
        return self.url


def _chunk_tsvector() -> CombinedExpression:
    """The keyword index's view of a chunk: its heading path weighted A, its text weighted B."""
    return SearchVector("heading_path", weight="A", config="english") + SearchVector(
        "text", weight="B", config="english"
    )


def text_hash_of(text: str) -> str:
    """Hash of exactly what an embedder reads for a chunk: equal hashes mean a reusable vector."""
    return hashlib.sha256(text.encode()).hexdigest()


class Chunk(models.Model):
    """A retrievable passage of one document, embedded by one embedding model.

    ``embedding`` is an untyped ``vector`` column shared by every model; each model gets a
    partial HNSW index on ``embedding::vector(dimensions)`` (see ``kb.services``), so a query
    must filter on ``embedding_model_id`` and cast to that model's dimension to use it.
    """

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    embedding_model = models.ForeignKey(
        EmbeddingModel, on_delete=models.CASCADE, related_name="chunks"
    )
    ordinal = models.PositiveIntegerField()
    heading_path = models.CharField(max_length=1000, blank=True, default="")
    text = models.TextField()
    char_start = models.PositiveIntegerField()
    char_end = models.PositiveIntegerField()
    token_count = models.PositiveIntegerField()
    embedding = VectorField()
    text_hash = models.CharField(
        max_length=64,
        blank=True,
        default="",
        db_default="",
        help_text="sha256 of the embedded text; a new chunk with the same text reuses the vector.",
    )
    tsv = models.GeneratedField(
        expression=_chunk_tsvector(), output_field=SearchVectorField(), db_persist=True
    )
    # The chunk's length in index terms (every position of every lexeme of ``tsv``), for BM25's
    # length normalisation. A generated column may not read another one, so it derives from
    # the same expression; ``kb_tsvector_length`` is created by migration 0005.
    term_count = models.GeneratedField(
        expression=Func(
            _chunk_tsvector(), function="kb_tsvector_length", output_field=models.IntegerField()
        ),
        output_field=models.IntegerField(),
        db_persist=True,
    )

    class Meta:
        ordering = ["document_id", "ordinal"]
        constraints = [
            models.UniqueConstraint(
                fields=["document", "embedding_model", "ordinal"], name="kb_chunk_unique_ordinal"
            ),
            models.CheckConstraint(
                condition=Q(char_end__gte=models.F("char_start")), name="kb_chunk_offsets_ordered"
            ),
        ]
        indexes = [
            GinIndex(fields=["tsv"], name="kb_chunk_tsv_gin"),
            models.Index(fields=["embedding_model", "document"], name="kb_chunk_model_document"),
            models.Index(fields=["embedding_model", "text_hash"], name="kb_chunk_model_text_hash"),
        ]

    def __str__(self) -> str:
        return f"{self.document_id}#{self.ordinal}"


class IndexStatistic(models.Model):
    """Per embedding model, what BM25 needs of the whole keyword index: how many chunks there
    are and how many index terms they hold (their mean is the average chunk length).

    Kept by statement triggers on kb_chunk (migration 0005), in the transaction that writes or
    deletes the chunks, so every path (indexing, sync, a deleted document, a dropped model)
    keeps it true and a save costs time proportional to its own chunks, never to the corpus.
    Its row is updated before any term row, so it also orders concurrent writers of one model:
    the second waits here, holding no term rows, and two writers can never deadlock.
    """

    embedding_model = models.OneToOneField(
        EmbeddingModel, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    chunk_count = models.BigIntegerField(default=0)
    term_count = models.BigIntegerField(default=0)

    class Meta:
        db_table = "kb_index_stat"

    def __str__(self) -> str:
        return f"{self.embedding_model_id}: {self.chunk_count} chunks"


class TermStatistic(models.Model):
    """Per embedding model and lexeme, how many chunks contain it: BM25's document frequency."""

    embedding_model = models.ForeignKey(
        EmbeddingModel, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    lexeme = models.TextField()
    chunk_count = models.IntegerField(default=0)

    class Meta:
        db_table = "kb_term_stat"
        constraints = [
            models.UniqueConstraint(
                fields=["embedding_model", "lexeme"], name="kb_term_stat_model_lexeme"
            )
        ]

    def __str__(self) -> str:
        return f"{self.embedding_model_id}:{self.lexeme} in {self.chunk_count}"


class PageVector(models.Model):
    """Per document and embedding model, the mean of the document's chunk vectors: what the
    hybrid search compares a question with for the page's topic (``FusionWeights.page_topic``).

    Kept by statement triggers on kb_chunk (migration 0011) in the transaction that inserts or
    deletes the chunks, like the BM25 statistics, so it is never stale and a save recomputes only
    its own page. Reading it is one row per candidate page where averaging every chunk of the
    candidates' pages at each question read ~10 vectors per page (~5 ms of a 13 ms statement at
    100k chunks).
    """

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    embedding_model = models.ForeignKey(
        EmbeddingModel, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    embedding = VectorField()
    chunk_count = models.IntegerField()

    class Meta:
        db_table = "kb_page_vector"
        constraints = [
            models.UniqueConstraint(
                fields=["embedding_model", "document"], name="kb_page_vector_model_document"
            )
        ]

    def __str__(self) -> str:
        return f"{self.document_id}: mean of {self.chunk_count} chunks"


# How much of a failure's message a state keeps: enough for the admin page to say what happened.
INDEX_ERROR_MAX_CHARS = 2000


class DocumentIndexStateQuerySet(models.QuerySet["DocumentIndexState"]):
    def current(self) -> DocumentIndexStateQuerySet:
        """States whose chunks are their document's text as it is now, cut by this chunker: the
        skip key of every indexing path. A new chunker version makes every state not current."""
        return self.filter(
            status=DocumentIndexState.Status.INDEXED,
            indexed_hash=F("document__content_hash"),
            chunker_version=CHUNKER_VERSION,
        )

    def current_in(self, embedding_model: EmbeddingModel) -> DocumentIndexStateQuerySet:
        return self.filter(embedding_model=embedding_model).current()

    def mark_failed(
        self,
        *,
        document_id: int,
        embedding_model: EmbeddingModel,
        error: str,
        count_attempt: bool = False,
    ) -> None:
        """Record that indexing a document into a model failed, and why: how every path writes
        a failure, which the admin shows and the sweep retries up to its attempt limit.

        ``count_attempt`` counts an attempt for a failure before indexing began (which counts
        its own). A document with no state in the model gets one; a deleted one is left gone.
        ``updated_at`` is left alone, so the sweep's wait still runs from when it was queued.
        """
        with connections[self.db].cursor() as cursor:
            cursor.execute(
                """
                INSERT INTO kb_documentindexstate
                    (document_id, embedding_model_id, status, indexed_hash, chunker_version,
                     chunk_count, error, attempts, updated_at)
                SELECT id, %s, 'failed', '', '', 0, %s, %s, now() FROM kb_document WHERE id = %s
                ON CONFLICT (document_id, embedding_model_id) DO UPDATE SET
                    status = 'failed', error = EXCLUDED.error,
                    attempts = kb_documentindexstate.attempts + EXCLUDED.attempts
                """,
                [
                    embedding_model.pk,
                    error[:INDEX_ERROR_MAX_CHARS],
                    int(count_attempt),
                    document_id,
                ],
            )


class DocumentIndexState(models.Model):
    """The durable to-do list: where one document stands in one embedding model's index."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        INDEXING = "indexing", "Indexing"
        INDEXED = "indexed", "Indexed"
        FAILED = "failed", "Failed"

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="index_states")
    embedding_model = models.ForeignKey(
        EmbeddingModel, on_delete=models.CASCADE, related_name="index_states"
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    indexed_hash = models.CharField(
        max_length=64, blank=True, default="", help_text="content_hash of the indexed chunks."
    )
    chunker_version = models.CharField(max_length=20, blank=True, default="")
    chunk_count = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    attempts = models.PositiveIntegerField(default=0)
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    indexed_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = DocumentIndexStateQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["document", "embedding_model"], name="kb_index_state_unique"
            )
        ]
        indexes = [models.Index(fields=["status", "updated_at"], name="kb_index_state_status")]

    def __str__(self) -> str:
        return f"{self.document_id}@{self.embedding_model_id}: {self.status}"


# A page's test questions live with them (kb/test_questions/); imported here so Django finds them.
from kb.test_questions.models import TestQuestion, TestQuestionRun  # noqa: E402, F401
