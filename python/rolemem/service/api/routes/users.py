"""A player's memories: list, timeline, archive, edit, delete (archived), forget, export. Every
route acts on that player's memories only: another player's or an official memory is a 404
and nothing changes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request

from ....dynamic_memory import player_memories
from ....dynamic_memory.archive import archived
from ....memory_builder import erasure
from ...core.body_route import BodyRoute
from ...core.errors import responses
from ...core.state import Store
from ...schemas.common import MAX_ID, MESSAGE_LENGTH
from ...schemas.memories import (
    Archived,
    ArchivePage,
    Edited,
    Export,
    FactEdit,
    FactItem,
    ForgetRequest,
    Forgotten,
    Knowledge,
    MemoryEdit,
    MemoryKind,
    MemoryPage,
    TimelineItem,
)
from ...schemas.saves import SavePage
from ..deps import DIGITS, Kind, StoreDep, check_own_save, delete_memory, edit_memory, text_id

router = APIRouter(tags=["player memories"], route_class=BodyRoute)

UserId = Annotated[str, text_id(Path, "The player.", "mumu")]
MemoryId = Annotated[
    int, Path(ge=1, le=MAX_ID, description="The memory's id.", examples=[17]), DIGITS
]
AgentQuery = Annotated[str | None, text_id(Query, "Only this agent's memories.")]
# the character and the save a listing of what it holds is read for (timeline, facts, knowledge)
AgentRequired = Annotated[str, text_id(Query, "The agent.")]
SaveQuery = Annotated[
    int | None, Query(ge=1, le=MAX_ID, description="The save being played."), DIGITS
]
Limit = Annotated[int, Query(ge=1, le=1000, description="Page size."), DIGITS]
Offset = Annotated[int, Query(ge=0, le=2**31 - 1, description="Items to skip."), DIGITS]


async def _on_save(
    request: Request,
    store: Store,
    read: Callable[..., Any],
    user_id: str,
    agent_id: str,
    save_id: int | None,
    **more: Any,
) -> Any:
    """`read` of what the agent holds about the player on a save (the player's own only)."""

    def checked() -> Any:
        check_own_save(store, save_id, user_id)
        return read(user_id=user_id, agent_id=agent_id, save_id=save_id, **more)

    return await store.run(checked, request=request)


@router.get(
    "/users/{user_id}/memories",
    response_model=MemoryPage,
    summary="List a player's memories",
    description="Live events and entity memories, newest first, with strength, time, the save "
    "an event came from and whether that save's current branch shows it.",
    responses=responses(400, 422, 503),
)
async def list_memories(
    request: Request,
    store: StoreDep,
    user_id: UserId,
    agent_id: AgentQuery = None,
    kind: Annotated[MemoryKind | None, Query(description="event or entity.")] = None,
    q: Annotated[
        str | None,
        Query(min_length=1, max_length=MESSAGE_LENGTH, description="Text the memory contains."),
    ] = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> Any:
    return await store.run(
        player_memories.list_memories,
        store.engine,
        user_id,
        agent_id=agent_id,
        kind=kind,
        q=q,
        limit=limit,
        offset=offset,
        request=request,
    )


@router.get(
    "/users/{user_id}/saves",
    response_model=SavePage,
    summary="List a player's saves",
    description="The player's saves, oldest first, forks included: each with its tip and, "
    "for a fork, its fork point.",
    responses=responses(422, 503),
)
async def list_saves(
    request: Request, store: StoreDep, user_id: UserId, limit: Limit = 50, offset: Offset = 0
) -> Any:
    def read() -> dict[str, Any]:
        with store.engine.reading() as cur:
            return erasure.list_saves(cur, user_id, limit=limit, offset=offset)

    return await store.run(read, request=request)


@router.get(
    "/users/{user_id}/timeline",
    response_model=list[TimelineItem],
    summary="A player's overview timeline",
    description="The newest events (前情提要) on the save's current branch, oldest first.",
    responses=responses(400, 403, 404, 422, 503),
)
async def timeline(
    request: Request,
    store: StoreDep,
    user_id: UserId,
    agent_id: AgentRequired,
    save_id: SaveQuery = None,
) -> Any:
    return await _on_save(request, store, store.loop.timeline, user_id, agent_id, save_id)


@router.get(
    "/users/{user_id}/facts",
    response_model=list[FactItem],
    summary="A player's facts",
    description="The facts the character holds about the player that are current on the "
    "save's branch (a later value on the branch replaces a `one` attribute's; a `many` "
    "value lasts until a later fact supersedes it), each with its lines. `history=true` "
    "adds the values a later fact ended, with the line that ended them. Without `save_id`, "
    "the facts of every save, ordered by their lines.",
    responses=responses(400, 403, 404, 422, 503),
)
async def facts(
    request: Request,
    store: StoreDep,
    user_id: UserId,
    agent_id: AgentRequired,
    save_id: SaveQuery = None,
    history: Annotated[bool, Query(description="Also the values a later fact ended.")] = False,
) -> Any:
    read = store.loop.memory.facts
    return await _on_save(request, store, read, user_id, agent_id, save_id, history=history)


@router.get(
    "/users/{user_id}/knowledge",
    response_model=Knowledge,
    summary="What a character knows about the player",
    description="What the character holds about the player on the save: the facts current on "
    "its branch, the player's entities and the `limit` strongest events the save may see, "
    "each with the lines it came from.",
    responses=responses(400, 403, 404, 422, 503),
)
async def knowledge(
    request: Request,
    store: StoreDep,
    user_id: UserId,
    agent_id: AgentRequired,
    save_id: SaveQuery = None,
    limit: Annotated[int, Query(ge=1, le=100, description="Events at most."), DIGITS] = 10,
) -> Any:
    read = store.loop.memory.knowledge
    return await _on_save(request, store, read, user_id, agent_id, save_id, limit=limit)


@router.get(
    "/users/{user_id}/archive",
    response_model=ArchivePage,
    summary="A player's archived memories",
    description="Memories cleanup, consolidation, edits, deletes and forgetting moved out of "
    "the live store, with the reason and the whole row as it was; oldest first.",
    responses=responses(422, 503),
)
async def archive(
    request: Request,
    store: StoreDep,
    user_id: UserId,
    agent_id: AgentQuery = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> Any:
    items = await store.run(
        archived,
        store.engine,
        user_id=user_id,
        agent_id=agent_id,
        limit=limit,
        offset=offset,
        request=request,
    )
    return {"items": items, "limit": limit, "offset": offset}


# before the routes of any kind: a fact's path is theirs with kind `fact`
@router.patch(
    "/users/{user_id}/memories/fact/{memory_id}",
    response_model=Edited,
    summary="Change a player's fact",
    description="A new value is a new fact stated at the same line, so it is current wherever "
    "the old one was; the old row stays (`GET /users/{user_id}/facts?history=true` shows it "
    "ended). Answers the new fact's id.",
    responses=responses(400, 404, 413, 422, 503),
)
async def edit_fact(store: StoreDep, user_id: UserId, memory_id: MemoryId, body: FactEdit) -> Any:
    change = store.memory.change_fact
    new_id = await store.run(
        store.retried, change, user_id=user_id, fact_id=memory_id, value=body.value
    )
    return {"memory_type": "fact", "memory_id": new_id, "status": "updated"}


@router.delete(
    "/users/{user_id}/memories/fact/{memory_id}",
    response_model=Archived,
    summary="Delete a player's fact",
    description="Moved to the archive (reason deleted): the value stated before it on a "
    "branch is current there again.",
    responses=responses(404, 422, 503),
)
async def delete_fact(store: StoreDep, user_id: UserId, memory_id: MemoryId) -> Any:
    await store.run(store.retried, store.memory.delete_fact, user_id=user_id, fact_id=memory_id)
    return {"memory_type": "fact", "memory_id": memory_id, "status": "archived"}


@router.patch(
    "/users/{user_id}/memories/{kind}/{memory_id}",
    response_model=Edited,
    summary="Edit a player's memory",
    description="Change the given fields (pin it, correct it). An event's new text is stored "
    "as a new event (its words and vectors follow the text); the old one is archived.",
    responses=responses(400, 404, 413, 422, 503),
)
async def edit(
    store: StoreDep,
    user_id: UserId,
    kind: Kind,
    body: MemoryEdit,
    memory_id: MemoryId,
) -> Any:
    return await edit_memory(store, kind, memory_id, body, scope="user", user_id=user_id)


@router.delete(
    "/users/{user_id}/memories/{kind}/{memory_id}",
    response_model=Archived,
    summary="Delete a player's memory",
    description="Moved to the archive (reason deleted), never destroyed; `forget` with purge "
    "destroys.",
    responses=responses(404, 422, 503),
)
async def delete(store: StoreDep, user_id: UserId, kind: Kind, memory_id: MemoryId) -> Any:
    return await delete_memory(store, kind, memory_id, scope="user", user_id=user_id)


@router.post(
    "/users/{user_id}/forget",
    response_model=Forgotten,
    summary="Forget a player",
    description="Archive every memory of the player (with one agent, or all); with "
    "`purge: true`, remove the memories, their archive and recall log for good and, without "
    "`agent_id`, the player's saves (forks included), lines, extraction batches, loop state, "
    "maintenance runs and idempotency records too (saves are not per agent), answering the "
    "rows deleted per table. A save of another player forked from the player's: 409. A 503 "
    "may leave a purge's saves part erased: the same request again finishes them.",
    responses=responses(400, 409, 413, 422, 503),
)
async def forget(store: StoreDep, user_id: UserId, body: ForgetRequest) -> Any:
    forgotten = await store.run(
        store.retried,
        player_memories.forget,
        store.engine,
        user_id,
        **body.model_dump(),
        write=store.write,
    )
    if body.purge and store.webhooks is not None:
        store.webhooks.emit(
            "player.purged", {"user_id": user_id, "agent_id": body.agent_id, **forgotten}
        )
    return forgotten


@router.get(
    "/users/{user_id}/export",
    response_model=Export,
    summary="Export a player's memories",
    description="Every live and archived memory of the player as JSON.",
    responses=responses(422, 503),
)
async def export(
    request: Request, store: StoreDep, user_id: UserId, agent_id: AgentQuery = None
) -> Any:
    return await store.run(
        player_memories.export,
        store.engine,
        user_id,
        agent_id=agent_id,
        request=request,
        budget=False,
    )
