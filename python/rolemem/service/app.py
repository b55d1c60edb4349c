"""The ASGI app: lifespan opens the one DuckDB owner, one router per resource, every failure in
one error shape, every request bounded (size, strict JSON, time), keys by role (game, designer)
for everything but the probes and the docs; the warm-up (store, config, embedder) on a thread
of its own after start-up, /ready saying when it is done."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from ..errors import RolememError
from ..memory_loop.llm import ChatModel
from .api.main import include_routers, route_groups
from .core import errors, maintenance
from .core.access import AccessLog
from .core.body_lane import BodyLane
from .core.connections import HeaderLimit
from .core.gate import Gate
from .core.guard import RequestGuard
from .core.import_body import ImportBodies
from .core.keys import KeyRing
from .core.metrics import Metrics, TimedChatModel
from .core.quotas import Buckets, Rate
from .core.readiness import Readiness, Step, check_schema, warm_tokenizer
from .core.settings import ServeSettings, ServiceSettings
from .core.state import Store
from .mcp import http as mcp_http

log = logging.getLogger(__name__)

DESCRIPTION = """Memory for LLM role-play characters: the chat history from the character's own
point of view, designer memory unlocked by game state, and per-player memories extracted by an
LLM, recalled by keyword, meaning and time, and forgotten by strength.

Every non-2xx answer is `{"error": {"type", "message", "field"}}`. Bodies are at most 1 MiB
(413), text fields have the `maxLength` shown, reads and recalls have a time budget (503)."""

# the environment variable `rolemem serve --workers N` passes each worker its settings in
SPEC_VARIABLE = "ROLEMEM_SERVE_SPEC"


def arguments_of(serve: ServeSettings) -> dict[str, Any]:
    """create_app's arguments from `rolemem serve`'s settings (`db` resolved)."""
    llm = None
    if serve.llm_base_url:
        from ..memory_loop.llm import OpenAICompatibleLLM

        llm = OpenAICompatibleLLM(
            base_url=serve.llm_base_url,
            model=serve.llm_model,
            timeout=serve.llm_timeout,  # the whole call's deadline
            # one attempt is one call: the service's back-off retries (memory_loop_state),
            # counted against --extraction-retries, not the client's hidden ones
            max_retries=0,
        )
    return {
        "db": serve.db,
        "llm": llm,
        "embedder": None if serve.keyword_only else "default",
        "snapshot_path": serve.snapshot,
        "snapshot_every": serve.snapshot_every,
        "maintain_every": serve.maintain_every,
        "settings": ServiceSettings(**serve.service()),
    }


def from_environment() -> FastAPI:
    """The app of one `rolemem serve --workers N` process (uvicorn's factory)."""
    import json
    import os

    return create_app(**arguments_of(ServeSettings(**json.loads(os.environ[SPEC_VARIABLE]))))


def create_app(
    db: str,
    *,
    api_key: str | None = None,
    llm: ChatModel | None = None,
    embedder: Any = "default",
    snapshot_path: str | None = None,
    snapshot_every: float | None = None,
    maintain_every: float | None = None,
    settings: ServiceSettings | None = None,
) -> FastAPI:
    """The service over the DuckDB file `db`, or the PostgreSQL database a `postgresql://`
    URL names (opened when the app starts, closed when it stops). `api_key` (or
    `settings.api_key`): required in `X-API-Key` on every route but /health;
    `settings.designer_key`: the key of the designer routes. `snapshot_path`: where POST
    /snapshot writes a read-only copy (DuckDB); `snapshot_every` (seconds): also on that
    schedule; `maintain_every` (seconds): a maintenance run (cleanup, consolidation) on that
    schedule, as POST /admin/maintenance runs one."""
    settings = settings or ServiceSettings(api_key=api_key)
    if api_key is not None and settings.api_key is None:
        settings = settings.model_copy(update={"api_key": api_key})
    if snapshot_every is not None and not (snapshot_path and snapshot_every > 0):
        raise RolememError("snapshot_every needs a snapshot path and a positive number of seconds")
    if maintain_every is not None and not maintain_every > 0:
        raise RolememError("maintain_every needs a positive number of seconds")
    # a key file that does not load refuses the start (RolememError saying why)
    ring = KeyRing(
        api_key=settings.api_key, designer_key=settings.designer_key, path=settings.keys_file
    )
    metrics = Metrics()
    lane = BodyLane()  # large bodies' parse and validation, one at a time
    store = Store(
        db,
        settings=settings,
        llm=None if llm is None else TimedChatModel(llm, metrics),
        embedder=embedder,
        snapshot_path=snapshot_path,
        metrics=metrics,
    )

    async def every(seconds: float, work: Callable[[], Awaitable[Any]], failed: str) -> None:
        while True:
            await asyncio.sleep(seconds)
            try:  # off the event loop: a copy on a thread, maintenance on its worker
                await work()
            except Exception as exc:  # the next one may succeed; a failed copy never replaces one
                log.warning("scheduled %s: %s", failed, exc)

    def snapshot() -> Awaitable[Any]:
        return asyncio.to_thread(store.snapshot)

    def maintain() -> Awaitable[Any]:
        return asyncio.wrap_future(maintenance.start_maintenance(store))

    def warm_up_steps() -> list[Step]:
        steps: list[Step] = [
            ("store", "checking its tables", lambda: check_schema(store.engine)),
            ("config", "loading the designer config", store.characters),
            # the word lists every recall cuts its text with (jieba's dictionary, the IDF table)
            ("tokenizer", "loading the word lists", warm_tokenizer),
        ]
        if store.embedder is not None:  # the model loads on its first embedding
            steps.append(
                ("embedder", "loading the model", lambda: store.embedder.embed_query("预热"))
            )
        # the first recalls render and plan their statements: a player that does not exist,
        # dry runs (nothing is written)
        steps.append(("recall", "running a first recall", warm_recall))
        return steps

    def warm_recall() -> None:
        player = "rolemem-warm-up"
        store.memory.query("预热", user_id=player, agent_id=player, update=False)
        for character_id in list(store.characters())[:1]:
            store.character(character_id).session(player).recall("预热", {}, dry_run=True)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store.open()
        app.state.store = store
        app.state.metrics = metrics
        metrics.memories_of = store.engine
        app.state.readiness = Readiness(warm_up_steps())
        app.state.readiness.start()  # the event loop answers /health meanwhile
        ring.start()  # the key file's watcher
        schedules = [
            asyncio.create_task(every(seconds, work, failed))
            for seconds, work, failed in (
                (snapshot_every, snapshot, f"snapshot to {snapshot_path} failed"),
                (maintain_every, maintain, "maintenance did not run"),  # or another process's
            )
            if seconds
        ]
        try:
            async with mcp_endpoint.running():  # /mcp's tools call the routes above
                yield
        finally:
            for schedule in schedules:
                schedule.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await schedule
            app.state.readiness.stop()
            ring.stop()
            lane.close()
            store.close()
            metrics.process_stopped()

    app = FastAPI(
        title="rolemem",
        version=_version(),
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    player_rate, key_rate = settings.player_rate, settings.key_rate
    include_routers(app, keyed=ring.keyed, limited=bool(player_rate or key_rate))
    mcp_endpoint = mcp_http.install(app)  # before route_groups reads the routes
    errors.install(app)
    app.add_middleware(RequestGuard, settings=settings, lane=lane)
    # added after the guard, so it runs before it: the guard holds every other body to
    # max_body_bytes (the import route is a game group's)
    app.add_middleware(ImportBodies, settings=settings)
    # before any body is read: the key, its route group and players, the rates
    app.add_middleware(
        Gate,
        ring=ring,
        route_of=route_groups(app),
        player_buckets=Buckets(Rate.parse(player_rate, "player_rate")) if player_rate else None,
        key_buckets=Buckets(Rate.parse(key_rate, "key_rate")) if key_rate else None,
        refused=metrics.refused,
    )
    app.add_middleware(HeaderLimit)  # a head past the limit: 431, before any key is read
    # outermost: it times, counts and logs the gate's and the guard's refusals too
    app.add_middleware(AccessLog, observe=metrics.observe_request)
    return app


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rolemem")
    except PackageNotFoundError:
        return "0"
