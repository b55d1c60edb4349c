"""Micro-batching: requests of one kind that arrive while a statement of that kind is running
are answered together by the next statement.

DuckDB binds and optimises every statement again on every call, and that planning, not the
data, is most of a per-turn statement's time; the models carry request keys, so one statement
can answer K waiting requests for little more than one. A request that finds nothing running
runs at once (no added wait when alone); the ones that arrive meanwhile queue, and when the
statement ends the oldest waiting request leads the next batch (at most `max_batch`) for all
of them. A failed batch of several is never anyone's error: each member then runs alone, in
its own thread and under its own work token, and gets its own answer or its own error.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, TypeVar

from ..errors import BusyError
from . import cancel

Item = TypeVar("Item")
Result = TypeVar("Result")

# how often a queued request looks at its work token (a client that left stops waiting)
_POLL_SECONDS = 0.05


class _Slot(Generic[Item, Result]):
    __slots__ = ("alone", "error", "item", "lead", "ready", "result")

    def __init__(self, item: Item) -> None:
        self.item = item
        self.ready = threading.Event()
        self.lead = False  # woken to lead the next batch
        self.alone = False  # its batch failed: run by itself
        self.result: Result | None = None
        self.error: BaseException | None = None


class Coalescer(Generic[Item, Result]):
    """`run_batch(items)` answers a list of requests with one result per request, in order
    (one statement over the models' request keys). `submit(item)` returns the item's result.
    `statements` and `requests` count what ran (batching's effect, for the service's status)."""

    def __init__(
        self, run_batch: Callable[[Sequence[Item]], Sequence[Result]], max_batch: int = 8
    ) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self._run_batch = run_batch
        self.max_batch = max_batch
        self._lock = threading.Lock()
        self._waiting: list[_Slot[Item, Result]] = []
        self._busy = False
        self.statements = 0
        self.requests = 0
        self.largest = 0

    def submit(self, item: Item) -> Result:
        slot: _Slot[Item, Result] = _Slot(item)
        with self._lock:
            self._waiting.append(slot)
            lead = not self._busy
            self._busy = True
        if not lead:
            self._wait(slot)
        if slot.lead or lead:
            self._lead(slot)
        cancel.check()  # a request whose client left while it waited gets no answer
        if slot.alone:
            return self._run_batch([slot.item])[0]
        if slot.error is not None:
            raise slot.error
        return slot.result  # type: ignore[return-value] # set with the batch

    def _wait(self, slot: _Slot[Item, Result]) -> None:
        while not slot.ready.wait(_POLL_SECONDS):
            token = cancel.current.get()
            if token is None or not token.cancelled:
                continue
            with self._lock:
                if slot in self._waiting and not slot.lead:
                    self._waiting.remove(slot)
                    raise BusyError(token.reason or "cancelled")
            # already in a running batch, or leading the next one: see it through

    def _lead(self, slot: _Slot[Item, Result]) -> None:
        with self._lock:
            batch = self._waiting[: self.max_batch]
            del self._waiting[: self.max_batch]
        assert batch and batch[0] is slot  # the oldest waiting request leads
        try:
            # the statement works for every member: one client leaving must not interrupt it
            reset = cancel.current.set(None)
            try:
                results = self._run_batch([member.item for member in batch])
            finally:
                cancel.current.reset(reset)
            for member, result in zip(batch, results, strict=True):
                member.result = result
        except Exception as exc:
            if len(batch) == 1:
                slot.error = exc
            else:
                for member in batch:
                    member.alone = True
        finally:
            with self._lock:
                self.statements += 1
                self.requests += len(batch)
                self.largest = max(self.largest, len(batch))
                if self._waiting:
                    following = self._waiting[0]
                    following.lead = True
                    following.ready.set()
                else:
                    self._busy = False
            for member in batch[1:]:
                member.ready.set()

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "statements": self.statements,
                "requests": self.requests,
                "largest_batch": self.largest,
                "max_batch": self.max_batch,
            }


def sole_player(players: Iterable[Any]) -> Any:
    """The one player of a batch's requests, else None (several, or none): a statement names
    it where it has one (on Citus, the shard it runs on; per_player makes batches so)."""
    distinct = set(players)
    return distinct.pop() if len(distinct) == 1 else None


def per_player(
    run_batch: Callable[[Sequence[Item]], Sequence[Result]],
    player: Callable[[Item], Any],
) -> Callable[[Sequence[Item]], list[Result]]:
    """`run_batch` run once per player of a batch (each player's requests in their order),
    the results in the batch's order: on Citus a statement names one player, whose shard it
    runs on (a request without a player runs alone)."""

    def run(items: Sequence[Item]) -> list[Result]:
        groups: dict[Any, list[int]] = {}
        for index, item in enumerate(items):
            key = player(item)
            groups.setdefault(("alone", index) if key is None else key, []).append(index)
        results: list[Result | None] = [None] * len(items)
        for indexes in groups.values():
            answers = run_batch([items[index] for index in indexes])
            for index, answer in zip(indexes, answers, strict=True):
                results[index] = answer
        return results  # type: ignore[return-value] # every position answered

    return run
