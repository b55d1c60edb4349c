"""The statements dynamic memory runs: the query's bound inputs standing in for the models'
requests, the store narrowed to one agent and player, and the write statements rendered once
from the project's macros."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from ..schema.memory import OFFICIAL_TABLES
from ..sql.project import compose, render_macro
from ..sql.request_rows import bound_rows, request_rows_sql
from ..text.recall_words import word_columns
from .settings import QUERY_SETTINGS
from .time_windows import WINDOW_COLUMNS

_CONTEXT_TEXTS = ("context_text", "long_context_text")

# the cosine each stored vector gives (VECTOR_COLUMNS), column for column
COSINE_NAMES = ("cosine", "context_cosine", "long_context_cosine")
# what vector_cache computes over a player's cosines (model int_memory_query_cosine_stats)
STAT_NAMES = (
    "cosine_count",
    "cosine_sum",
    "cosine_square_sum",
    *(f"{name}_{end}" for name in COSINE_NAMES for end in ("min", "max")),
)
_COSINE_STATS = request_rows_sql(
    "query_id", {"cosine_count": "bigint", **dict.fromkeys(STAT_NAMES[1:], "double")}, "duckdb"
)
# the dense candidates numpy finds (vector_cache.dense_batch), column by column
DENSE_COLUMNS = {
    "query_id": "integer",
    "event_id": "bigint",
    **dict.fromkeys(COSINE_NAMES, "double"),
}


# the query's cosines with the reference sentences, pooled (Vectors.reference_stats)
REFERENCE_FIELDS = {
    "reference_cosine_count": "integer",
    "reference_cosine_sum": "double",
    "reference_cosine_square_sum": "double",
}
NO_REFERENCES = dict.fromkeys(REFERENCE_FIELDS)


# What each query of a batch brings (one list per name, a position per query: the models
# carry query_id, so one statement answers every query waiting); the settings are the
# DynamicMemory's, the same for all.
QUERY_FIELDS = {
    "query_id": "integer",
    "agent_id": "varchar",
    "user_id": "varchar",
    "user_name": "varchar",
    "agent_name": "varchar",
    "query_text": "varchar",
    "tokens": "varchar[]",
    "query_embedding": "float[]",
    **REFERENCE_FIELDS,
    "now": "timestamp",
    "result_limit": "integer",
    "score_threshold": "double",
    "roulette_seed": "integer",
    "save_id": "bigint",
    "memory_scope": "varchar",
    "lineage_save_ids": "bigint[]",
}
# every query field null: what a query without a text (a listing, expand_words) does not give
QUERY_NULLS = dict.fromkeys(QUERY_FIELDS)


@functools.cache  # rendered once per engine, not per batch
def query_sql(engine: str = "duckdb") -> str:
    """The batch's queries, one row each (model int_memory_queries): QUERY_FIELDS bound as
    lists, the settings once."""
    fields = {name: kind for name, kind in QUERY_FIELDS.items() if name != "query_id"}
    return request_rows_sql("query_id", fields, engine, QUERY_SETTINGS)


def batched(queries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A batch's bound parameters: a list per query field (query_id 1.. in order), and the
    settings of the first query (a DynamicMemory's, the same for all)."""
    settings = {name: value for name, value in queries[0].items() if name not in QUERY_FIELDS}
    lists = {
        name: [query[name] for query in queries] for name in QUERY_FIELDS if name != "query_id"
    }
    return {**settings, "query_id": list(range(1, len(queries) + 1)), **lists}


def listed_in(param: str, column: str, kind: str = "varchar") -> str:
    """Whether `column` is among the bound list `$param`, as SQL."""
    return f"list_contains(cast(${param} as {kind}[]), {column})"


_AGENTS, _USERS = listed_in("agent_id", "agent_id"), listed_in("user_id", "user_id")


def narrowed(table: str, *conditions: str) -> str:
    """`table`'s rows where every condition holds."""
    return f"""
        select * from {table}
        where {" and ".join(conditions)}"""


def _agents_official(table: str) -> str:
    """The batch's agents' official rows (tables of their own, OFFICIAL_TABLES: on Citus
    reference tables, read on the player's shard)."""
    return narrowed(OFFICIAL_TABLES[table], _AGENTS)


def _reachable(*player: str) -> dict[str, str]:
    """The store narrowed to the batch's agents and players, per source the models read (the
    union of official and player rows is the models' own: int_memory_*_with_official). A
    player of one query next to an agent of another is read too: the models' joins on the
    query's agent and player drop it. `player`: a condition added (macro player_filter,
    engine_sources). The scope (a player table's rows are all `user`) lets PostgreSQL seek its
    owner indexes, which lead with (agent_id, scope, user_id)."""
    tables = ("memory_event", "memory_entity", "memory_event_term")
    return {
        **{
            f"source_{table}": narrowed(table, _AGENTS, "scope = 'user'", _USERS, *player)
            for table in tables
        },
        **{f"source_{OFFICIAL_TABLES[table]}": _agents_official(table) for table in tables},
        # facts are a player's only (no scope, no official twin)
        "source_memory_fact": narrowed("memory_fact", _AGENTS, _USERS, *player),
        # the player's entities' fragments and the lines each came from
        "source_memory_entity_mention": narrowed("memory_entity_mention", _AGENTS, _USERS, *player),
        # the lines the player's events came from
        "source_memory_event_line": narrowed("memory_event_line", _USERS, *player),
        # the lines replacement batches stand in for (the branch rule hides them there)
        "source_memory_batch_line": narrowed(
            "memory_batch_line", "relation = 'replaces'", _USERS, *player
        ),
    }


def with_official(
    model: str | tuple[str, ...],
    select: str,
    provided: Mapping[str, str] | None = None,
    engine: str = "duckdb",
) -> str:
    """`select` over a union model (int_memory_*_with_official, the one place official rows
    join the players'), read from the tables themselves unless `provided` narrows a source
    (`source_<table>`)."""
    tables = (*OFFICIAL_TABLES, *OFFICIAL_TABLES.values())
    return compose(model, provided or {}, select, existing=tables, engine=engine)


# The events one player's queries can reach (the vector cache loads exactly these), by the
# table holding their vectors, bound with one-element lists: the union of
# int_memory_events_with_official written out (a per-turn read), each part beside its own
# vectors. One id sequence names an event of either table, and an event's vectors are in its
# own table's twin, so the pairs hold what the union joined to the union of the vectors does,
# without a lookup of every player event in the designers' table (reading the union models
# costs PostgreSQL 9 -> 33-41 ms on 20,000 events: docs/decisions/official-memories.md).
# test_rules_in_sql's dense parity test holds it equal to the models.
PLAYER_EVENTS = {
    "memory_event_embedding": _reachable()["source_memory_event"],
    OFFICIAL_TABLES["memory_event_embedding"]: _agents_official("memory_event"),
}


def recall_sources(engine: str) -> dict[str, str]:
    """What the query models read on `engine`: the embedded file's store narrowed to the
    batch's players, or another engine's (engine_sources)."""
    return _SOURCES if engine == "duckdb" else engine_sources(engine)


@functools.cache  # built once: read (never changed) by every batch
def engine_sources(engine: str) -> dict[str, str]:
    """_SOURCES on another engine (e.g. a game's own PostgreSQL): the queried saves' chains
    are walked there by the models over the game's `line` and `save` (bound $save_ids and
    $lineage_ids), as build_memory_for_save does; the dense candidates are bound lists
    ($dense_<column>)."""
    from ..memory_builder import history

    # the batch's player $save_user_id (a batch is one player's there: DynamicMemory splits
    # them), so on Citus every read of the memory tables runs on that player's shard
    player = render_macro("player_filter", "user_id", history.PLAYER, engine=engine)
    return {
        **{name: sql for name, sql in _SOURCES.items() if name not in _WRITE_TIME},
        **_reachable(player),
        **history.walked_sources(engine),
        # what numpy computed, bound as lists (DuckDB reads a registered table instead)
        "int_memory_query_dense_candidates": bound_rows("dense", DENSE_COLUMNS),
    }


# the write-time tables DuckDB keeps per save (memory_builder.history); another engine computes
# them in the statement
_WRITE_TIME = ("int_lines_chained_to_root", "int_save_facts_resolved")

# The store narrowed to the batch's agents and players before any model reads it (plain
# filters DuckDB pushes into each scan).
_SOURCES = {
    **_reachable(),
    # the queried saves' current chains and the facts resolved on them (write-time tables,
    # refreshed before the query)
    **{
        table: narrowed(f"main.{table}", listed_in("save_id", "save_id", "bigint"))
        for table in _WRITE_TIME
    },
    # what numpy computed over each player's vectors (vector_cache): the dense candidates,
    # registered on the cursor for this statement, and the cosines' statistics, bound
    "int_memory_query_dense_candidates": """
        select query_id, event_id, cosine, context_cosine, long_context_cosine
        from rolemem_dense_candidates""",
    "int_memory_query_cosine_stats": f"""
        select * from ({_COSINE_STATS})
        where cosine_count is not null""",
}


# What the recall fast path computes in Python before the statement (recall_words,
# postings_cache, time_windows), bound as lists: the query words, their BM25 rows and the
# windows the texts name, so the statement plans none of them (~74 operators, ~30 more with a
# window). The models stay the rule; test_recall_fast_path and test_time_windows_fast_path
# hold them equal.
LEXICAL_COLUMNS = {
    "query_id": "integer",
    "event_id": "bigint",
    "bm25_raw": "double",
    "word_tier": "double",
}
FAST_LEXICAL = {
    "int_memory_query_words": bound_rows("words", word_columns("query_id")),
    "int_memory_query_lexical": bound_rows("lexical", LEXICAL_COLUMNS),
}
FAST_TIME_WINDOWS = {"int_memory_query_time_windows": bound_rows("windows", WINDOW_COLUMNS)}
# the rows of model int_memory_query_signals
SIGNAL_COLUMNS = {**LEXICAL_COLUMNS, **DENSE_COLUMNS, "is_in_time_window": "boolean"}
# and, with the windows known, every (query, event) signal row (signals), so the statement
# plans none of the signals' union either (~15 operators)
FAST_SIGNALS = {"int_memory_query_signals": bound_rows("signals", SIGNAL_COLUMNS)}


@functools.cache  # rendered once per set of arguments, not per batch
def query_select(
    candidates: bool,
    engine: str = "duckdb",
    facts: bool = True,
    prompt_text: bool = True,
    entities: bool = True,
    words: bool = True,
    scored: bool = False,
    hits: bool = False,
    lines: bool = True,
) -> str:
    """The batch's answer rows (macro recall_answer, whose arguments these are). A lone
    query's hits come from entity_select instead."""
    flags = (candidates, facts, prompt_text, entities, words, scored, hits, lines)
    return render_macro("recall_answer", *flags, engine=engine)


@functools.cache
def entity_select(engine: str, facts: bool, lines: bool) -> str:
    """A batch's entity hits and superseded facts alone (query_select's with `hits`): the
    embedded store's recall runs it on a second cursor beside the statement of the rest, so a
    lone turn waits for the longer half, not for both."""
    flags = (False, facts, False, True, False, False, True, lines, True)
    return render_macro("recall_answer", *flags, engine=engine)


# the new events a batch's context texts read are numbered from here (after every stored id)
_FIRST_NEW_ID = 2**62


def new_and_stored_events(engine: str) -> str:
    """The events of the batch's timelines and the new ones (macro stored_and_new_events), as
    int_memory_event_context_texts reads them."""
    stored = with_official(
        "int_memory_events_with_official",
        "select event_id, agent_id, scope, user_id, created_at, description "
        "from int_memory_events_with_official",
        {
            "source_memory_event": narrowed(
                "memory_event",
                listed_in("new_agent_id", "agent_id"),
                listed_in("new_user_id", "user_id"),
            ),
            "source_official_event": narrowed(
                "official_event", listed_in("new_agent_id", "agent_id")
            ),
        },
        engine=engine,
    )
    return render_macro("stored_and_new_events", stored)


_EMBED_BATCH = 64  # documents per embedder call (and per progress step)


# where an extracted event came from (MemoryLoop); absent for events added by hand
_SOURCE_FIELDS = ("save_id", "first_line_id", "last_line_id", "root_line_id", "batch_key")
# its source lines (memory_event_line), written beside the event row
_LINE_FIELDS = ("line_ids", "target_key")


# One query's scored candidates into the recall log, a list per column (macro log_recalls)
LOGGED_COLUMNS = {
    "event_id": "bigint",
    **dict.fromkeys(
        ("bm25_score", "keyword_score", "dense_score", "recency_score", "profile_score", "score"),
        "double",
    ),
    "is_selected": "boolean",
}


LOGGED = tuple(LOGGED_COLUMNS.items())  # the macro log_recalls' argument


def logged_columns(candidates: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
    """A query's scored candidates as log_recalls binds them: a list per column, the scores as
    floats (a JSON answer reads a whole-number score as an int)."""
    return {
        name: [
            float(c[name]) if kind == "double" and c[name] is not None else c[name]
            for c in candidates
        ]
        for name, kind in LOGGED_COLUMNS.items()
    }


@functools.cache
def _MISSING_CONTEXT_SQL(engine: str = "duckdb") -> str:  # noqa: N802 - once per engine
    return with_official(
        ("int_memory_event_context_texts", "int_memory_event_embeddings_with_official"),
        render_macro("events_missing_context_vectors", engine=engine),
        engine=engine,
    )
