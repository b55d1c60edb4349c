"""/turn: the character's reply prompt for a save, with its trace (Companion.turn)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request

from ...core.body_route import BodyRoute
from ...core.errors import responses
from ...schemas.recall import TurnRequest, TurnResponse
from ..deps import StoreDep, required_from_role, resolve_role

router = APIRouter(tags=["turn"], route_class=BodyRoute)


@router.post(
    "/turn",
    response_model=TurnResponse,
    summary="Build the prompt for a reply",
    description="Every memory layer of the character for this save, as OpenAI-style messages: "
    "the system prompt filled with the recalled designer memory and names, the dynamic "
    "memory (timeline and recalled events), the conversation (at least the newest turns, "
    "extracted or not) and the player's message; the trace says why each piece is there. "
    "`dry_run` previews (nothing counted, no queue moves). `regenerate` (no `message`) "
    "answers the prompt for a new reply in place of the save's tip, ending on the player line "
    "it answered, and stores nothing. A role created with its `character_id` (and "
    "`agent_id`) needs neither here.",
    responses=responses(400, 403, 404, 409, 413, 422, 503),
)
async def turn(request: Request, store: StoreDep, body: TurnRequest) -> Any:
    def run() -> Any:
        character_id, agent_id = resolve_role(
            store, body.role_id, character_id=body.character_id, agent_id=body.agent_id
        )
        character_id = required_from_role(character_id, body.role_id, "character_id")
        companion = store.companion(character_id, agent_id)
        fields = body.model_dump(exclude={"character_id", "agent_id", "now"})
        return companion.turn(**fields, now=body.now or datetime.now())

    result = await store.run(run, request=request)
    return {
        "messages": result.messages,
        "prompt_tokens": result.prompt_tokens,
        "trace": [
            {
                key: value.isoformat() if isinstance(value, datetime) else value
                for key, value in row.items()
            }
            for row in result.trace
        ],
    }
