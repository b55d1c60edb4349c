"""The service's own routes, a router per route group (core/keys.py's): /status (the game's),
/snapshot (its own), /admin/maintenance and /admin/webhooks/replay (the admin's)."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from ....errors import NotFoundError
from ...core.body_route import BodyRoute
from ...core.errors import responses
from ...core.maintenance import start_maintenance
from ...schemas.admin import Maintenance, MaintenanceStarted, Replayed, Snapshot, Status
from ..deps import StoreDep

router = APIRouter(tags=["service"], route_class=BodyRoute)
snapshots = APIRouter(tags=["service"], route_class=BodyRoute)
admin = APIRouter(tags=["service"], route_class=BodyRoute)


@router.get(
    "/status",
    response_model=Status,
    summary="How recall work was shared",
    description="Recall requests waiting while a recall statement runs are answered together "
    "by the next one (`--max-batch`): statements run, requests answered, the largest batch; "
    "and the extraction batches queued.",
)
async def status(store: StoreDep) -> Any:
    return store.status()


@snapshots.post(
    "/snapshot",
    response_model=Snapshot,
    summary="Write a snapshot for analysts",
    description="A consistent read-only copy of the whole store (every table at one moment) "
    "at the service's --snapshot path: dbt and analysts read it while the service owns the "
    "file.",
    responses=responses(404),
)
async def snapshot(store: StoreDep) -> Any:
    path, size = await store.run(store.snapshot)
    return {"path": path, "bytes": size}


@admin.post(
    "/admin/maintenance",
    response_model=Maintenance,
    summary="Run maintenance now",
    description="Cleanup (archive the weakest memories of players due) and, with an LLM, "
    "consolidation, on the running store: one run at a time across every process of the "
    "store (409 while another runs), on a worker of its own. The report, or 202 when the run "
    "outlasts the request's time budget (it goes on; /status shows it when it ends); 503 "
    "when a step kept meeting conflicting writes (the steps before it stay done; try "
    "again). An admin key (or the designer key).",
    responses={
        **responses(409, 503),
        202: {"model": MaintenanceStarted, "description": "The run goes on after the answer."},
    },
)
async def maintenance(store: StoreDep) -> Any:
    run = asyncio.wrap_future(start_maintenance(store))
    try:
        return await asyncio.wait_for(asyncio.shield(run), store.settings.request_timeout)
    except TimeoutError:
        run.add_done_callback(lambda done: done.cancelled() or done.exception())
        return JSONResponse(status_code=202, content={"status": "running"})


@admin.post(
    "/admin/webhooks/replay",
    response_model=Replayed,
    summary="Replay failed webhook deliveries",
    description="Queue again every webhook delivery kept after its retries failed (kept in "
    "the store, across restarts): each is sent once more, signed anew, and forgotten once "
    "delivered; failing again, it stays. 404 when the service has no webhook. An admin key "
    "(or the designer key).",
    responses=responses(404),
)
async def replay_webhooks(store: StoreDep) -> Any:
    if store.webhooks is None:
        raise NotFoundError("the service has no webhook: start it with --webhook URL")
    return {"queued": await asyncio.to_thread(store.webhooks.replay)}
