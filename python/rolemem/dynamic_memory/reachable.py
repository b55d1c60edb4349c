"""The events one query may reach, read in one statement for the recall's caches (the union
of int_memory_events_with_official written out, narrowed as the recall statement's sources
are), with their token counts and, when asked, whether each has its vectors."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..schema.memory import VECTOR_COLUMNS
from ..sql.project import render_macro
from .sql import PLAYER_EVENTS

# A statement's result as columns (name -> values), on whichever engine holds the store
Fetch = Callable[[str, Mapping[str, Any]], Mapping[str, Any]]


# the context vectors' columns (the first of VECTOR_COLUMNS is the description's own)
CONTEXT_COLUMNS = VECTOR_COLUMNS[1:]


def has_context(alias: str = "") -> str:
    """Whether a vectors row (of table `alias`) holds its context vectors, as SQL."""
    prefix = f"{alias}." if alias else ""
    return " and ".join(f"{prefix}{name} is not null" for name in CONTEXT_COLUMNS)


# (with owners, with vectors) -> the batch's reachable events (with their owners, so each
# query takes its own: a batch of one player and agent, most, need not read them), written out
# rather than composed (a per-recall read: the model's staging costs ~1.2 ms more to plan);
# with vectors, each beside its vectors row (sql.PLAYER_EVENTS' pairs), so the vector cache
# needs no read of its own. test_recall_fast_path holds it equal to the model.
_REACHABLE = {
    (owners, vectors): " union all ".join(
        render_macro("reachable_events", events, owners, vectors and table, has_context("vectors"))
        for table, events in PLAYER_EVENTS.items()
    )
    for owners in (True, False)
    for vectors in (True, False)
}
REACHABLE = _REACHABLE[True, False]


class Reachable(NamedTuple):
    """One query's reachable events, ascending ids, their token counts (NaN: none) and
    creation times; read with vectors, whether each has its vectors and its context vectors
    (else None)."""

    ids: np.ndarray
    lengths: np.ndarray
    created_at: np.ndarray
    has_vector: np.ndarray | None = None
    has_context: np.ndarray | None = None

    def with_vectors(self) -> tuple[np.ndarray, np.ndarray | None]:
        """The events with vectors and whether each has its context vectors, as the vector
        cache takes them; not read: every event, and None (the cache reads what it lacks)."""
        if self.has_vector is None or self.has_context is None:
            return self.ids, None
        return self.ids[self.has_vector], self.has_context[self.has_vector]


def read_reachable(
    fetch: Fetch, owners: Sequence[tuple[str, str]], vectors: bool = False
) -> list[Reachable]:
    """The reachable events of each (agent, player) of a batch, in one read (`vectors`:
    with whether each has its vectors)."""
    agents = sorted({agent for agent, _ in owners})
    users = sorted({user for _, user in owners})
    params = {"agent_id": agents, "user_id": users}
    if len(agents) == len(users) == 1:
        one, _ = by_id(fetch(_REACHABLE[False, vectors], params))
        return [one for _ in owners]
    columns = fetch(_REACHABLE[True, vectors], params)
    agent_ids, scopes, user_ids = (
        np.asarray(values_filled(columns[name], None), dtype=object)
        for name in ("agent_id", "scope", "user_id")
    )
    return [  # each query's own: its agent's, official or its player's
        by_id(columns, (agent_ids == agent) & ((scopes == "official") | (user_ids == user)))[0]
        for agent, user in owners
    ]


def by_id(columns: Mapping[str, Any], rows: Any = slice(None)) -> tuple[Reachable, np.ndarray]:
    """The events of `rows` (all: a batch of one player) by ascending id, and that order (the
    positions among `rows` a further column of them is taken in)."""
    ids = np.asarray(values_filled(columns["event_id"], 0), dtype=np.int64)[rows]
    lengths = floats(columns["token_count"])[rows]
    created = np.asarray(columns["created_at"], dtype="datetime64[us]")[rows]
    order = np.argsort(ids)
    if "has_vector" not in columns:
        return Reachable(ids[order], lengths[order], created[order]), order
    has_vector, has_context = (
        flags(columns[name])[rows][order] for name in ("has_vector", "has_context")
    )
    return Reachable(ids[order], lengths[order], created[order], has_vector, has_context), order


def flags(column: Any) -> np.ndarray:
    """A fetched boolean column as booleans, False for null."""
    return np.asarray(values_filled(column, False), dtype=bool)


def floats(column: Any) -> np.ndarray:
    """A fetched integer column as floats, NaN for null."""
    if isinstance(column, np.ma.MaskedArray):
        return np.ma.filled(column.astype(np.float64), np.nan)
    if isinstance(column, np.ndarray):
        return column.astype(np.float64)
    return np.array([np.nan if value is None else value for value in column], dtype=np.float64)


def values_filled(column: Any, fill: Any) -> Any:
    """A fetched column with its nulls as `fill` (a masked numpy array's, or a list's None)."""
    if isinstance(column, np.ma.MaskedArray):
        values = np.array(column.data, dtype=object)
        values[np.ma.getmaskarray(column)] = fill
        return values
    return column
