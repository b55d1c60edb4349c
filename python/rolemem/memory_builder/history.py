"""Write-time history: every save's chain and every character's messages, kept as tables.

The memory builder's models depend on stored lines only, so their rows are computed when a
save changes, not per reply: `int_lines_chained_to_root` (the chain), `memory_messages` (one
row per save x character x message) and `int_save_history_tips` (the tip they were built for,
and the chain's problem). dbt builds the same three tables for every save; this module
refreshes single saves with the same model SQL restricted to them. A save whose current
`last_message_id` differs from its recorded tip is stale and is refreshed before it is read,
so a game that writes `line`/`save` rows itself never gets a stale answer. Lines are
append-only (the dialogue tree): a line edited in place, or a role renamed in place (the chain
carries each line's role name), needs `refresh_history`.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

import duckdb

from ..engines import duckdb_connect
from ..retry import retry
from ..sql.project import compose, render_macro, write_sql

log = logging.getLogger(__name__)

TABLES = ("int_lines_chained_to_root", "memory_messages", "int_save_history_tips")
# The facts resolved on each save's chain (dynamic memory's model, a turn reads its rows): kept
# with the chain where the store holds memories (a bare game database has no facts), after it
# (it reads the stored chain). Fact writes refresh it too (dynamic_memory.facts).
FACTS_TABLE = "int_save_facts_resolved"
WRITE_TIME_TABLES = (*TABLES, FACTS_TABLE)


_NO_FORKS_SQL = "select null::bigint as save_id, null::bigint as forked_from_line_id where false"
# the saves' player as the chain's reads bind it (beside a batch's $user_id list)
PLAYER = "save_user_id"
_OWNER_SQL = render_macro("saves_owner")


# the roles naming the chain's lines; a bare game database without a `role` table has none
ROLES_SQL = "select * from role"
NO_ROLES_SQL = render_macro("no_roles")


@functools.cache  # rendered once per engine
def walked_sources(engine: str = "duckdb", roles: bool = True) -> dict[str, str]:
    """What the memory builder's models walk a set of saves' chains from, read by a statement
    ($save_ids, $lineage_ids) on an engine that keeps no write-time chains (PostgreSQL), and by
    the refresh of those tables here. `roles`: the store has a `role` table."""
    return {
        "source_line": render_macro("walked_save_lines", engine=engine),
        "source_save": render_macro("walked_saves", engine=engine),
        "source_role": ROLES_SQL if roles else NO_ROLES_SQL,
        "int_save_fork_points": render_macro("lineage_fork_points", engine=engine),
    }


_WALK = "rolemem_walk"  # temporary tables of this cursor's session
_RESUMED = "rolemem_resumed_targets"
_ATTEMPTS = 6  # a refresh that meets another thread's refresh of the same save retries

_STALE_SQL = render_macro("stale_saves")


# -- appended lines: the common write, refreshed without rebuilding the save ------------------
# A save whose new tip's chain reaches its recorded tip through new lines of the same save
# only gained lines at the end: the new lines are walked alone, their chain rows appended, and
# each character's messages rebuilt from its last stored message on (the only one a later
# line can change: see int_memory_targets.resume_line_position; a character speaking for the
# first time is built from the start). Anything else (a branch switch, a chain problem)
# rebuilds the save whole.
_ONE_SAVE_SQL = "select * from save where id = $save_id"
_STORED_CHAIN_SQL = "select * from main.int_lines_chained_to_root where save_id = $save_id"
# the player of the saves' lines written without one (by the game), from their save
_FILL_OWNERS = ("fill_missing_owners", "line", "save_id", "save", True)


def _model(name: str, sources: dict[str, str], variables: dict[str, Any] | None = None) -> str:
    """Every row of model `name` over `sources` (compose's `provided`)."""
    return compose(name, sources, f"select * from {name}", variables)


def _walk(sources: dict[str, str]) -> str:
    """The walk over `sources` into the temporary table the chain and the append read."""
    return write_sql("replace_temp_table", _WALK, _model("int_lines_walked_to_root", sources))


def _new_lines(roles: bool) -> dict[str, str]:
    """The sources an append's walk and chain read: the save's new lines only."""
    return {
        "source_line": render_macro("save_new_lines"),
        "source_save": _ONE_SAVE_SQL,
        "source_role": ROLES_SQL if roles else NO_ROLES_SQL,
        "int_save_fork_points": render_macro("every_fork_point"),
    }


@functools.cache
def _append_walk(roles: bool) -> str:
    return _walk(_new_lines(roles))


@functools.cache
def _append_statements(roles: bool, presence: bool) -> dict[str, str]:
    """The append's statements after its walk; `presence`: some line of the chain says who
    was present (else neither the chain's inherited presence nor the messages' rule is
    planned: their output is the same without)."""
    new_lines = _new_lines(roles)
    # the targets name the player by the save's name: its row, not a scan of every save
    stored = {"int_lines_chained_to_root": _STORED_CHAIN_SQL, "source_save": _ONE_SAVE_SQL}
    return {
        "chain": write_sql(
            "insert_from_query",
            "int_lines_chained_to_root",
            compose(
                "int_lines_chained_to_root",
                {**new_lines, "int_lines_walked_to_root": f"select * from {_WALK}"},
                render_macro("appended_chain_rows", presence),
                {"history_presence": presence},
            ),
            True,
        ),
        # fixed before the delete: the rebuilt messages replace exactly the deleted ones
        "resumed_targets": write_sql(
            "replace_temp_table",
            _RESUMED,
            compose("int_memory_targets", stored, render_macro("resumed_message_targets")),
        ),
        "delete_resumed": write_sql("delete_resumed_messages", _RESUMED),
        # the chain stays whole, one run longer, up to the save's tip (the walk started there)
        "tip": write_sql("extend_history_tip"),
        "messages": write_sql(
            "insert_from_query",
            "memory_messages",
            _model(
                "memory_messages",
                {
                    "int_memory_targets": f"select * from {_RESUMED}",
                    "source_role": new_lines["source_role"],
                    "int_lines_chained_to_root": render_macro("resumed_chain_lines"),
                },
                {"history_presence": presence},
            ),
            True,
        ),
    }


def _append(
    cur: duckdb.DuckDBPyConnection, save_id: int, roles: bool, owned: bool, facts: bool
) -> bool:
    """Refresh a save that only gained lines at the end, inside the caller's transaction;
    False (nothing written) when it did not. `owned`: the save has a player (lines the game
    wrote without one get it); `facts`: the store keeps facts, re-resolved on the save when a
    new line states one (a stretch reloaded away and back; a line just written states none)."""
    params = {"save_id": save_id}
    cur.execute(_append_walk(roles), params)
    # whether the save only gained lines at the end
    rows = cur.execute(write_sql("appended_lines_walked", _WALK, facts), params).fetchall()
    if not rows:
        return False
    [(line_count, new_lines, unowned, presence, states_fact)] = rows
    statements = _append_statements(roles, presence)
    if unowned and owned:  # lines the game wrote itself: rolemem's own carry their player
        cur.execute(write_sql(*_FILL_OWNERS), {"keys": [save_id]})
    cur.execute(statements["chain"], {**params, "offset": line_count})
    cur.execute(statements["resumed_targets"], params)
    cur.execute(statements["delete_resumed"])
    cur.execute(statements["messages"], params)
    cur.execute(statements["tip"], {**params, "line_count": line_count + new_lines})
    if states_fact:
        chain = {"save_ids": [save_id], "lineage_ids": [save_id]}
        _replace_rows(cur, FACTS_TABLE, _statements(roles)[FACTS_TABLE], chain)
    return True


def run(cur: Any, sql: str, params: Mapping[str, Any]) -> Any:
    """`sql` executed with the parameters it names (DuckDB refuses any other)."""
    return cur.execute(sql, duckdb_connect.used(sql, params))


def records(cur: Any, sql: str, params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """`sql`'s rows (`run`) by column name."""
    result = run(cur, sql, params)
    names = [d[0] for d in result.description]
    return [dict(zip(names, row, strict=True)) for row in result.fetchall()]


def _replace_rows(
    cur: duckdb.DuckDBPyConnection, table: str, select: str, params: dict[str, Any]
) -> None:
    """The rows of the saves $save_ids in write-time `table` replaced by `select`'s."""
    delete = write_sql("delete_save_rows", table, engine="duckdb")
    cur.execute(delete, {"save_ids": params["save_ids"]}).fetchall()
    run(cur, write_sql("insert_from_query", table, select, True), params)


@functools.cache
def _statements(roles: bool = True) -> dict[str, str]:
    sources = walked_sources("duckdb", roles)
    walked = {**sources, "int_lines_walked_to_root": f"select * from {_WALK}"}
    stored = {**walked, "int_lines_chained_to_root": render_macro("stored_save_chains")}
    return {
        "walk": _walk(sources),
        "int_lines_chained_to_root": _model("int_lines_chained_to_root", walked),
        "memory_messages": _model("memory_messages", stored),
        "int_save_history_tips": _model("int_save_history_tips", stored),
        # the saves' players' facts over the stored chains
        FACTS_TABLE: _model(
            FACTS_TABLE, {**stored, "source_memory_fact": render_macro("saves_player_facts")}
        ),
    }


# columns the history tables gained: tables built before any is dropped and rebuilt per save
# (role_name and scene came together: a table without scene lacks both; tables without the
# tips' user_name named the player 用户 where the save has a name; messages built before
# presence showed every character every line)
_NEWEST_HISTORY_COLUMNS = (
    "int_lines_chained_to_root.scene",
    "int_save_history_tips.user_name",
    "int_lines_chained_to_root.present_role_ids",
)
# what a store with memories holds for the facts' table: facts and the seeds of their slots
_FACT_SOURCES = (
    "memory_fact.line_id",
    "memory_fact_attributes.attribute",
    "memory_fact_attribute_aliases.alias",
)
# the columns ensure_tables looks for: each history table's save_id (it exists), the newest
# columns, the facts' sources and the role table's key
_SCHEMA_SQL = render_macro("store_columns_found")
_SCHEMA_COLUMNS = [
    *(f"{table}.save_id" for table in WRITE_TIME_TABLES),
    *_NEWEST_HISTORY_COLUMNS,
    *_FACT_SOURCES,
    "role.id",
]


def _found_columns(
    cur: duckdb.DuckDBPyConnection, columns: list[str] = _SCHEMA_COLUMNS
) -> set[str]:
    """Which of `columns` (`table.column`) the store has."""
    return {row[0] for row in cur.execute(_SCHEMA_SQL, {"columns": columns}).fetchall()}


class Shape(NamedTuple):
    """What a store holds that the history's refresh reads: a `role` table (a bare game
    database may have none) and facts (a store with memories)."""

    roles: bool
    facts: bool


def ensure_tables(cur: duckdb.DuckDBPyConnection) -> Shape:
    """Bring an older store's tables up to date (schema.migrations: the game's `save`, `line`
    and `role` get the columns rolemem reads) and create the write-time history tables (empty)
    where dbt has not built them yet. Returns the store's shape."""
    _migrate(cur)
    found = _found_columns(cur)
    roles = "role.id" in found
    facts = set(_FACT_SOURCES) <= found
    tables = WRITE_TIME_TABLES if facts else TABLES
    existing = {table for table in tables if f"{table}.save_id" in found}
    # a table missing beside the others (the facts' table, new) is rebuilt with them
    if existing and not (set(_NEWEST_HISTORY_COLUMNS) <= found and set(tables) <= existing):
        for table in tables:  # derived rows only: every save is rebuilt when next read
            cur.execute(write_sql("drop_table_if_exists", table))
        existing = set()
    if set(tables) <= existing:
        return Shape(roles, facts)
    # the store changed shape (memories created, say): every connection checks it again
    _CHECKED.clear()
    statements = _statements(roles)
    empty: dict[str, list[int]] = {"save_ids": [], "lineage_ids": []}
    run(cur, statements["walk"], empty)
    for table in tables:
        if table not in existing:  # names from this module, never from data
            run(cur, write_sql("create_table_from_query", table, statements[table], True), empty)
    return Shape(roles, facts)


def _migrate(cur: duckdb.DuckDBPyConnection) -> None:
    """schema.migrations on the cursor's database; DuckDB's own error raised as it is (on a
    file opened read-only the caller reads the save's lines instead)."""
    import sqlalchemy as sa

    from ..engines.sqlalchemy_engines import engine_on
    from ..schema.migrations import migrate

    engine = engine_on(cur)
    try:
        migrate(engine)
    except sa.exc.DBAPIError as exc:
        raise exc.orig or exc from None
    finally:
        engine.dispose()


def lineage(cur: duckdb.DuckDBPyConnection, save_ids: list[int]) -> list[int]:
    """`save_ids` and every save they were forked from, transitively."""
    # every row fetched (the aggregate's one): no pending result is left on the cursor
    [(found,)] = cur.execute(write_sql("save_lineage"), {"save_ids": save_ids}).fetchall()
    return list(found or [])


_FRESH_SQL = render_macro("are_saves_stale_or_forked")


def fresh_lineage(cur: duckdb.DuckDBPyConnection, save_ids: list[int]) -> list[int]:
    """`ensure_fresh` then `lineage` (on a cursor whose tables were checked already, one
    statement when no save is stale and none is a fork; else as the two do it)."""
    if _CHECKED.get(cur) is not None:
        with contextlib.suppress(duckdb.CatalogException):  # a table dropped since: as below
            # every row fetched, as `lineage` does: no pending result on the cursor
            [(is_stale, is_fork)] = cur.execute(_FRESH_SQL, {"save_ids": save_ids}).fetchall()
            if not is_stale:
                return lineage(cur, save_ids) if is_fork else sorted(set(save_ids))
    ensure_fresh(cur, save_ids)
    return lineage(cur, save_ids)


def engine_lineage(engine: Any, save_ids: list[int], user_id: str | None = None) -> list[int]:
    """`lineage` on another engine (rolemem.engines: a game's own database), of the saves of
    the player `user_id` (see `chain_params`)."""
    if not save_ids:
        return []
    sql = write_sql("save_lineage", engine=engine.name)
    return list(engine.run(sql, {"save_ids": save_ids, PLAYER: user_id})[0][0] or save_ids)


def _stale(cur: duckdb.DuckDBPyConnection, save_ids: Iterable[int] | None) -> dict[int, bool]:
    """The stale saves of `save_ids` (None: all) in id order, each with whether it has a player."""
    ids = None if save_ids is None else list(save_ids)
    return dict(cur.execute(_STALE_SQL, {"save_ids": ids}).fetchall())


def refresh(cur: duckdb.DuckDBPyConnection, stale: Mapping[int, bool], shape: Shape) -> None:
    """Recompute the history rows of the `stale` saves in one transaction (same model SQL as
    dbt); `shape`: what the store holds (ensure_tables says). A save `stale` maps to True has
    a player, whose lines the game wrote without one get it (an ownerless save's stay null,
    with no statement spent on them)."""
    if not stale:
        return
    roles, facts = shape
    statements = _statements(roles)
    cur.execute("begin")
    try:
        rebuilt = [
            save_id for save_id in stale if not _append(cur, save_id, roles, stale[save_id], facts)
        ]
        # a save another thread refreshed before this one took its lock has no new lines to
        # append: it is left as that thread made it, not rebuilt
        rebuilt = list(_stale(cur, rebuilt)) if rebuilt else rebuilt
        if not rebuilt:
            cur.execute("commit")
            return
        params = {"save_ids": rebuilt, "lineage_ids": lineage(cur, rebuilt)}
        filled = [save_id for save_id in rebuilt if stale[save_id]]
        if filled:
            cur.execute(write_sql(*_FILL_OWNERS), {"keys": filled})
        run(cur, statements["walk"], params)
        for table in WRITE_TIME_TABLES if facts else TABLES:
            _replace_rows(cur, table, statements[table], params)
        cur.execute("commit")
    except BaseException:
        cur.execute("rollback")
        raise


@functools.cache
def _refresh_facts_statements() -> tuple[str, str]:
    """A player's facts heard by one agent (null: every agent) re-resolved over the stored
    chains of the player's saves."""
    facts = {
        "int_lines_chained_to_root": render_macro("player_save_chains"),
        "source_memory_fact": render_macro("heard_player_facts"),
    }
    return (
        write_sql("delete_resolved_facts"),
        write_sql("insert_from_query", FACTS_TABLE, _model(FACTS_TABLE, facts), True),
    )


def refresh_facts(cur: Any, user_id: str, agent_id: str | None, subject: str | None = None) -> None:
    """Re-resolve a player's facts heard by `agent_id` (None: every agent's) about `subject`
    (None: everyone; a slot is one subject's) on each of the player's saves, in the caller's
    transaction: DuckDB's facts table after a fact is written, changed or deleted (facts are
    rolemem's own rows, so no read finds them stale)."""
    params = {"user_id": user_id, "agent_id": agent_id, "subject": subject}
    delete, insert = _refresh_facts_statements()
    cur.execute(delete, params).fetchall()
    cur.execute(insert, params)


# Refreshes of one save take its stripe's lock: two threads rebuilding the same save would
# both insert its rows (inserts never conflict in DuckDB), leaving them twice.
_STRIPES = [threading.Lock() for _ in range(64)]


# What ensure_tables found, by the connection (or long-lived cursor) a store is read through:
# checked once, not before every refresh (a catalog scan each time); tables dropped since
# (a demo store recreated) are made again when a read misses them. A store another process
# changed is checked when opened.
_CHECKED: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, Shape] = weakref.WeakKeyDictionary()


def ensure_fresh(
    cur: duckdb.DuckDBPyConnection,
    save_ids: Iterable[int] | None,
    store: duckdb.DuckDBPyConnection | None = None,
) -> list[int]:
    """Refresh whichever of `save_ids` (None: every save) are stale; returns them. A save is
    refreshed by one thread at a time (the others find it fresh); a write conflict with another
    writer is retried. `store`: the connection `cur` is a cursor of, if the caller has it (the
    tables are checked once per connection; else once per cursor)."""
    checked = cur if store is None else store
    shape = _CHECKED.get(checked)
    if shape is None:
        shape = _CHECKED[checked] = ensure_tables(cur)
    wanted = None if save_ids is None else list(save_ids)
    try:
        stale = _stale(cur, wanted)
    except duckdb.CatalogException:
        shape = _CHECKED[checked] = ensure_tables(cur)
        stale = _stale(cur, wanted)
    if not stale:
        return []
    with contextlib.ExitStack() as held:
        for stripe in sorted({save_id % len(_STRIPES) for save_id in stale}):
            held.enter_context(_STRIPES[stripe])

        def refreshed() -> list[int]:
            refresh(cur, stale, shape)
            return list(stale)

        def still_stale(_error: Exception, _attempt: int) -> None:
            nonlocal stale
            log.debug("history refresh conflict on saves %s, retrying", list(stale))
            stale = _stale(cur, stale)

        return retry(
            refreshed,
            attempts=_ATTEMPTS,
            on=(duckdb.TransactionException,),
            before_retry=still_stale,
        )


def chain_params(engine: Any, save_ids: list[int], user_id: str | None = None) -> dict[str, Any]:
    """Make the saves' chains readable by a statement on `engine` (rolemem.engines): DuckDB
    keeps them as write-time tables, refreshed here where a save's tip moved (the statement
    binds only the saves); an engine that keeps none walks them in the statement, which binds
    the saves, their lineage and their player `user_id` (on Citus, the shard the walk runs on;
    None: found from the saves, one player's)."""
    if engine.name == "duckdb":
        return chained(engine.cursor().cursor, "duckdb", save_ids)
    return _walk_params(engine.run, engine.name, save_ids, user_id)


def chained(
    cur: Any, engine: str, save_ids: list[int], user_id: str | None = None
) -> dict[str, Any]:
    """`chain_params` on a cursor of `engine` (the caller's transaction or read)."""
    if engine == "duckdb":
        ensure_fresh(cur, save_ids)
        return {}
    return _walk_params(
        lambda sql, params: cur.execute(sql, params).fetchall(), engine, save_ids, user_id
    )


def _walk_params(
    run: Callable[[str, dict[str, Any]], list[Any]],
    engine: str,
    save_ids: list[int],
    user_id: str | None,
) -> dict[str, Any]:
    """What a statement walking the saves' chains on `engine` binds (`run(sql, params)`: the
    rows): the saves, their lineage and their player (None: found from the saves)."""
    sql = write_sql("save_lineage", engine=engine)
    if user_id is None and f"${PLAYER}" in sql:
        user_id = run(_OWNER_SQL, {"save_ids": save_ids})[0][0]
    [(lineage_ids,)] = run(sql, {"save_ids": save_ids, PLAYER: user_id})
    return {"save_ids": save_ids, "lineage_ids": list(lineage_ids or save_ids), PLAYER: user_id}


# what a statement reading saves' chains and tips names
CHAIN_TABLES = ("int_lines_chained_to_root", "int_save_history_tips")


@functools.cache
def chain_sql(select: str, engine: str) -> str:
    """`select`, reading `int_lines_chained_to_root` and `int_save_history_tips` of the saves
    `chained` made readable: DuckDB's write-time tables as they are; another engine's walked
    in the statement by the same models (bound $save_ids, $lineage_ids)."""
    if engine == "duckdb":
        return select
    wanted = tuple(name for name in CHAIN_TABLES if re.search(rf"\b{name}\b", select))
    return compose(wanted, walked_sources(engine), select, engine=engine)


def refresh_history(
    db: duckdb_connect.Database = None, save_ids: Iterable[int] | None = None
) -> int:
    """Refresh the stale saves of `save_ids` (None: every save); how many were recomputed."""
    with duckdb_connect.cursor(db) as cur:
        store = db if isinstance(db, duckdb.DuckDBPyConnection) else None
        return len(ensure_fresh(cur, save_ids, store))


def erase(cur: Any, engine: str, save_ids: list[int]) -> dict[str, int]:
    """Delete the write-time history rows of `save_ids` (DuckDB's tables, where they exist;
    an engine that keeps none has nothing to delete), in the caller's transaction (macro
    delete_save_rows). Counts per table."""
    if engine != "duckdb" or not save_ids:
        return {}
    found = _found_columns(cur)
    return {
        table: len(
            cur.execute(
                write_sql("delete_save_rows", table, engine=engine), {"save_ids": save_ids}
            ).fetchall()
        )
        for table in WRITE_TIME_TABLES
        if f"{table}.save_id" in found
    }
