"""The ASGI app: lifespan opens the one DuckDB owner, one router per resource, rolemem errors
as JSON in one handler, an optional API key for everything but /health."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.security import APIKeyHeader

from ..errors import RolememError
from ..llm import ChatModel
from . import admin, lines, official, query, recall, turn
from .state import Store

_API_KEY = APIKeyHeader(name="X-API-Key", auto_error=False)
log = logging.getLogger(__name__)


def create_app(
    db: str,
    *,
    api_key: str | None = None,
    llm: ChatModel | None = None,
    embedder: Any = "default",
    snapshot_path: str | None = None,
    snapshot_every: float | None = None,
) -> FastAPI:
    """The service over the DuckDB file `db` (opened when the app starts, closed when it
    stops). `api_key`: required in `X-API-Key` on every route but /health. `snapshot_path`:
    where POST /snapshot writes a read-only copy; `snapshot_every` (seconds): also write it
    on that schedule while the service runs."""
    if snapshot_every is not None and not (snapshot_path and snapshot_every > 0):
        raise RolememError("snapshot_every needs a snapshot path and a positive number of seconds")
    store = Store(db, llm=llm, embedder=embedder, snapshot_path=snapshot_path)

    async def scheduled_snapshots(seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            try:  # in a worker thread: a copy must not hold up requests
                await asyncio.to_thread(store.snapshot)
            except Exception:  # the next one may succeed; a failed copy never replaces one
                log.exception("scheduled snapshot to %s failed", snapshot_path)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store.open()
        app.state.store = store
        schedule = (
            asyncio.create_task(scheduled_snapshots(snapshot_every)) if snapshot_every else None
        )
        try:
            yield
        finally:
            if schedule is not None:
                schedule.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await schedule
            store.close()

    async def require_key(key: str | None = Depends(_API_KEY)) -> None:
        if api_key is not None and not (key and secrets.compare_digest(key, api_key)):
            raise _Unauthorized()

    app = FastAPI(
        title="rolemem", description="Memory for LLM role-play characters.", lifespan=lifespan
    )
    app.include_router(admin.public)
    for router in (
        query.router,
        recall.router,
        turn.router,
        lines.router,
        official.router,
        admin.router,
    ):
        app.include_router(router, dependencies=[Depends(require_key)])

    @app.exception_handler(RolememError)
    async def rolemem_error(request: Request, exc: RolememError) -> JSONResponse:
        return JSONResponse(
            status_code=400, content={"error": {"type": type(exc).__name__, "message": str(exc)}}
        )

    @app.exception_handler(TypeError)
    async def type_error(request: Request, exc: TypeError) -> JSONResponse:
        # the library's own argument checks raise TypeError with the field named
        return JSONResponse(
            status_code=400, content={"error": {"type": "TypeError", "message": str(exc)}}
        )

    @app.exception_handler(_Unauthorized)
    async def unauthorized(request: Request, exc: _Unauthorized) -> JSONResponse:
        return JSONResponse(
            status_code=401,
            content={
                "error": {"type": "Unauthorized", "message": "missing or wrong X-API-Key header"}
            },
        )

    return app


class _Unauthorized(Exception):
    pass
