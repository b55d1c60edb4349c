"""A save x character's extraction state as `GET /saves/{id}/memory_status` answers it: the
pending turns and watermark (the loop's plan), the loop state, the last batch and maintenance
run (one statement, one snapshot), and whether a batch is queued."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import NotFoundError
from ...memory_builder import roles, saves
from ...sql.project import used, write_sql

if TYPE_CHECKING:
    from .state import Store


def status_of(
    store: Store,
    save_id: int,
    user_id: str | None,
    agent_id: str | None,
    role_id: int | None,
    script_role_id: str | None,
) -> dict[str, Any]:
    """The agent is the request's, else its role's (roles.resolve); a character not fully
    named (no agent, or no role) is the one the loop observed last on the save among those
    the request names (none named: any)."""
    with store.engine.reading() as cur:
        _, agent_id = roles.resolve(cur, role_id, engine=store.engine.name, agent_id=agent_id)
        save = saves.owned_save(
            cur,
            save_id,
            user_id,
            engine=store.engine.name,
            open_ownerless=store.settings.open_ownerless_saves,
        )
        if agent_id is None or (role_id is None and script_role_id is None):
            last = write_sql("last_observed_target", engine=store.engine.name)
            named = {
                "save_id": save["save_id"],
                "user_id": save["user_id"],
                "agent_id": agent_id,
                "role_id": role_id,
                "script_role_id": script_role_id,
            }
            found = cur.execute(last, used(last, named)).fetchone()
            if found is None or found[1:] == (None, None):
                raise NotFoundError(
                    f"the memory loop has not observed save {save_id}"
                    + (f" for agent {agent_id!r}" if agent_id is not None else "")
                    + ": give agent_id with role_id or script_role_id",
                    field="agent_id",
                )
            agent_id, role_id, script_role_id = found
    due = store.loop.due(
        save_id=save["save_id"],
        user_id=user_id or save["user_id"] or "unknown",
        agent_id=agent_id,
        role_id=role_id,
        script_role_id=script_role_id,
    )
    # one statement, one snapshot (two reads could see the failure before the commit and the
    # batch after it)
    (state,) = store.engine.records(
        write_sql("memory_status_row", engine=store.engine.name),
        {
            "save_id": save["save_id"],
            "target_key": due["target_key"],
            "user_id": save["user_id"],
            "agent_id": agent_id,
        },
    )
    return {
        "save_id": save["save_id"],
        "agent_id": agent_id,
        "target_key": due["target_key"],
        "pending_turns": due["pending_turns"],
        "watermark_line_id": due["watermark_line_id"],
        **state,
        "extraction": store.extraction.state((save["save_id"], due["target_key"])),
    }
