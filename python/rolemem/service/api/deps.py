"""What the routes share: the key header keyed routes declare, the store, the parameters
several routes name alike, and the checks several routes make the same way. Whether a key may
call a route is decided once, before the body is read, by the gate (core/gate.py, by
core/keys.py's rule)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Path, Request
from fastapi.security import APIKeyHeader
from pydantic import BaseModel, BeforeValidator

from ...dynamic_memory import player_memories
from ...errors import ConflictError
from ...memory_builder import roles, saves
from ..core.errors import invalid
from ..core.state import Store
from ..schemas.common import ID_LENGTH
from ..schemas.memories import MemoryKind

T = TypeVar("T")

API_KEY = APIKeyHeader(
    name="X-API-Key",
    auto_error=False,
    description="A key of the service: --api-key, --designer-key or one of the --keys file; "
    "its role says which routes it reaches, its players glob which players it may name.",
)


async def _store(request: Request) -> Store:
    # async: FastAPI runs a plain function's dependency on its thread pool
    store: Store = request.app.state.store
    return store


StoreDep = Annotated[Store, Depends(_store)]


def text_id(where: Callable[..., Any], description: str, example: str | None = None) -> Any:
    """A text id (a player, an agent, a character) as a path or query parameter (`where`:
    FastAPI's Path or Query): not empty, at most ID_LENGTH characters, as in a body."""
    examples = None if example is None else [example]
    return where(min_length=1, max_length=ID_LENGTH, description=description, examples=examples)


def _digits(value: Any) -> Any:
    # pydantic reads '5_0' as 50 and '5.0', ' 5', '+5' as 5; a '-' before a number other
    # than 0 is let through to the bound's own message (no path or query integer is
    # negative), '-0' is refused as '+0' is (it is no negative number)
    if isinstance(value, str):
        digits = value.removeprefix("-")
        if not (value.isascii() and digits.isdigit() and (digits == value or digits.strip("0"))):
            raise ValueError("must be a whole number in ASCII digits (0-9)")
    return value


# after an integer parameter's Path or Query: its bounds stay the integer's (JSON Schema's
# minimum and maximum)
DIGITS = BeforeValidator(_digits)


# the kind of memory the paths that edit or delete one name (a player's or an official one)
Kind = Annotated[MemoryKind, Path(description="event or entity (or events, entities).")]


async def edit_memory(store: Store, kind: str, memory_id: int, body: BaseModel, **more: Any) -> Any:
    """The memory's edit of the fields `body` gives (`more`: its scope, the pool), retried."""
    changes = body.model_dump(exclude_none=True)
    edit = player_memories.edit
    return await store.run(store.retried, edit, store.memory, kind, memory_id, changes, **more)


async def delete_memory(store: Store, kind: str, memory_id: int, **scope: Any) -> Any:
    """The memory archived (reason deleted) in `scope`, retried."""
    delete = player_memories.delete
    return await store.run(store.retried, delete, store.engine, kind, memory_id, **scope)


def for_store(
    store: Store, function: Callable[..., T], *args: Any, **kwargs: Any
) -> Callable[[Any], T]:
    """`function(cur, *args, **kwargs)` (memory_builder's, on a save) for the store: its
    engine (on Citus a save's rows are read on its player's shard), its rule for ownerless
    saves."""
    return lambda cur: function(
        cur,
        *args,
        engine=store.engine.name,
        open_ownerless=store.settings.open_ownerless_saves,
        **kwargs,
    )


def read_on(store: Store, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`function` of for_store on a reading cursor."""
    with store.engine.reading() as cur:
        return for_store(store, function, *args, **kwargs)(cur)


def check_own_save(store: Store, save_id: int | None, user_id: str) -> None:
    """A read about a save reads the player's own only (another's is not found)."""
    if save_id is not None:
        read_on(store, saves.owned_save, save_id, user_id)


def resolve_role(store: Store, role_id: int | None, **given: Any) -> tuple[str | None, str | None]:
    """roles.resolve on a reading cursor: (character_id, agent_id), the role's unless the
    request gives them (then they must agree)."""
    with store.engine.reading() as cur:
        return roles.resolve(cur, role_id, engine=store.engine.name, **given)


def required_from_role(value: str | None, role_id: int | None, field: str, where: str = "") -> str:
    """`value`, a field the request or its role gives (`where`: how errors name its
    parent). Neither gives it: a 409 for a role stored without it, a 422 for a script NPC
    (it has no role to give it)."""
    if value is not None:
        return value
    if role_id is not None:
        raise ConflictError(
            f"role {role_id} has no {field}: give {where}{field}", field=f"{where}{field}"
        )
    path = ("body", *f"{where}{field}".split("."))  # as a missing field's 422
    raise invalid(path, "is required: give it: a script NPC has no role")
