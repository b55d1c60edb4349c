"""Stopping work nobody waits for: a token per unit of work (an HTTP request), carried in a
context variable into every thread that works for it. Cancelling it interrupts the DuckDB
statements running for it (DuckDB's `interrupt()` is made for another thread to call) and makes
the next statement fail with `BusyError`, so a request past its time budget, or whose client
went away, stops using the engine.
"""

from __future__ import annotations

import contextvars
import functools
import threading
from collections.abc import Callable
from typing import TypeVar

import duckdb

from ..errors import BusyError

T = TypeVar("T")


class WorkToken:
    """The cancellation state of one unit of work and the cursors it is running on."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self._cursors: set[duckdb.DuckDBPyConnection] = set()
        self._lock = threading.Lock()

    @property
    def cancelled(self) -> bool:
        return self.reason is not None

    def cancel(self, reason: str) -> None:
        with self._lock:
            if self.reason is None:
                self.reason = reason
            cursors = list(self._cursors)
        for cur in cursors:
            cur.interrupt()

    def check(self) -> None:
        if self.reason is not None:
            raise BusyError(self.reason)

    def attach(self, cur: duckdb.DuckDBPyConnection) -> None:
        with self._lock:
            self.check()
            self._cursors.add(cur)

    def detach(self, cur: duckdb.DuckDBPyConnection) -> None:
        with self._lock:
            self._cursors.discard(cur)


current: contextvars.ContextVar[WorkToken | None] = contextvars.ContextVar(
    "rolemem_work_token", default=None
)


def check() -> None:
    """Raise BusyError if the current work was cancelled (between slow steps)."""
    token = current.get()
    if token is not None:
        token.check()


def carried(function: Callable[..., T]) -> Callable[..., T]:
    """`function` bound to the caller's context, so the thread that runs it works for the same
    token (executors do not carry context variables by themselves)."""
    return functools.partial(contextvars.copy_context().run, function)
