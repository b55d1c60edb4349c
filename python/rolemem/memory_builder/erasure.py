"""Erasing saves: a save's lines and everything they produced (memories of its lines, their
postings and vectors, extraction batches and extracted lines, loop state, write-time history),
for `DELETE /saves/{id}` and a player's purge. A save that others branch from is refused
until they go (their chains pass through its lines)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import ConflictError
from ..sql.project import render_macro, write_sql
from . import history
from .saves import _text, owned_save

_FORKS_OF_SQL = render_macro("save_forks")  # the same on every engine
_PLAYER_SAVES_SQL = "select id from save where user_id = $user_id order by id"
_OWNERS_SQL = render_macro("erased_saves_owners")
_LIST_SAVES_SQL = render_macro("player_saves_page")
# what a save's lines produced, deleted with them (macro delete_save_rows), children first
ERASED_TABLES = (
    "memory_event_term",
    "memory_event_embedding",
    "memory_event_line",
    "memory_event",
    "memory_entity_mention",
    "memory_fact",
    "memory_extracted_line",
    "memory_batch_line",
    "memory_extraction_batch",
    "memory_loop_state",
    "character_recall_queue",
)


def list_saves(cur: Any, user_id: str, *, limit: int = 50, offset: int = 0) -> dict[str, Any]:
    """The player's saves, oldest first, a page at a time (`total`: all of them)."""
    user_id = _text(user_id, "user_id", required=True)  # type: ignore[assignment]
    rows = history.records(
        cur, _LIST_SAVES_SQL, {"user_id": user_id, "limit": limit, "offset": offset}
    )
    totals = [row.pop("total") for row in rows]
    return {"items": rows, "total": totals[0] if totals else 0, "limit": limit, "offset": offset}


def _column(cur: Any, sql: str, params: Mapping[str, Any]) -> list[Any]:
    return [row[0] for row in cur.execute(sql, params).fetchall()]


def forks_of(cur: Any, save_ids: Sequence[int]) -> list[int]:
    """The saves (not among `save_ids`) that branch from a line of one of `save_ids`."""
    return _column(cur, _FORKS_OF_SQL, {"save_ids": list(save_ids)})


def player_save_ids(cur: Any, user_id: str) -> list[int]:
    """Every save of the player, forks included."""
    return _column(cur, _PLAYER_SAVES_SQL, {"user_id": user_id})


def erase_step(
    cur: Any, save_ids: Sequence[int], *, user_id: str | None = None, engine: str = "duckdb"
) -> dict[str, int]:
    """One transaction's share of erasing the saves `save_ids`: what their lines produced
    (ERASED_TABLES, the write-time history) and the idempotency records whose answer names
    them, then their lines, then the saves once no line is left. PostgreSQL does it all in one
    step; DuckDB, whose foreign key checks count the rows its transaction deleted as still
    there, deletes a level of lines (the leaves) per step and the saves in a step of their
    own: `erase` runs the steps. Each step first marks the saves as being erased
    (save.erasing), so that no read sees a save half erased between steps. `user_id`: the
    saves' player (on Citus, the shard their saves are deleted on). Counts per table."""
    ids = {"save_ids": list(save_ids)}
    player = {**ids, "user_id": user_id}

    def deleted(macro: str, *args: str) -> int:
        """How many rows the delete `macro` deleted."""
        return len(history.run(cur, write_sql(macro, *args, engine=engine), player).fetchall())

    history.run(cur, write_sql("mark_saves_erasing", engine=engine), player)
    counts = {table: deleted("delete_save_rows", table) for table in ERASED_TABLES}
    counts["rolemem_idempotency"] = deleted("delete_save_idempotency")
    counts.update(history.erase(cur, engine, list(save_ids)))
    if engine == "duckdb" and counts.get("memory_fact"):
        # the facts gone end no value on the saves left (a parent sharing their lines)
        owners = [user_id] if user_id is not None else _column(cur, _OWNERS_SQL, ids)
        for owner in owners:
            history.refresh_facts(cur, owner, None)
    counts["line"] = deleted("delete_save_lines")
    # on DuckDB a save goes only in a transaction that deleted none of its lines
    may_delete_saves = counts["line"] == 0 or engine != "duckdb"
    counts["save"] = deleted("delete_empty_saves") if may_delete_saves else 0
    return counts


def erase(
    write: Callable[[Callable[[Any], dict[str, int]]], dict[str, int]],
    save_ids: Sequence[int],
    counts: Mapping[str, int],
    *,
    user_id: str | None = None,
    engine: str = "duckdb",
) -> dict[str, int]:
    """Finish erasing `save_ids` (of the player `user_id`) after a first `erase_step` (the
    caller's, with its checks) answered `counts`: `write(step)` runs a step in a transaction
    of its own until the saves are gone or a step finds nothing left to delete (another call
    finished them). Every step deletes only the saves' rows, so an erasure cut short is
    finished by the next one. The counts per table, summed."""
    total = Counter(counts)
    done = total["save"] >= len(save_ids)
    while not done:
        step = write(lambda cur: erase_step(cur, save_ids, user_id=user_id, engine=engine))
        total.update(step)
        done = not (step["line"] or step["save"]) or total["save"] >= len(save_ids)
    return dict(total)


def delete_save(
    cur: Any,
    save_id: int,
    user_id: str | None,
    *,
    engine: str = "duckdb",
    open_ownerless: bool = False,
) -> dict[str, Any]:
    """The first step of deleting the player's save (`erase_step`): refused with
    ConflictError, nothing deleted, while another save branches from its lines (delete those
    first). `erase` finishes it."""
    save = owned_save(
        cur, save_id, user_id, lock=True, engine=engine, open_ownerless=open_ownerless, erasing=True
    )
    forks = forks_of(cur, [save["save_id"]])
    if forks:
        raise ConflictError(
            f"save {save['save_id']} has forks: saves {forks} branch from its lines; delete "
            "them first",
            field="save_id",
        )
    return {
        "save_id": save["save_id"],
        "deleted": erase_step(cur, [save["save_id"]], user_id=save["user_id"], engine=engine),
    }
