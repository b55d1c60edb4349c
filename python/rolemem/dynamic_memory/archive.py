"""Moving memories out of the live store: every removal archives the whole row first (cleanup,
consolidation, a player's or a designer's delete, forgetting), so nothing is silently lost;
only a privacy purge removes the archive too."""

from __future__ import annotations

import functools
import json
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from ..engines import reading
from ..schema.memory import OFFICIAL_TABLES, MemoryEntity, MemoryEvent, memory_table
from ..sql.project import render_macro, write_sql
from ..sql.seeds import shipped_rows
from .sql import with_official

TABLES = {"event": "memory_event", "entity": "memory_entity"}


@functools.cache
def archive_reasons() -> tuple[str, ...]:
    """The reasons a memory may be archived with: seed memory_archive_reasons, the list the
    archive's data test checks too, so the service never writes a row the test rejects."""
    return tuple(row["reason"] for row in shipped_rows("memory_archive_reasons"))


def archived_columns(model: Any) -> tuple[tuple[str, str | None], ...]:
    """A memory table's columns with the cast macro row_as_json archives each with."""
    return tuple(
        (
            column.name,
            "varchar"
            if isinstance(column.type, sa.DateTime)
            else "double precision"
            if isinstance(column.type, sa.REAL)
            else None,
        )
        for column in model.__table__.columns
    )


@functools.cache
def _archive_sql(memory_type: str, engine: str, scope: str = "user") -> str:
    """The insert archiving memories of a type and scope, the whole row as JSON (macro
    row_as_json, its columns from the schema: an official table has its player twin's)."""
    table = memory_table(TABLES[memory_type], scope)
    model = {"event": MemoryEvent, "entity": MemoryEntity}[memory_type]
    archive = memory_table("memory_archive", scope)
    return write_sql("archive_memories", table, archived_columns(model), archive, engine=engine)


# each table's rows of a memory by its key (macro delete_memories): an event's postings and
# vectors go with it
_DELETED_BY = {
    "event": (
        ("memory_event_term", "event_id"),
        ("memory_event_embedding", "event_id"),
        ("memory_event_line", "event_id"),
        ("memory_event", "id"),
    ),
    "entity": (("memory_entity_mention", "entity_id"), ("memory_entity", "id")),
}


def archive(
    cur: Any,
    memory_type: str,
    reason: str,
    ids: list[int],
    now: datetime,
    *,
    keep: bool = False,
    engine: str = "duckdb",
    scope: str = "user",
) -> dict[str, int]:
    """Archive the memories and remove them from the live tables, inside the caller's
    transaction; `keep`: archive this version only (the row is about to be rewritten, as
    consolidation does); `scope` official: a designer's, from and into the official tables.
    The rows removed per live table (none with `keep`): fewer than `ids` when another
    transaction removed some first (on PostgreSQL this one waited for it, then found them
    gone after archiving them again, so the caller that must remove every one rolls back)."""
    if reason not in archive_reasons():
        raise ValueError(
            f"archive reason {reason!r} is not in seed memory_archive_reasons: "
            f"{', '.join(archive_reasons())}"
        )
    cur.execute(
        _archive_sql(memory_type, engine, scope),
        {"memory_type": memory_type, "reason": reason, "now": now, "ids": ids},
    )
    return {} if keep else remove(cur, memory_type, ids, scope=scope)


def remove(cur: Any, memory_type: str, ids: list[int], *, scope: str = "user") -> dict[str, int]:
    """Remove the memories from `scope`'s live tables (archive first, unless purging)."""
    deleted = {}
    for player_table, key in _DELETED_BY[memory_type]:
        if scope == "official" and player_table not in OFFICIAL_TABLES:
            continue  # a designer's memory has no source lines
        table = memory_table(player_table, scope)
        sql = write_sql("delete_memories", table, key)
        deleted[table] = len(cur.execute(sql, {"ids": ids}).fetchall())
    return deleted


_FILTER = """
    where (cast($user_id as varchar) is null or user_id = $user_id)
        and (cast($agent_id as varchar) is null or agent_id = $agent_id)"""


@functools.cache  # composed on first use, not when archiving imports this module
def _archived_sql() -> str:
    """The archive, the players' and the designers' (official_archive), filtered in each table
    (on Citus a read of the players' names the player: one shard) and paged."""
    return with_official(
        "int_memory_archive_with_official",
        render_macro("archive_page"),
        {
            f"source_{table}": f"select * from {table}{_FILTER}"
            for table in ("memory_archive", "official_archive")
        },
    )


def archived(
    db: Any,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[dict[str, Any]]:
    """The archive (optionally one player's, one agent's; official memories have no player),
    oldest first, each row's memory parsed."""
    with reading(db) as cur:
        result = cur.execute(
            _archived_sql(),
            {"user_id": user_id, "agent_id": agent_id, "limit": limit, "offset": offset},
        )
        names = [d[0] for d in result.description]
        rows = [dict(zip(names, row, strict=True)) for row in result.fetchall()]
    for row in rows:
        row["memory"] = json.loads(row["memory"])
    return rows
