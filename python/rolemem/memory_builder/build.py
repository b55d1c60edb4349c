"""Dialogue tree -> one character's chat messages, by running the dbt models on DuckDB.

The rules live in `models/intermediate/memory_builder/` and `models/marts/memory_builder/`.
This module only binds the caller's lines and target as parameters, asks for the
`memory_messages` rows of that one target, and turns them into dicts.
"""

from __future__ import annotations

import contextlib
import functools
import json
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import duckdb

from ..engines import PostgresEngine as Engine
from ..engines import duckdb_connect, resolve
from ..engines.duckdb import DuckDBEngine
from ..errors import ChainError, LineError, SaveNotFoundError
from ..sql.project import compose, render_macro, write_sql
from . import history

# the caller's one target, standing in for the batch model int_memory_targets
_TARGET_SQL = render_macro("bound_memory_target", "$save_user_name")
_SAVE_TARGET_SQL = render_macro(
    "bound_memory_target", "(select user_name from source_save where id = $save_id)"
)

# Lines given in order, standing in for the recursive walk `int_lines_chained_to_root` (their
# `_COLUMNS`, bound as lists), with who was present inherited along them by the chain's rule
# (macro inherited_presence). The chain's names of the fields it names otherwise:
_CHAIN_NAMES = {
    "id": "line_id",
    "present_role_ids": "given_present_role_ids",
    "present_script_role_ids": "given_present_script_role_ids",
}


@functools.cache  # rendered once per engine
def _given_lines_sql(engine: str, presence: bool = True) -> str:
    """The given lines as the chain (macro given_lines); `presence` false: none says who was
    present, so none inherits it."""
    bound = tuple(
        (param, _CHAIN_NAMES.get(field, field), "bigint" if check is int_or_none else "varchar")
        for param, field, check in (("positions", "line_position", int_or_none), *_COLUMNS)
    )
    return write_sql("given_lines", bound, presence, engine=engine)


_STORED_TIP_SQL = render_macro("stored_history_tip")
# the character's key by the models' rule (macro memory_target_key), rendered once
_TARGET_KEY_SQL = "select " + render_macro(
    "memory_target_key", "cast($role_id as bigint)", "cast($script_role_id as varchar)"
)
_STORED_MESSAGES_SQL = render_macro("stored_target_messages")
_MESSAGES_SELECT = render_macro("spanned_messages")
_SAVE_MODELS = ("memory_messages", "int_save_history_tips")
_SAVE_SELECT = render_macro("save_messages_or_problem")


def _all_valid(column: list[Any], valid: type) -> bool:
    """Whether every value of a column is None or a `valid` the engines take as it is: a
    64-bit integer, storable text. Checked over the whole column at once (the types as a set,
    the range by min and max, the text joined), not value by value: a 20,000-line history
    has ten such columns."""
    present = [value for value in column if value is not None]
    if not present:
        return True
    if set(map(type, present)) != {valid}:
        return False
    if valid is int:
        return -(2**63) <= min(present) and max(present) < 2**63
    # a NUL or a lone surrogate in any text is one in the joined text, and only then
    return duckdb_connect.is_storable_text("".join(present))


def int_or_none(value: Any, field: str, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise LineError(f"{where}: {field} must be an integer or None, got {value!r}")
    if not -(2**63) <= value < 2**63:
        raise LineError(f"{where}: {field} must fit in 64 bits, got {value}")
    return value


def _text_or_none(value: Any, field: str, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise LineError(f"{where}: {field} must be a string or None, got {value!r}")
    if not duckdb_connect.is_storable_text(value):
        raise LineError(
            f"{where}: {field} is not text rolemem can store (a lone surrogate or a NUL character)"
        )
    return value


def script_role_or_none(value: Any, field: str, where: str) -> str | None:
    """script_role_id compares as text: 1 and "1" are the same NPC."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return _text_or_none(value, field, where)


def _target_params(
    role_id: Any,
    script_role_id: Any,
    display_name: Any,
    context_emotion: bool,
    user_name: Any = None,
) -> dict[str, Any]:
    if not isinstance(context_emotion, bool):
        raise TypeError(f"context_emotion must be True or False, got {context_emotion!r}")
    return {
        "role_id": int_or_none(role_id, "role_id", "target"),
        "script_role_id": script_role_or_none(script_role_id, "script_role_id", "target"),
        "display_name": _text_or_none(display_name, "display_name", "target"),
        "user_name": _text_or_none(user_name, "user_name", "target"),
        "context_emotion": context_emotion,
    }


def presence_or_none(value: Any, field: str, where: str) -> str | None:
    """Who was present for a line (`present_role_ids`: role ids; `present_script_role_ids`:
    script role ids, 1 and "1" alike) as the JSON text the line table stores; None: the line
    does not say."""
    if value is None:
        return None
    if isinstance(value, str):  # as stored: JSON text (refused below when it is not JSON)
        with contextlib.suppress(ValueError):
            value = json.loads(value)
    if not isinstance(value, list | tuple):
        raise LineError(f"{where}: {field} must be a list or None, got {value!r}")
    check = int_or_none if field == "present_role_ids" else script_role_or_none
    items = []
    for item in value:
        checked = check(item, field, where)
        if checked is None:
            raise LineError(f"{where}: {field} must not hold null")
        items.append(checked)
    return json.dumps(items, ensure_ascii=False)


# (bound parameter, line field, check) — checks run per column, after collection, so the
# common all-valid case costs one pass of cheap type tests. A pydantic line (SQLModel's
# `Line`) declares a prefix of these fields (see _reader): role_name, which it lacks, last.
_COLUMNS = (
    ("ids", "id", int_or_none),
    ("role_ids", "role_id", int_or_none),
    ("script_role_ids", "script_role_id", script_role_or_none),
    *(
        (f"{name}s", name, _text_or_none)
        for name in ("attribute", "content", "original_emotion", "tts_content", "action_content")
    ),
    ("display_names", "display_name", _text_or_none),
    ("present_role_lists", "present_role_ids", presence_or_none),
    ("present_script_role_lists", "present_script_role_ids", presence_or_none),
    ("role_names", "role_name", _text_or_none),
)
# a list is never valid as it is: presence is written as JSON text (all None passes as it is)
_VALID_TYPES = {
    int_or_none: int,
    script_role_or_none: str,
    _text_or_none: str,
    presence_or_none: type(None),
}


_FIELDS = [field for _, field, _ in _COLUMNS]
# what _STORED_LINES_SQL reads of each line, in its order (`line_id` read as `id`)
STORED_LINE_FIELDS = tuple(_FIELDS)
_STORED_LINES_SQL = render_macro("stored_chain_lines", STORED_LINE_FIELDS[1:])


@functools.lru_cache(maxsize=64)  # worked out once per class
def _reader(cls: type) -> Callable[[Any], list[Any]]:
    """How a line of class `cls` gives its `_COLUMNS` values. A pydantic model's (SQLModel's
    `Line`) has every field it declares and none it lacks (no extras allowed): its fields are
    read in one `attrgetter` call and the rest are None, where reading a missing one (the
    spec's `Line` has no `role_name`) raises inside pydantic. That cost a 20,000-line
    history 50 ms more than the fields it has; any other object is asked field by field."""
    declared = getattr(cls, "model_fields", None)
    config = getattr(cls, "model_config", None)
    if isinstance(declared, Mapping) and isinstance(config, Mapping):
        present = [field for field in _FIELDS if field in declared]
        missing = _FIELDS[len(present) :]
        if (
            config.get("extra") != "allow"
            and len(present) > 1
            and _FIELDS[: len(present)] == present
            and not any(hasattr(cls, field) for field in missing)
        ):
            get = operator.attrgetter(*present)
            pad = [None] * len(missing)
            return lambda line: [*get(line), *pad]
    return lambda line: [getattr(line, field, None) for field in _FIELDS]


def _line_params(lines: Iterable[Any]) -> dict[str, list[Any]]:
    rows = []
    for line in lines:
        if isinstance(line, Mapping):
            values = [line.get(field) for field in _FIELDS]
            if values[0] is None:
                values[0] = line.get("line_id")
        else:
            values = _reader(line.__class__)(line)
        rows.append(values)
    columns: dict[str, list[Any]] = {"positions": list(range(len(rows)))}
    by_column = list(zip(*rows, strict=True)) if rows else [() for _ in _COLUMNS]
    for (param, field, check), given in zip(_COLUMNS, by_column, strict=True):
        column = list(given)
        if not _all_valid(column, _VALID_TYPES[check]):
            for position, value in enumerate(column):  # slow path: convert or name the culprit
                line_id = rows[position][0]
                where = f"line {line_id}" if line_id is not None else f"line at position {position}"
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
    engine: Engine | None = None,
    user_name: str | None = None,
) -> list[dict[str, str]]:
    """One character's memory from lines given root -> last.

    `lines` are `Line` rows, objects with the same attributes, or mappings with the same keys
    (`line_id` is accepted for `id`; an optional `role_name`, the line's role's name, names a
    voice that shows no `display_name`, as the stored history's role table does). The
    character is whoever matches any identity field given. `user_name`: the player's name
    for their lines that show no `display_name` (none: 用户).
    Returns OpenAI-style messages `[{"role": ..., "content": ...}, ...]`. The models run on an
    in-memory DuckDB, or on `engine` (e.g. `rolemem.engines.PostgresEngine`).
    """
    target = _target_params(role_id, script_role_id, display_name, context_emotion, user_name)
    return _chat(_messages(lines, target, engine=engine))


def _chat(rows: Iterable[Sequence[Any]]) -> list[dict[str, str]]:
    """Rows starting (role, content) as OpenAI-style messages."""
    return [{"role": row[0], "content": row[1]} for row in rows]


def message_spans(
    lines: Iterable[Any],
    *,
    role_id: int | None = None,
    script_role_id: str | int | None = None,
    user_name: str | None = None,
) -> list[dict[str, Any]]:
    """`build_memory`'s messages, each with the positions (0-based, in `lines`) of its first
    and last line: which lines a message (and what is extracted from it) came from."""
    target = _target_params(role_id, script_role_id, None, True, user_name)
    return [
        {"role": role, "content": content, "first_line": first, "last_line": last}
        for role, content, first, last in _messages(lines, target)
    ]


# the target role's row of `int_role_witnesses` as bound values
_WITNESS = ("witness_role_id", "witness_is_omniscient", "witness_role_ids")
_WITNESS_SQL = render_macro("bound_role_witness")


@functools.cache  # composed once
def _stored_witness_sql() -> str:
    return compose(
        "int_role_witnesses",
        {"source_role": history.ROLES_SQL},
        "select is_omniscient, witness_role_ids from int_role_witnesses where role_id = $role_id",
    )


def stored_witness(cur: duckdb.DuckDBPyConnection, role_id: int | None) -> dict[str, Any]:
    """What the store's role table says role `role_id` witnessed beyond its own presence
    (model int_role_witnesses), as `_messages`' `witness` (empty: no such role or table)."""
    found = None
    if role_id is not None:
        with contextlib.suppress(duckdb.CatalogException):  # a game's database without roles
            found = cur.execute(_stored_witness_sql(), {"role_id": role_id}).fetchone()
    return {} if found is None else dict(zip(_WITNESS, (role_id, *found), strict=True))


def _messages(
    lines: Iterable[Any],
    target: Mapping[str, Any],
    save_user_name: str | None = None,
    engine: Engine | None = None,
    witness: Mapping[str, Any] | None = None,
) -> list[tuple[Any, ...]]:
    """The `memory_messages` rows of `target` (_target_params) over `lines`; `save_user_name`:
    the name of the save they are the chain of, if any; `witness`: the target role's
    `stored_witness` (none: it witnessed what its own role was present for)."""
    params = {
        **_line_params(lines),
        **target,
        "save_user_name": save_user_name,
        "save_id": 0,
        **dict.fromkeys(_WITNESS),
        **(witness or {}),
    }
    name = engine.name if engine else "duckdb"
    # a chain where no line says who was present plans none of the presence rule
    presence = any(
        value is not None
        for column in ("present_role_lists", "present_script_role_lists")
        for value in params[column]
    )
    sql = compose(
        "memory_messages",
        {
            "int_lines_chained_to_root": _given_lines_sql(name, presence),
            "int_memory_targets": _TARGET_SQL,
            "int_role_witnesses": _WITNESS_SQL,
        },
        _MESSAGES_SELECT,
        variables={"history_presence": presence},
        engine=name,
    )
    return (engine or duckdb_connect.scratch_cursor()).run(sql, params)


def build_memory_for_save(
    db: duckdb_connect.Database | Engine | DuckDBEngine,
    save_id: int,
    *,
    role_id: int | None = None,
    script_role_id: str | int | None = None,
    display_name: str | None = None,
    context_emotion: bool = True,
    user_id: str | None = None,
    user_name: str | None = None,
) -> list[dict[str, str]]:
    """One character's memory for a stored save: walks `save.last_message_id` up the parent chain.

    `db` is a DuckDB connection or file path (default: `ROLEMEM_DB` or ./rolemem.duckdb) with the
    spec's `save` and `line` tables, or a `postgresql://` URL or an engine
    (`rolemem.engines.PostgresEngine`) on a game's own database with the SQLModel schema
    (every model runs over the save's lines). `user_id`: the save's player, which a database
    sharded by player (Citus) routes the walk by (None: found from the save).
    `user_name`: the player's name for their lines that show no `display_name` (default: the
    save's `user_name`, else 用户).
    Raises `SaveNotFoundError` for an unknown save and
    `ChainError` for a cycle, a parent line from another save or a tip that does not exist.

    The answer is a point read of the write-time table `memory_messages` (refreshed first when
    the save's tip or `user_name` changed since it was built: see `memory_builder.history`). A
    character the table does not hold (named by display name, several ids,
    `context_emotion=False`, or not speaking in the save), and a `user_name` other than the
    save's (the stored messages name the player by the save's), is built from the stored
    chain by the same models. A read-only database is answered by running every model over
    the save's lines.
    """
    save_id = int_or_none(save_id, "save_id", "request")  # type: ignore[assignment]
    if save_id is None:
        raise TypeError("save_id is required")
    target = {
        **_target_params(role_id, script_role_id, display_name, context_emotion, user_name),
        "save_id": save_id,
    }
    source, engine, owned = resolve(db)  # what the CLI takes, a postgresql:// URL too
    if engine is not None:  # a game's own database: the read-only file's statement, transpiled
        try:
            chains = history.chain_params(engine, [save_id], user_id)
            sources = history.walked_sources(engine.name)
            return _save_messages(engine.run, sources, {**target, **chains}, engine.name)
        finally:
            if owned:
                engine.close()
    store: duckdb_connect.Database = source  # a path or connection (an engine's, resolved)
    # a path is opened read-only (any number of readers may share a file nobody writes): its
    # fresh rows are read, a stale save is built from its lines; a connection may refresh
    read_only = not isinstance(store, duckdb.DuckDBPyConnection)
    with duckdb_connect.cursor(store, tuned=False, read_only=read_only) as cur:
        tip = _read_tip(cur, save_id)
        if tip is not None and not tip[0]:  # no history tables yet, or the tip moved
            try:
                connection = store if isinstance(store, duckdb.DuckDBPyConnection) else None
                history.ensure_fresh(cur, [save_id], connection)
            except duckdb.InvalidInputException as exc:
                if "read-only" not in str(exc):
                    raise
                return _build_live(cur, target)
            tip = _read_tip(cur, save_id)
        if tip is None:
            raise SaveNotFoundError(f"save {save_id} does not exist")
        if tip[1] is not None:
            raise ChainError(tip[1])
        # the stored messages name the player by the save's name: a request naming another
        # (a blank name too) is rendered from the chain (the save keeps its own name; the
        # request's wins here)
        if _is_materialized(target) and target["user_name"] in (None, tip[2]):
            character = _target_key(target["role_id"], target["script_role_id"])
            key = {"save_id": save_id, "target_key": character}
            rows = cur.execute(_STORED_MESSAGES_SQL, key).fetchall()
            if rows:
                return _chat(rows)
        lines = cur.execute(_STORED_LINES_SQL, {"save_id": save_id}).fetchall()
        witness = stored_witness(cur, target["role_id"])
    chain = [dict(zip(STORED_LINE_FIELDS, line, strict=True)) for line in lines]
    return _chat(_messages(chain, target, tip[2], witness=witness))


# memory_messages' key of each character asked for, by the models' rule (on this thread's
# scratch cursor: parameters only): computed inside the per-call read it was a CASE on
# parameters DuckDB evaluated per row, 0.6 ms of a 1.4 ms read
@functools.lru_cache(maxsize=10_000)  # a bound on what a long-lived process keeps
def _target_key(role_id: int | None, script_role_id: str | None) -> str | None:
    bound = {"role_id": role_id, "script_role_id": script_role_id}
    [(key,)] = duckdb_connect.scratch_cursor().cursor.execute(_TARGET_KEY_SQL, bound).fetchall()
    return key  # type: ignore[no-any-return]


def _is_materialized(target: Mapping[str, Any]) -> bool:
    """Whether memory_messages holds this character: one id, no display name, the context
    emotion on (what int_memory_targets builds)."""
    if target["display_name"] is not None or not target["context_emotion"]:
        return False
    return (target["role_id"] is None) != (target["script_role_id"] is None)


def _read_tip(cur: duckdb.DuckDBPyConnection, save_id: int) -> tuple[Any, ...] | None:
    """(is_fresh, chain_problem, the stored messages' player name) of a save; None when the
    save does not exist."""
    try:
        return cur.execute(_STORED_TIP_SQL, {"save_id": save_id}).fetchone()
    except duckdb.CatalogException:  # the history tables do not exist yet
        [(exists,)] = cur.execute(
            "select count(*) from save where id = $save_id", {"save_id": save_id}
        ).fetchall()
        return (False, None, None) if exists else None


def _build_live(cur: duckdb.DuckDBPyConnection, params: dict[str, Any]) -> list[dict[str, str]]:
    """Every model over the save's lines in one query (for a database opened read-only, which
    may be a game's own tables without the columns rolemem adds: those read as null)."""
    from duckdb_engine import Dialect

    from ..schema import APP_TABLES  # the models (SQLModel): not on `import rolemem`

    wanted = [f"{table.name}.{column.name}" for table in APP_TABLES for column in table.columns]
    present = history._found_columns(cur, wanted)

    def with_added(table: str, sql: str) -> str:
        columns = next(model for model in APP_TABLES if model.name == table).columns
        missing = [
            f"cast(null as {column.type.compile(dialect=Dialect())}) as {column.name}"
            for column in columns
            if f"{table}.{column.name}" not in present
        ]
        return f"select *, {', '.join(missing)} from ({sql})" if missing else sql

    has_forks = "save.forked_from_line_id" in present
    walked = history.walked_sources("duckdb")
    sources = {
        "source_line": with_added("line", walked["source_line"]),
        "source_save": with_added("save", walked["source_save"]),
        "source_role": (
            with_added("role", history.ROLES_SQL) if "role.id" in present else history.NO_ROLES_SQL
        ),
        "int_save_fork_points": (
            walked["int_save_fork_points"] if has_forks else history._NO_FORKS_SQL
        ),
    }
    save_ids = [params["save_id"]]
    lineage = history.lineage(cur, save_ids) if has_forks else save_ids
    run = functools.partial(duckdb_connect.run, cur)
    return _save_messages(run, sources, {**params, "save_ids": save_ids, "lineage_ids": lineage})


def _save_messages(
    run: Callable[[str, dict[str, Any]], list[Any]],
    sources: dict[str, str],
    params: dict[str, Any],
    engine: str = "duckdb",
) -> list[dict[str, str]]:
    """Every model over the save's lines (`sources`; `run(sql, params)`: the rows) in one
    statement: the save's messages, or its problem as an error."""
    targets = {**sources, "int_memory_targets": _SAVE_TARGET_SQL}
    messages = []
    for row_kind, _index, role, content in run(
        compose(_SAVE_MODELS, targets, _SAVE_SELECT, engine=engine), params
    ):
        if row_kind == "missing":
            raise SaveNotFoundError(f"save {params['save_id']} does not exist")
        if row_kind == "problem":
            raise ChainError(content)
        messages.append({"role": role, "content": content})
    return messages
