"""Designer config per character: import the designers' JSON (validated by the SQL rules, then
the character's rows replaced in one transaction), export it back."""

from __future__ import annotations

import warnings
from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Request, Response
from pydantic import TypeAdapter

from ....character_memory import store_config, stored_config
from ....character_memory.config import (
    ConfigError,
    ConfigWarning,
    export_designer_json,
    parse_designer_json,
)
from ....character_memory.contract import ConfigId
from ....character_memory.sillytavern import from_lorebook, to_lorebook
from ....character_memory.unlock_matrix import unlock_matrix
from ...core.body_route import BodyRoute
from ...core.errors import responses
from ...core.state import Store
from ...schemas.admin import (
    CharacterList,
    ConfigImported,
    DesignerConfig,
    DesignerConfigIn,
    Lorebook,
    LorebookImported,
    UnlockMatrix,
    lorebook_schema,
)
from ...schemas.component import Component
from ...schemas.storable import StorableJson
from ..deps import StoreDep, text_id

router = APIRouter(tags=["designers: character config"], route_class=BodyRoute)
shared = APIRouter(tags=["designers: character config"], route_class=BodyRoute)

_EXPORT: TypeAdapter[DesignerConfig] = TypeAdapter(DesignerConfig)
CharacterId = Annotated[ConfigId, text_id(Path, "The character.", "qiyu")]


@router.post(
    "/config/import",
    response_model=ConfigImported,
    summary="Import a character's designer config",
    description="The designers' JSON for one character (`character_id`, `attributes`, "
    "`events`, `dialogue_styles`, entries with 关键词/内容/强度/日期/queryParams): checked "
    "by the SQL rules, then that character's rows replaced. It is the deployment's config: "
    "`dbt build` reads it and never replaces it. Sizes outside the spec's advice come back "
    "as advice.",
    responses=responses(400, 413, 422, 503),
)
async def import_config(store: StoreDep, body: DesignerConfigIn) -> Any:
    return await _import(store, body.character_id, body.model_dump())


@router.post(
    "/config/import/sillytavern/{character_id}",
    response_model=LorebookImported,
    summary="Import a SillyTavern lorebook or character card",
    description="A World Info file (`{entries: {uid: entry}}`), a character card V2/V3 "
    "(`data.character_book`) or a bare `character_book`, as the character's designer config: "
    "keys -> 关键词, content -> 内容, comment -> category, order -> 强度, disabled -> never "
    "unlocked, game-state conditions from `extensions.rolemem` ({kind, date, queryParams}). "
    "Every other field is carried in the returned `document` and listed in `report`.",
    responses=responses(400, 413, 422, 503),
)
async def import_lorebook(
    store: StoreDep,
    character_id: CharacterId,
    lorebook: Annotated[
        dict[str, StorableJson],
        Component("SillyTavernLorebook", lorebook_schema),
        Body(description="The SillyTavern JSON."),
    ],
) -> Any:
    conversion = from_lorebook(lorebook, character_id)
    answer = await _import(store, character_id, conversion.document)
    return {**answer, "report": conversion.report, "document": conversion.document}


async def _import(store: Store, character_id: str, document: dict[str, Any]) -> Any:
    def stored(config: Any) -> dict[str, int]:
        with store.write_lock:  # one transaction: a retry replaces the rows again
            return store_config(store.engine, config)

    def write() -> dict[str, Any]:
        with warnings.catch_warnings(record=True) as advice:
            warnings.simplefilter("always", ConfigWarning)
            config = parse_designer_json(document)
            if not any(config.tables.values()):
                raise ConfigError("the designer config has no entries")
            written = store.retried(stored, config)
        store.forget_configs()
        return {
            "character_id": character_id,
            "written": written,
            "advice": [str(item.message) for item in advice],
        }

    return await store.run(write)


@shared.get(
    "/config",
    response_model=CharacterList,
    summary="List the configured characters",
    description="Every character the designer config holds (imported JSON or lorebooks), by "
    "id, with its entries per kind: what the other /config routes take.",
    responses=responses(503),
)
async def list_characters(request: Request, store: StoreDep) -> Any:
    counts = await store.run(store.characters, request=request)
    return {
        "characters": [
            {"character_id": character_id, "entries": entries}
            for character_id, entries in sorted(counts.items())
        ]
    }


@shared.get(
    "/config/{character_id}",
    response_model=DesignerConfig,
    response_model_exclude_none=True,
    summary="Export a character's designer config",
    description="The character's config as the designers' JSON (what the import takes).",
    responses=responses(404, 422, 503),
)
async def export_config(request: Request, store: StoreDep, character_id: CharacterId) -> Response:
    # checked and serialized as FastAPI would, off the event loop (seconds for tens of MB),
    # one at a time on the exports' pool (a build holds several times its answer's size)
    def export() -> bytes:
        config = _EXPORT.validate_python(_document(store, character_id))
        return _EXPORT.dump_json(config, by_alias=True, exclude_none=True)

    built = await store.run(export, pool=store.exports, request=request, budget=False)
    return Response(built, media_type="application/json")


@shared.get(
    "/config/{character_id}/sillytavern",
    response_model=Lorebook,
    summary="Export a character's config as a SillyTavern World Info file",
    description="The character's entries as World Info (keys, content, comment = category, "
    "order from 强度, disable) with rolemem's kind, date and queryParams under "
    "`extensions.rolemem`. The fields an import carried are in the document it returned.",
    responses=responses(404, 422, 503),
)
async def export_lorebook(
    request: Request, store: StoreDep, character_id: CharacterId
) -> dict[str, Any]:
    def export() -> dict[str, Any]:
        return to_lorebook(_document(store, character_id))

    return await store.run(export, pool=store.exports, request=request, budget=False)


def _document(store: Store, character_id: str) -> dict[str, Any]:
    return export_designer_json(stored_config(store.engine, character_id), character_id)


@shared.get(
    "/config/{character_id}/unlock_matrix",
    response_model=UnlockMatrix,
    summary="What each intimacy/exploration level unlocks",
    description="Per entry of the character and per pair of intimacy and exploration levels "
    "(1-5): whether a context holding those levels unlocks it, and whether its level "
    "conditions alone hold (a condition on another field, e.g. scene, is named in "
    "`other_fields`). The mart character_unlock_matrix over the stored config.",
    responses=responses(404, 422, 503),
)
async def export_unlock_matrix(request: Request, store: StoreDep, character_id: CharacterId) -> Any:
    cells = await store.run(unlock_matrix, store.engine, character_id, request=request)
    return {"character_id": character_id, "cells": cells}
