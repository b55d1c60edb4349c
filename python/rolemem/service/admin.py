"""/health (no key), /status (how the engine's work was shared) and /snapshot (a read-only
copy for analysts and dbt)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from .errors import responses
from .schemas.admin import Health, Snapshot, Status
from .state import Store

public = APIRouter(tags=["service"])
router = APIRouter(tags=["service"])


@public.get(
    "/health",
    response_model=Health,
    summary="Is the service up",
    description="Answers while the service runs; needs no key.",
)
async def health() -> Any:
    return {"status": "ok"}


@router.get(
    "/status",
    response_model=Status,
    summary="How recall work was shared",
    description="Recall requests waiting while a recall statement runs are answered together "
    "by the next one (`--max-batch`): statements run, requests answered, the largest batch; "
    "and the extraction batches queued.",
    responses=responses(401),
)
async def status(request: Request) -> Any:
    store: Store = request.app.state.store
    return store.status()


@router.post(
    "/snapshot",
    response_model=Snapshot,
    summary="Write a snapshot for analysts",
    description="A consistent read-only copy of the whole store (every table at one moment) "
    "at the service's --snapshot path: dbt and analysts read it while the service owns the "
    "file.",
    responses=responses(401, 404),
)
async def snapshot(request: Request) -> Any:
    store: Store = request.app.state.store
    path, size = await store.run(None, store.snapshot)
    return {"path": path, "bytes": size}
