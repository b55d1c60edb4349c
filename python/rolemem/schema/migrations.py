"""What a store made by an older rolemem lacks, as one ordered list of named steps (STEPS),
each applied once per store and recorded in `rolemem_migration`, on DuckDB and PostgreSQL alike
(docs/decisions/migrations.md).

A step runs when the tables it changes exist; where none does, or the open has just made them
as the models are now, it is recorded without running. Where only some exist, it and every
later step wait, so the order holds. Each step is one transaction, on PostgreSQL under an
advisory lock (processes opening a store together run it once). Citus refuses a walk across
shards: `init-db` migrates a store before it distributes it, and a step that walks or joins
player tables (`_local`) is recorded without running on distributed tables. A new change is a
new step at the end; a step's name never changes (stores hold it)."""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import sqlalchemy as sa

from ..sql.project import PARAMETER, write_sql
from ..sql.seeds import shipped_rows
from ..text.postings import postings
from . import limits
from .game import APP_TABLES, CONFIG_TABLES, is_distributed
from .memory import MEMORY_TABLES, OFFICIAL_TABLES, VECTOR_COLUMNS, stored_vector_types

log = logging.getLogger(__name__)

TABLE = "rolemem_migration"
# one key for every process on the database (pg_advisory_xact_lock takes a bigint)
_LOCK = f"select pg_advisory_xact_lock(hashtext('{TABLE}'))"


@dataclass(frozen=True)
class Step:
    """A named change: `run` in the caller's transaction (a SQLAlchemy connection), once."""

    name: str
    tables: tuple[str, ...]
    run: Callable[[Any], None]
    # walks or joins player tables: not on tables Citus distributed
    is_local_only: bool = False


def _add_model_columns(connection: Any) -> None:
    """Every column of the SQLModel tables that an existing table lacks, of the model's type
    and default (its server default, else its scalar Python default, which older rows take;
    left nullable)."""
    existing = tables(connection)
    for table in APP_TABLES + CONFIG_TABLES + MEMORY_TABLES:
        for column in table.columns:
            if table.name not in existing or column.name in existing[table.name]:
                continue
            sql_type = column.type.compile(dialect=connection.dialect)
            default = getattr(column.server_default, "arg", None)
            scalar = column.default
            if default is None and isinstance(scalar, sa.ColumnDefault) and scalar.is_scalar:
                default = scalar.arg
            if default is not None:  # a value, or an expression: false()
                # as SQL literals (values from the models, never from input)
                clause = default if isinstance(default, sa.ClauseElement) else sa.literal(default)
                literal = clause.compile(
                    dialect=connection.dialect, compile_kwargs={"literal_binds": True}
                )
                sql_type += f" default {literal}"
            connection.exec_driver_sql(
                f"alter table {table.name} add column if not exists {column.name} {sql_type}"
            )


def _add_vector_columns(connection: Any) -> None:
    """The event vectors' player and context vectors, of the store's own vector type."""
    vector = stored_vector_types(connection).get("embedding", "real[]")
    for name, sql_type in (("user_id", "varchar"), *((n, vector) for n in VECTOR_COLUMNS[1:])):
        connection.exec_driver_sql(
            f"alter table memory_event_embedding add column if not exists {name} {sql_type}"
        )


# which rows of each player table are official (the archive has no scope: no player)
_OFFICIAL_ROWS = {
    "memory_event": "scope = 'official'",
    "memory_entity": "scope = 'official'",
    "memory_event_term": "event_id in (select id from official_event)",
    "memory_event_embedding": "event_id in (select id from official_event)",
    "memory_archive": "user_id is null",
}


def _move_official_rows(connection: Any) -> None:
    """Official rows moved from the player tables to their own (OFFICIAL_TABLES) with their
    ids; their postings and vectors follow the events (moved first), by id."""
    for table, rows in _OFFICIAL_ROWS.items():
        names, values = _moved_columns(connection, table)
        connection.exec_driver_sql(
            f"insert into {OFFICIAL_TABLES[table]} ({', '.join(names)}) "
            f"select {', '.join(values)} from {table} where {rows}"
        )
    for table in reversed(_OFFICIAL_ROWS):
        connection.exec_driver_sql(f"delete from {table} where {_OFFICIAL_ROWS[table]}")


def _moved_columns(connection: Any, table: str) -> tuple[list[str], list[str]]:
    """The official twin's columns a move fills, and what fills each: the player table's
    column as the twin types it (an older store's may differ)."""
    present = tables(connection)[table]
    if table == "memory_event_embedding":
        names = [name for name in ("event_id", "user_id", *VECTOR_COLUMNS) if name in present]
        return names, names
    model = next(t for t in MEMORY_TABLES if t.name == table)
    names = [column.name for column in model.columns if column.name in present]
    types = {column.name: column.type.compile(dialect=connection.dialect) for column in model.c}
    return names, [f"cast({name} as {types[name]})" for name in names]


def _fill_vector_owners(connection: Any) -> None:
    """Vectors written before they carried their event's player get it."""
    connection.exec_driver_sql(
        write_sql("fill_missing_owners", "memory_event_embedding", "event_id", "memory_event")
    )


def _recompute_postings(
    pairs: Sequence[tuple[str, str]], connection: Any, ids: Sequence[int] | None = None
) -> None:
    """The postings and token counts of the events of each (events, postings) table pair
    recomputed by today's rules (text.postings: search-mode words, whole tags), of the events
    `ids` only if given (names from this module, never from input)."""
    params, only, only_terms = {}, "", ""
    if ids is not None:
        params = {"ids": list(ids)}
        only = " where id in (select unnest(cast(:ids as bigint[])))"
        only_terms = only.replace("where id", "where event_id")
    for table, terms_table in pairs:
        events = connection.execute(
            sa.text(
                f"select id, description, keywords, agent_id, scope, user_id from {table}{only}"
            ),
            params,
        ).fetchall()
        owner_names = ("event_id", "agent_id", "scope", "user_id")
        # macro insert_event_postings's lists, named as text.postings' without their plural
        columns: defaultdict[str, list[Any]] = defaultdict(list)
        lengths = []
        for event_id, description, keywords, *owner in events:
            tags = json.loads(keywords) if isinstance(keywords, str) else keywords
            terms = postings(description or "", tags or [])
            for name, value in zip(owner_names, (event_id, *owner), strict=True):
                columns[name] += [value] * len(terms["terms"])
            for name, values in terms.items():
                columns[name.removesuffix("s")] += values
            lengths.append(sum(terms["description_counts"]) + sum(terms["keyword_counts"]))
        connection.execute(sa.text(f"delete from {terms_table}{only_terms}"), params)
        if not events:
            continue
        insert = write_sql("insert_event_postings", terms_table)
        connection.execute(sa.text(PARAMETER.sub(r":\1", insert)), columns)
        counts = write_sql("update_event_token_counts", table)
        connection.execute(
            sa.text(PARAMETER.sub(r":\1", counts)),
            {"ids": [row[0] for row in events], "lengths": lengths},
        )
        log.info("recomputed the postings of %d events", len(events))


def _fit_to_limits(connection: Any) -> None:
    """Memories an older rolemem stored past today's limits brought inside them
    (schema.limits); an event whose text or tags were cut gets its postings again."""
    for events, terms in (_POSTINGS, _OFFICIAL_POSTINGS):
        changed = limits.fit_rows(connection, events, limits.EVENT_TEXTS, tags=True)
        if changed:
            _recompute_postings([(events, terms)], connection, changed)
    for entities in ("memory_entity", "official_entity"):
        limits.fit_rows(connection, entities, limits.ENTITY_TEXTS, tags=False)


def _write_macro(name: str, connection: Any, args: Sequence[str] = ()) -> None:
    """Write macro `name` (macros/writes/) run once per argument (none: once)."""
    engine = "postgres" if connection.dialect.name == "postgresql" else "duckdb"
    for arg in args or (None,):
        sql = write_sql(name, *([arg] if arg else []), engine=engine)
        result = connection.exec_driver_sql(sql)
        if result.returns_rows:  # a backfill answers a row per row written: read, not kept
            result.fetchall()


def _packaged_rows(seed: str, key: str, connection: Any) -> None:
    """The rows of the packaged seed `seed` that the store's table lacks added, by `key` (a
    store seeded before a release that added rows); a row the store holds is left as it is,
    edited or not."""
    held = {value for (value,) in connection.exec_driver_sql(f"select {key} from {seed}")}
    missing = [row for row in shipped_rows(seed) if row[key] not in held]
    if missing:  # names from this package's seeds, values bound
        connection.execute(sa.table(seed, *map(sa.column, missing[0])).insert(), missing)


_POSTINGS = ("memory_event", "memory_event_term")
_OFFICIAL_POSTINGS = ("official_event", "official_event_term")
_BATCHES = ("memory_extraction_batch", "memory_extracted_line", "line")
_RECOMPUTE_POSTINGS = partial(_recompute_postings, [_POSTINGS])
# a step that walks or joins player tables
_local = partial(Step, is_local_only=True)
STEPS = (
    # columns added to the models before steps were recorded (a later column: a step of
    # its own with the same function, named for it)
    Step("model_columns", (), _add_model_columns),
    Step("event_vector_columns", ("memory_event_embedding",), _add_vector_columns),
    # before the official rows move: their postings go with their owner
    _local("postings_owners", _POSTINGS, partial(_write_macro, "fill_postings_owners")),
    # designers' memories out of the player tables (docs/decisions/official-memories.md)
    _local("official_tables", (*OFFICIAL_TABLES, *OFFICIAL_TABLES.values()), _move_official_rows),
    _local("event_vector_owners", ("memory_event_embedding", "memory_event"), _fill_vector_owners),
    # two changes to what postings hold, each recomputing them
    _local("search_mode_terms", _POSTINGS, _RECOMPUTE_POSTINGS),
    _local("whole_tag_terms", _POSTINGS, _RECOMPUTE_POSTINGS),
    # batches written before their lines were recorded: every line up to the root
    _local("extracted_lines_backfill", _BATCHES, partial(_write_macro, "backfill_extracted_lines")),
    # events written before memories kept their lines: their batch's
    _local(
        "event_lines_backfill",
        (*_BATCHES, "memory_event", "memory_event_line"),
        partial(_write_macro, "backfill_event_lines", args=("lines", "events")),
    ),
    # English words stemmed and stopwords left out (docs/decisions/recall-quality.md): the
    # player's and the designers' postings
    _local(
        "english_terms",
        (*_POSTINGS, *_OFFICIAL_POSTINGS),
        partial(_recompute_postings, [_POSTINGS, _OFFICIAL_POSTINGS]),
    ),
    # entities written before they kept mentions: one each, their description and no lines
    # (shown wherever the entity showed)
    _local(
        "entity_mentions_backfill",
        ("memory_entity", "memory_entity_mention"),
        partial(_write_macro, "backfill_entity_mentions"),
    ),
    # time words a release added (English ones, months in digits) for stores seeded before
    Step(
        "time_expression_rows",
        ("time_expressions",),
        partial(_packaged_rows, "time_expressions", "expression"),
    ),
    # memories stored before a memory's limits held every write path (the contract checks an
    # event again when its text is edited, an official memory when its export is imported)
    _local(
        "memory_limits",
        (*_POSTINGS, *_OFFICIAL_POSTINGS, "memory_entity", "official_entity"),
        _fit_to_limits,
    ),
    # events count the changes of their shown fields (MemoryEvent.revision); the steps run
    # when a store is opened, before any recall of it holds a field (memory_limits' cuts)
    Step("event_revisions", ("memory_event", "official_event"), _add_model_columns),
    # a save being erased is marked (Save.erasing) so that it reads as gone between steps
    Step("save_erasing", ("save",), _add_model_columns),
)


def migrate(engine: sa.Engine, made: Collection[str] = ()) -> list[str]:
    """Apply the steps the store has not recorded, in order; the names of those run. `made`:
    tables this open has just made (as the models are now: nothing of theirs to change)."""
    postgres = engine.dialect.name == "postgresql"
    with engine.begin() as connection:
        if TABLE not in tables(connection):
            if postgres:  # two processes creating it at once: one waits
                connection.exec_driver_sql(_LOCK)
            connection.exec_driver_sql(
                f"create table if not exists {TABLE} (name varchar primary key, "
                "applied_at timestamp default current_timestamp)"
            )
        done = _recorded(connection)
    ran: list[str] = []
    for step in STEPS:
        if step.name in done:
            continue
        with engine.begin() as connection:
            if postgres:
                connection.exec_driver_sql(_LOCK)
                if step.name in _recorded(connection):  # another process ran it meanwhile
                    continue
            existing = tables(connection)
            present = [table for table in step.tables if table in existing]
            if present and len(present) < len(step.tables):
                break  # an older store's newer tables are not made yet
            # a step of tables made just now, or of none, has nothing to change
            runs = not step.tables or any(table not in made for table in present)
            if runs and step.is_local_only:
                runs = not is_distributed(connection, step.tables[0])
            if runs:
                step.run(connection)
                ran.append(step.name)
            connection.execute(
                sa.text(f"insert into {TABLE} (name) values (:name)"), {"name": step.name}
            )
    return ran


def tables(connection: Any) -> dict[str, set[str]]:
    """The columns of each table of the connection's schema (DuckDB's main, PostgreSQL's first
    on the search path), read once: duckdb_engine's inspector reads PostgreSQL's catalog."""
    found: dict[str, set[str]] = {}
    for table, column in connection.exec_driver_sql(
        "select table_name, column_name from information_schema.columns "
        "where table_schema = current_schema()"
    ):
        found.setdefault(table, set()).add(column)
    return found


def _recorded(connection: Any) -> set[str]:
    return {name for (name,) in connection.exec_driver_sql(f"select name from {TABLE}")}
