"""Chunking Markdown documents for embedding.

`chunk_markdown` turns a document body into `ChunkDraft`s that fit an embedding model's window
(`ChunkLimits.for_window`), or raises `ChunkingError` when they cannot; `embedding_text` is
exactly what gets embedded for each of them.
The package is pure Python with no Django imports, so it can be tested and reused on its own.
"""

from __future__ import annotations

from kb.chunking.chunker import (
    CHUNKER_VERSION,
    ChunkDraft,
    ChunkingError,
    ChunkLimits,
    chunk_markdown,
    embedding_text,
)

__all__ = [
    "CHUNKER_VERSION",
    "ChunkDraft",
    "ChunkLimits",
    "ChunkingError",
    "chunk_markdown",
    "embedding_text",
]
