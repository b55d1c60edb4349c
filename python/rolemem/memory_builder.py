"""Dialogue tree -> one character's chat messages, by running the dbt models on DuckDB.

The rules live in `models/intermediate/memory_builder/` and `models/marts/memory_builder/`.
This module only binds the caller's lines and target as parameters, asks for the
`memory_messages` rows of that one target, and turns them into dicts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from . import _duck
from ._sql_project import compose
from .errors import ChainError, LineError, SaveNotFoundError

_TEXT_FIELDS = ("attribute", "content", "original_emotion", "tts_content", "action_content",
                "display_name")

# The caller's one target, standing in for the batch model `int_memory_targets`.
_TARGET_SQL = """
    select
        cast($save_id as bigint) as save_id,
        'caller' as target_key,
        cast($role_id as bigint) as target_role_id,
        cast($script_role_id as varchar) as target_script_role_id,
        cast($display_name as varchar) as target_display_name,
        cast($context_emotion as boolean) as use_context_emotion
"""

# Lines given in order, standing in for the recursive walk `int_lines_chained_to_root`.
_GIVEN_LINES_SQL = """
    select
        cast(0 as bigint) as save_id,
        unnest($positions::bigint[]) as line_position,
        unnest($ids::bigint[]) as line_id,
        unnest($role_ids::bigint[]) as role_id,
        unnest($script_role_ids::varchar[]) as script_role_id,
        unnest($attributes::varchar[]) as attribute,
        unnest($display_names::varchar[]) as display_name,
        unnest($contents::varchar[]) as content,
        unnest($original_emotions::varchar[]) as original_emotion,
        unnest($tts_contents::varchar[]) as tts_content,
        unnest($action_contents::varchar[]) as action_content
"""

# One save's lines plus the parents they point at in other saves (so such a parent is seen
# and reported). Two plain filters: an OR of both kept DuckDB from pushing either down
# (50 ms against 28 ms for a 200-line save in a million-line table).
_SAVE_LINES_SQL = """
    select * from line where save_id = $save_id
    union all
    select * from line
    where id in (select parent_line_id from line where save_id = $save_id)
        and save_id <> $save_id
"""
_SAVE_SQL = "select * from save where id = $save_id"

_MESSAGES_SELECT = "select role, content from memory_messages order by message_index"
_SAVE_SELECT = """
select 'message' as row_kind, message_index, role, content from memory_messages
union all
select 'problem', null, null, chain_problem from int_save_chain_problems
union all
select 'missing', null, null, null where not exists (select 1 from source_save)
order by row_kind, message_index
"""


def _int_or_none(value: Any, field: str, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise LineError(f"{where}: {field} must be an integer or None, got {value!r}")
    return value


def _text_or_none(value: Any, field: str, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise LineError(f"{where}: {field} must be a string or None, got {value!r}")
    return value


def _script_role(value: Any, field: str, where: str) -> str | None:
    """script_role_id compares as text: 1 and "1" are the same NPC."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return _text_or_none(value, field, where)


def _target_params(
    role_id: Any, script_role_id: Any, display_name: Any, context_emotion: bool
) -> dict[str, Any]:
    where = "target"
    if not isinstance(context_emotion, bool):
        raise TypeError(f"context_emotion must be True or False, got {context_emotion!r}")
    return {
        "role_id": _int_or_none(role_id, "role_id", where),
        "script_role_id": _script_role(script_role_id, "script_role_id", where),
        "display_name": _text_or_none(display_name, "display_name", where),
        "context_emotion": context_emotion,
    }


# (bound parameter, line field, check) — checks run per column, after collection, so the
# common all-valid case costs one pass of cheap type tests.
_COLUMNS = (
    ("ids", "id", _int_or_none),
    ("role_ids", "role_id", _int_or_none),
    ("script_role_ids", "script_role_id", _script_role),
    *((f"{name}s", name, _text_or_none) for name in _TEXT_FIELDS),
)
_VALID_TYPES = {_int_or_none: int, _script_role: str, _text_or_none: str}


def _line_params(lines: Iterable[Any]) -> dict[str, list[Any]]:
    rows = []
    for line in lines:
        if isinstance(line, Mapping):
            values = [line.get(field) for _, field, _ in _COLUMNS]
            if values[0] is None:
                values[0] = line.get("line_id")
        else:
            values = [getattr(line, field, None) for _, field, _ in _COLUMNS]
        rows.append(values)
    columns = {"positions": list(range(len(rows)))}
    for index, (param, field, check) in enumerate(_COLUMNS):
        column = [values[index] for values in rows]
        valid = _VALID_TYPES[check]
        if not all(value is None or type(value) is valid for value in column):
            for position, value in enumerate(column):  # slow path: convert or name the culprit
                line_id = rows[position][0]
                where = f"line {line_id}" if line_id is not None else (
                    f"line at position {position}")
                column[position] = check(value, field, where)
        columns[param] = column
    return columns


def build_memory(
    lines: Iterable[Any],
    *,
    role_id: int | None = None,
    script_role_id: str | int | None = None,
    display_name: str | None = None,
    context_emotion: bool = True,
) -> list[dict[str, str]]:
    """One character's memory from lines given root -> last.

    `lines` are `Line` rows, objects with the same attributes, or mappings with the same keys
    (`line_id` is accepted for `id`). The character is whoever matches any identity field given.
    Returns OpenAI-style messages `[{"role": ..., "content": ...}, ...]`.
    """
    params = {
        **_line_params(lines),
        **_target_params(role_id, script_role_id, display_name, context_emotion),
        "save_id": 0,
    }
    sql = compose(
        "memory_messages",
        {"int_lines_chained_to_root": _GIVEN_LINES_SQL, "int_memory_targets": _TARGET_SQL},
        _MESSAGES_SELECT,
    )
    rows = _duck.scratch_cursor().run(sql, params)
    return [{"role": role, "content": content} for role, content in rows]


def build_memory_for_save(
    db: _duck.Database,
    save_id: int,
    *,
    role_id: int | None = None,
    script_role_id: str | int | None = None,
    display_name: str | None = None,
    context_emotion: bool = True,
) -> list[dict[str, str]]:
    """One character's memory for a stored save: walks `save.last_message_id` up the parent chain.

    `db` is a DuckDB connection or file path (default: `ROLEMEM_DB` or ./rolemem.duckdb) with the
    spec's `save` and `line` tables. Raises `SaveNotFoundError` for an unknown save and
    `ChainError` for a cycle or a parent line from another save.
    """
    save_id = _int_or_none(save_id, "save_id", "request")  # type: ignore[assignment]
    if save_id is None:
        raise TypeError("save_id is required")
    params = {
        **_target_params(role_id, script_role_id, display_name, context_emotion),
        "save_id": save_id,
    }
    sql = compose(
        "memory_messages",
        {"source_line": _SAVE_LINES_SQL, "source_save": _SAVE_SQL,
         "int_memory_targets": _TARGET_SQL},
        _SAVE_SELECT,
    )
    with _duck.cursor(db) as cur:
        rows = _duck.run(cur, sql, params)
    messages = []
    for row_kind, _index, role, content in rows:
        if row_kind == "missing":
            raise SaveNotFoundError(f"save {save_id} does not exist")
        if row_kind == "problem":
            raise ChainError(content)
        messages.append({"role": role, "content": content})
    return messages
