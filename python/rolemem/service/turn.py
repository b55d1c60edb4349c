"""/turn: the character's reply prompt for a save, with its trace (Companion.turn)."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Request

from .schemas import TurnRequest, TurnResponse

router = APIRouter()


@router.post("/turn", response_model=TurnResponse)
def turn(request: Request, body: TurnRequest) -> TurnResponse:
    companion = request.app.state.store.companion(body.character_id, body.agent_id)
    result = companion.turn(
        save_id=body.save_id,
        user_id=body.user_id,
        message=body.message,
        role_id=body.role_id,
        script_role_id=body.script_role_id,
        context=body.context,
        now=body.now or datetime.now(),
        user_name=body.user_name,
        char_name=body.char_name,
    )
    return TurnResponse(
        messages=result.messages, token_counts=result.token_counts, trace=_plain(result.trace)
    )


def _plain(rows: list[dict]) -> list[dict]:
    """Trace rows as JSON values (timestamps as ISO text)."""
    return [
        {
            key: value.isoformat() if isinstance(value, datetime) else value
            for key, value in row.items()
        }
        for row in rows
    ]
