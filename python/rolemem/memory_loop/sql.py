"""The memory loop's statements: the caller's observation and maintenance request standing in
for the batch models, what an observation reads, and the loop state's writes."""

from __future__ import annotations

import functools

from ..memory_builder import history
from ..sql.project import compose, render_macro
from ..sql.seeds import seed_specs

# the loop settings a MemoryLoop may override: the seed memory_loop_settings' columns
SETTING_NAMES = tuple(seed_specs()["memory_loop_settings"][1])


# the loop settings an observation brings
OBSERVED_SETTINGS = {
    "extract_at_turns": "integer",
    "extract_turns": "integer",
    "context_max_turns": "integer",
    "min_window_turns": "integer",
}
# What each observation of a batch brings (a list per name, a position per observation):
# the models carry save_id and target_key (the character's key, by the models' rule: macro
# memory_target_key), so one statement plans every observation waiting.
OBSERVATION_FIELDS = {
    "save_id": "bigint",
    "role_id": "bigint",
    "script_role_id": "varchar",
    "user_id": "varchar",
    "agent_id": "varchar",
    "scene": "varchar",
    **OBSERVED_SETTINGS,
}


# the saves' chains from the write-time table (refreshed first when a save's tip moved)
_CHAIN_SQL = """
    select * from main.int_lines_chained_to_root
    where list_contains(cast($save_id as bigint[]), save_id)"""


# a table's rows of the observed characters, on the observations' saves or of their players
_TARGET_ROWS_SQL = """
    select * from {table}
    where
        {rows}
        and {player}
        and target_key in (select observed.target_key from int_loop_observations as observed)
"""
_OF_SAVES = "list_contains(cast($save_id as bigint[]), save_id)"
# The observations' players' rows of their characters, by table: the extracted lines (a
# fork's shared lines are among them, whichever save extracted them), and the memories'
# source lines (events' and entity mentions') and the replacement batches' lines, which decide
# whether a cut left a line without its memory
_OF_PLAYERS = "list_contains(cast($user_id as varchar[]), user_id)"
_PLAYER_TARGET_TABLES = (
    "memory_extracted_line",
    "memory_event_line",
    "memory_entity_mention",
    "memory_batch_line",
)


# the batch's saves only: a join with the whole table is a scan of every save of the game
_SAVES_SQL = """
    select * from save
    where list_contains(cast($save_id as bigint[]), id) and {player}"""


@functools.cache  # composed once per engine and variant
def plan_sql(engine: str, cuts: bool = False, presence: bool = False) -> str:
    """The plan of a batch of observations (the loop's models over their saves' chains): on
    DuckDB the chains and tips are the write-time tables; an engine that keeps none
    (PostgreSQL) walks them in the statement ($save_ids, $lineage_ids: history). `cuts`: the
    variant which reads what cites each chain line (var loop_cuts); `presence`: the one which
    decides which lines the character witnessed (var loop_presence). The lean plan (neither)
    holds where no memory was cut off the chain and no line of it says who was present, and
    says where either may not hold (`has_cut`, `has_presence`: model int_loop_watermarks), for
    those to be planned again with it."""
    # on Citus every read of a player table names the batch's player $save_user_id (the
    # loop splits batches per player there), so the plan runs on that player's shard
    player = render_macro("player_filter", "user_id", history.PLAYER, engine=engine)
    chains = (
        {
            "int_lines_chained_to_root": _CHAIN_SQL,
            "source_role": history.ROLES_SQL,
            "source_save": _SAVES_SQL.format(player=player),
        }
        if engine == "duckdb"
        else history.walked_sources(engine)
    )
    return compose(
        "int_loop_observations_planned",
        {
            **chains,
            "int_loop_observations": render_macro(
                "bound_loop_observations", OBSERVATION_FIELDS, engine=engine
            ),
            "source_memory_extraction_batch": _TARGET_ROWS_SQL.format(
                table="memory_extraction_batch", rows=_OF_SAVES, player=player
            ),
            **{
                f"source_{table}": _TARGET_ROWS_SQL.format(
                    table=table, rows=_OF_PLAYERS, player=player
                )
                for table in _PLAYER_TARGET_TABLES
            },
        },
        "select * from int_loop_observations_planned",
        {"loop_cuts": cuts, "loop_presence": presence},
        # DuckDB keeps the tips as a write-time table (rolemem.memory_builder.history)
        existing=("int_save_history_tips",) if engine == "duckdb" else (),
        engine=engine,
    )


@functools.cache  # rendered once per engine
def window_version_sql(engine: str) -> str:
    return render_macro("context_window_version", engine=engine)


# the loop settings a maintenance run brings
MAINTENANCE_SETTINGS = {
    "cleanup_threshold": "integer",
    "cleanup_share": "double",
    "cleanup_interval_days": "integer",
    "inactive_days": "integer",
    "inactive_min_keep": "integer",
}
# the caller's maintenance request, standing in for the model int_memory_maintenance_requests
MAINTENANCE_SQL = "select " + ", ".join(
    f"cast(${name} as {kind}) as {name}"
    for name, kind in {"now": "timestamp", **MAINTENANCE_SETTINGS}.items()
)
