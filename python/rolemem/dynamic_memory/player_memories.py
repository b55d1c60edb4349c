"""Memories as records a player (or a designer) can see and change: list, edit, delete,
forget, export, what mem0 and Zep users expect of a memory store.

Every call is scoped: a player's calls reach only that player's memories (scope `user`), a
designer's only official ones (scope `official`, per agent). A memory outside the scope is
`NotFoundError`, exactly as one that does not exist, and nothing changes. A delete archives the
memory (reason `deleted`) and a forget archives everything of the player (reason `forgotten`);
only `purge=True` removes the rows and their archive for good (privacy requests).

The listing is the mart `memory_player_memories` (dbt builds the same rows for analysts), run
over the player's rows only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from pydantic_core import to_jsonable_python

from ..engines import engine_name, reading, writing
from ..errors import ConflictError, NotFoundError, RolememError, WriteConflictError
from ..memory_builder import erasure, history
from ..schema.memory import memory_table
from ..sql.project import compose, render_macro, write_sql
from .archive import TABLES, archive, archived, remove
from .checks import MemoryInputError
from .facts import remove_facts
from .sql import listed_in, narrowed

_PLURAL = {"event": "events", "entity": "entities"}
# the path segment may be singular or plural (designer routes have always said events/entities)
_KIND_NAMES = {"event": "event", "events": "event", "entity": "entity", "entities": "entity"}

# the player's rows, of one agent or (null) all
_AGENT = "(cast($agent_id as varchar) is null or agent_id = $agent_id)"
_PLAYER = f"user_id = $user_id and {_AGENT}"
_PLAYER_MEMORIES = f"scope = 'user' and {_PLAYER}"
_PLAYER_SOURCES = {
    "source_memory_event": f"select * from memory_event where {_PLAYER_MEMORIES}",
    "source_memory_entity": f"select * from memory_entity where {_PLAYER_MEMORIES}",
    "source_memory_event_line": "select * from memory_event_line where user_id = $user_id",
    "source_memory_entity_mention": f"select * from memory_entity_mention where {_PLAYER}",
}
# the player's saves' chains: DuckDB's write-time table, or (another engine) walked by the
# models in the statement (history.walked_sources)
_STORED_CHAINS = {
    "int_lines_chained_to_root": narrowed(
        "main.int_lines_chained_to_root", listed_in("save_ids", "save_id", "bigint")
    )
}


def kind_of(value: Any) -> str:
    """`event`/`entity` from a path or query value (plural accepted)."""
    kind = _KIND_NAMES.get(value) if isinstance(value, str) else None
    if kind is None:
        raise RolememError(f"kind must be event or entity, got {value!r}", field="kind")
    return kind


def _page(limit: Any, offset: Any) -> tuple[int, int]:
    for value, name, low, high in ((limit, "limit", 1, 1000), (offset, "offset", 0, 2**31 - 1)):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise RolememError(
                f"{name} must be an integer from {low} to {high}, got {value!r}", field=name
            )
    return limit, offset


def list_memories(
    db: Any,
    user_id: str,
    *,
    agent_id: str | None = None,
    kind: str | None = None,
    q: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> dict[str, Any]:
    """The player's live memories, newest first, a page at a time: `kind` event/entity,
    `q` a text the description (or a tag) contains. Each with its strength, times, source save
    and whether that save's current branch shows it."""
    limit, offset = _page(limit, offset)
    params = {
        "user_id": user_id,
        "agent_id": agent_id,
        "kind": None if kind is None else kind_of(kind),
        "q": q or None,
        "limit": limit,
        "offset": offset,
    }
    engine = engine_name(db)
    sql = compose(
        "memory_player_memories",
        {
            **_PLAYER_SOURCES,
            **(_STORED_CHAINS if engine == "duckdb" else history.walked_sources(engine)),
        },
        render_macro("player_memories_page", engine=engine),
        engine=engine,
    )
    with reading(db) as cur:
        row = cur.execute(
            render_macro("player_source_saves"), {"user_id": user_id, "agent_id": agent_id}
        ).fetchone()
        save_ids = list(row[0] or []) if row else []
        # "on the current branch" reads each save's chain
        chains = {"save_ids": save_ids, **history.chained(cur, engine, save_ids, user_id)}
        result = cur.execute(sql, {**params, **chains})
        names = [d[0] for d in result.description]
        rows = [dict(zip(names, values, strict=True)) for values in result.fetchall()]
    total = rows[0]["total"] if rows else 0
    for item in rows:
        del item["total"]
    return {"items": rows, "total": total, "limit": limit, "offset": offset}


def _in_scope(
    cur: Any,
    kind: str,
    memory_id: Any,
    *,
    scope: str,
    user_id: str | None,
    agent_id: str | None = None,
) -> int:
    if isinstance(memory_id, bool) or not isinstance(memory_id, int) or not 0 < memory_id < 2**63:
        raise RolememError(f"id must be a positive 64-bit integer, got {memory_id!r}", field="id")
    found = cur.execute(
        render_macro("memory_in_scope", memory_table(TABLES[kind], scope)),  # a fixed name
        {"id": memory_id, "scope": scope, "user_id": user_id, "agent_id": agent_id},
    ).fetchone()
    if found is None:
        raise _not_found(kind, memory_id, scope, user_id)
    return memory_id


def _not_found(kind: str, memory_id: int, scope: str, user_id: str | None) -> NotFoundError:
    owner = "official" if scope == "official" else f"player {user_id!r}"
    return NotFoundError(f"no {kind} memory {memory_id} of {owner}", field="id")


def delete(
    db: Any,
    kind: str,
    memory_id: int,
    *,
    scope: str,
    user_id: str | None = None,
    agent_id: str | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Archive one memory (reason `deleted`) and remove it from the live store."""
    kind = kind_of(kind)
    with writing(db) as cur:
        memory_id = _in_scope(cur, kind, memory_id, scope=scope, user_id=user_id, agent_id=agent_id)
        removed = archive(
            cur,
            kind,
            "deleted",
            [memory_id],
            now or datetime.now(),
            engine=engine_name(db),
            scope=scope,
        )
        if not removed[memory_table(TABLES[kind], scope)]:  # a racing delete's, archived once
            raise _not_found(kind, memory_id, scope, user_id)
    return {"memory_type": kind, "memory_id": memory_id, "status": "archived"}


def edit(
    memory: Any,
    kind: str,
    memory_id: int,
    fields: Mapping[str, Any],
    *,
    scope: str,
    user_id: str | None = None,
    agent_id: str | None = None,
) -> dict[str, Any]:
    """Change the editable fields of one memory in scope (`DynamicMemory`'s rules: an event's
    new description gets new postings and vectors, under a new id)."""
    kind = kind_of(kind)
    with memory.store.reading() as cur:
        memory_id = _in_scope(cur, kind, memory_id, scope=scope, user_id=user_id, agent_id=agent_id)
    try:
        new_id = memory._edits.update(TABLES[kind], memory_id, fields)
    except MemoryInputError:
        # gone since the check (a delete or an edit that won the race): not found, as after it
        with memory.store.reading() as cur:
            _in_scope(cur, kind, memory_id, scope=scope, user_id=user_id, agent_id=agent_id)
        raise
    return {"memory_type": kind, "memory_id": new_id, "status": "updated"}


def forget(
    db: Any,
    user_id: str,
    *,
    agent_id: str | None = None,
    purge: bool = False,
    now: datetime | None = None,
    write: Callable[[Callable[[Any], Any]], Any] | None = None,
) -> dict[str, Any]:
    """Everything of the player (with one agent, or all): archived (reason `forgotten`), or with
    `purge` removed together with its archive and recall log (a privacy request); a purge
    without `agent_id` also deletes the player's saves (forks included: saves are not per
    agent, so a purge with `agent_id` keeps them), their lines and what they produced, and what
    the memory loop and the service kept of the player (ERASED_PLAYER_TABLES). One transaction
    (on DuckDB the saves' lines finish in steps of their own, erasure.erase); returns the counts,
    with purge per table (`deleted`). ConflictError if another player's save was forked from
    the player's. `write(step)` runs the first transaction and each step in a transaction of
    its own (default: on `db`; the service's takes its write lock, as a save's erasure does,
    and retries a step that met a conflicting write)."""
    if not isinstance(purge, bool):
        raise RolememError(f"purge must be true or false, got {purge!r}", field="purge")
    params = {"user_id": user_id, "agent_id": agent_id}
    engine = engine_name(db)

    def in_transaction(step: Any) -> Any:
        with writing(db) as cur:
            return step(cur)

    steps = write or in_transaction

    def first(cur: Any) -> tuple[dict[str, Any], Counter[str], list[int]]:
        """The memories, and with a purge the player's rows and a first step of its saves."""
        counts: dict[str, Any] = {}
        deleted: Counter[str] = Counter()  # rows per table, summed
        save_ids: list[int] = []
        for kind, table in TABLES.items():
            row = cur.execute(
                f"select list(id order by id) from {table} where {_PLAYER_MEMORIES}", params
            ).fetchone()
            ids = list(row[0] or []) if row else []
            counts[_PLURAL[kind]] = len(ids)
            if ids and purge:
                deleted.update(remove(cur, kind, ids))
            elif ids:
                removed = archive(cur, kind, "forgotten", ids, now or datetime.now(), engine=engine)
                if removed[table] < len(ids):
                    raise _raced(user_id)
        # the player's facts go the same way (table of their own, no scope)
        found = cur.execute(f"select id from memory_fact where {_PLAYER}", params).fetchall()
        fact_ids = [row[0] for row in found]
        counts["facts"] = len(fact_ids)
        if fact_ids:
            reason = None if purge else "forgotten"
            gone = remove_facts(cur, engine, user_id, fact_ids, reason, now or datetime.now())
            if gone < len(fact_ids) and not purge:
                raise _raced(user_id)
            if purge:
                deleted["memory_fact"] += gone
            if engine == "duckdb":  # the earlier values on each chain are current again
                history.refresh_facts(cur, user_id, agent_id)
        if purge:
            for table, key in (("memory_archive", "archived"), ("memory_recall_log", "recall_log")):
                gone = cur.execute(
                    write_sql("delete_player_agent_rows", table, engine=engine), params
                ).fetchall()
                counts[f"{key}_rows"] = deleted[table] = len(gone)
        if purge and agent_id is None:
            save_ids = erasure.player_save_ids(cur, user_id)
            forks = erasure.forks_of(cur, save_ids)
            if forks:
                raise ConflictError(
                    f"saves {forks} of another player branch from {user_id}'s saves: delete "
                    "them first",
                    field="save_id",
                )
            deleted.update(erasure.erase_step(cur, save_ids, user_id=user_id, engine=engine))
            for table in ERASED_PLAYER_TABLES:
                sql = write_sql("delete_player_rows", table, engine=engine)
                deleted[table] += len(cur.execute(sql, {"user_id": user_id}).fetchall())
        return counts, deleted, save_ids

    counts, deleted, save_ids = steps(first)
    if save_ids:
        counts["deleted"] = erasure.erase(steps, save_ids, deleted, user_id=user_id, engine=engine)
    elif purge:
        counts["deleted"] = dict(deleted)
    return counts


def _raced(user_id: str) -> WriteConflictError:
    # a delete removed some after this forget read them (on PostgreSQL it waited for that
    # delete, having archived them again): all of it rolls back, and a retry reads anew
    return WriteConflictError(f"memories of {user_id} were deleted while forgetting them")


# what the memory loop and the service keep of a player outside the saves (a purge deletes
# them after the saves' own rows: macro delete_player_rows)
ERASED_PLAYER_TABLES = (
    "memory_event_term",
    "memory_fact",
    "memory_event_line",
    "memory_entity_mention",
    "memory_extracted_line",
    "memory_batch_line",
    "memory_extraction_batch",
    "memory_loop_state",
    "character_recall_queue",
    "memory_maintenance_run",
    "rolemem_idempotency",
)


def export(db: Any, user_id: str, *, agent_id: str | None = None) -> dict[str, Any]:
    """Every live and archived memory of the player, JSON-ready (times ISO 8601)."""
    page = list_memories(db, user_id, agent_id=agent_id, limit=1000)
    items = page["items"]
    while len(items) < page["total"]:  # each page counts anew: one past the end counts 0
        page = list_memories(db, user_id, agent_id=agent_id, limit=1000, offset=len(items))
        items += page["items"]
    return to_jsonable_python(
        {
            "user_id": user_id,
            "agent_id": agent_id,
            "exported_at": datetime.now(),
            "memories": items,
            "archived": archived(db, user_id=user_id, agent_id=agent_id),
        }
    )
