"""What the routes share: the key header keyed routes declare, the store, and the checks
several routes make the same way. Whether a key may call a route is decided once, before the
body is read, by the gate (core/gate.py, by core/keys.py's rule)."""

from __future__ import annotations

from fastapi import Request
from fastapi.security import APIKeyHeader

from ...errors import ConflictError
from ...memory_builder import saves
from ..core.errors import missing
from ..core.state import Store

API_KEY = APIKeyHeader(
    name="X-API-Key",
    auto_error=False,
    description="A key of the service: --api-key, --designer-key or one of the --keys file; "
    "its role says which routes it reaches, its players glob which players it may name.",
)


def store_of(request: Request) -> Store:
    store: Store = request.app.state.store
    return store


def check_own_save(store: Store, save_id: int | None, user_id: str) -> None:
    """A read about a save reads the player's own only (another's is not found); on Citus
    the save's row is read on the player's shard (the engine's player_filter)."""
    if save_id is not None:
        with store.engine.reading() as cur:
            saves.owned_save(
                cur,
                save_id,
                user_id,
                engine=store.engine.name,
                open_ownerless=store.settings.open_ownerless_saves,
            )


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
    raise missing(f"{where}{field}", "give it: a script NPC has no role")
