"""/recall: character (designer) memory for one player input; /recall_preview: the same recall
for a designer (the designer key), explained and recording nothing."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from ...core.body_route import BodyRoute
from ...core.errors import responses
from ...core.state import Store
from ...schemas.recall import RecallPreviewRequest, RecallRequest, RecallResponse
from ..deps import StoreDep

router = APIRouter(tags=["recall"], route_class=BodyRoute)
designer = APIRouter(tags=["designers: character config"], route_class=BodyRoute)


async def _recall(
    request: Request, store: Store, body: RecallPreviewRequest, *, explain: bool, dry_run: bool
) -> dict[str, Any]:
    def run() -> Any:
        memory = store.character(body.character_id)
        options = body.model_dump(include={"require_match", "user_name", "char_name"})
        return memory.session(body.user_id).recall(
            body.text, body.context, **options, dry_run=dry_run, explain=explain
        )

    result = await store.run(run, request=request)
    return {
        "character_memory_attributes": result.attributes,
        "character_memory_event": result.events,
        "character_dialogue_style": result.dialogue_style,
        "explain": result.explain,
    }


@router.post(
    "/recall",
    response_model=RecallResponse,
    summary="Recall a character's designer memory",
    description="The three prompt blocks for the player's input under the game context: "
    "entries unlocked by the context and relevant to the text (a keyword in it, an "
    "association word, or a word in the content), ranked and capped, sticky for a few turns. "
    "`explain` says, per entry, why it is in or not.",
    responses=responses(400, 404, 413, 422, 503),
)
async def recall(request: Request, store: StoreDep, body: RecallRequest) -> Any:
    return await _recall(request, store, body, explain=body.explain, dry_run=body.dry_run)


@designer.post(
    "/recall_preview",
    response_model=RecallResponse,
    summary="Preview a recall (designers)",
    description="What `/recall` would answer the player for this input under this context, "
    "with `explain` (per entry, why it is in or not) and as a dry run: the sticky queue and "
    "turn counter do not move. Takes the designer key.",
    responses=responses(400, 404, 413, 422, 503),
)
async def recall_preview(request: Request, store: StoreDep, body: RecallPreviewRequest) -> Any:
    return await _recall(request, store, body, explain=True, dry_run=True)
