"""Deterministic synthetic dialogue trees for parity tests and benchmarks (not shipped).

One set-based INSERT writes every line (a million in seconds), into tables with the
application's columns but no foreign keys: DuckDB checks a self-referencing key against rows
committed before the statement, which would force one statement per position in a save.
Every save opens with three system lines (global, role 1's, script NPC 1's), then mixes
the player, role 1, role 2, script NPC 1, a narrator and blank names; every tenth line starts a
regenerated branch, so each save's tree has dead siblings off the played chain.
"""

from __future__ import annotations

import duckdb

from rolemem.sql.project import write_sql

_CREATE_TABLES = """
create table if not exists role (id bigint primary key, name varchar not null);
create table if not exists save (id bigint primary key, name varchar, last_message_id bigint);
create table if not exists line (
    id bigint primary key, original_emotion varchar, predicted_emotion varchar,
    content varchar not null, tts_content varchar, action_content varchar, audio_file varchar,
    attribute varchar not null, role_id bigint, script_role_id varchar, display_name varchar,
    save_id bigint not null, parent_line_id bigint
);
"""


def generate_dialogue(
    con: duckdb.DuckDBPyConnection,
    *,
    saves: int,
    lines_per_save: int,
    seed: int = 7,
    first_save_id: int = 1,
    first_line_id: int = 1,
) -> None:
    """Add saves to the `role`, `save` and `line` tables (created if missing); ids are
    consecutive from `first_save_id` / `first_line_id`, so several calls build one database."""
    if lines_per_save < 4:
        raise ValueError("lines_per_save must be at least 4")
    params = {
        "saves": saves,
        "per_save": lines_per_save,
        "first_save_id": first_save_id,
        "first_line_id": first_line_id,
    }
    con.execute(_CREATE_TABLES)
    con.execute(write_sql("insert_synthetic_roles"))
    con.execute(write_sql("insert_synthetic_saves"), params)
    con.execute(write_sql("insert_synthetic_lines"), {**params, "seed": seed})
