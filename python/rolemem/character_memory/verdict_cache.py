"""Unlock verdicts kept per (character, context): the rows of the model
int_recall_context_verdicts, judged once when a context first arrives and looked up by every
later recall. A game sends few distinct contexts (intimacy, exploration, scene…), while a
turn's statement would otherwise judge every candidate's conditions again (about a quarter of
its operators).

Concurrency: recalls run on their own cursors of one connection. Filling and evicting happen
under one lock; a recall holds a reference on its contexts until its statement has read them,
and only contexts nobody references are evicted (oldest use first).
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence

import duckdb

from ..sql.project import write_sql

TABLE = "int_recall_context_verdicts"

Pair = tuple[str, str]  # (character_id, context JSON text as bound)
# a pair's verdicts as Python reads them: entry_key -> (is_unlocked, failed_condition)
Verdicts = dict[str, tuple[bool | None, str | None]]


class VerdictCache:
    """Verdict rows of at most `max_contexts` (character, context) pairs in `con`'s table
    TABLE. `fill(pairs)` inserts the model's rows for new pairs (a statement of the caller's,
    which knows how to bind requests)."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        fill: Callable[[duckdb.DuckDBPyConnection, Sequence[Pair]], None],
        max_contexts: int = 256,
    ) -> None:
        con.execute(write_sql("create_verdict_cache", TABLE))
        self._cursor = con.cursor()
        self._fill = fill
        self._max = max_contexts
        self._users: OrderedDict[Pair, int] = OrderedDict()  # pair -> recalls reading it
        self._read: dict[Pair, Verdicts] = {}  # pairs' rows read into Python (`verdicts`)
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def holding(self, pairs: Sequence[Pair]) -> Iterator[None]:
        """While the block runs, TABLE holds the verdicts of every pair in `pairs`."""
        wanted = list(dict.fromkeys(pairs))
        with self._lock:
            self._judged(wanted, readers=1)
            self._evict()
        try:
            yield
        finally:
            with self._lock:
                for pair in wanted:
                    self._users[pair] -= 1
                self._evict()

    def verdicts(self, pairs: Sequence[Pair]) -> list[Verdicts]:
        """Each pair's verdict rows read into Python, judged first where new (for a recall
        answered in Python: no statement reads TABLE meanwhile)."""
        wanted = list(dict.fromkeys(pairs))
        with self._lock:
            self._judged(wanted, readers=0)
            for pair in wanted:
                if pair not in self._read:
                    self._read[pair] = {
                        key: (unlocked, failed)
                        for key, unlocked, failed in self._cursor.execute(
                            f"select entry_key, is_unlocked, failed_condition from {TABLE} "
                            "where character_id = $1 and context_signature = $2",
                            list(pair),
                        ).fetchall()
                    }
            read = {pair: self._read[pair] for pair in wanted}
            self._evict()
        return [read[pair] for pair in pairs]

    def _judged(self, wanted: Sequence[Pair], readers: int) -> None:
        """Under the lock: TABLE holds every pair of `wanted` (judged where new), each the
        newest used and read by `readers` more."""
        missing = [pair for pair in wanted if pair not in self._users]
        if missing:
            self._fill(self._cursor, missing)
        for pair in wanted:
            self._users[pair] = self._users.get(pair, 0) + readers
            self._users.move_to_end(pair)

    def __len__(self) -> int:
        return len(self._users)

    def _evict(self) -> None:
        if len(self._users) <= self._max:  # the usual case: nothing to look for
            return
        idle = [pair for pair, users in self._users.items() if users == 0]
        for pair in idle[: max(0, len(self._users) - self._max)]:
            self._cursor.execute(write_sql("evict_cached_verdicts", TABLE), list(pair))
            del self._users[pair]
            self._read.pop(pair, None)
