"""Write-time history: every save's chain and every character's messages, kept as tables.

The memory builder's models depend on stored lines only, so their rows are computed when a
save changes, not per reply: `int_lines_chained_to_root` (the chain), `memory_messages` (one
row per save x character x message) and `int_save_history_tips` (the tip they were built for,
and the chain's problem). dbt builds the same three tables for every save; this module
refreshes single saves with the same model SQL restricted to them. A save whose current
`last_message_id` differs from its recorded tip is stale and is refreshed before it is read,
so a game that writes `line`/`save` rows itself never gets a stale answer. Lines are
append-only (the dialogue tree): a line edited in place needs `refresh_history`.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Iterable

import duckdb

from . import _duck
from ._sql_project import compose

log = logging.getLogger(__name__)

TABLES = ("int_lines_chained_to_root", "memory_messages", "int_save_history_tips")

# The saves' own lines, plus lines of other saves they point at (a parent or the tip), so a
# chain that leaves its save is seen and reported.
# (list_contains lets DuckDB skip row groups by save_id, as `=` does; `in (select unnest())`
# made every statement a semi-join over the whole table: 2-3x slower on a million lines)
_SAVES_LINES_SQL = """
    select * from line where list_contains(cast($save_ids as bigint[]), save_id)
    union all
    select * from line
    where
        not list_contains(cast($save_ids as bigint[]), save_id)
        and (
            id in (
                select parent_line_id from line
                where list_contains(cast($save_ids as bigint[]), save_id)
            )
            or id in (
                select last_message_id from save
                where list_contains(cast($save_ids as bigint[]), id)
            )
        )
"""
_SAVES_SQL = "select * from save where list_contains(cast($save_ids as bigint[]), id)"
_STORED_CHAINS_SQL = """
    select * from main.int_lines_chained_to_root
    where list_contains(cast($save_ids as bigint[]), save_id)
"""
_WALK = "rolemem_walk"  # a temporary table of this cursor's session
_ATTEMPTS = 6  # a refresh that meets another thread's refresh of the same save retries

_STALE_SQL = """
select saves.id
from save as saves
left join int_save_history_tips as tips
    on tips.save_id = saves.id
where
    ($save_ids is null or list_contains(cast($save_ids as bigint[]), saves.id))
    and (tips.save_id is null or tips.tip_line_id is distinct from saves.last_message_id)
order by saves.id
"""


@functools.cache
def _statements() -> dict[str, str]:
    sources = {"source_line": _SAVES_LINES_SQL, "source_save": _SAVES_SQL}
    walked = {**sources, "int_lines_walked_to_root": f"select * from {_WALK}"}
    stored = {**walked, "int_lines_chained_to_root": _STORED_CHAINS_SQL}
    return {
        "walk": compose(
            "int_lines_walked_to_root", sources, "select * from int_lines_walked_to_root"
        ),
        "int_lines_chained_to_root": compose(
            "int_lines_chained_to_root", walked, "select * from int_lines_chained_to_root"
        ),
        "memory_messages": compose("memory_messages", stored, "select * from memory_messages"),
        "int_save_history_tips": compose(
            "int_save_history_tips", stored, "select * from int_save_history_tips"
        ),
    }


def ensure_tables(cur: duckdb.DuckDBPyConnection) -> None:
    """Create the write-time history tables (empty) where dbt has not built them yet."""
    existing = {
        row[0]
        for row in cur.execute(
            "select table_name from duckdb_tables() where schema_name = 'main'"
        ).fetchall()
    }
    if set(TABLES) <= existing:
        return
    statements = _statements()
    cur.execute(f"create or replace temp table {_WALK} as {statements['walk']}", {"save_ids": []})
    for table in TABLES:
        if table not in existing:  # names from this module, never from data
            cur.execute(
                f"create table if not exists {table} as "
                f"select * from ({statements[table]}) where false",
                {"save_ids": []},
            )


def stale_saves(cur: duckdb.DuckDBPyConnection, save_ids: Iterable[int] | None) -> list[int]:
    ids = None if save_ids is None else list(save_ids)
    return [row[0] for row in cur.execute(_STALE_SQL, {"save_ids": ids}).fetchall()]


def refresh(cur: duckdb.DuckDBPyConnection, save_ids: list[int]) -> None:
    """Recompute the history rows of `save_ids` in one transaction (same model SQL as dbt)."""
    if not save_ids:
        return
    statements = _statements()
    params = {"save_ids": save_ids}
    cur.execute("begin")
    try:
        cur.execute(f"create or replace temp table {_WALK} as {statements['walk']}", params)
        for table in TABLES:
            cur.execute(
                f"delete from {table} where save_id in "
                "(select unnest(cast($save_ids as bigint[])))",
                params,
            )
            cur.execute(f"insert into {table} by name {statements[table]}", params)
        cur.execute("commit")
    except BaseException:
        cur.execute("rollback")
        raise


def ensure_fresh(cur: duckdb.DuckDBPyConnection, save_ids: Iterable[int] | None) -> list[int]:
    """Refresh whichever of `save_ids` (None: every save) are stale; returns them. A write
    conflict with another thread refreshing the same save is retried."""
    ensure_tables(cur)
    for attempt in range(1, _ATTEMPTS + 1):
        stale = stale_saves(cur, save_ids)
        try:
            refresh(cur, stale)
            return stale
        except duckdb.TransactionException:
            if attempt == _ATTEMPTS:
                raise
            log.debug("history refresh conflict on saves %s, retrying", stale)
            time.sleep(0.01 * attempt)  # let the other refresh commit; then it is not stale
    return []


def refresh_history(db: _duck.Database = None, save_ids: Iterable[int] | None = None) -> int:
    """Bring the write-time history tables up to date for `save_ids` (None: every stale
    save); returns how many saves were recomputed."""
    with _duck.cursor(db) as cur:
        return len(ensure_fresh(cur, save_ids))
