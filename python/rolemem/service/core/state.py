"""What the service owns: the store's engine (the one DuckDB connection, DuckDB allowing one
writing process per file; or a connection pool to a PostgreSQL database, which several service
processes share), the objects that read and write through it, and the pools its work runs
on: requests' engine work on the request pool, interrupted past its time budget or once its
client left; extraction (the LLM), bulk embedding, config exports and maintenance on pools
of their own."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from starlette.requests import Request

from ...character_memory import CharacterLibrary, CharacterMemory, config_version
from ...dynamic_memory import DynamicMemory
from ...engines import DuckDBEngine, Engine, PostgresEngine, duckdb_connect
from ...engines.postgres_setup import is_postgres_url
from ...engines.snapshot import write_snapshot
from ...errors import BusyError, NotFoundError, RolememError
from ...memory_builder import history
from ...memory_loop import MemoryLoop
from ...memory_loop.llm import ChatModel
from ...retry import retry
from ...sql import cancel
from ...turn.companion import Companion
from . import idempotency
from .errors import ClientGone
from .extraction import ExtractionQueue, run_logged
from .metrics import Metrics
from .settings import ServiceSettings
from .webhooks import Webhooks
from .workers import WorkerPool

T = TypeVar("T")
log = logging.getLogger(__name__)
_POLL_SECONDS = 0.05  # how often a waiting request looks at its client and its budget
_WRITE_ATTEMPTS = 4  # a write meeting another thread's conflicting write is retried


# how often a process of a shared database looks whether another imported config
_CONFIG_CHECK_SECONDS = 1.0


@dataclass
class Store:
    path: str
    settings: ServiceSettings = field(default_factory=ServiceSettings)
    llm: ChatModel | None = None
    embedder: Any = "default"
    snapshot_path: str | None = None
    metrics: Metrics = field(default_factory=Metrics)  # moved by extraction and maintenance
    engine: Engine = field(init=False)
    memory: DynamicMemory = field(init=False)
    loop: MemoryLoop = field(init=False)
    extraction: ExtractionQueue = field(init=False)
    write_lock: threading.Lock = field(default_factory=threading.Lock)
    _companions: dict[tuple[str, str], Companion] = field(default_factory=dict)
    _characters: dict[str, CharacterMemory] = field(default_factory=dict)
    # every character's config in one place: recalls of any characters waiting together are
    # answered by one statement; rebuilt after a config change
    _library: CharacterLibrary | None = None
    # the config version the library was loaded at, and when it was last compared
    _library_version: int = 0
    _version_checked: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def open(self) -> None:
        if is_postgres_url(self.path):
            # a pool per process: request threads, recalls and extraction share it
            self.engine = PostgresEngine(self.path, max_size=self.settings.request_threads + 4)
            self.memory = DynamicMemory(
                engine=self.engine, embedder=self.embedder, max_batch=self.settings.max_batch
            )
        else:
            con = duckdb_connect.connect(self.path)
            # a setting of this database instance (every cursor on it), a validated integer
            con.execute(f"set threads = {int(self.settings.engine_threads)}")
            self.engine = DuckDBEngine(con)
            self.memory = DynamicMemory(
                con, embedder=self.embedder, max_batch=self.settings.max_batch
            )
        self.embedder = self.memory.embedder  # one model for every companion
        self.loop = MemoryLoop(llm=self.llm, memory=self.memory)
        self.requests = WorkerPool("rolemem-request", self.settings.request_threads)
        # bulk embedding (official imports) one at a time, apart from requests
        self.bulk = WorkerPool("rolemem-bulk", 1)
        # config exports one at a time (a build holds several times its answer), not behind
        # an import's minutes of embedding
        self.exports = WorkerPool("rolemem-export", 1)
        # maintenance (cleanup, consolidation with the LLM) one run at a time, apart too
        self.maintenance = WorkerPool("rolemem-maintenance", 1)
        # held while a run of this process is queued or running (maintenance.start_maintenance)
        self.maintenance_asked = threading.Lock()
        self.last_maintenance: dict[str, Any] | None = None
        # without URLs nothing runs, nothing is emitted
        self.webhooks = Webhooks(self) if self.settings.webhooks else None
        self.extraction = ExtractionQueue(self)

    def close(self) -> None:
        """Stop taking work, give running work a moment (never a hanging LLM call), close."""
        self.extraction.close()
        if self.webhooks is not None:
            self.webhooks.close()
        # requests and exports read the store: one grace for both, then the engine closes
        self.requests.close()
        self.exports.close()
        until = time.monotonic() + self.settings.shutdown_grace
        self.requests.join(until)
        self.exports.join(until)
        self.bulk.close()
        self.maintenance.close()
        for companion in self._companions.values():
            companion.close()
        self.loop.close()
        self.memory.close()
        with self.write_lock:  # a scheduled snapshot still copying finishes first
            if isinstance(self.engine, DuckDBEngine):
                self.engine.con.close()
            else:
                self.engine.close()

    # -- running work ----------------------------------------------------------------------

    async def run(
        self,
        function: Callable[..., T],
        *args: Any,
        request: Request | None = None,
        pool: WorkerPool | None = None,
        budget: bool = True,
        **kwargs: Any,
    ) -> T:
        """`function(*args, **kwargs)` on a pool thread. With `request` (a recall's or a
        read's), the work has the request's time budget (request_timeout): past it, or once the
        client left, it is interrupted (503). `budget=False` (an export, as large as what it
        exports): only once the client left."""
        token = cancel.WorkToken()
        # the job runs in a copy of the request's context (its request id), with its token
        context = contextvars.copy_context()
        context.run(cancel.current.set, token)
        future = (pool or self.requests).submit(context.run, function, *args, **kwargs)
        waiter = asyncio.wrap_future(future)
        # an answer nobody waits for any more (a timeout, a client gone) is not an error
        waiter.add_done_callback(lambda done: done.cancelled() or done.exception())
        loop = asyncio.get_running_loop()
        timeout = self.settings.request_timeout
        deadline = None if request is None or not budget else loop.time() + timeout
        while True:
            done, _ = await asyncio.wait({waiter}, timeout=_POLL_SECONDS)
            if done:
                return waiter.result()
            if request is not None and await request.is_disconnected():
                token.cancel("the client went away")
                future.cancel()
                raise ClientGone("the client went away")
            if deadline is not None and loop.time() > deadline:
                token.cancel(
                    f"the request took longer than its time budget ({timeout:g} s); try again"
                )
                future.cancel()
                raise BusyError(str(token.reason))

    def write(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`function(cur, ...)` in one transaction, retried when it met another thread's or
        process's conflicting write (a history refresh, a recall's bookkeeping, an append to
        the same save)."""
        # DuckDB's one writer per file; PostgreSQL's transactions lock what they change
        writer = (
            self.write_lock if isinstance(self.engine, DuckDBEngine) else contextlib.nullcontext()
        )

        def once() -> T:
            with writer, self.engine.transaction() as cur:
                return function(cur, *args, **kwargs)

        return self.retried(once)

    def retried(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`function(*args, **kwargs)`, a write that opens its transactions itself (the
        library's edits, deletes and imports; `write`'s one), run again when it met another
        thread's or process's conflicting write: it must be safe to run again, one transaction
        (a conflict rolled it all back) or a repeat that finds its work done. BusyError (503)
        when the conflicts outlast the retries."""
        try:
            return retry(
                lambda: function(*args, **kwargs),
                attempts=_WRITE_ATTEMPTS,
                on=self.engine.conflicts,
            )
        except self.engine.conflicts:
            raise BusyError("the store is busy with a conflicting write; try again") from None

    def idempotent(
        self,
        key: str | None,
        player: str | None,
        route: str,
        request: Any,
        function: Callable[..., dict[str, Any]],
    ) -> dict[str, Any]:
        """The write `function(cur)`, whose first answer is replayed for the same
        Idempotency-Key of the same `player` (None: a request of no player; one player's keys
        never meet another's)."""
        return self.write(
            idempotency.once,
            key,
            player,
            idempotency.fingerprint(route, request),
            function,
            hours=self.settings.idempotency_hours,
            engine=self.engine.name,
        )

    def refresh_later(self, save_id: int) -> None:
        """The save's write-time history, refreshed on the request pool after the answer (the
        next read of the save refreshes it anyway if this fails). PostgreSQL keeps no
        write-time history: its reads walk the chain."""
        if not isinstance(self.engine, DuckDBEngine):
            return
        what = f"history refresh of save {save_id}"
        with contextlib.suppress(RuntimeError):  # closing
            self.requests.submit(
                run_logged, what, history.refresh_history, self.engine.con, [save_id]
            )

    # -- what requests use -----------------------------------------------------------------

    def companion(self, character_id: str, agent_id: str | None) -> Companion:
        key = (character_id, agent_id or character_id)
        with self._lock:
            library = self._shared_library()
            if key not in self._companions:
                self._companions[key] = Companion(
                    character_id=character_id,
                    agent_id=agent_id,
                    loop=self.loop,
                    library=library,
                    open_ownerless_saves=self.settings.open_ownerless_saves,
                )
            return self._companions[key]

    def character(self, character_id: str) -> CharacterMemory:
        with self._lock:
            library = self._shared_library()
            if character_id not in self._characters:
                self._characters[character_id] = CharacterMemory(
                    character_id=character_id, library=library
                )
            return self._characters[character_id]

    def characters(self) -> dict[str, dict[str, int]]:
        """The configured characters, with their entries per kind (the loaded config)."""
        with self._lock:
            library = self._shared_library()
        return library.entry_counts()

    def _shared_library(self) -> CharacterLibrary:
        """Every character's config (under self._lock), loaded once and shared; forgotten
        when another process imported config since (a shared PostgreSQL database), looking at
        most once a second."""
        now = time.monotonic()
        if self._library is not None and now - self._version_checked >= _CONFIG_CHECK_SECONDS:
            self._version_checked = now
            if config_version(self.engine) != self._library_version:
                self._forget_configs()
        if self._library is None:
            self._library_version = config_version(self.engine)
            self._version_checked = time.monotonic()
            self._library = CharacterLibrary(self.engine, max_batch=self.settings.max_batch)
        return self._library

    def status(self) -> dict[str, Any]:
        with self._lock:
            library = self._library
        return {
            "dynamic_recall": self.memory.batching(),
            "character_recall": library.batching() if library is not None else None,
            "extraction_queued": self.extraction.queued(),
            "context_windows": self.loop.windows.stats(),
            "last_maintenance": self.last_maintenance,
            "webhooks": None if self.webhooks is None else self.webhooks.state(),
        }

    def forget_configs(self) -> None:
        """A character's config changed: the next request loads the config again (every
        character's: they share one library)."""
        with self._lock:
            self._forget_configs()

    def _forget_configs(self) -> None:
        self._library = None
        self._characters.clear()
        # dropped, not closed: a request may still be using them
        self._companions.clear()

    def snapshot(self) -> tuple[str, int]:
        """A consistent read-only copy of the whole database for analysts and dbt."""
        if not isinstance(self.engine, DuckDBEngine):
            raise NotFoundError(
                "no snapshot on PostgreSQL: analysts and dbt read the live database"
            )
        if not self.snapshot_path:
            raise NotFoundError("no snapshot path: start the service with --snapshot PATH")
        with self.write_lock:  # no write interleaves with the copy
            size = write_snapshot(self.engine.con, self.snapshot_path)
        return self.snapshot_path, size

    # -- the memory loop ---------------------------------------------------------------------

    def observe_after(
        self, save_id: int, user_id: str | None, observe: Any, now: datetime, flush: bool = False
    ) -> str:
        """After an append: whether a batch is due for the character, and if so queue it.
        `user_id`: the player, which the route found with `observe` (observe.user_id is the
        same or none). `flush`: every pending turn is due, the remainder below the batch size
        included (MemoryLoop.observe's flush)."""
        if observe is None or not self.extraction.enabled:
            self.refresh_later(save_id)
            return "disabled"
        observation = {
            **observe.model_dump(include={"agent_id", "role_id", "script_role_id", "scene"}),
            "save_id": save_id,
            "user_id": user_id,
            "flush": flush,
        }
        try:
            # the save's history refreshed here, once; the scene noted when nothing is due
            due = self.loop.due(**observation, record=True)
        except RolememError as exc:  # the lines are stored: the next append looks again
            log.warning("save %s: extraction not scheduled: %s", save_id, exc)
            return "deferred"
        if not due["batches_due"]:
            return "not_due"
        return self.extraction.schedule(
            (save_id, due["target_key"]),
            {
                **observation,
                "now": observe.now or now,
                "user_name": observe.user_name,
                "agent_name": observe.char_name,
            },
        )
