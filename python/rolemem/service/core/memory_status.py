"""A save x character's extraction state as `GET /saves/{id}/memory_status` answers it: the
pending turns and watermark (the loop's plan), the loop state, the last batch and maintenance
run (one statement, one snapshot), and whether a batch is queued."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from ...errors import NotFoundError
from ...memory_builder import roles, saves
from ...sql.project import render_macro, used

if TYPE_CHECKING:
    from .state import Store


@functools.cache  # rendered once per engine
def _last_observed_sql(engine: str) -> str:
    return render_macro("last_observed_target", engine=engine)


# a save x character's loop state, last batch and the player's last maintenance run (on
# Citus each read names the save's player $user_id: macro player_filter, one shard)
_STATUS_SQL = """select s.last_observed_at, s.last_error, s.last_error_at,
    coalesce(s.failed_attempts, 0) as failed_attempts, s.next_attempt_at,
    b.batch_key as last_batch_key, b.extracted_at as last_extracted_at,
    (select max(ran_at) from memory_maintenance_run
    where user_id = $user_id and agent_id = $agent_id) as last_maintained_at
from (select 1 as one) as anchor
left join memory_loop_state as s
    on s.save_id = $save_id and s.target_key = $target_key and {state_player}
left join (
    select batch_key, extracted_at from memory_extraction_batch
    where save_id = $save_id and target_key = $target_key and {player}
    order by extracted_at desc, last_line_id desc limit 1
) as b on true"""


@functools.cache  # rendered once per engine
def _status_sql(engine: str) -> str:
    return _STATUS_SQL.format(
        state_player=render_macro("player_filter", "s.user_id", engine=engine),
        player=render_macro("player_filter", "user_id", engine=engine),
    )


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
            last = _last_observed_sql(store.engine.name)
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
    # one statement, one snapshot: the batch and the state it cleared are read together
    # (two reads could see the failure before the commit and the batch after it)
    (state,) = store.engine.records(  # the anchor's one row, joined or not
        _status_sql(store.engine.name),
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
