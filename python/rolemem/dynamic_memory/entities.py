"""Writing entity memories: inserted, or merged into the same entity and keyword."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..schema.memory import memory_table
from ..sql.project import write_sql
from .base import Context
from .checks import _scope, checked_text, naive_time
from .contract import EntityRecord, checked
from .sql import _SOURCE_FIELDS


def checked_entity(
    *,
    scope: Any,
    user_id: Any,
    agent_id: Any,
    user_name: Any,
    updated_at: Any,
    **fields: Any,
) -> dict[str, Any]:
    """An entity memory's checked values, as the write statements bind them: whose it is,
    then its own `fields` (entity_name, entity_type, kind, keyword, description) and time by
    the memory's contract (EntityRecord: the service's too)."""
    user_id = _scope(scope, user_id)
    at = naive_time(updated_at or datetime.now(), "updated_at")
    entity = checked(EntityRecord, {**fields, "updated_at": at})
    return {
        "scope": scope,
        "agent_id": checked_text(agent_id, "agent_id"),
        "user_id": user_id,
        "user_name": checked_text(user_name, "user_name", required=False),
        **entity.model_dump(exclude={"updated_at"}),
        "at": entity.updated_at,
    }


class Entities:
    """Entity memories in."""

    def __init__(self, context: Context) -> None:
        self.context = context

    def add_entity(
        self,
        *,
        user_id: str | None,
        agent_id: str,
        entity_name: str,
        entity_type: str,
        kind: str,
        keyword: str,
        description: str,
        updated_at: datetime | None = None,
        user_name: str | None = None,
        scope: str = "user",
    ) -> int:
        """Store an entity memory. The same (scope, agent, user, entity, kind, keyword) again
        merges: the new description is appended unless already there, and strength grows by
        the spacing increment (seed memory_strength_increments) for the time since its last
        update."""
        params = checked_entity(
            scope=scope,
            user_id=user_id,
            agent_id=agent_id,
            entity_name=entity_name,
            entity_type=entity_type,
            kind=kind,
            keyword=keyword,
            description=description,
            updated_at=updated_at,
            user_name=user_name,
        )
        self.context.writable()
        with self.context.store.transaction() as cur:
            return self.write_entity(cur, params)

    def write_entity(
        self, cur: Any, params: Mapping[str, Any], source: Mapping[str, Any] | None = None
    ) -> int:
        """Insert or merge one entity (params from `checked_entity`) inside the caller's
        transaction, with its mention (a player's: the lines it came from, `source`'s
        _MENTION_SOURCE and line_ids; none: added by hand, shown wherever the entity is)."""
        table = memory_table("memory_entity", params["scope"])
        engine = self.context.store.name
        row = cur.execute(
            write_sql("merge_memory_entity", table, engine=engine),
            {k: v for k, v in params.items() if k != "entity_type"},
        ).fetchone()
        if row is None:
            row = cur.execute(
                write_sql("insert_memory_entity", table, engine=engine), params
            ).fetchone()
        assert row is not None  # insert ... returning always answers one row
        if params["scope"] == "user":
            cur.execute(
                write_sql("insert_entity_mention", engine=engine),
                {
                    **_mention_source(source or {}),
                    "entity_id": row[0],
                    "user_id": params["user_id"],
                    "agent_id": params["agent_id"],
                    "description": params["description"],
                    "created_at": params["at"],
                },
            )
        return int(row[0])


# where a mention came from (macro insert_entity_mention); all null for one added by hand
_MENTION_SOURCE = (*_SOURCE_FIELDS, "target_key")


def _mention_source(source: Mapping[str, Any]) -> dict[str, Any]:
    """A mention's source as the write statements bind it (its lines as JSON)."""
    return {
        **{name: source.get(name) for name in _MENTION_SOURCE},
        "line_ids": json.dumps([int(line) for line in source.get("line_ids") or []]),
    }


def rewrite_mentions(
    cur: Any,
    entity_id: int,
    source: Mapping[str, Any],
    now: datetime,
    *,
    engine: str,
) -> None:
    """A player's entity whose description was rewritten (an edit, an LLM consolidation):
    its mentions replaced by one of the new description citing `source` (as
    Entities.write_entity's; empty: no lines, shown wherever the entity is), inside the
    caller's transaction."""
    cur.execute(
        write_sql("delete_memories", "memory_entity_mention", "entity_id"), {"ids": [entity_id]}
    )
    cur.execute(
        write_sql("rewrite_entity_mention", engine=engine),
        {**_mention_source(source), "entity_id": entity_id, "now": now},
    )
