"""A player's event vectors held in memory, so dense recall is a numpy product per turn.

Scanning 20,000 stored FLOAT[384] vectors in SQL costs ~57 ms a query; the same cosines in
numpy take a few ms. An event's vectors (its description's and its context text's) never
change after they are written (a new description is a new event with a new id; a context
vector missing from an older store is filled in once, and then reloaded), so the cache only
loads the events it has not seen yet; a deleted event's cached vectors are harmless:
its cosines match no event in the scoring SQL, which still decides what is in scope and how
cosines count. Bounded by event count (two 384-float vectors each: the default 131,072 events
is about 400 MB; least recently used players go first); thread-safe.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import duckdb
import numpy as np

# an event stored without a context vector (written before them) has its own vector as its
# context vector until maintenance fills it in
_LOAD = """
select
    event_id,
    embedding,
    coalesce(context_embedding, embedding) as context_embedding,
    context_embedding is not null as has_context
from memory_event_embedding
where event_id in (select unnest(cast($ids as bigint[])))
order by event_id
"""


class _Vectors:
    """Sorted event ids and their unit vectors (description, context text), row for row, and
    whether the context vector was stored (else it stands in for the description's)."""

    def __init__(
        self, ids: np.ndarray, matrix: np.ndarray, context: np.ndarray, has_context: np.ndarray
    ) -> None:
        self.ids, self.matrix, self.context, self.has_context = ids, matrix, context, has_context

    def without(self, ids: np.ndarray) -> _Vectors:
        keep = ~np.isin(self.ids, ids)
        return _Vectors(
            self.ids[keep], self.matrix[keep], self.context[keep], self.has_context[keep]
        )

    def positions(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Row of each id, and which ids have one."""
        rows = np.minimum(np.searchsorted(self.ids, ids), max(len(self.ids) - 1, 0))
        found = self.ids[rows] == ids if len(self.ids) else np.zeros(len(ids), dtype=bool)
        return rows, found


class EventVectorCache:
    """Cosines of a query vector with every reachable event vector of one player."""

    def __init__(self, dim: int, reachable_events: str, max_vectors: int = 131_072) -> None:
        """`reachable_events`: SQL of the events one player's query can reach, with `$agent_id`
        and `$user_id` (the query's own source, so both read the same set)."""
        self.dim, self.max_vectors = dim, max_vectors
        self._reachable_with_vectors = f"""
            select event_id, context_embedding is not null as has_context
            from memory_event_embedding
            where event_id in (select id from ({reachable_events}))
        """
        self._players: OrderedDict[tuple[str, str], _Vectors] = OrderedDict()
        self._lock = threading.Lock()

    def cosines(
        self,
        cur: duckdb.DuckDBPyConnection,
        agent_id: str,
        user_id: str,
        query: list[float],
    ) -> dict[str, np.ndarray]:
        """`{"event_id": ids, "cosine": …, "context_cosine": …}` for the player's events that
        have vectors."""
        reachable = cur.execute(
            self._reachable_with_vectors, {"agent_id": agent_id, "user_id": user_id}
        ).fetchnumpy()
        order = np.argsort(np.asarray(reachable["event_id"], dtype=np.int64))
        ids = np.asarray(reachable["event_id"], dtype=np.int64)[order]
        has_context = np.asarray(reachable["has_context"], dtype=bool)[order]
        vectors = self._vectors(cur, (agent_id, user_id), ids, has_context)
        vector = np.asarray(query, dtype=np.float32)
        vector /= np.linalg.norm(vector) or 1.0
        rows, _ = vectors.positions(ids)
        if not len(ids):
            return _no_cosines()
        return {
            "event_id": ids,
            "cosine": (vectors.matrix @ vector)[rows].astype(np.float64),
            "context_cosine": (vectors.context @ vector)[rows].astype(np.float64),
        }

    def _vectors(
        self,
        cur: duckdb.DuckDBPyConnection,
        key: tuple[str, str],
        ids: np.ndarray,
        has_context: np.ndarray,
    ) -> _Vectors:
        with self._lock:
            empty = np.zeros((0, self.dim), dtype=np.float32)
            cached = self._players.pop(key, None) or _Vectors(
                np.zeros(0, dtype=np.int64), empty, empty, np.zeros(0, dtype=bool)
            )
            rows, found = cached.positions(ids)
            # a context vector filled in since it was loaded (the only vector that changes)
            filled = found & has_context & ~cached.has_context[rows] if len(cached.ids) else found
            if filled.any():
                cached, found = cached.without(ids[filled]), found & ~filled
            if not found.all():
                cached = self._merged(cur, cached, ids[~found])
            self._players[key] = cached  # most recently used last
            total = sum(len(v.ids) for v in self._players.values())
            while total > self.max_vectors and len(self._players) > 1:
                _, evicted = self._players.popitem(last=False)
                total -= len(evicted.ids)
            return cached

    def _merged(
        self, cur: duckdb.DuckDBPyConnection, cached: _Vectors, missing: np.ndarray
    ) -> _Vectors:
        loaded = cur.execute(_LOAD, {"ids": missing.tolist()}).fetchnumpy()
        new_ids = np.asarray(loaded["event_id"], dtype=np.int64)
        ids = np.concatenate([cached.ids, new_ids])
        order = np.argsort(ids, kind="stable")
        return _Vectors(
            ids[order],
            np.concatenate([cached.matrix, self._unit(loaded["embedding"])])[order],
            np.concatenate([cached.context, self._unit(loaded["context_embedding"])])[order],
            np.concatenate([cached.has_context, np.asarray(loaded["has_context"], dtype=bool)])[
                order
            ],
        )

    def _unit(self, column: np.ndarray) -> np.ndarray:
        if not len(column):
            return np.zeros((0, self.dim), dtype=np.float32)
        matrix = np.stack(list(column)).astype(np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix /= np.where(norms == 0, 1.0, norms)
        return matrix


def _no_cosines() -> dict[str, np.ndarray]:
    return {
        "event_id": np.zeros(0, dtype=np.int64),
        "cosine": np.zeros(0),
        "context_cosine": np.zeros(0),
    }


def query_cosines(
    cache: EventVectorCache | None,
    cur: duckdb.DuckDBPyConnection,
    agent_id: str,
    user_id: str,
    query: list[float] | None,
) -> dict[str, np.ndarray]:
    """The cosines a query binds: none without a query vector."""
    if cache is None or query is None:
        return _no_cosines()
    return cache.cosines(cur, agent_id, user_id, query)
