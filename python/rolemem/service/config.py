"""Designer config per character: import the designers' JSON (validated by the SQL rules, then
the character's rows replaced in one transaction), export it back."""

from __future__ import annotations

import warnings
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request

from ..character_config import (
    ConfigError,
    ConfigWarning,
    export_designer_json,
    parse_designer_json,
)
from ..character_memory import store_config, stored_config
from .errors import responses
from .schemas.admin import ConfigImported, DesignerConfig, DesignerConfigIn
from .schemas.common import ID_LENGTH
from .state import Store

router = APIRouter(tags=["designers: character config"])

CharacterId = Annotated[
    str,
    Path(min_length=1, max_length=ID_LENGTH, description="The character.", examples=["qiyu"]),
]


def _store(request: Request) -> Store:
    store: Store = request.app.state.store
    return store


@router.post(
    "/config/import",
    response_model=ConfigImported,
    summary="Import a character's designer config",
    description="The designers' JSON for one character (`character_id`, `attributes`, "
    "`events`, `dialogue_styles`, entries with 关键词/内容/强度/日期/queryParams): checked "
    "by the SQL rules, then that character's rows replaced. It is the deployment's config: "
    "`dbt build` reads it and never replaces it. Sizes outside the spec's advice come back "
    "as advice.",
    responses=responses(400, 401, 413, 422),
)
async def import_config(request: Request, body: DesignerConfigIn) -> Any:
    store = _store(request)

    def write() -> dict[str, Any]:
        with warnings.catch_warnings(record=True) as advice:
            warnings.simplefilter("always", ConfigWarning)
            config = parse_designer_json(body.model_dump())
            if not any(config.tables.values()):
                raise ConfigError("the designer config has no entries")
            with store.write_lock:
                written = store_config(store.con, config)
        store.forget_character(body.character_id)
        return {
            "character_id": body.character_id,
            "written": written,
            "advice": [str(item.message) for item in advice],
        }

    return await store.run(None, write)


@router.get(
    "/config/{character_id}",
    response_model=DesignerConfig,
    response_model_exclude_none=True,
    summary="Export a character's designer config",
    description="The character's config as the designers' JSON (what the import takes).",
    responses=responses(400, 401, 422),
)
async def export_config(request: Request, character_id: CharacterId) -> Any:
    store = _store(request)
    config = await store.run(request, stored_config, store.con, character_id)
    return export_designer_json(config, character_id)
