"""Official (designer) memories per agent — export, import, add, edit, delete — and designer
config import for character memory."""

from __future__ import annotations

import warnings
from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request

from ..character_config import ConfigWarning, parse_designer_json
from ..character_memory import store_config
from .schemas import OfficialEdit, OfficialEntity, OfficialEvent

router = APIRouter()


@router.get("/official/{agent_id}")
def export_official(request: Request, agent_id: str) -> dict[str, Any]:
    return request.app.state.store.memory.export_official(agent_id)


@router.post("/official/import")
def import_official(request: Request, body: dict[str, Any]) -> dict[str, int]:
    store = request.app.state.store
    with store.write_lock:
        events, entities = store.memory.import_official(body)
    return {"events": events, "entities": entities}


@router.post("/official/events")
def add_event(request: Request, body: OfficialEvent) -> dict[str, int]:
    event_id = request.app.state.store.memory.add_event(
        user_id=None, scope="official", **body.model_dump(exclude_none=True)
    )
    return {"event_id": event_id}


@router.post("/official/entities")
def add_entity(request: Request, body: OfficialEntity) -> dict[str, int]:
    fields = body.model_dump(exclude_none=True)
    fields.setdefault("updated_at", datetime.now())
    entity_id = request.app.state.store.memory.add_entity(user_id=None, scope="official", **fields)
    return {"entity_id": entity_id}


@router.patch("/official/{kind}/{memory_id}")
def edit(request: Request, kind: str, memory_id: int, body: OfficialEdit) -> dict[str, str]:
    memory = request.app.state.store.memory
    update = {"events": memory.update_event, "entities": memory.update_entity}.get(kind)
    if update is None:
        return _unknown_kind(kind)
    update(memory_id, **body.fields)
    return {"status": "updated"}


@router.delete("/official/{kind}/{memory_id}")
def delete(request: Request, kind: str, memory_id: int) -> dict[str, str]:
    memory = request.app.state.store.memory
    remove = {"events": memory.delete_event, "entities": memory.delete_entity}.get(kind)
    if remove is None:
        return _unknown_kind(kind)
    remove(memory_id)
    return {"status": "deleted"}


@router.post("/config/import")
def import_config(request: Request, body: dict[str, Any]) -> dict[str, Any]:
    """One character's designer JSON (`{"character_id", "attributes", "events",
    "dialogue_styles"}`): validated by the SQL rules, then its seed rows replaced."""
    store = request.app.state.store
    with warnings.catch_warnings(record=True) as advice:  # sizes outside the spec's advice
        warnings.simplefilter("always", ConfigWarning)
        config = parse_designer_json(body, character_id=body.get("character_id"))
        with store.write_lock:
            written = store_config(store.con, config)
    store.forget_character(str(body.get("character_id") or ""))
    return {"written": written, "advice": [str(item.message) for item in advice]}


def _unknown_kind(kind: str) -> dict[str, str]:
    from ..dynamic_memory import MemoryInputError

    raise MemoryInputError(f"kind must be events or entities, got {kind!r}")
