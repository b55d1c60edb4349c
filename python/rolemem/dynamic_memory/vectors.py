"""Vectors of events and queries: the embedder's calls, checked, and context vectors filled in
for events stored without them."""

from __future__ import annotations

import threading
from collections.abc import Callable
from importlib import resources
from typing import Any

from ..schema.memory import VECTOR_COLUMNS, memory_table
from ..sql.project import write_sql
from ..text.embedders import EmbeddingError, checked
from .base import Context
from .sql import _EMBED_BATCH, _MISSING_CONTEXT_SQL


class Vectors:
    """Embedding: documents, queries, reference sentences, missing context vectors."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self._reference: dict[str, Any] = {}  # reference sentence vectors by language
        self._reference_lock = threading.Lock()

    def embedded(self, texts: list[str], what: str = "documents") -> list[list[float]]:
        """The embedder's vectors of `texts`, checked (each of `dim` finite floats)."""
        embedder = self.context.embedder
        assert embedder is not None
        return checked(embedder.embed_documents(texts), embedder.dim, f"embedder ({what})")

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """Query vectors for several texts in one embedder call where it can (e5 embeds a
        batch for much less than one call per text)."""
        embedder = self.context.embedder
        assert embedder is not None
        many = getattr(embedder, "embed_queries", None)
        vectors = many(texts) if many is not None else [embedder.embed_query(t) for t in texts]
        if len(vectors) != len(texts):
            raise EmbeddingError(f"embedder (query): {len(vectors)} vectors for {len(texts)} texts")
        return checked(vectors, embedder.dim, "embedder (query)")

    def fill_context_vectors(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed the context texts of every stored event that has a vector but lacks context
        vectors (written before them, or by a game writing rows itself), by the same model as
        new events; one transaction per embedder batch, so an interrupted run keeps what it
        wrote. Returns how many events got them."""
        self.context.writable()
        store = self.context.store
        if self.context.embedder is None:
            return 0
        missing = store.run(_MISSING_CONTEXT_SQL(store.name), {})
        columns = VECTOR_COLUMNS[1:]
        for start in range(0, len(missing), _EMBED_BATCH):
            chunk = missing[start : start + _EMBED_BATCH]
            vectors = self.embedded([text for _, _, *row_texts in chunk for text in row_texts])
            with store.transaction() as cur:
                # one statement per event: a list of vectors is one flat array on PostgreSQL
                for index, (event_id, scope, *_) in enumerate(chunk):
                    filled = vectors[index * len(columns) : (index + 1) * len(columns)]
                    home = memory_table("memory_event_embedding", scope)
                    cur.execute(
                        write_sql("fill_event_vectors", columns, home, engine=store.name),
                        {"event_id": event_id, **dict(zip(columns, filled, strict=True))},
                    )
            if progress is not None:
                progress(start + len(chunk), len(missing))
        return len(missing)

    def reference_stats(self, text: str, vector: list[float]) -> dict[str, float | int]:
        """The count, sum and sum of squares of the query's cosines with fixed unrelated
        sentences in its language: the baseline a memory found by meaning alone must clearly
        exceed, even in a store of a few memories (cross-language cosines sit lower and would
        blur it). Summed here once, so every engine and the Python scoring pool the same
        doubles (QUERY_FIELDS)."""
        import numpy as np

        language = "zh" if any("\u4e00" <= char <= "\u9fff" for char in text) else "en"
        with self._reference_lock:
            matrix = self._reference.get(language)
            if matrix is None:
                path = resources.files("rolemem") / f"data/reference_sentences.{language}.txt"
                sentences = [line for line in path.read_text("utf-8").splitlines() if line.strip()]
                matrix = np.array(self.embedded(sentences, "reference sentences"))
                matrix = self._reference[language] = matrix / np.linalg.norm(
                    matrix, axis=1, keepdims=True
                )
        query = np.asarray(vector) / (np.linalg.norm(vector) or 1.0)
        cosines = matrix @ query
        return {
            "reference_cosine_count": len(cosines),
            "reference_cosine_sum": float(cosines.sum()),
            "reference_cosine_square_sum": float((cosines * cosines).sum()),
        }
