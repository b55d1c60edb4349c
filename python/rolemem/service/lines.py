"""/lines: append dialogue lines to a save (one transaction), then, if asked, run the memory
loop for a character in the background (never on the request's path)."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, BackgroundTasks, HTTPException, Request

from .. import _duck, history
from .schemas import LinesRequest, LinesResponse

router = APIRouter()


@router.post("/lines", response_model=LinesResponse)
def append_lines(request: Request, body: LinesRequest, tasks: BackgroundTasks) -> LinesResponse:
    store = request.app.state.store
    with store.write_lock, _duck.transaction(store.con) as cur:
        ids = history.append_lines(cur, body.save_id, [line.model_dump() for line in body.lines])
        if ids is None:
            raise HTTPException(status_code=404, detail=f"no save with id {body.save_id}")
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
