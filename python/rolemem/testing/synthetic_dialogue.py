"""Deterministic synthetic dialogue trees for parity tests and benchmarks.

One set-based INSERT writes every line (a million in seconds), into tables with the
application's columns but no foreign keys: DuckDB checks a self-referencing key against rows
committed before the statement, which would force one statement per position in a save.
Every save opens with three system lines (global, role 1's, script NPC 1's), then mixes
the player, role 1, role 2, script NPC 1, a narrator and blank names; every tenth line starts a
regenerated branch, so each save's tree has dead siblings off the played chain.
"""

from __future__ import annotations

import duckdb

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

_INSERT_ROLES = """
insert into role (id, name) values (1, '钦灵'), (2, '莉莉') on conflict do nothing
"""

_INSERT_SAVES = """
insert into save (id, name, last_message_id)
select
    $first_save_id + save_number,
    'synthetic ' || ($first_save_id + save_number),
    $first_line_id - 1 + (save_number + 1) * $per_save
from range($saves) as saves(save_number)
"""

_INSERT_LINES = """
insert into line (id, original_emotion, predicted_emotion, content, tts_content,
                  action_content, audio_file, attribute, role_id, script_role_id,
                  display_name, save_id, parent_line_id)
with numbered as (
    select
        $first_line_id + line_number as line_id,
        $first_save_id + line_number // $per_save as save_id,
        line_number % $per_save as position,
        cast(hash(line_number, $seed) % 100 as integer) as roll,
        cast(hash(line_number, $seed, 'style') % 12 as integer) as style
    from range($saves * $per_save) as numbered(line_number)
),
voiced as (
    select
        *,
        case
            when position < 3 then 'system'
            when roll < 30 or roll >= 93 then 'user'
            when roll < 90 then 'assistant'
            else 'system'
        end as attribute,
        case
            when position = 1 or (position >= 3 and roll < 55) then 1
            when position >= 3 and (roll between 55 and 69 or roll between 90 and 92) then 2
        end as role_id,
        case when position = 2 or (position >= 3 and roll between 70 and 79) then '1' end
            as script_role_id,
        case
            when position < 3 then null
            when roll < 30 then '莱姆'
            when roll < 55 then '钦灵'
            when roll < 70 then '莉莉'
            when roll < 80 then '白小喵'
            when roll < 90 then '旁白'
            when roll >= 93 then ' '
        end as display_name
    from numbered
)
select
    line_id,
    case when style % 3 = 0 then null else ['开心', '好奇', '难为情', '生气'][style % 4 + 1] end,
    null,
    '台词' || line_id || case when style = 7 then '，{带括号}' else '' end,
    case when attribute = 'assistant' and style % 2 = 0 then 'セリフ' || line_id end,
    case when attribute = 'assistant' and style % 5 = 0 then '动作' || line_id end,
    null,
    attribute,
    role_id,
    script_role_id,
    display_name,
    save_id,
    case
        when position = 0 then null
        when position % 10 = 5 then line_id - 2
        else line_id - 1
    end
from voiced
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
    con.execute(_INSERT_ROLES)
    con.execute(_INSERT_SAVES, params)
    con.execute(_INSERT_LINES, {**params, "seed": seed})
