"""The save lifecycle a game needs: roles, saves (new, or forked from a line), the branch's
lines (paged), appended lines, regenerated replies (swipes) and reloads (moving the tip).

Lines are a tree (each points at its parent) and a save points at its tip. A fork is a new save
whose tip is a line of another save: the lines up to it are shared, not copied, and the fork's
chain passes into that save at its `forked_from_line_id` (macro `walk_parent_chain`). Every
change keeps that fork point where the chain leaves the save, so the walk stays sound.

Every save belongs to a player (`user_id`): any call naming another player gets
`SaveNotFoundError`, as if the save did not exist. A save without an owner (one the game wrote
itself, or written before saves had owners) is refused to every caller (`OwnerlessSaveError`,
saying how to set the owner) unless the caller says the game keeps ownership itself
(`open_ownerless=True`; `rolemem serve --open-ownerless-saves`).

The functions taking a cursor run inside the caller's transaction (the service adds its
idempotency record to the same one); `Saves` wraps each in a transaction of its own.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import duckdb

from ..engines import DuckDBEngine, Engine, duckdb_connect, resolve
from ..errors import (
    ConflictError,
    NotFoundError,
    OwnerlessSaveError,
    RolememError,
    SaveNotFoundError,
)
from ..sql.project import render_macro, write_sql
from . import contract, history, roles
from .contract import Line

LINE_FIELDS = tuple(Line.model_fields)


def _new_id(cur: Any, table: str, chosen: int | None, taken: str) -> int:
    """The key of a new row of `table`: `chosen` if free (else ConflictError saying `taken`),
    else the sequence's next value no row holds. Never max(id) + 1: a caller's id near the
    ceiling would push every later key past it."""
    taken_sql = f"select count(*) from {table} where id = $id"  # names from this module
    if chosen is not None:
        if cur.execute(taken_sql, {"id": chosen}).fetchone()[0]:
            raise ConflictError(taken, field="id")
        return chosen
    while True:
        candidate = int(cur.execute(f"select nextval('{table}_id_seq')").fetchone()[0])
        if not cur.execute(taken_sql, {"id": candidate}).fetchone()[0]:
            return candidate


_PRESENCE = ("present_role_ids", "present_script_role_ids")


def _presence_lists(line: dict[str, Any]) -> dict[str, Any]:
    """`line` with its presence as lists where it is JSON text (as the line table stores it
    and the chain inherits it; text that is not JSON is left for the contract to refuse)."""
    for name in _PRESENCE:
        if isinstance(line.get(name), str):
            with contextlib.suppress(ValueError):
                line[name] = json.loads(line[name])
    return line


_READS = (
    "owned_save_row",
    "forked_line_save",
    "player_line_count",
    "save_tip_target",
    "save_tree_line",
)
# the reads of a save's chain (history.chain_sql)
_CHAIN_READS = ("save_history_size", "save_speakers", "save_line_position", "save_branch_page")


@functools.cache
def _statements(engine: str) -> dict[str, str]:
    """The module's statements (macros of the same names) for `engine`."""
    statements = {name: render_macro(name, engine=engine) for name in _READS}
    chain = {
        name: history.chain_sql(render_macro(name, engine=engine), engine) for name in _CHAIN_READS
    }
    # locked until the transaction ends, so a write that reads the tip and moves it is not
    # interleaved with another process's
    locked = statements["owned_save_row"] + "\n" + render_macro("row_lock", engine=engine)
    return {**statements, **chain, "locked_save": locked}


def _line(cur: Any, line_id: int, user_id: str | None, engine: str) -> dict[str, Any]:
    """The line `line_id` of the player `user_id`'s save; {} when none."""
    return _row(cur, _statements(engine)["save_tree_line"], {"id": line_id, "user_id": user_id})


def _row(cur: Any, sql: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """`sql`'s one row by column name; {} when none."""
    return next(iter(history.records(cur, sql, params)), {})


def _id(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**63:
        raise RolememError(f"{name} must be a positive 64-bit integer, got {value!r}", field=name)
    return value


def _text(value: Any, name: str, *, required: bool = False) -> str | None:
    if value is None and not required:
        return None
    if not (isinstance(value, str) and value.strip() and duckdb_connect.is_storable_text(value)):
        raise RolememError(f"{name} must be non-empty text, got {value!r}", field=name)
    return value


def owned_save(
    cur: Any,
    save_id: Any,
    user_id: str | None,
    *,
    lock: bool = False,
    engine: str = "duckdb",
    open_ownerless: bool = False,
    erasing: bool = False,
) -> dict[str, Any]:
    """The save, if it exists and is `user_id`'s; else SaveNotFoundError (another player's
    save is not revealed to exist, nor one being erased unless `erasing`: the erasure
    finishing it). A save without an owner: OwnerlessSaveError, unless `open_ownerless` (the
    game keeps ownership itself). `lock`: the row is locked until the caller's transaction
    ends (a write about to move its tip; `engine`: the cursor's)."""
    save_id = _id(save_id, "save_id")
    sql = _statements(engine)["locked_save" if lock else "owned_save_row"]
    save = _row(cur, sql, {"save_id": save_id, "user_id": user_id})
    being_erased = save.pop("erasing", None) and not erasing
    if not save or being_erased or save["user_id"] not in (None, user_id):
        raise SaveNotFoundError(f"no save with id {save_id}", field="save_id")
    if save["user_id"] is None and not open_ownerless:
        raise OwnerlessSaveError(
            f"save {save_id} has no owner, so no player may use it: create saves with their "
            "player (POST /saves with user_id), set the owner of a save your game wrote "
            f"(update save set user_id = '<player>' where id = {save_id}), or, if your game "
            "keeps ownership itself, start the service with --open-ownerless-saves",
            field="save_id",
        )
    return save


def create_role(
    cur: Any,
    name: str,
    *,
    role_id: int | None = None,
    character_id: str | None = None,
    agent_id: str | None = None,
    omniscient: bool = False,
    engine: str = "duckdb",
) -> dict[str, Any]:
    """A game character the AI plays; `role_id` to choose its key (ConflictError if taken).
    `character_id`: its designer config; `agent_id`: its memory owner (default: the
    character_id): requests naming the role need neither (see `roles`); `omniscient`: a
    narrator, which witnessed every line. Answers the role with its ids as requests resolve
    them."""
    role = contract.checked(
        contract.NewRole,
        {
            "id": role_id,
            "name": name,
            "character_id": character_id,
            "agent_id": agent_id,
            "omniscient": omniscient,
        },
    )
    role_id = _new_id(
        cur, "role", role.id, "this role id is taken: choose another id, or leave id out"
    )
    cur.execute(write_sql("insert_role"), {**role.model_dump(), "id": role_id})
    ids = roles.role_ids(cur, role_id, engine=engine) or {}
    return {
        "role_id": role_id,
        "name": role.name,
        "character_id": ids.get("character_id"),
        "agent_id": ids.get("agent_id"),
        "omniscient": role.omniscient,
    }


def create_save(
    cur: Any,
    *,
    user_id: str | None = None,
    name: str | None = None,
    save_id: int | None = None,
    from_line_id: int | None = None,
    user_name: str | None = None,
    engine: str = "duckdb",
    open_ownerless: bool = False,
) -> dict[str, Any]:
    """A new empty save of player `user_id` (required: every save has an owner), or a fork
    whose tip is `from_line_id` (a line of one of the player's saves): the fork shares the
    lines up to it. `save_id` to choose its key; `user_name`: the player's name in prompts
    (a fork keeps its save's unless given)."""
    new = contract.checked(
        contract.NewSave,
        {
            "id": save_id,
            "user_id": user_id,
            "name": name,
            "user_name": user_name,
            "from_line_id": from_line_id,
        },
    )
    user_id, user_name, from_line_id = new.user_id, new.user_name, new.from_line_id
    if from_line_id is not None:
        forked_line = _statements(engine)["forked_line_save"]
        line = history.run(cur, forked_line, {"id": from_line_id, "user_id": user_id}).fetchone()
        if line is None:
            raise NotFoundError(f"no line with id {from_line_id}", field="from_line_id")
        try:
            forked = owned_save(cur, line[0], user_id, engine=engine, open_ownerless=open_ownerless)
            user_name = user_name or forked["user_name"]
        except SaveNotFoundError:  # a line of another player's save is not revealed either
            raise NotFoundError(f"no line with id {from_line_id}", field="from_line_id") from None
        except OwnerlessSaveError as exc:
            raise OwnerlessSaveError(str(exc), field="from_line_id") from None
    # the same answer whoever holds the id (this player or another): ownership not revealed
    save_id = _new_id(
        cur, "save", new.id, "this save id is not available: choose another id, or leave id out"
    )
    cur.execute(
        write_sql("insert_save"),
        {
            "id": save_id,
            "user_id": user_id,
            "name": new.name,
            "line_id": from_line_id,
            "user_name": user_name,
        },
    )
    return owned_save(cur, save_id, user_id, engine=engine)


def describe(
    cur: Any,
    save_id: int,
    user_id: str | None,
    *,
    engine: str = "duckdb",
    open_ownerless: bool = False,
) -> dict[str, Any]:
    """The save: owner, tip, number of lines on its current branch, the characters that speak
    on it, its fork point; `chain_problem` when its chain is broken."""
    save = owned_save(cur, save_id, user_id, engine=engine, open_ownerless=open_ownerless)
    params = _chain_params(cur, save, engine)
    statements = _statements(engine)
    tip = _row(cur, statements["save_history_size"], params)
    return {
        **save,
        "line_count": tip.get("line_count", 0),
        "chain_problem": tip.get("chain_problem"),
        "speakers": history.records(cur, statements["save_speakers"], params),
    }


def _chain_params(cur: Any, save: Mapping[str, Any], engine: str) -> dict[str, Any]:
    """What a read of the save's chain binds: its id and what history.chained made readable."""
    chained = history.chained(cur, engine, [save["save_id"]], save["user_id"])
    return {"save_id": save["save_id"], **chained}


def branch_lines(
    cur: Any,
    save_id: int,
    user_id: str | None,
    *,
    limit: int = 50,
    before: int | None = None,
    engine: str = "duckdb",
    open_ownerless: bool = False,
) -> dict[str, Any]:
    """The current branch root -> tip, a page at a time from the tip: the `limit` lines
    before line `before` (default: up to the tip), oldest first; `next_before` pages on."""
    save = owned_save(cur, save_id, user_id, engine=engine, open_ownerless=open_ownerless)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
        raise RolememError(f"limit must be an integer from 1 to 1000, got {limit!r}", field="limit")
    statements = _statements(engine)
    chain = _chain_params(cur, save, engine)
    position = None
    if before is not None:
        before = _id(before, "before")
        found = cur.execute(
            statements["save_line_position"], {**chain, "line_id": before}
        ).fetchone()
        if found is None:
            raise RolememError(
                f"line {before} is not on the current branch of save {save['save_id']}",
                field="before",
            )
        position = found[0]
    rows = history.records(
        cur, statements["save_branch_page"], {**chain, "before_position": position, "limit": limit}
    )
    page = [_presence_lists(row) for row in rows[:limit]][::-1]
    more = len(rows) > limit
    return {
        "save_id": save["save_id"],
        "tip_line_id": save["tip_line_id"],
        "lines": page,
        "has_more": more,
        "next_before": page[0]["line_id"] if more and page else None,
    }


def check_lines(
    lines: Sequence[Mapping[str, Any]], *, where: str = "lines"
) -> list[dict[str, Any]]:
    """Lines to store, checked by the line's contract (contract.Line, the service's LineIn
    too; the Python API's own spellings read: _spelled), presence as the JSON text the line
    table stores. Errors name the line and field."""
    checked = []
    for index, line in enumerate(lines):
        row = contract.checked(Line, _spelled(line), f"{where}[{index}]").model_dump()
        for name in _PRESENCE:
            if row[name] is not None:
                row[name] = json.dumps(row[name], ensure_ascii=False)
        checked.append(row)
    return checked


def _spelled(line: Any) -> Any:
    """`line` with the Python API's own spellings as the contract's: script role ids as text
    (1 and "1" are one NPC), presence as a list (JSON text, as stored, read)."""
    if not isinstance(line, Mapping):
        return line
    line = _presence_lists(dict(line))
    scripts = line.get("present_script_role_ids")
    if isinstance(scripts, list | tuple):
        line["present_script_role_ids"] = [_script_id(item) for item in scripts]
    if "script_role_id" in line:
        line["script_role_id"] = _script_id(line["script_role_id"])
    return line


def _script_id(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


_KNOWN_ROLES_SQL = render_macro("known_role_ids")


def _check_roles(cur: Any, lines: Mapping[str, dict[str, Any]]) -> None:
    """Every role a checked line names (its speaker, those present) exists: NotFoundError
    naming the first that does not, by its path in the request (`lines`' keys)."""
    named: list[tuple[str, Any]] = []
    for path, line in lines.items():
        present = _presence_lists(dict(line)).get("present_role_ids") or ()  # stored as JSON
        named.append((f"{path}.role_id", line["role_id"]))
        named += [(f"{path}.present_role_ids[{i}]", role) for i, role in enumerate(present)]
    named = [(where, role_id) for where, role_id in named if role_id is not None]
    if not named:
        return
    wanted = sorted({role_id for _, role_id in named})
    [(found,)] = cur.execute(_KNOWN_ROLES_SQL, {"ids": wanted}).fetchall()
    known = set(found or [])
    for where, role_id in named:
        if role_id not in known:
            raise NotFoundError(roles.unknown_role(role_id), field=where)


def _insert_line(
    cur: Any, save: Mapping[str, Any], parent: int | None, line: Mapping[str, Any]
) -> int:
    """The line stored under `parent` in `save`, with the save's player (the shard key)."""
    [(line_id,)] = cur.execute(  # insert ... returning: one row
        write_sql("insert_line", (*LINE_FIELDS, "scene")),
        {
            **{name: line[name] for name in LINE_FIELDS},
            "scene": line.get("scene"),
            "save_id": save["save_id"],
            "parent": parent,
            "user_id": save["user_id"],
        },
    ).fetchall()
    return int(line_id)


def append(
    cur: Any,
    save_id: int,
    lines: Sequence[Mapping[str, Any]],
    user_id: str | None,
    *,
    default_time: datetime | None = None,
    engine: str = "duckdb",
    open_ownerless: bool = False,
    scene: str | None = None,
) -> dict[str, Any]:
    """Append `lines` on the save's tip, each the parent of the next, and move the tip.
    Lines without `created_at` get `default_time` (None: no time); every line is stored with
    `scene`, the scene it was played in (None: the scene of the line before it)."""
    _text(scene, "scene")
    if scene is not None and len(scene) > contract.NAME_LENGTH:  # its memories keep it
        raise RolememError(
            f"scene must be at most {contract.NAME_LENGTH} characters", field="scene"
        )
    save = owned_save(
        cur, save_id, user_id, lock=True, engine=engine, open_ownerless=open_ownerless
    )
    if not lines:
        raise RolememError("lines must hold at least one line", field="lines")
    checked = check_lines(lines)
    _check_roles(cur, {f"lines[{i}]": line for i, line in enumerate(checked)})
    return _chain(cur, save, checked, default_time, scene, engine)


def _chain(
    cur: Any,
    save: Mapping[str, Any],
    checked: Sequence[dict[str, Any]],
    default_time: datetime | None,
    scene: str | None,
    engine: str,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Checked lines inserted on the save's tip, each the parent of the next; the tip moved.
    `progress(done, total)` after every IMPORT_CHUNK lines and the last."""
    parent = save["tip_line_id"]
    ids = []
    for line in checked:
        if line["created_at"] is None:
            line["created_at"] = default_time
        parent = _insert_line(cur, save, parent, {**line, "scene": scene})
        ids.append(parent)
        if progress is not None and (len(ids) % IMPORT_CHUNK == 0 or len(ids) == len(checked)):
            progress(len(ids), len(checked))
    history.run(
        cur,
        write_sql("move_save_tip", engine=engine),
        {"tip": parent, "id": save["save_id"], "user_id": save["user_id"]},
    )
    return {"save_id": save["save_id"], "line_ids": ids, "tip_line_id": parent}


# lines an import writes between two calls of its progress
IMPORT_CHUNK = 500


def import_lines(
    cur: Any,
    save_id: int,
    lines: Sequence[Mapping[str, Any]],
    user_id: str | None,
    *,
    default_time: datetime | None = None,
    engine: str = "duckdb",
    open_ownerless: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """A whole history on the save's tip, in order, in the caller's one transaction: every
    line is checked first (errors name `lines[i]` of the whole import), then appended by
    `append`'s own statements; `progress(done, total)` after each IMPORT_CHUNK lines."""
    if not lines:
        raise RolememError("an import holds at least one line", field="lines")
    checked = check_lines(lines)
    _check_roles(cur, {f"lines[{i}]": line for i, line in enumerate(checked)})
    save = owned_save(
        cur, save_id, user_id, lock=True, engine=engine, open_ownerless=open_ownerless
    )
    answer = _chain(cur, save, checked, default_time, None, engine, progress)
    return {
        "save_id": save["save_id"],
        "line_count": len(lines),
        "first_line_id": answer["line_ids"][0],
        "tip_line_id": answer["tip_line_id"],
    }


def regenerate(
    cur: Any,
    save_id: int,
    line: Mapping[str, Any],
    user_id: str | None,
    *,
    default_time: datetime | None = None,
    engine: str = "duckdb",
    open_ownerless: bool = False,
) -> dict[str, Any]:
    """A regenerated reply (a swipe): a sibling of the tip, which must be a reply (assistant
    line), becomes the tip. Speaker fields not given are the replaced reply's."""
    save = owned_save(
        cur, save_id, user_id, lock=True, engine=engine, open_ownerless=open_ownerless
    )
    tip = reply_tip(cur, save, engine=engine)
    given = {name: value for name, value in line.items() if value is not None}
    (checked,) = check_lines([{"attribute": "assistant", **given}], where="line")
    # the speaker fields not given: the replaced reply's, as stored (not checked again)
    speaker = ("role_id", "script_role_id", "display_name")
    checked.update({name: tip[name] for name in speaker if checked[name] is None})
    _check_roles(cur, {"line": checked})
    if checked["created_at"] is None:
        checked["created_at"] = default_time
    # a swipe is played where the reply it replaces was
    new_id = _insert_line(cur, save, tip["parent_line_id"], {**checked, "scene": tip["scene"]})
    _move_tip(cur, save, new_id, engine)
    return {
        "save_id": save["save_id"],
        "line_ids": [new_id],
        "tip_line_id": new_id,
        "replaced_line_id": tip["id"],
    }


def reply_tip(
    cur: Any, save: Mapping[str, Any], *, engine: str = "duckdb", field: str = "save_id"
) -> dict[str, Any]:
    """The tip of `save` (owned_save's row), which must be a reply (an assistant line): what
    a regenerate replaces; else ConflictError naming `field`."""
    tip = _line(cur, save["tip_line_id"], save["user_id"], engine)
    if not tip or tip["attribute"] != "assistant":
        raise ConflictError(
            f"save {save['save_id']}: its tip "
            + (f"(line {tip['id']}) is a {tip['attribute']} line" if tip else "is empty")
            + ": only a reply (an assistant line) can be regenerated",
            field=field,
        )
    return tip


def set_tip(
    cur: Any,
    save_id: int,
    line_id: int,
    user_id: str | None,
    *,
    engine: str = "duckdb",
    open_ownerless: bool = False,
) -> dict[str, Any]:
    """Reload a save point: the tip moves to `line_id`, a line of this save's tree (its own
    lines, or the history it shares up to its fork point); another save's line is refused."""
    save = owned_save(
        cur, save_id, user_id, lock=True, engine=engine, open_ownerless=open_ownerless
    )
    line_id = _id(line_id, "line_id")
    _move_tip(cur, save, line_id, engine)
    # checked once the line is known to be the player's to see (the caller's transaction
    # undoes the move): as a regenerate needs a reply at the tip, a save point is never a
    # line still waiting for one
    if _line(cur, line_id, save["user_id"], engine)["attribute"] == "user":
        raise ConflictError(
            f"line {line_id} is a player (user) line: a save point is a reply or a system "
            "line (the player's next line follows it); reload the line before it",
            field="line_id",
        )
    return {"save_id": save["save_id"], "tip_line_id": line_id}


def _move_tip(cur: Any, save: Mapping[str, Any], line_id: int, engine: str) -> None:
    """Point the save at `line_id` and keep its fork point where the new chain leaves it."""
    statements = _statements(engine)
    player = {"user_id": save["user_id"]}
    budget = history.run(cur, statements["player_line_count"], player).fetchone()[0]
    params = {
        "line_id": line_id,
        "save_id": save["save_id"],
        "fork_line_id": save["forked_from_line_id"],
        "budget": budget,
        **player,
    }
    target = _row(cur, statements["save_tip_target"], params)
    if target.get("line_save_id") is None:
        raise NotFoundError(f"no line with id {line_id}", field="line_id")
    if target["line_save_id"] == save["save_id"]:
        fork_line = target["fork_line_id"]
    elif target["is_shared"]:
        fork_line = line_id
    elif target["line_save_user_id"] != save["user_id"] or save["user_id"] is None:
        # another player's line is not revealed to exist
        raise NotFoundError(f"no line with id {line_id}", field="line_id")
    else:
        raise RolememError(
            f"line {line_id} is not in save {save['save_id']}'s tree (it belongs to save "
            f"{target['line_save_id']}): fork that save instead (POST /saves with "
            "from_line_id)",
            field="line_id",
        )
    reload = write_sql("reload_save_point", engine=engine)
    history.run(cur, reload, {"tip": line_id, "fork": fork_line, "id": save["save_id"], **player})


class Saves(contextlib.AbstractContextManager["Saves"]):
    """The save lifecycle over one store: what the CLI takes (a DuckDB path or connection, a
    `postgresql://` URL or an engine; a PostgreSQL store holds the tables `rolemem init-db`
    made); each call is one transaction. `user_id`: the player making the call (see the module
    docstring); `open_ownerless_saves`: saves without an owner are open to every caller (a
    game that keeps ownership itself)."""

    def __init__(
        self,
        db: duckdb_connect.Database | Engine = None,
        *,
        open_ownerless_saves: bool = False,
    ) -> None:
        source, engine, self._owned = resolve(db)
        self._con: duckdb.DuckDBPyConnection | None = None
        if engine is None:
            if source is not None and not isinstance(
                source, str | os.PathLike | duckdb.DuckDBPyConnection
            ):
                raise RolememError(
                    "db must be a DuckDB file path or connection, a postgresql:// URL or an "
                    f"engine, got {type(source).__name__}"
                )
            if not isinstance(source, duckdb.DuckDBPyConnection):
                source = duckdb_connect.connect(source or duckdb_connect.default_db_path())
                self._owned = True
            self._con = source
            from ..engines.sqlalchemy_engines import engine_on
            from ..schema import create_all

            engine_on_con = engine_on(source)
            create_all(engine_on_con)
            engine_on_con.dispose()
        self._store: Engine = engine or DuckDBEngine(source)
        # what every function on a player's save is told: the cursor's engine, and whether
        # ownerless saves are open
        self._on_saves = {"engine": self._store.name, "open_ownerless": open_ownerless_saves}

    def close(self) -> None:
        if self._owned:
            (self._store if self._con is None else self._con).close()  # type: ignore[union-attr]

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _on(self, write: bool, function: Any, /, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """`function` on the player's save, in a transaction of its own (`write`) or a read
        (positional: every keyword is the function's, a caller's `write=` too)."""
        with self._store.transaction() if write else self._store.reading() as cur:
            return function(cur, *args, **self._on_saves, **kwargs)

    def create_role(self, name: str, **fields: Any) -> dict[str, Any]:
        """A game character (`create_role`'s role_id, character_id, agent_id, omniscient)."""
        with self._store.transaction() as cur:
            return create_role(cur, name, **fields, engine=self._store.name)

    def create_save(self, **fields: Any) -> dict[str, Any]:
        return self._on(True, create_save, **fields)

    def get(self, save_id: int, *, user_id: str | None = None) -> dict[str, Any]:
        return self._on(False, describe, save_id, user_id)

    def lines(
        self,
        save_id: int,
        *,
        user_id: str | None = None,
        limit: int = 50,
        before: int | None = None,
    ) -> dict[str, Any]:
        return self._on(False, branch_lines, save_id, user_id, limit=limit, before=before)

    def append(
        self, save_id: int, lines: Iterable[Mapping[str, Any]], *, user_id: str | None = None
    ) -> dict[str, Any]:
        return self._on(True, append, save_id, list(lines), user_id)

    def import_lines(
        self,
        save_id: int,
        lines: Iterable[Mapping[str, Any]],
        *,
        user_id: str | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, Any]:
        """A whole history on the save's tip, in one transaction (see `import_lines`)."""
        return self._on(
            True,
            import_lines,
            save_id,
            list(lines),
            user_id,
            default_time=datetime.now(),
            progress=progress,
        )

    def regenerate(
        self, save_id: int, line: Mapping[str, Any], *, user_id: str | None = None
    ) -> dict[str, Any]:
        return self._on(True, regenerate, save_id, line, user_id)

    def set_tip(self, save_id: int, line_id: int, *, user_id: str | None = None) -> dict[str, Any]:
        return self._on(True, set_tip, save_id, line_id, user_id)
