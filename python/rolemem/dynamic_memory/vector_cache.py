"""A player's event vectors held in memory, so dense recall is a numpy product per turn
(20,000 stored FLOAT[384] vectors scanned in SQL cost ~57 ms a query, a few ms in numpy).

An event's vectors never change once written (a new description is a new event; missing
context vectors are filled in once, then reloaded) and are only written with their event, so
only unseen events are loaded and those found with none are noted; a deleted event's cached
vectors match no event in the scoring SQL, which still decides scope and how cosines count.
Without the caller's read of which events have vectors (a lone recall's scope read), those
held without context vectors are read again each recall until maintenance fills them in.
Bounded by events held (three 384-float vectors each: the default 87,381 is about 400 MB; least
recently used players first); thread-safe."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..schema.memory import VECTOR_COLUMNS
from ..sql.project import render_macro
from .reachable import CONTEXT_COLUMNS, Fetch, has_context, read_reachable
from .sql import COSINE_NAMES, STAT_NAMES, with_official

_LOAD = with_official(
    "int_memory_event_embeddings_with_official",
    render_macro("event_vectors_by_id", CONTEXT_COLUMNS, has_context()),
)


class _Vectors(NamedTuple):
    """Sorted event ids, their unit vectors (one matrix per VECTOR_COLUMNS column) row for
    row, and whether the context vectors were stored (else the description's stands in); and
    the ids looked for and found with no vectors (a vectors row is only ever written with its
    event: store.Events._insert_events)."""

    ids: np.ndarray
    matrices: tuple[np.ndarray, ...]
    has_context: np.ndarray
    without_vectors: frozenset[int] = frozenset()

    def without(self, ids: np.ndarray) -> _Vectors:
        keep = ~np.isin(self.ids, ids)
        return self._replace(
            ids=self.ids[keep],
            matrices=tuple(m[keep] for m in self.matrices),
            has_context=self.has_context[keep],
        )

    def positions(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Row of each id, and which ids have one."""
        rows = np.minimum(np.searchsorted(self.ids, ids), max(len(self.ids) - 1, 0))
        found = self.ids[rows] == ids if len(self.ids) else np.zeros(len(ids), dtype=bool)
        return rows, found

    def size(self) -> int:
        return len(self.ids) + len(self.without_vectors)


class EventVectorCache:
    """Cosines of a query vector with every reachable event vector of one player."""

    def __init__(self, dim: int, max_vectors: int = 87_381) -> None:
        """`max_vectors` bounds the events held (each with all its vectors)."""
        self.dim, self.max_vectors = dim, max_vectors
        self._players: OrderedDict[tuple[str, str], _Vectors] = OrderedDict()
        self._lock = threading.Lock()

    def cosines(
        self,
        fetch: Fetch,
        agent_id: str,
        user_id: str,
        query: list[float],
        reachable: tuple[np.ndarray, np.ndarray | None] | None = None,
    ) -> dict[str, np.ndarray]:
        """`{"event_id": ids, "cosine": …, "context_cosine": …, "long_context_cosine": …}`
        for the player's events that have vectors. `reachable`: those events (ascending ids)
        and whether each has its context vectors, when the caller read them already
        (reachable.read_reachable); the reachable events and None when the caller did not
        read which have vectors (scope.read_scope): those not held, or held without their
        context vectors, are read here; none: they are all read here."""
        if reachable is None:  # the recall's own read, for this one query
            [read] = read_reachable(fetch, [(agent_id, user_id)], vectors=True)
            reachable = read.with_vectors()
        ids, has_context = reachable
        vectors = self._vectors(fetch, (agent_id, user_id), ids, has_context)
        rows, found = vectors.positions(ids)
        ids, rows = ids[found], rows[found]  # the events with vectors
        if not len(ids):
            return _no_cosines()
        vector = np.asarray(query, dtype=np.float32)
        vector /= np.linalg.norm(vector) or 1.0
        return {
            "event_id": ids,
            **{
                name: (matrix @ vector)[rows].astype(np.float64)
                for name, matrix in zip(COSINE_NAMES, vectors.matrices, strict=True)
            },
        }

    def _vectors(
        self,
        fetch: Fetch,
        key: tuple[str, str],
        ids: np.ndarray,
        has_context: np.ndarray | None,
    ) -> _Vectors:
        with self._lock:
            cached = self._players.pop(key, None) or _Vectors(
                np.zeros(0, dtype=np.int64),
                tuple(np.zeros((0, self.dim), dtype=np.float32) for _ in VECTOR_COLUMNS),
                np.zeros(0, dtype=bool),
            )
            rows, found = cached.positions(ids)
            lacking = found & ~cached.has_context[rows] if len(cached.ids) else found
            if has_context is None:  # unread: which have vectors is found here, once
                unseen = ~found & ~np.isin(ids, list(cached.without_vectors))
                # and whether those held without context vectors have them now: read again
                cached = self._merged(fetch, cached, ids[unseen], ids[lacking])
            else:  # context vectors filled in since they were loaded (the only vectors that
                # change)
                filled = lacking & has_context
                if filled.any():
                    cached, found = cached.without(ids[filled]), found & ~filled
                cached = self._merged(fetch, cached, ids[~found])
            self._players[key] = cached  # most recently used last
            total = sum(v.size() for v in self._players.values())
            while total > self.max_vectors and len(self._players) > 1:
                _, evicted = self._players.popitem(last=False)
                total -= evicted.size()
            return cached

    def _merged(
        self,
        fetch: Fetch,
        cached: _Vectors,
        missing: np.ndarray,
        lacking: np.ndarray | None = None,
    ) -> _Vectors:
        """`cached` with the vectors of events `missing` (those found with none noted), and
        those of events `lacking` (held without context vectors) that have them now; no copy
        when nothing changed."""
        lacking = np.zeros(0, dtype=np.int64) if lacking is None else lacking
        if not len(missing) and not len(lacking):
            return cached
        loaded = fetch(_LOAD, {"ids": [*missing.tolist(), *lacking.tolist()]})
        got = np.asarray(loaded["event_id"], dtype=np.int64)
        was_lacking = np.isin(got, lacking)
        keep = ~was_lacking | np.asarray(loaded["has_context"], dtype=bool)
        noted = set(missing.tolist()) - set(got.tolist())
        if not noted and not keep.any():
            return cached
        cached = cached.without(got[keep & was_lacking])._replace(
            without_vectors=cached.without_vectors | noted
        )
        if not keep.any():
            return cached
        ids = np.concatenate([cached.ids, got[keep]])
        order = np.argsort(ids, kind="stable")
        return cached._replace(
            ids=ids[order],
            matrices=tuple(
                np.concatenate([matrix, self._unit(_kept(loaded[name], keep))])[order]
                for matrix, name in zip(cached.matrices, VECTOR_COLUMNS, strict=True)
            ),
            has_context=np.concatenate(
                [cached.has_context, np.asarray(loaded["has_context"], dtype=bool)[keep]]
            )[order],
        )

    def _unit(self, column: Sequence[Any]) -> np.ndarray:
        if not len(column):
            return np.zeros((0, self.dim), dtype=np.float32)
        matrix = np.stack(list(column)).astype(np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix /= np.where(norms == 0, 1.0, norms)
        return matrix


def _kept(column: Sequence[Any], keep: np.ndarray) -> list[Any]:
    """The values of a fetched column (a numpy array on DuckDB, a list on PostgreSQL) where
    `keep` is true."""
    return [value for value, kept in zip(column, keep.tolist(), strict=True) if kept]


def _no_cosines() -> dict[str, np.ndarray]:
    return {"event_id": np.zeros(0, dtype=np.int64), **{n: np.zeros(0) for n in COSINE_NAMES}}


def dense_batch(
    cache: EventVectorCache | None,
    fetch: Fetch,
    queries: Sequence[Mapping[str, Any]],
    candidates: int,
    reachable: Sequence[tuple[np.ndarray, np.ndarray | None] | None] | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, list[float | int | None]]]:
    """What a batch of queries' dense recall binds (models int_memory_query_dense_candidates
    and int_memory_query_cosine_stats, computed here in numpy as the SQL models define them),
    query_id numbered 1.. in order: each query's `candidates` events nearest by the best of
    their three cosines (ties by id), and the count, sum, sum of squares, min and max of its
    reachable events' cosines (None without a vector). `reachable`: each query's events with
    vectors, or its reachable events when it did not read which have them, as
    EventVectorCache.cosines takes them."""
    tables = []
    stats: dict[str, list[float | int | None]] = {name: [] for name in STAT_NAMES}
    for number, query in enumerate(queries, start=1):
        vector = query["query_embedding"]
        cosines = (
            _no_cosines()
            if cache is None or vector is None
            else cache.cosines(
                fetch,
                query["agent_id"],
                query["user_id"],
                vector,
                None if reachable is None else reachable[number - 1],
            )
        )
        numbers: dict[str, float | int | None] = dict.fromkeys(STAT_NAMES)
        if len(cosines["event_id"]):
            main = cosines["cosine"]
            numbers.update(
                cosine_count=len(main),
                cosine_sum=float(main.sum()),
                cosine_square_sum=float((main * main).sum()),
                **{
                    f"{name}_{end}": float(getattr(cosines[name], end)())
                    for name in COSINE_NAMES
                    for end in ("min", "max")
                },
            )
            best = np.maximum.reduce([cosines[name] for name in COSINE_NAMES])
            top = np.lexsort((cosines["event_id"], -best))[:candidates]
            cosines = {name: values[top] for name, values in cosines.items()}
        tables.append({"query_id": np.full(len(cosines["event_id"]), number), **cosines})
        for name in STAT_NAMES:
            stats[name].append(numbers[name])
    return {name: np.concatenate([t[name] for t in tables]) for name in tables[0]}, stats
