"""Extraction apart from the request path: its own bounded workers and queue, one job per save
x character (a job already waiting covers a newer append; one already running runs once more
after); a full queue leaves the batch pending for the next append. The back-off is the
store's (docs/decisions/extraction-back-off.md); this process's timer tries again when it
ends, while the failures in a row are fewer than `extraction_retries`."""

from __future__ import annotations

import contextvars
import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .workers import WorkerPool

if TYPE_CHECKING:
    from .state import Store

log = logging.getLogger(__name__)


class ExtractionQueue:
    """Observations waiting for (or with) the LLM, at most one per save x character: the
    store's memory loop, settings, metrics and webhooks."""

    def __init__(self, store: Store) -> None:
        self.loop, settings = store.loop, store.settings
        self.enabled = self.loop.llm is not None
        threads, size = settings.extraction_threads, settings.extraction_queue
        self._pool = WorkerPool("rolemem-extract", threads, size)
        # the jobs queued (or running), each with its newest observation (a job reads it when
        # it starts); the jobs running, and those a newer observation reached while they ran
        # (run once more: it may find another batch due, e.g. a scene changed meanwhile)
        self._latest: dict[tuple[int, str], dict[str, Any]] = {}
        self._running: set[tuple[int, str]] = set()
        self._again: set[tuple[int, str]] = set()
        self._lock = threading.Lock()
        self._retries = settings.extraction_retries
        if self.enabled:  # the loop writes the back-off with each failure, and honours it
            self.loop.retry_seconds = settings.extraction_retry_seconds
        # jobs in a back-off this process will try again when it ends: their timers, and
        # the newest observation (an append meanwhile updates it, and waits)
        self._waiting: dict[tuple[int, str], tuple[threading.Timer, dict[str, Any]]] = {}
        self._closed = False
        self._metrics = store.metrics
        # the webhooks' (None: no webhook, nothing built per job)
        self._emit = None if store.webhooks is None else store.webhooks.emit

    def schedule(self, key: tuple[int, str], observation: Mapping[str, Any]) -> str:
        """'scheduled' (queued, or already queued), or 'deferred' when the queue is full."""
        with self._lock:
            if key in self._latest:
                self._latest[key] = dict(observation)  # the newest observation wins
                if key in self._running:
                    self._again.add(key)
                return "scheduled"
            if key in self._waiting:  # in its back-off: the timer tries it, not this append
                self._waiting[key] = (self._waiting[key][0], dict(observation))
                return "scheduled"
            if not self._submit(key):
                return "deferred"
            self._latest[key] = dict(observation)
            self._metrics.extraction_queue.set(len(self._latest))
        return "scheduled"

    def _submit(self, key: tuple[int, str]) -> bool:
        """(Under self._lock.) The job on the pool, in the calling context (a request's: its
        log lines carry its request id); False when the queue is full."""
        try:
            context = contextvars.copy_context()
            self._pool.submit(context.run, self._observe, key)
        except (queue.Full, RuntimeError):
            return False
        return True

    def state(self, key: tuple[int, str]) -> str:
        if not self.enabled:
            return "disabled"
        with self._lock:
            if key in self._latest:
                return "queued"
            return "retrying" if key in self._waiting else "idle"

    def _observe(self, key: tuple[int, str]) -> None:
        with self._lock:
            self._running.add(key)
            self._again.discard(key)
            observation = self._latest[key]
        failed = False
        # (failures since the last success, end of the back-off) when one is under way
        backoff: tuple[int, datetime | None] | None = None
        started = time.perf_counter()
        try:
            report = self.loop.observe(**observation)
            if report.retry_at is not None:  # in its back-off: nothing was sent
                backoff = (report.failed_attempts, report.retry_at)
            elif report.batch_keys:
                log.info("extracted %s", ", ".join(report.batch_keys))
                batch_keys = list(report.batch_keys)
                self._announce("extraction.succeeded", key, observation, batch_keys=batch_keys)
        except Exception as exc:  # one line; the save's memory status keeps the details
            failed = True
            backoff = self._stored_backoff(key, observation)
            self._announce("extraction.failed", key, observation, error=type(exc).__name__)
            log.warning("extraction of save %s (%s) failed: %s: %s", *key, type(exc).__name__, exc)
        finally:
            if failed or backoff is None:
                self._metrics.extraction(time.perf_counter() - started, failed)
            with self._lock:
                self._running.discard(key)
                # still queued when a newer observation came: it runs next (not in a back-off)
                if backoff is not None or key not in self._again or not self._submit(key):
                    self._done(key, backoff)

    def _announce(
        self, kind: str, key: tuple[int, str], observation: Mapping[str, Any], **more: Any
    ) -> None:
        """The webhook event (none built without a webhook) about the save, the character's
        target key, the player and agent (no player text), with `more`."""
        if self._emit is not None:
            subject = {
                "save_id": key[0],
                "target_key": key[1],
                "user_id": observation.get("user_id"),
                "agent_id": observation.get("agent_id"),
            }
            self._emit(kind, {**subject, **more})

    def _stored_backoff(
        self, key: tuple[int, str], observation: Mapping[str, Any]
    ) -> tuple[int, datetime | None] | None:
        """The back-off the failure wrote (None when it could not be read)."""
        state = {"save_id": key[0], "target_key": key[1], "user_id": observation["user_id"]}
        try:
            with self.loop.memory.store.reading() as cur:
                return self.loop.backoff(cur, state)
        except Exception:
            return None

    def _done(self, key: tuple[int, str], backoff: tuple[int, datetime | None] | None) -> None:
        """(Under self._lock.) The job leaves the queue; one in a back-off is tried again
        when it ends, while its failures are fewer than the cap."""
        self._again.discard(key)
        observation = self._latest.pop(key)
        self._metrics.extraction_queue.set(len(self._latest))
        if backoff is None:
            return
        failures, retry_at = backoff
        if self._closed or retry_at is None or failures >= self._retries or key in self._waiting:
            return
        # a timer to the stored next_attempt_at, holding no worker: not rolemem.retry
        delay = max(0.0, (retry_at - datetime.now()).total_seconds())
        timer = threading.Timer(delay, self._retry, (key,))
        timer.daemon = True
        self._waiting[key] = (timer, observation)
        timer.start()

    def _retry(self, key: tuple[int, str]) -> None:
        with self._lock:
            waiting = self._waiting.pop(key, None)
            if waiting is None:  # closed meanwhile
                return
        self.schedule(key, waiting[1])  # deferred (a full queue): the next append queues it

    def queued(self) -> int:
        """Batches queued or being extracted."""
        with self._lock:
            return len(self._latest)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for timer, _ in self._waiting.values():
                timer.cancel()
            self._waiting.clear()
        self._pool.close()


def run_logged(what: str, function: Callable[..., Any], *args: Any) -> None:
    """Background upkeep nobody waits for: a failure is one log line."""
    try:
        function(*args)
    except Exception as exc:
        log.warning("%s failed: %s: %s", what, type(exc).__name__, exc)
