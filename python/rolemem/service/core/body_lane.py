"""Where the CPU work of large request bodies runs (the strict-JSON parse, the route's
validation): one job at a time, on a thread of its own, each followed by twice its time for
the event loop. Parsing or validating 1 MiB of JSON is one C call that holds the GIL for tens
of milliseconds: on a thread alone it still holds the loop (which waits for the GIL at its
next system call), and many in a row would hold every other request (and /health). So clients
that send large bodies wait for each other, not the others for them; a request's second job
(its validation) goes before the first jobs of requests behind it."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
GAP = 2.0  # the loop's time after a job, in the job's durations


class BodyLane:
    """Made outside the event loop; its thread starts with the first job (again after close:
    an app may be started more than once)."""

    def __init__(self) -> None:
        self._executor: ThreadPoolExecutor | None = None
        self._busy = False
        # (0 for a request's later job, 1 for a first one; arrival; the waiter)
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._arrivals = itertools.count()
        self._free_at = 0.0  # the loop's clock: when the next job may start

    async def run(self, work: Callable[..., T], *args: Any, later: bool = False) -> T:
        """`work(*args)` on the lane's thread, in turn (`later`: a request's later job, ahead
        of the first jobs waiting)."""
        loop = asyncio.get_running_loop()
        await self._turn(loop, later)
        try:
            wait = self._free_at - loop.time()
            if wait > 0:  # the loop's share of the last job's time
                await asyncio.sleep(wait)
            if self._executor is None:
                self._executor = ThreadPoolExecutor(1, thread_name_prefix="rolemem-bodies")
            started = loop.time()
            try:
                return await loop.run_in_executor(self._executor, work, *args)
            finally:
                now = loop.time()
                self._free_at = now + GAP * (now - started)
        finally:
            self._next()

    async def _turn(self, loop: asyncio.AbstractEventLoop, later: bool) -> None:
        if not self._busy:
            self._busy = True
            return
        waiter: asyncio.Future[None] = loop.create_future()
        heapq.heappush(self._waiting, (0 if later else 1, next(self._arrivals), waiter))
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # handed the turn, then cancelled
                self._next()
            raise

    def _next(self) -> None:
        """Hand the turn to the next waiter, if any."""
        while self._waiting:
            _, _, waiter = heapq.heappop(self._waiting)
            if not waiter.done():
                waiter.set_result(None)
                return
        self._busy = False

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
        self._busy, self._waiting = False, []  # bound to the loop that ran the app
