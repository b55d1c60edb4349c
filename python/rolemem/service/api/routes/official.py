"""Official (designer) memories per agent: export, import, add, edit, delete. These routes act
on official memories only: a player's memory id is a 404 and nothing changes. Imports embed
their events on the bulk pool, outside any lock, and write in one transaction."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request

from ...core.body_route import BodyRoute
from ...core.errors import responses
from ...schemas.common import MAX_ID
from ...schemas.memories import (
    Archived,
    CreatedEntity,
    CreatedEvent,
    Edited,
    OfficialEntity,
    OfficialEvent,
    OfficialExport,
    OfficialImport,
    OfficialImported,
    OfficialMemoryEdit,
)
from ..deps import DIGITS, Kind, StoreDep, delete_memory, edit_memory, text_id

router = APIRouter(tags=["designers: official memories"], route_class=BodyRoute)
shared = APIRouter(tags=["designers: official memories"], route_class=BodyRoute)

AgentId = Annotated[str, text_id(Path, "The agent.", "qiyu")]
MemoryId = Annotated[
    int, Path(ge=1, le=MAX_ID, description="The memory's id.", examples=[3]), DIGITS
]


@shared.get(
    "/official/{agent_id}",
    response_model=OfficialExport,
    summary="Export an agent's official memories",
    description="Every official event and entity of the agent, in the shape the import takes.",
    responses=responses(422, 503),
)
async def export_official(request: Request, store: StoreDep, agent_id: AgentId) -> Any:
    return await store.run(store.memory.export_official, agent_id, request=request, budget=False)


@router.post(
    "/official/import",
    response_model=OfficialImported,
    summary="Import official memories",
    description="Add an agent's official events and entities (the export's shape), all or "
    "nothing; events are embedded first, apart from requests and outside any lock.",
    responses=responses(400, 413, 422, 503),
)
async def import_official(store: StoreDep, body: OfficialImport) -> Any:
    events, entities = await store.run(
        store.retried, store.memory.import_official, body.model_dump(), pool=store.bulk
    )
    return {"events": events, "entities": entities}


@router.post(
    "/official/events",
    response_model=CreatedEvent,
    summary="Add an official event",
    description="One event of the agent's story, recalled for every player of the agent.",
    responses=responses(400, 413, 422, 503),
)
async def add_event(store: StoreDep, body: OfficialEvent) -> Any:
    event_id = await store.run(
        store.retried,
        store.memory.add_event,
        user_id=None,
        scope="official",
        pool=store.bulk,
        **body.model_dump(exclude_none=True),
    )
    return {"event_id": event_id}


@router.post(
    "/official/entities",
    response_model=CreatedEntity,
    summary="Add an official entity memory",
    description="One attribute or relation of the agent's world, for every player.",
    responses=responses(400, 413, 422, 503),
)
async def add_entity(store: StoreDep, body: OfficialEntity) -> Any:
    fields = body.model_dump(exclude_none=True)  # no updated_at: add_entity's now
    entity_id = await store.run(
        store.retried, store.memory.add_entity, user_id=None, scope="official", **fields
    )
    return {"entity_id": entity_id}


@router.patch(
    "/official/{kind}/{memory_id}",
    response_model=Edited,
    summary="Edit an official memory",
    description="Change the given fields of an official memory (a player's id is a 404).",
    responses=responses(400, 404, 413, 422, 503),
)
async def edit(store: StoreDep, kind: Kind, memory_id: MemoryId, body: OfficialMemoryEdit) -> Any:
    return await edit_memory(store, kind, memory_id, body, scope="official", pool=store.bulk)


@router.delete(
    "/official/{kind}/{memory_id}",
    response_model=Archived,
    summary="Delete an official memory",
    description="Moved to the archive (reason deleted); a player's id is a 404.",
    responses=responses(404, 422, 503),
)
async def delete(store: StoreDep, kind: Kind, memory_id: MemoryId) -> Any:
    return await delete_memory(store, kind, memory_id, scope="official")
