"""Roles, saves and their lines: the save lifecycle a game drives
(rolemem.memory_builder.saves), each write one transaction, appends and regenerates idempotent
by key (per player), a save reachable by its player only: every player field of a request must
name the save's owner."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Header, Path, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from ....errors import ConflictError, RolememError
from ....memory_builder import erasure, saves
from ...core.body_route import BodyRoute
from ...core.errors import invalid, responses
from ...core.idempotency import HEADER, KEY_PATTERN, MAX_KEY_LENGTH
from ...core.memory_status import status_of
from ...core.state import Store
from ...schemas.common import ID_LENGTH, MAX_ID, USER_ID
from ...schemas.saves import (
    BranchPage,
    LegacyLinesAppend,
    LinesAppend,
    LinesAppended,
    MemoryStatus,
    Regenerate,
    Regenerated,
    Role,
    RoleCreate,
    Save,
    SaveCreate,
    SaveDeleted,
    SaveDetail,
    Tip,
    TipMove,
)
from ..deps import DIGITS, StoreDep, for_store, read_on, required_from_role, resolve_role, text_id

router = APIRouter(tags=["saves"], route_class=BodyRoute)

SaveId = Annotated[int, Path(ge=1, le=MAX_ID, description="The save.", examples=[2]), DIGITS]
UserQuery = Annotated[str | None, text_id(Query, USER_ID, "mumu")]
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias=HEADER,
        description="Any unique string per request (visible ASCII): a retry with the same key "
        "and body gets the first answer and writes nothing again (kept 24 h; another body: "
        "409).",
        examples=["append-2-000017"],
        min_length=1,
        max_length=MAX_KEY_LENGTH,
        pattern=KEY_PATTERN,
    ),
]
_WRITE_ERRORS = responses(400, 403, 404, 409, 413, 422, 503)


@router.post(
    "/roles",
    response_model=Role,
    status_code=201,
    summary="Create a role",
    description="A game character the AI plays; its name fills {{char}}, names its lines "
    "that show no display name and names it in extracted memories. With `character_id` "
    "(its designer config) and `agent_id` (its memory owner; default: the character_id), "
    "`/turn` and `observe` need only the role_id: an id they give anyway must be the "
    "role's (409 naming the field).",
    responses=responses(409, 413, 422, 503),
)
async def create_role(store: StoreDep, body: RoleCreate, key: IdempotencyKey = None) -> Any:
    return await store.run(
        store.idempotent,
        key,
        None,
        "/roles",
        body.model_dump(mode="json"),
        lambda cur: saves.create_role(
            cur, **body.model_dump(exclude={"id"}), role_id=body.id, engine=store.engine.name
        ),
    )


@router.post(
    "/saves",
    response_model=Save,
    status_code=201,
    summary="Create or fork a save",
    description="A new empty save for a player, or a fork whose tip is `from_line_id` (a line "
    "of one of the player's saves): the fork shares the lines up to it, nothing is copied, "
    "and its memory follows its own branch from there.",
    responses=responses(403, 404, 409, 413, 422, 503),
)
async def create_save(store: StoreDep, body: SaveCreate, key: IdempotencyKey = None) -> Any:
    return await store.run(
        store.idempotent,
        key,
        body.user_id,
        "/saves",
        body.model_dump(mode="json"),
        for_store(store, saves.create_save, **body.model_dump(exclude={"id"}), save_id=body.id),
    )


@router.get(
    "/saves/{save_id}",
    response_model=SaveDetail,
    summary="Describe a save",
    description="Its tip, the number of lines on its current branch and the characters that "
    "speak on it.",
    responses=responses(403, 404, 422, 503),
)
async def get_save(
    request: Request, store: StoreDep, save_id: SaveId, user_id: UserQuery = None
) -> Any:
    return await store.run(read_on, store, saves.describe, save_id, user_id, request=request)


def _delete(store: Store, save_id: int, user_id: str | None) -> dict[str, Any]:
    first = store.write(for_store(store, erasure.delete_save, save_id, user_id))
    deleted = erasure.erase(
        store.write,
        [first["save_id"]],
        first["deleted"],
        user_id=user_id,
        engine=store.engine.name,
    )
    return {"save_id": first["save_id"], "deleted": deleted}


@router.delete(
    "/saves/{save_id}",
    response_model=SaveDeleted,
    summary="Delete a save",
    description="The save, its own lines and what they produced: its extracted events (with "
    "their words and vectors), extraction batches, loop state and history; entities (which "
    "have no save) stay. A save other saves branch from is a 409 naming them: delete the "
    "forks first. Answers the rows deleted per table; deleting again is a 404. From its "
    "first step the save reads as gone (404) to every other request; a delete cut short is "
    "finished by the same request again.",
    responses=responses(403, 404, 409, 422, 503),
)
async def delete_save(store: StoreDep, save_id: SaveId, user_id: UserQuery = None) -> Any:
    return await store.run(_delete, store, save_id, user_id)


@router.get(
    "/saves/{save_id}/lines",
    response_model=BranchPage,
    summary="Page through a save's branch",
    description="The current branch root to tip, `limit` lines at a time from the tip: pass "
    "`next_before` as `before` for the page before.",
    responses=responses(400, 403, 404, 422, 503),
)
async def branch_lines(
    request: Request,
    store: StoreDep,
    save_id: SaveId,
    user_id: UserQuery = None,
    limit: Annotated[int, Query(ge=1, le=1000, description="Lines per page."), DIGITS] = 50,
    before: Annotated[
        int | None, Query(ge=1, le=MAX_ID, description="Only lines before this one."), DIGITS
    ] = None,
) -> Any:
    return await store.run(
        read_on,
        store,
        saves.branch_lines,
        save_id,
        user_id,
        limit=limit,
        before=before,
        request=request,
    )


def _append(store: Store, save_id: int, body: LinesAppend, key: str | None) -> dict[str, Any]:
    player = body.user_id
    targets = body.observed()
    for where, target in targets:
        if target.user_id is None:
            continue
        # one player per request: memories are extracted for the save's owner only
        if player is not None and target.user_id != player:
            raise ConflictError(
                f"{where}user_id must be the request's user_id (the save's player)",
                field=f"{where}user_id",
            )
        player = target.user_id
    if targets and player is None:
        # a save that is not the (unnamed) player's is a 404 as an append without observe
        # answers; only an ownerless save a game opens lacks the player observe needs
        read_on(store, saves.owned_save, save_id, None)
        raise RolememError("observe needs the player: give user_id", field="user_id")
    # each one's agent (the request's, else its role's), checked before anything is written
    observed = []
    for where, target in targets:
        _, agent_id = resolve_role(store, target.role_id, agent_id=target.agent_id, where=where)
        agent_id = required_from_role(agent_id, target.role_id, "agent_id", where)
        observed.append(target.model_copy(update={"agent_id": agent_id}))
    now = body.now or datetime.now()
    lines = [line.model_dump() for line in body.lines]
    answer = store.idempotent(
        key,
        player,
        "/saves/lines",
        [save_id, body.model_dump(mode="json", exclude={"save_id"})],  # POST /lines' too
        for_store(
            store,
            saves.append,
            save_id,
            lines,
            player,
            default_time=now,
            # the lines are played in the scene the append observes
            scene=targets[0][1].scene if targets else None,
        ),
    )
    # every character named is looked at, whoever spoke: each one's batch is queued when due
    answer["observed"] = [
        {
            **target.model_dump(include={"role_id", "script_role_id", "agent_id"}),
            "extraction": store.observe_after(save_id, player, target, now),
        }
        for target in observed
    ]
    # none named: disabled (observe_after refreshes the save's history)
    states = {item["extraction"] for item in answer["observed"]} or {
        store.observe_after(save_id, player, None, now)
    }
    answer["extraction"] = next(
        state for state in ("scheduled", "deferred", "not_due", "disabled") if state in states
    )
    return answer


@router.post(
    "/saves/{save_id}/lines",
    response_model=LinesAppended,
    summary="Append lines",
    description="Lines on the save's tip, in one transaction; the tip moves to the last. With "
    "`observe`, the memory loop checks whether a batch of turns is due for that character "
    "and queues its extraction (the answer says which). Send an Idempotency-Key to retry "
    "safely.",
    responses=_WRITE_ERRORS,
)
async def append_lines(
    store: StoreDep, save_id: SaveId, body: LinesAppend, key: IdempotencyKey = None
) -> Any:
    return await store.run(_append, store, save_id, body, key)


@router.post(
    "/lines",
    response_model=LinesAppended,
    summary="Append lines (the save in the body)",
    description="The same as `POST /saves/{save_id}/lines`.",
    responses=_WRITE_ERRORS,
)
async def append_lines_legacy(
    store: StoreDep, body: LegacyLinesAppend, key: IdempotencyKey = None
) -> Any:
    return await store.run(_append, store, body.save_id, body, key)


@router.post(
    "/saves/{save_id}/regenerate",
    response_model=Regenerated,
    summary="Regenerate the last reply",
    description="A new reply as a sibling of the tip (which must be a reply): it becomes the "
    "tip and the replaced reply's branch stays (a reload returns to it; memories extracted "
    "from it are hidden on the new branch). Send an Idempotency-Key to retry safely.",
    responses=_WRITE_ERRORS,
)
async def regenerate(
    store: StoreDep, save_id: SaveId, body: Regenerate, key: IdempotencyKey = None
) -> Any:
    now = body.now or datetime.now()
    answer = await store.run(
        store.idempotent,
        key,
        body.user_id,
        "/saves/regenerate",
        [save_id, body.model_dump(mode="json")],
        for_store(
            store, saves.regenerate, save_id, body.line.model_dump(), body.user_id, default_time=now
        ),
    )
    store.refresh_later(save_id)
    return answer


@router.put(
    "/saves/{save_id}/tip",
    response_model=Tip,
    summary="Reload a save point",
    description="Move the tip to a line of this save's tree (its own lines, or the history a "
    "fork shares); the branch from there is what the character remembers. Another save's "
    "line is refused (fork that save instead). A player (user) line is a 409 naming "
    "`line_id`, as a regenerate on one is: a save point is a reply or a system line.",
    responses=_WRITE_ERRORS,
)
async def move_tip(store: StoreDep, save_id: SaveId, body: TipMove) -> Any:
    tip = for_store(store, saves.set_tip, save_id, body.line_id, body.user_id)
    answer = await store.run(store.write, tip)
    store.refresh_later(save_id)
    return answer


# role_id and script_role_id, of which a request gives at most one (the route refuses both),
# as one object parameter (form, exploded: on the wire each property is its own query
# parameter): OpenAPI has no other way to relate two parameters
def _at_most_one(schema: dict[str, Any]) -> None:
    del schema["required"], schema["title"]  # neither is required: one object parameter
    schema["maxProperties"] = 1


class _OneRole(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra=_at_most_one)

    role_id: int = Field(ge=1, le=MAX_ID, description="The character, by role.")
    script_role_id: str = Field(
        min_length=1, max_length=ID_LENGTH, description="The character, by script NPC."
    )


ONE_ROLE = {
    "name": "role",
    "in": "query",
    "style": "form",
    "explode": True,
    "required": False,
    "description": "The character: by role (`role_id`) or by script NPC (`script_role_id`), "
    "at most one.",
    "schema": _OneRole.model_json_schema(),
}


@router.get(
    "/saves/{save_id}/memory_status",
    response_model=MemoryStatus,
    summary="Extraction state of a save",
    description="For one character of the save: turns waiting for extraction, the watermark, "
    "the last batch, the last failure and whether a batch is queued for the LLM. A character "
    "not fully named (no agent, or no role) is the one the memory loop observed last on the "
    "save among those named (none named: any); 404 when it has observed none.",
    responses=responses(403, 404, 409, 422, 503),
    openapi_extra={"parameters": [ONE_ROLE]},
)
async def memory_status(
    request: Request,
    store: StoreDep,
    save_id: SaveId,
    agent_id: Annotated[
        str | None,
        text_id(
            Query,
            "The agent (default: the role's agent_id; given for a role that has one, it must "
            "be the role's).",
        ),
    ] = None,
    user_id: UserQuery = None,
    # declared as ONE_ROLE
    role_id: Annotated[int | None, Query(ge=1, le=MAX_ID, include_in_schema=False), DIGITS] = None,
    script_role_id: Annotated[
        str | None, Query(min_length=1, max_length=ID_LENGTH, include_in_schema=False)
    ] = None,
) -> Any:
    if role_id is not None and script_role_id is not None:
        raise invalid(("query", "script_role_id"), "give at most one of role_id or script_role_id")
    return await store.run(
        status_of, store, save_id, user_id, agent_id, role_id, script_role_id, request=request
    )
