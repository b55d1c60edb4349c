"""Changing stored memories: edits (an event's new text is a new event) and deletes, which
archive."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..schema.memory import memory_table
from ..sql.project import render_macro, write_sql
from .archive import TABLES, archive
from .base import Context
from .checks import MemoryInputError, _memory_id, _scope
from .contract import OFFICIAL_FIELDS, EntityEdit, EventEdit, MemoryEdit, checked
from .entities import rewrite_mentions
from .sql import _SOURCE_FIELDS
from .store import Events

# what a new text's event takes from the row it replaces, as it is when replaced: its counters
# (macro restore_event_counters) and the fields an edit changes in place (EventEdit's others)
_COUNTERS = ("strength", "recall_count", "is_pinned", "last_recalled_at")
_FIELDS_IN_PLACE = tuple(
    name for name in EventEdit.model_fields if name != "description" and name not in _COUNTERS
)
_KEPT_IN_PLACE = (*_FIELDS_IN_PLACE, *_COUNTERS)


class Edits:
    """Memories edited, archived, listed."""

    _EDITABLE = {
        "memory_event": set(EventEdit.model_fields),
        "memory_entity": set(EntityEdit.model_fields) | {"description", "strength", "is_pinned"},
    }

    _CLEARABLE = {"scene", "place", "deepinsight", "user_name"}

    def __init__(self, context: Context, events: Events) -> None:
        self.context, self.events = context, events

    def update(self, table: str, memory_id: int, fields: Mapping[str, Any]) -> int:
        """Change editable fields; returns the memory's id. An event's new description is a
        new event (its postings and vectors follow the text, and stored vectors never
        change): the old one is archived (reason `edited`) and the new id returned."""
        self.context.writable()
        memory_id = _memory_id(memory_id, "id")
        unknown = set(fields) - self._EDITABLE[table]
        if unknown:
            raise MemoryInputError(
                f"cannot edit {sorted(unknown)}; editable: {sorted(self._EDITABLE[table])}",
                field=sorted(unknown)[0],
            )
        if not fields:
            raise MemoryInputError(
                f"nothing to change: give at least one of {sorted(self._EDITABLE[table])}",
            )
        for name, value in fields.items():  # None clears a field only where a row may lack it
            if value is None and name not in self._CLEARABLE:
                raise MemoryInputError(f"{name} must be given, got None", field=name)
        fields = checked(MemoryEdit, fields).model_dump(include=set(fields))
        if table == "memory_event" and "description" in fields:
            return self._replace_event(memory_id, fields)
        store = self.context.store
        with store.transaction() as cur:
            home = memory_table(table, self._scope_of(cur, table, memory_id))
            if not cur.execute(
                write_sql("update_memory_fields", home, tuple(fields), engine=store.name),
                {**fields, "id": memory_id},
            ).fetchall():  # archived since it was found (PostgreSQL waited for that delete)
                raise MemoryInputError(f"no {table} with id {memory_id}", field="id")
            if table == "memory_entity" and "description" in fields:
                # the edited text is the player's word: one mention without lines, shown
                # wherever the entity is (a designer's entity has no mentions)
                rewrite_mentions(cur, memory_id, {}, datetime.now(), engine=store.name)
        return memory_id

    def _scope_of(self, cur: Any, table: str, memory_id: int) -> str:
        """`official` or `user`: whose twin of `table` holds `memory_id` (ids are unique
        across both); MemoryInputError when neither does."""
        for scope in ("official", "user"):
            home = memory_table(table, scope)
            if cur.execute(f"select 1 from {home} where id = $id", {"id": memory_id}).fetchone():
                return scope
        raise MemoryInputError(f"no {table} with id {memory_id}", field="id")

    def _replace_event(self, event_id: int, fields: Mapping[str, Any]) -> int:
        store = self.context.store
        with store.reading() as cur:
            home = memory_table("memory_event", self._scope_of(cur, "memory_event", event_id))
        found = store.records(f"select * from {home} where id = $id", {"id": event_id})
        if not found:
            raise MemoryInputError(f"no memory_event with id {event_id}", field="id")
        old = found[0]
        # an edit is the same memory of the same lines: the new row keeps them
        lines = store.run(render_macro("event_source_lines"), {"id": event_id})
        kept = (*OFFICIAL_FIELDS["events"], *_SOURCE_FIELDS, "scope", "agent_id", "user_id")
        event = {
            **{key: old[key] for key in kept},
            "line_ids": [line_id for line_id, _ in lines],
            "target_key": lines[0][1] if lines else None,
            "keywords": json.loads(old["keywords"] or "[]"),
            **fields,
        }
        rows, vectors = self.events.prepare_events([event])  # slow work before the transaction
        with store.transaction() as cur:
            # the fields and counters as they are now: an edit in place or a recall since the
            # read above is kept (on PostgreSQL the row is locked till the end; on DuckDB a
            # change after this transaction's start makes the archive below a conflict)
            lock = "" if store.name == "duckdb" else " for update"
            now = cur.execute(
                f"select {', '.join(_KEPT_IN_PLACE)} from {home} where id = $id{lock}",
                {"id": event_id},
            ).fetchone()
            if now is None:  # deleted or replaced meanwhile: no new event of it
                raise MemoryInputError(f"no memory_event with id {event_id}", field="id")
            current = dict(zip(_KEPT_IN_PLACE, now, strict=True))
            rows[0].update({name: current[name] for name in _FIELDS_IN_PLACE if name not in fields})
            archive(
                cur,
                "event",
                "edited",
                [event_id],
                datetime.now(),
                engine=store.name,
                scope=old["scope"],
            )
            (new_id,) = self.events.write_events(cur, rows, vectors)
            cur.execute(
                write_sql("restore_event_counters", home, engine=store.name),
                {
                    "strength": fields.get("strength", current["strength"]),
                    "recalls": current["recall_count"],
                    "pinned": fields.get("is_pinned", current["is_pinned"]),
                    "recalled": current["last_recalled_at"],
                    "id": new_id,
                },
            )
        return new_id

    def update_event(self, event_id: int, **fields: Any) -> int:
        return self.update("memory_event", event_id, fields)

    def update_entity(self, entity_id: int, **fields: Any) -> int:
        return self.update("memory_entity", entity_id, fields)

    def delete_event(self, event_id: int) -> None:
        """Archive an event memory (reason `deleted`) with its postings and vector removed
        from the live store (MemoryInputError if none)."""
        self._delete("event", _memory_id(event_id, "event_id"))

    def delete_entity(self, entity_id: int) -> None:
        """Archive an entity memory (reason `deleted`)."""
        self._delete("entity", _memory_id(entity_id, "entity_id"))

    def _delete(self, kind: str, memory_id: int) -> None:
        self.context.writable()
        store = self.context.store
        with store.transaction() as cur:
            scope = self._scope_of(cur, TABLES[kind], memory_id)
            archive(
                cur, kind, "deleted", [memory_id], datetime.now(), engine=store.name, scope=scope
            )

    def _list(
        self, table: str, agent_id: str, user_id: str | None, scope: str
    ) -> list[dict[str, Any]]:
        user_id = _scope(scope, user_id)
        rows = self.context.store.records(
            render_macro("owner_memories", memory_table(table, scope)),
            {"agent_id": agent_id, "scope": scope, "user_id": user_id},
        )
        for row in rows:
            if "keywords" in row:
                row["keywords"] = json.loads(row["keywords"])
        return rows

    def list_events(
        self, *, agent_id: str, user_id: str | None = None, scope: str = "user"
    ) -> list[dict[str, Any]]:
        return self._list("memory_event", agent_id, user_id, scope)

    def list_entities(
        self, *, agent_id: str, user_id: str | None = None, scope: str = "user"
    ) -> list[dict[str, Any]]:
        return self._list("memory_entity", agent_id, user_id, scope)
