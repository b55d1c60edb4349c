"""One character, one id: a role carries its designer config (`character_id`) and the owner of
its dynamic memories (`agent_id`; default: its `character_id`, the rule in `stg_app__roles`).

A request naming the role (`/turn`, an append's `observe`) needs neither id; one it gives
anyway must be the role's (ConflictError naming both fields otherwise). A role without them
(or no role: a script NPC) leaves the ids to the request, as before roles carried them. A
role id that names no role is not found, as a line's is (the lines' check in `saves`).
"""

from __future__ import annotations

import functools
from typing import Any

from ..errors import ConflictError, NotFoundError
from ..sql.project import compose

# the one role, standing in for the game's whole `role` table
_ONE_ROLE_SQL = "select * from role where id = $role_id"
_IDS = ("role_name", "character_id", "agent_id")
_ROLE_SELECT = f"select {', '.join(_IDS)} from stg_app__roles"


@functools.cache  # rendered once per engine
def role_sql(engine: str) -> str:
    """The role's name and ids (bound $role_id), as the staging model resolves them."""
    return compose("stg_app__roles", {"source_role": _ONE_ROLE_SQL}, _ROLE_SELECT, engine=engine)


def role_ids(cur: Any, role_id: int, *, engine: str = "duckdb") -> dict[str, Any] | None:
    """The role's `role_name`, `character_id` and `agent_id` (resolved); None if no such role."""
    row = cur.execute(role_sql(engine), {"role_id": role_id}).fetchone()
    return None if row is None else dict(zip(_IDS, row, strict=True))


def unknown_role(role_id: int) -> str:
    """What a request naming no role is told."""
    return f"no role with id {role_id} (create it with POST /roles first)"


def resolve(
    cur: Any,
    role_id: int | None,
    *,
    character_id: str | None = None,
    agent_id: str | None = None,
    engine: str = "duckdb",
    where: str = "",
) -> tuple[str | None, str | None]:
    """(character_id, agent_id) of a request for `role_id`: each the request's when given (it
    must then equal the role's, else ConflictError naming the field, `where` its prefix), else
    the role's; the agent, else the character's id. None where neither says; a `role_id` of
    no role: NotFoundError."""
    role = role_ids(cur, role_id, engine=engine) if role_id is not None else None
    if role_id is not None and role is None:
        raise NotFoundError(unknown_role(role_id), field=f"{where}role_id")
    if role is not None:
        for name, given in (("character_id", character_id), ("agent_id", agent_id)):
            own = role[name]
            if given is not None and own is not None and given != own:
                raise ConflictError(
                    f"{where}{name} {given!r} is not role {role_id}'s {name} ({own!r}): "
                    f"omit {where}{name} (the role_id says it) or give the role's",
                    field=f"{where}{name}",
                )
        character_id = character_id or role["character_id"]
        agent_id = agent_id or role["agent_id"]
    return character_id, agent_id or character_id
