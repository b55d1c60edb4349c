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


# The observations' players' rows of their characters, by table (macro loop_target_rows):
# the extracted lines (a fork's shared lines are among them, whichever save extracted them),
# and the memories' source lines (events' and entity mentions') and the replacement batches'
# lines, which decide whether a cut left a line without its memory
_TARGET_TABLES = {
    "memory_extraction_batch": "save_id",  # the observations' saves' batches
    "memory_extracted_line": "user_id",
    "memory_event_line": "user_id",
    "memory_entity_mention": "user_id",
    "memory_batch_line": "user_id",
}


@functools.cache  # composed once per engine and variant
def plan_sql(engine: str, cuts: bool = False, presence: bool = False) -> str:
    """The plan of a batch of observations (the loop's models over their saves' chains): on
    DuckDB the chains and tips are the write-time tables, read for $save_ids; an engine that
    keeps none (PostgreSQL) walks them in the statement ($save_ids, $lineage_ids: history).
    `cuts`: the variant which reads what cites each chain line (var loop_cuts); `presence`: the
    one which decides which lines the character witnessed (var loop_presence). The lean plan
    (neither) holds where no memory was cut off the chain and no line of it says who was
    present, and says where either may not hold (`has_cut`, `has_presence`: model
    int_loop_watermarks), for those to be planned again with it."""
    # the batch's saves only ($save_ids: a join with the whole table is a scan of every save
    # of the game); on DuckDB their stored chains (refreshed first when a save's tip moved)
    chains = dict(history.walked_sources(engine))
    if engine == "duckdb":
        chains["int_lines_chained_to_root"] = render_macro("stored_save_chains")
    return compose(
        "int_loop_observations_planned",
        {
            **chains,
            "int_loop_observations": render_macro(
                "bound_loop_observations", OBSERVATION_FIELDS, engine=engine
            ),
            **{
                f"source_{table}": render_macro("loop_target_rows", table, key, engine=engine)
                for table, key in _TARGET_TABLES.items()
            },
        },
        "select * from int_loop_observations_planned",
        {"loop_cuts": cuts, "loop_presence": presence},
        # DuckDB keeps the tips as a write-time table (rolemem.memory_builder.history)
        existing=("int_save_history_tips",) if engine == "duckdb" else (),
        engine=engine,
    )


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
