"""A small bounded pool of daemon threads with its own queue: the service's request work and,
apart from it, extraction (LLM calls) and bulk embedding. Daemon threads never keep a stopping
service alive (a hanging LLM call is abandoned at exit); a bounded queue refuses work instead
of letting it pile up."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")


class WorkerPool:
    """`threads` daemon workers taking jobs from a queue of at most `queue_size` waiting jobs
    (0: unbounded). `submit` raises `queue.Full` when it is full."""

    def __init__(self, name: str, threads: int, queue_size: int = 0) -> None:
        self.name = name
        self._jobs: queue.Queue[Any] = queue.Queue(maxsize=queue_size)
        self._closed = False
        self._threads = [
            threading.Thread(target=self._work, name=f"{name}-{index}", daemon=True)
            for index in range(threads)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> Future[T]:
        if self._closed:
            raise RuntimeError(f"the {self.name} pool is closed")
        future: Future[T] = Future()
        self._jobs.put_nowait((future, function, args, kwargs))
        return future

    def _work(self) -> None:
        while not self._closed:
            try:
                job = self._jobs.get(timeout=0.2)
            except queue.Empty:
                continue
            future, function, args, kwargs = job
            if not future.set_running_or_notify_cancel():
                continue  # cancelled while it waited
            try:
                future.set_result(function(*args, **kwargs))
            except BaseException as exc:  # handed to whoever waits on the future
                future.set_exception(exc)

    def close(self) -> None:
        """Take no more jobs; drop those still waiting (`join` waits for the running ones)."""
        self._closed = True
        while True:
            try:
                self._jobs.get_nowait()[0].cancel()
            except queue.Empty:
                break

    def join(self, until: float) -> None:
        """Wait for the running jobs until `until` (time.monotonic) at the latest."""
        for thread in self._threads:
            thread.join(max(0.0, until - time.monotonic()))
