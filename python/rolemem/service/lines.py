"""/lines: append dialogue lines to a save (one transaction), then, in the background (never on
the request's path), bring the save's write-time history up to date, so the next /turn reads
it instead of paying the upkeep, and, if asked, run the memory loop for a character."""

from __future__ import annotations

import logging
from datetime import datetime

from fastapi import APIRouter, BackgroundTasks, Request

from .. import _duck, history, saves
from .schemas import LinesRequest, LinesResponse
from .state import Store

router = APIRouter()
log = logging.getLogger(__name__)


def refresh_save(store: Store, save_id: int) -> None:
    """The save's history tables after its new lines; if this fails, the next read of the save
    refreshes it (a stale save is never answered). Not under the write lock: appends to other
    saves need not wait for it, and a refresh meeting another one of the same save (a /turn
    reading it) retries (history.ensure_fresh)."""
    try:
        history.refresh_history(store.con, [save_id])
    except Exception:  # logged, not raised: the request has already been answered
        log.warning(
            "history refresh of save %s failed; the next read retries", save_id, exc_info=True
        )


@router.post("/lines", response_model=LinesResponse)
def append_lines(request: Request, body: LinesRequest, tasks: BackgroundTasks) -> LinesResponse:
    store = request.app.state.store
    with store.write_lock, _duck.transaction(store.con) as cur:
        ids = saves.append(cur, body.save_id, [line.model_dump() for line in body.lines], None)[
            "line_ids"
        ]
    tasks.add_task(refresh_save, store, body.save_id)
    if body.observe is not None and store.llm is not None:
        observe = body.observe
        loop = store.companion(observe.agent_id, observe.agent_id).loop
        tasks.add_task(
            loop.observe,
            save_id=body.save_id,
            user_id=observe.user_id,
            agent_id=observe.agent_id,
            role_id=observe.role_id,
            script_role_id=observe.script_role_id,
            scene=observe.scene,
            now=observe.now or datetime.now(),
        )
    return LinesResponse(line_ids=ids, tip_line_id=ids[-1])
