"""Bulk import (`POST /saves/{id}/import`): one transaction written a chunk at a time by the
append's own statements (memory_builder.saves.import_lines), its body read and bounded before
the request guard (core/import_body.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.exceptions import RequestValidationError
from pydantic import TypeAdapter, ValidationError

from ....memory_builder import saves
from ...core.body_route import BodyRoute
from ...core.errors import UnsupportedMediaType, invalid, responses
from ...core.import_body import NDJSON, ROWS
from ...core.state import Store
from ...schemas.common import USER_ID
from ...schemas.saves import Imported, LineIn, Observe
from ..deps import StoreDep, for_store, resolve_role, text_id
from .saves import IdempotencyKey, SaveId

router = APIRouter(tags=["saves"], route_class=BodyRoute)
_LINES: TypeAdapter[list[LineIn]] = TypeAdapter(list[LineIn])


def checked_rows(rows: Any) -> list[dict[str, Any]]:
    """Each row as an append's line (LineIn), or the 422 naming `lines[i].field`."""
    if rows is None:
        raise UnsupportedMediaType(
            "the body must be NDJSON: send it with Content-Type: application/x-ndjson, one "
            "line object per row",
            field="Content-Type",
        )
    try:
        lines = [line.model_dump() for line in _LINES.validate_python(rows)]
    except ValidationError as exc:  # the first row refused, as `lines[i].field`
        first = exc.errors()[0]
        raise RequestValidationError([{**first, "loc": ("body", "lines", *first["loc"])}]) from None
    if not lines:
        raise invalid(("body", "lines"), "at least one line")
    return lines


def _import(
    store: Store, save_id: int, user_id: str, rows: Any, key: str | None, flush: bool
) -> dict[str, Any]:
    lines = checked_rows(rows)
    now = datetime.now()
    answer = store.idempotent(
        key,
        user_id,
        "/saves/import",
        [save_id, user_id, rows],
        for_store(store, saves.import_lines, save_id, lines, user_id, default_time=now),
    )
    observed = []
    for role_id in dict.fromkeys(line["role_id"] for line in lines if line["role_id"] is not None):
        _, agent_id = resolve_role(store, role_id)
        extraction = "disabled"
        if agent_id is not None:
            observe = Observe(role_id=role_id, agent_id=agent_id)
            extraction = store.observe_after(answer["save_id"], user_id, observe, now, flush)
        observed.append({"role_id": role_id, "agent_id": agent_id, "extraction": extraction})
    if not observed:
        store.refresh_later(answer["save_id"])
    return {**answer, "observed": observed}


@router.post(
    "/saves/{save_id}/import",
    response_model=Imported,
    summary="Import a chat history",
    description="A whole history onto the save's tip, oldest first, in one transaction: the "
    "body is `application/x-ndjson`, one line object per row with the fields of an append's "
    "line (`LineIn`). A row that is not a valid line is a 422 naming `lines[i].field`, and "
    "nothing is written. The import has a size limit of its own (`--import-max-bytes`, "
    "`--import-max-lines`: 413). Lines without `created_at` get the time of the import. "
    "Afterwards the memory loop observes the save for each character that spoke (a role "
    "with an agent_id) and extracts the due turns in the background, a batch at a time "
    "(`memory_status`: pending turns going down); with `flush=true` every imported turn, the "
    "remainder below the batch size included. Send an Idempotency-Key to retry safely.",
    responses=responses(400, 403, 404, 409, 413, 415, 422, 503),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                NDJSON[0].decode(): {
                    "schema": {"$ref": "#/components/schemas/LineIn"},
                    "example": '{"attribute": "user", "content": "你好"}\n'
                    '{"attribute": "assistant", "content": "你好呀", "role_id": 1}\n',
                }
            },
        }
    },
)
async def import_lines(
    request: Request,
    store: StoreDep,
    save_id: SaveId,
    user_id: Annotated[str, text_id(Query, USER_ID, "mumu")],
    key: IdempotencyKey = None,
    flush: Annotated[
        bool,
        Query(
            description="Extract every pending turn, the remainder below the batch size "
            "(extract_at_turns) included, not only the full batches.",
            examples=[True],
        ),
    ] = False,
) -> Any:
    rows = getattr(request.state, ROWS, None)
    return await store.run(_import, store, save_id, user_id, rows, key, flush)
