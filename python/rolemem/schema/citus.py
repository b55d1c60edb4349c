"""The tables' shape on Citus, decided here once: a database with the citus extension shards
the player tables by the player (`user_id`), so there the column is NOT NULL, every primary key
leads with it and a foreign key between player tables includes it (a fork stays within one
player's shard); plain PostgreSQL and DuckDB keep the keys SQLModel declares (a save without a
player keeps working there). `init-db` makes the tables as everywhere, then shapes them
(`shape_for_citus`). Ids stay the coordinator's: an insert through the coordinator draws its
key sequence there (tests/python/test_citus_schema.py).
"""

from __future__ import annotations

from typing import Any

from ..errors import PlayerRequiredError
from .game import APP_TABLES, CONFIG_TABLES
from .memory import MEMORY_TABLES

# the colocation group's first table: every other player table is `colocate_with` it
ANCHOR = "save"
# distributed by user_id, in the order they are distributed (save first)
PLAYER_TABLES = (
    "save",
    "line",
    "memory_entity",
    "memory_event",
    "memory_event_term",
    "memory_event_embedding",
    "memory_fact",
    "memory_recall_log",
    "memory_extraction_batch",
    "memory_extracted_line",
    "memory_event_line",
    "memory_entity_mention",
    "memory_batch_line",
    "memory_loop_state",
    "character_recall_queue",
    "memory_archive",
    "memory_maintenance_run",
    "rolemem_idempotency",
)
# memory_event_embedding is created by DDL of its own (its vectors' dimension), not SQLModel
_OWN_KEYS = {"memory_event_embedding": ("event_id",)}
# rolemem's tables that are not a player's, made apart from SQLModel: copied to every node
# (official memories are reference tables: every player's recall reads them on its shard)
_OTHER_TABLES = ("rolemem_migration", "official_event_embedding")
# where a store distributed in place keeps its rows without a player (requests of no
# player; its official memories were moved to their own tables before: schema.memory):
# Citus stores no row whose distribution column is null
SET_ASIDE = "rolemem_ownerless"


def _tables() -> dict[str, Any]:
    return {table.name: table for table in APP_TABLES + CONFIG_TABLES + MEMORY_TABLES}


def reference_tables() -> tuple[str, ...]:
    """Every table of rolemem's schema that is not a player's (roles, config, webhooks, ...)."""
    return tuple(name for name in _tables() if name not in PLAYER_TABLES) + _OTHER_TABLES


def primary_key(table: str) -> tuple[str, ...]:
    """A player table's key on Citus: the player, then the key it has everywhere."""
    if table in _OWN_KEYS:
        return ("user_id", *_OWN_KEYS[table])
    return ("user_id", *(column.name for column in _tables()[table].primary_key))


def foreign_keys(table: str) -> list[tuple[tuple[str, ...], str, tuple[str, ...]]]:
    """(columns, referenced table, referenced columns) of a player table on Citus: a key to
    another player table includes the player on both sides; one to a reference table (a
    line's role) stays as declared."""
    declared = _tables().get(table)
    keys: list[tuple[tuple[str, ...], str, tuple[str, ...]]] = []
    for key in () if declared is None else declared.foreign_keys:
        target = key.column.table.name
        player = ("user_id",) if target in PLAYER_TABLES else ()
        keys.append(((*player, key.parent.name), target, (*player, key.column.name)))
    return keys


def _drop_constraints(connection: Any, table: str, kind: str) -> None:
    rows = connection.exec_driver_sql(
        "select conname from pg_constraint "
        "where conrelid = to_regclass(%(table)s) and contype = %(kind)s",
        {"table": table, "kind": kind},
    ).fetchall()
    for (name,) in rows:
        connection.exec_driver_sql(f'alter table {table} drop constraint "{name}"')


def _leads_with_player(connection: Any, table: str) -> bool:
    found = connection.exec_driver_sql(
        "select a.attname from pg_constraint as c "
        "inner join pg_attribute as a on a.attrelid = c.conrelid and a.attnum = c.conkey[1] "
        "where c.conrelid = to_regclass(%(table)s) and c.contype = 'p'",
        {"table": table},
    ).first()
    return found is not None and found[0] == "user_id"


def _set_aside_ownerless(connection: Any, tables: list[str]) -> int:
    """A store made before the extension (distributed in place): its rows without a player
    (official memories excepted: they have tables of their own, schema.memory) moved to
    schema SET_ASIDE, tables of the same names, local to the coordinator and read by nothing;
    how many. A save without a player is the game's, and is refused instead
    (PlayerRequiredError: nothing is changed). Its lines got its player before (create_all)."""
    ownerless = 0
    if "save" in tables:
        found = connection.exec_driver_sql("select count(*) from save where user_id is null")
        ownerless = found.scalar()
    if ownerless:
        raise PlayerRequiredError(
            f"{ownerless} saves have no player (user_id), which a database sharded by player "
            "(Citus) cannot store: give each its player, then run init-db again",
            field="user_id",
        )
    moved = 0
    for table in tables:
        rows = connection.exec_driver_sql(
            f"select count(*) from {table} where user_id is null"
        ).scalar()
        if not rows:
            continue
        connection.exec_driver_sql(f"create schema if not exists {SET_ASIDE}")
        connection.exec_driver_sql(f"create table if not exists {SET_ASIDE}.{table} (like {table})")
        connection.exec_driver_sql(
            f"insert into {SET_ASIDE}.{table} select * from {table} where user_id is null"
        )
        connection.exec_driver_sql(f"delete from {table} where user_id is null")
        moved += rows
    return moved


def shape_for_citus(connection: Any) -> int:
    """Rekey the player tables for Citus and distribute them (the caller's transaction;
    idempotent): user_id NOT NULL, primary keys leading with it; every other table a reference
    table; the player tables distributed by user_id in one colocation group, `save` first; then
    foreign keys between player tables including user_id. Citus distributes no table that a
    local table's foreign key references, so the foreign keys are dropped first and made last.
    A store that has rows (made on this database before the extension) is distributed in
    place: its rows without a player set aside (how many is returned), the rest copied into
    the shards with their ids, and the coordinator's local copies emptied."""
    distributed = {
        name
        for (name,) in connection.exec_driver_sql(
            "select logicalrelid::regclass::text from pg_dist_partition"
        )
    }
    rekeyed = [table for table in PLAYER_TABLES if not _leads_with_player(connection, table)]
    if not rekeyed and distributed.issuperset(PLAYER_TABLES):
        return 0
    # one connection per node for the whole transaction: Citus adds a foreign key to a
    # reference table only so, after distributing tables in the same transaction
    connection.exec_driver_sql("set local citus.multi_shard_modify_mode to 'sequential'")
    for table in PLAYER_TABLES:
        _drop_constraints(connection, table, "f")
    set_aside = _set_aside_ownerless(
        connection, [table for table in PLAYER_TABLES if table not in distributed]
    )
    for table in rekeyed:
        _drop_constraints(connection, table, "p")
        connection.exec_driver_sql(f"alter table {table} alter column user_id set not null")
        connection.exec_driver_sql(
            f"alter table {table} add primary key ({', '.join(primary_key(table))})"
        )
    made = [table for table in reference_tables() if table not in distributed]
    for table in made:
        connection.exec_driver_sql(f"select create_reference_table('{table}')")
    for table in PLAYER_TABLES:
        if table not in distributed:
            made.append(table)
            colocation = "none" if table == ANCHOR else ANCHOR
            connection.exec_driver_sql(
                f"select create_distributed_table('{table}', 'user_id', "
                f"colocate_with => '{colocation}')"
            )
    # distributing copies a table's rows to its shards and leaves them on the coordinator too
    # (read by nothing): emptied, or a store distributed in place would be stored twice
    for table in made:
        connection.exec_driver_sql(
            f"select truncate_local_data_after_distributing_table('{table}')"
        )
    for table in PLAYER_TABLES:
        for columns, target, target_columns in foreign_keys(table):
            connection.exec_driver_sql(
                f"alter table {table} add foreign key ({', '.join(columns)}) "
                f"references {target} ({', '.join(target_columns)})"
            )
    return set_aside
