"""/recall: character (designer) memory for one player input."""

from __future__ import annotations

from fastapi import APIRouter, Request

from .schemas import RecallRequest, RecallResponse

router = APIRouter()


@router.post("/recall", response_model=RecallResponse)
def recall(request: Request, body: RecallRequest) -> RecallResponse:
    memory = request.app.state.store.character(body.character_id)
    result = memory.session(body.user_id).recall(
        body.text,
        body.context,
        require_match=body.require_match,
        user_name=body.user_name,
        char_name=body.char_name,
    )
    return RecallResponse(
        character_memory_attributes=result.attributes,
        character_memory_event=result.events,
        character_dialogue_style=result.dialogue_style,
        explain=result.explain,
    )
