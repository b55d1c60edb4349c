"""Writing entity memories: inserted, or merged into the same entity and keyword."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..schema.memory import memory_table
from ..sql.project import write_sql
from .base import _tracked
from .checks import (
    checked_entity,
)
from .store import _Events


class _Entities(_Events):
    """Entity memories in."""

    @_tracked
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
        self._writable()
        with self._store.transaction() as cur:
            return self._write_entity(cur, params)

    def write_entity(self, cur: Any, params: Mapping[str, Any]) -> int:
        """Insert or merge one entity (params from `checked_entity`) inside the caller's
        transaction."""
        return self._write_entity(cur, params)

    def _write_entity(self, cur: Any, params: Mapping[str, Any]) -> int:
        """Insert, or merge into the same (scope, agent, player, entity, kind, keyword): the
        description is appended unless already there and strength grows by the spacing
        increment for the time since the entity was last updated."""
        table = memory_table("memory_entity", params["scope"])
        row = cur.execute(
            write_sql("merge_memory_entity", table, engine=self._store.name),
            {k: v for k, v in params.items() if k != "entity_type"},
        ).fetchone()
        if row is None:
            row = cur.execute(
                write_sql("insert_memory_entity", table, engine=self._store.name), params
            ).fetchone()
        assert row is not None  # insert ... returning always answers one row
        return int(row[0])
