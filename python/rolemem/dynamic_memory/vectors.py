"""Vectors of events and queries: the embedder's calls, checked, and context vectors filled in
for events stored without them."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

from ..schema.memory import SCOPES, VECTOR_COLUMNS, memory_table
from ..sql.project import write_sql
from ..text.embedders import checked
from .base import _Base, _tracked
from .sql import _EMBED_BATCH, _MISSING_CONTEXT_SQL


class _Vectors(_Base):
    """Embedding: documents, reference sentences, missing context vectors."""

    def _embedded(self, texts: list[str], what: str = "documents") -> list[list[float]]:
        """The embedder's vectors of `texts`, checked (each of `dim` finite floats)."""
        assert self.embedder is not None
        return checked(
            self.embedder.embed_documents(texts), self.embedder.dim, f"embedder ({what})"
        )

    @_tracked
    def fill_context_vectors(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed the context texts of every stored event that has a vector but lacks context
        vectors (written before them, or by a game writing rows itself), by the same model as
        new events; one transaction per embedder batch, so an interrupted run keeps what it
        wrote. Returns how many events got them."""
        self._writable()
        if self.embedder is None:
            return 0
        missing = self._store.run(_MISSING_CONTEXT_SQL(self._store.name), {})
        columns = VECTOR_COLUMNS[1:]
        # one statement per event: a list of vectors is one flat array on PostgreSQL
        fill = {
            scope: write_sql(
                "fill_event_vectors",
                columns,
                memory_table("memory_event_embedding", scope),
                engine=self._store.name,
            )
            for scope in SCOPES
        }
        for start in range(0, len(missing), _EMBED_BATCH):
            chunk = missing[start : start + _EMBED_BATCH]
            vectors = self._embedded([text for _, _, *row_texts in chunk for text in row_texts])
            with self._store.transaction() as cur:
                for index, (event_id, scope, *_) in enumerate(chunk):
                    filled = vectors[index * len(columns) : (index + 1) * len(columns)]
                    cur.execute(
                        fill[scope],
                        {"event_id": event_id, **dict(zip(columns, filled, strict=True))},
                    )
            if progress is not None:
                progress(start + len(chunk), len(missing))
        return len(missing)

    def _reference_cosines(self, text: str, vector: list[float]) -> list[float]:
        """Cosines of the query with fixed unrelated sentences in its language: the baseline a
        memory found by meaning alone must clearly exceed, even in a store of a few memories
        (cross-language cosines sit lower and would blur it)."""
        import numpy as np

        assert self.embedder is not None
        language = "zh" if any("\u4e00" <= char <= "\u9fff" for char in text) else "en"
        with self._reference_lock:
            matrix = self._reference.get(language)
            if matrix is None:
                sentences = [
                    line
                    for line in resources.files("rolemem")
                    .joinpath(f"data/reference_sentences.{language}.txt")
                    .read_text("utf-8")
                    .splitlines()
                    if line.strip()
                ]
                matrix = np.array(self._embedded(sentences, "reference sentences"))
                matrix = self._reference[language] = matrix / np.linalg.norm(
                    matrix, axis=1, keepdims=True
                )
        query = np.asarray(vector) / (np.linalg.norm(vector) or 1.0)
        return [float(c) for c in matrix @ query]
