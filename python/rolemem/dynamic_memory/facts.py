"""Facts that change: a player's facts as a character heard them, each stated at a line, and
which of them is current on a save's chain (model int_memory_facts_resolved: the rule lives
there once); and what else a save's chain holds of the player: the knowledge page, entities'
lines and which merged entities lie on one chain. A fact row is never updated: a changed value
is a new row, a deleted one moves to the archive, and the earlier value on the chain is current
again."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from ..errors import NotFoundError
from ..memory_builder import history
from ..schema.memory import MemoryFact
from ..sql.project import render_macro, write_sql
from .archive import archived_columns
from .base import Context
from .checks import MemoryInputError, _count, checked_text, naive_time
from .contract import FactEdit, FactRecord, checked
from .lookups import Lookups

_FACTS_SELECT = render_macro("facts_on_chain")
_KNOWLEDGE_SELECT = render_macro("character_knowledge_rows")
_KNOWLEDGE_KINDS = {"fact": "facts", "entity": "entities", "event": "events"}
_CONSOLIDABLE_SELECT = render_macro("consolidable_entity_rows")


def _ids(value: Any) -> list[int]:
    """A JSON list of line ids as an engine returns it (text, or parsed)."""
    parsed = json.loads(value) if isinstance(value, str) else value
    return [int(item) for item in parsed or []]


class Facts:
    """Facts written, resolved per chain, listed; what a character knows of a player."""

    def __init__(self, context: Context, lookups: Lookups) -> None:
        self.context, self.lookups = context, lookups

    def facts(
        self,
        *,
        user_id: str,
        agent_id: str,
        save_id: int | None = None,
        history: bool = False,
    ) -> list[dict[str, Any]]:
        """The player's facts `agent_id` holds current on the save's chain (without a save:
        ordered by their lines), each with its lines; `history=True` adds the values a later
        fact ended, with the fact and the line that ended them."""
        if not isinstance(history, bool):
            raise MemoryInputError(f"history must be true or false, got {history!r}")
        lookups = self.lookups
        lookups.check_listing(user_id, agent_id, save_id, "save")
        store = self.context.store
        # a player holding no facts with the character plans none of the facts' models and
        # reads nothing of the save (a seek of the player's facts first; many players hold none)
        [(has_facts,)] = store.run(
            render_macro("player_has_facts"), {"user_id": user_id, "agent_id": agent_id}
        )
        if not has_facts:
            return []
        params = lookups.listing(user_id, agent_id, save_id, "save")
        rows = lookups.listed(
            "int_memory_facts_resolved", _FACTS_SELECT, params, {"history": history}
        )
        for row in rows:
            row["line_ids"] = _ids(row.pop("line_ids_json"))
        return rows

    def knowledge(
        self, *, user_id: str, agent_id: str, save_id: int | None = None, limit: int = 10
    ) -> dict[str, list[dict[str, Any]]]:
        """What `agent_id` holds about the player on the save (mart
        memory_character_knowledge): the facts current on its chain, the player's entities and
        the `limit` strongest events the save may see, each with the lines it came from."""
        limit = _count(limit, "limit", low=1, high=1000)
        params = self.lookups.listing(user_id, agent_id, save_id, None, limit)
        known: dict[str, list[dict[str, Any]]] = {kind: [] for kind in _KNOWLEDGE_KINDS.values()}
        for row in self.lookups.listed("memory_character_knowledge", _KNOWLEDGE_SELECT, params):
            lines = row.pop("line_ids")
            row["line_ids"] = None if lines is None else [int(line) for line in lines]
            known[_KNOWLEDGE_KINDS[row.pop("memory_type")]].append(row)
        return known

    def consolidable_entities(self) -> list[dict[str, Any]]:
        """The player entities an LLM may consolidate (model int_memory_entities_consolidable:
        merged, their mentions all on one chain), asked on each save holding a merged
        entity's newest mention; each with the source its rewritten mention cites."""
        store = self.context.store
        groups = store.records(render_macro("merged_entity_saves", engine=store.name), {})
        found: dict[int, dict[str, Any]] = {}
        for group in groups:
            params = self.lookups.listing(
                group["user_id"], group["agent_id"], group["save_id"], "save"
            )
            model = "int_memory_entities_consolidable"
            for row in self.lookups.listed(model, _CONSOLIDABLE_SELECT, params):
                found.setdefault(row["id"], row)
        return [found[entity_id] for entity_id in sorted(found)]

    def add_fact(
        self,
        *,
        user_id: str,
        agent_id: str,
        subject: str,
        attribute: str,
        value: str,
        save_id: int | None = None,
        line_id: int | None = None,
        line_ids: Iterable[int] | None = None,
        supersedes: Iterable[str] = (),
        created_at: datetime | None = None,
    ) -> int:
        """A fact stated at `line_id` of save `save_id` (its message's lines: `line_ids`,
        default that line); its id. Whether it is current is resolved per chain. Its own fields
        by the memory's contract (FactRecord)."""
        self.context.writable()
        at = naive_time(created_at or datetime.now(), "created_at")
        fact = checked(
            FactRecord,
            {
                "subject": subject,
                "attribute": attribute,
                "value": value,
                "supersedes": supersedes,
                "created_at": at,
            },
        )
        lines = [line_id] if line_ids is None and line_id is not None else line_ids or []
        return self._write(
            {
                "user_id": checked_text(user_id, "user_id"),
                "agent_id": checked_text(agent_id, "agent_id"),
                **fact.model_dump(),
                "save_id": save_id,
                "line_id": line_id,
                "line_ids": [int(item) for item in lines],
            }
        )

    def change_fact(
        self, *, user_id: str, fact_id: int, value: str, now: datetime | None = None
    ) -> int:
        """The player's fact `fact_id` with a new value: a new fact at the same line (so it
        ends the old one in a `one` slot, and names it in `supersedes` for a `many`); the old
        row stays as it was. The new fact's id. Only the new value is checked (FactEdit): the
        rest is the old row's, as stored."""
        self.context.writable()
        value = checked(FactEdit, {"value": value}).value
        at = naive_time(now or datetime.now(), "now")
        old = self._own_fact(user_id, fact_id)
        return self._write(
            {
                **{k: old[k] for k in ("agent_id", "subject", "attribute", "save_id", "line_id")},
                "user_id": user_id,
                "value": value,
                "supersedes": [old["value"]],
                "line_ids": _ids(old["line_ids"]),
                "created_at": at,
            }
        )

    def _write(self, fact: dict[str, Any]) -> int:
        """Insert a checked fact (its lists as lists); its id. DuckDB's resolved facts of the
        slot's subject are refreshed in the same transaction."""
        row = {
            **fact,
            "supersedes": json.dumps(fact["supersedes"], ensure_ascii=False),
            "line_ids": json.dumps(fact["line_ids"]),
            "batch_key": None,
        }
        store = self.context.store
        with store.transaction() as cur:
            inserted = cur.execute(write_sql("insert_memory_fact", engine=store.name), row)
            found = inserted.fetchone()
            if store.name == "duckdb":
                history.refresh_facts(cur, row["user_id"], row["agent_id"], row["subject"])
        assert found is not None  # insert ... returning answers one row
        return int(found[0])

    def delete_fact(self, *, user_id: str, fact_id: int, now: datetime | None = None) -> int:
        """The player's fact `fact_id` archived (reason `deleted`) and removed: the value stated
        before it on each chain is current again. Its id."""
        self.context.writable()
        fact = self._own_fact(user_id, fact_id)
        store = self.context.store
        at = naive_time(now or datetime.now(), "now")
        with store.transaction() as cur:
            if not remove_facts(cur, store.name, user_id, [fact_id], "deleted", at):
                # a racing delete's (PostgreSQL waited for it): archived once, by it
                raise NotFoundError(f"no fact {fact_id} of player {user_id!r}", field="id")
            if store.name == "duckdb":
                history.refresh_facts(cur, user_id, fact["agent_id"], fact["subject"])
        return fact_id

    def _own_fact(self, user_id: str, fact_id: Any) -> dict[str, Any]:
        """The player's fact `fact_id`; NotFoundError when it is not theirs (or none)."""
        checked_text(user_id, "user_id")
        if isinstance(fact_id, bool) or not isinstance(fact_id, int) or not 0 < fact_id < 2**63:
            raise MemoryInputError(f"id must be a positive 64-bit integer, got {fact_id!r}")
        found = self.context.store.records(
            render_macro("player_fact"), {"id": fact_id, "user_id": user_id}
        )
        if not found:
            raise NotFoundError(f"no fact {fact_id} of player {user_id!r}", field="id")
        return found[0]


def remove_facts(
    cur: Any, engine: str, user_id: str, ids: list[int], reason: str | None, now: datetime
) -> int:
    """Archive (with `reason`; None: a purge, no archive) and delete the player's facts `ids`
    in the caller's transaction; the rows deleted. The caller refreshes DuckDB's resolution."""
    if reason is not None:
        # macro archive_facts over memory_fact's columns (times as text, as the archive keeps them)
        archive = write_sql("archive_facts", archived_columns(MemoryFact), engine=engine)
        params = {"user_id": user_id, "ids": ids, "reason": reason, "now": now}
        cur.execute(archive, params).fetchall()
    delete = write_sql("delete_memories", "memory_fact", "id", engine=engine)
    return len(cur.execute(delete, {"ids": ids}).fetchall())
