"""/recall: character (designer) memory for one player input."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from ...core.errors import responses
from ...core.state import Store
from ...schemas.recall import RecallRequest, RecallResponse

router = APIRouter(tags=["recall"])


@router.post(
    "/recall",
    response_model=RecallResponse,
    summary="Recall a character's designer memory",
    description="The three prompt blocks for the player's input under the game context: "
    "entries unlocked by the context and relevant to the text (a keyword in it, an "
    "association word, or a word in the content), ranked and capped, sticky for a few turns. "
    "`explain` says, per entry, why it is in or not.",
    responses=responses(400, 401, 404, 413, 422, 503),
)
async def recall(request: Request, body: RecallRequest) -> Any:
    store: Store = request.app.state.store

    def run() -> Any:
        memory = store.character(body.character_id)
        return memory.session(body.user_id).recall(
            body.text,
            body.context,
            require_match=body.require_match,
            user_name=body.user_name,
            char_name=body.char_name,
            dry_run=body.dry_run,
            explain=body.explain,
        )

    result = await store.run(request, run, timeout=store.settings.request_timeout)
    return {
        "character_memory_attributes": result.attributes,
        "character_memory_event": result.events,
        "character_dialogue_style": result.dialogue_style,
        "explain": result.explain,
    }
