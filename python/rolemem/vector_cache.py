"""A player's event vectors held in memory, so dense recall is a numpy product per turn.

Scanning 20,000 stored FLOAT[384] vectors in SQL costs ~57 ms a query; the same cosines in
numpy take a few ms. An event's vector never changes after it is written (a new description
is a new event with a new id), so the cache only ever loads the events it has not seen yet;
a deleted event's cached vector is harmless: its cosine matches no event in the scoring SQL,
which still decides what is in scope and how cosines count. Bounded (least recently used
players go first); thread-safe.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import duckdb
import numpy as np

_LOAD = """
select event_id, embedding from memory_event_embedding
where event_id in (select unnest(cast($ids as bigint[])))
order by event_id
"""


class _Vectors:
    """Sorted event ids and their unit vectors, row for row."""

    def __init__(self, ids: np.ndarray, matrix: np.ndarray) -> None:
        self.ids, self.matrix = ids, matrix

    def positions(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Row of each id, and which ids have one."""
        rows = np.minimum(np.searchsorted(self.ids, ids), max(len(self.ids) - 1, 0))
        found = self.ids[rows] == ids if len(self.ids) else np.zeros(len(ids), dtype=bool)
        return rows, found


class EventVectorCache:
    """Cosines of a query vector with every reachable event vector of one player."""

    def __init__(self, dim: int, reachable_events: str, max_vectors: int = 262_144) -> None:
        """`reachable_events`: SQL of the events one player's query can reach, with `$agent_id`
        and `$user_id` (the query's own source, so both read the same set)."""
        self.dim, self.max_vectors = dim, max_vectors
        self._reachable_with_vectors = f"""
            select event_id from memory_event_embedding
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
        """`{"event_id": ids, "cosine": cosines}` for the player's events that have vectors."""
        ids = cur.execute(
            self._reachable_with_vectors, {"agent_id": agent_id, "user_id": user_id}
        ).fetchnumpy()["event_id"]
        ids = np.sort(np.asarray(ids, dtype=np.int64))
        vectors = self._vectors(cur, (agent_id, user_id), ids)
        vector = np.asarray(query, dtype=np.float32)
        vector /= np.linalg.norm(vector) or 1.0
        rows, _ = vectors.positions(ids)
        cosines = (vectors.matrix @ vector)[rows] if len(ids) else np.zeros(0, dtype=np.float32)
        return {"event_id": ids, "cosine": cosines.astype(np.float64)}

    def _vectors(
        self, cur: duckdb.DuckDBPyConnection, key: tuple[str, str], ids: np.ndarray
    ) -> _Vectors:
        with self._lock:
            cached = self._players.pop(key, None) or _Vectors(
                np.zeros(0, dtype=np.int64), np.zeros((0, self.dim), dtype=np.float32)
            )
            _, found = cached.positions(ids)
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
        matrix = (
            np.stack(list(loaded["embedding"])).astype(np.float32)
            if len(new_ids)
            else np.zeros((0, self.dim), dtype=np.float32)
        )
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix /= np.where(norms == 0, 1.0, norms)
        ids = np.concatenate([cached.ids, new_ids])
        order = np.argsort(ids, kind="stable")
        return _Vectors(ids[order], np.concatenate([cached.matrix, matrix])[order])


def query_cosines(
    cache: EventVectorCache | None,
    cur: duckdb.DuckDBPyConnection,
    agent_id: str,
    user_id: str,
    query: list[float] | None,
) -> dict[str, np.ndarray]:
    """The cosines a query binds: none without a query vector."""
    if cache is None or query is None:
        return {"event_id": np.zeros(0, dtype=np.int64), "cosine": np.zeros(0)}
    return cache.cosines(cur, agent_id, user_id, query)
