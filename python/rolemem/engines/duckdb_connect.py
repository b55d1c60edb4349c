"""DuckDB connections: the embedded file by default, and errors raised by the project's SQL."""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import duckdb

from ..errors import BusyError, DatabaseLockedError, LineError, RolememError, WriteConflictError
from ..sql import cancel
from ..sql.project import PARAMETER
from ..sql.project import used as used  # the callers read it here, beside the cursors
from ..sql.seeds import load_seed

DEFAULT_DB = "rolemem.duckdb"
_RAISED_PREFIX = "rolemem: "
_ERROR_FUNCTION_PREFIX = "Invalid Input Error: " + _RAISED_PREFIX


def connect(path: str | os.PathLike[str], *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open a DuckDB file; a file another process holds becomes one clear error. DuckDB lets
    one process open a file for writing (and then no other process at all): the service owns
    it, analysts read a snapshot copy."""
    try:
        return duckdb.connect(str(path), read_only=read_only)
    except duckdb.IOException as exc:
        if "Could not set lock" not in str(exc):
            raise
        holder = str(exc).split("Conflicting lock is held in", 1)[-1].split(". See", 1)[0]
        raise DatabaseLockedError(
            f"{path} is in use by another process ({holder.strip()}): one process owns a "
            "DuckDB file; send requests to that process, or read a copy of the file "
            "(stop the owner, or copy it with `rolemem snapshot` where available)"
        ) from None


def is_storable_text(text: str) -> bool:
    """False for text an engine cannot store: a lone surrogate (not UTF-8) or a NUL character
    (PostgreSQL's text cannot hold one; refused on DuckDB too, so both take the same input)."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def default_db_path() -> str:
    """`ROLEMEM_DB` if set, else `rolemem.duckdb` in the working directory (dbt reads the same)."""
    return os.environ.get("ROLEMEM_DB") or DEFAULT_DB


Database = str | os.PathLike[str] | duckdb.DuckDBPyConnection | None


@contextlib.contextmanager
def cursor(
    db: Database, *, tuned: bool = True, read_only: bool = False
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A cursor on `db`: a connection the caller owns (one cursor per call, so threads may share
    it), or a file path opened for this call only (`read_only` for readers, so several may
    share the file while no process writes it). `tuned=False` skips the optimizer setting
    (for point reads, where one statement less is a quarter of the call)."""
    if isinstance(db, duckdb.DuckDBPyConnection):
        cur = tuned_cursor(db) if tuned else db.cursor()
    else:
        path = Path(db if db is not None else default_db_path())
        if not path.exists():  # connecting would create an empty database file
            raise RolememError(f"{path}: no such database file (run `rolemem init-db`)")
        cur = connect(path, read_only=read_only)
        if tuned:
            cur.execute(_TUNING)
    try:
        yield cur
    finally:
        cur.close()


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """A cursor of its own inside BEGIN ... COMMIT; any error rolls everything back. A row
    written after one it refers to was deleted meanwhile (a line appended to a save being
    erased: rolemem checks the rows it refers to first) is a WriteConflictError, to retry."""
    cur = tuned_cursor(con)
    cur.execute("begin")
    try:
        yield cur
        cur.execute("commit")
    except BaseException as exc:
        cur.execute("rollback")
        if isinstance(exc, duckdb.ConstraintException) and "foreign key" in str(exc):
            raise WriteConflictError("a row this write refers to was deleted meanwhile") from exc
        raise
    finally:
        cur.close()


_local = threading.local()


# Projection pull-up costs 10-20 ms of planning on the composed model queries (hundreds of
# operators) and gains nothing at per-turn sizes; join ordering is 2-3 ms of a plan statement
# and the models' written order serves one save's or one player's rows as well (measured up to
# 200,000 events: docs/decisions/smaller-statements-on-duckdb.md). Switched off on rolemem's
# own cursors only: dbt and analysts keep DuckDB's optimizer whole.
_TUNING = "set disabled_optimizers = 'projection_pullup,join_order'"


def private_connection() -> duckdb.DuckDBPyConnection:
    """An in-memory database of rolemem's own."""
    con = duckdb.connect(":memory:")
    con.execute(_TUNING.replace("set ", "set global ", 1))
    return con


def tuned_cursor(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A new cursor on `con` for one rolemem query; the setting stays on this cursor (a
    DuckDB session of its own), never on the caller's connection."""
    cur = con.cursor()
    cur.execute(_TUNING)
    return cur


@functools.cache
def _scratch() -> duckdb.DuckDBPyConnection:
    return private_connection()


_scratch_lock = threading.Lock()


def scratch_cursor() -> PreparedCursor:
    """An in-memory cursor for queries over bound parameters only, one per thread, every
    thread's on the same database (a table loaded there is every thread's)."""
    cur = getattr(_local, "cursor", None)
    if cur is None:
        with _scratch_lock:  # functools.cache alone may build two at once
            con = _scratch()
        cur = _local.cursor = PreparedCursor(con.cursor())
    return cur


_scratch_seeds: set[str] = set()
_seeds_lock = threading.Lock()


def scratch_seeded(*seeds: str) -> PreparedCursor:
    """This thread's scratch cursor (scratch_cursor) with `seeds` loaded in
    the scratch database, each once per process (two threads creating one table at once
    would conflict: DuckDB's catalog write-write conflict)."""
    cur = scratch_cursor()
    if not _scratch_seeds.issuperset(seeds):  # once loaded, no lock on the per-turn path
        with _seeds_lock:
            for seed in seeds:
                if seed not in _scratch_seeds:
                    load_seed(cur.cursor, seed)
                    _scratch_seeds.add(seed)
    return cur


class PreparedCursor:
    """A long-lived cursor (one per thread) that keeps every composed query as a temporary
    table macro: DuckDB parses the few hundred lines once, and each call only binds and runs
    (about a fifth off a per-turn call). Parameters stay bound values: `$name` in the query
    becomes the macro parameter `p_name`, and the call passes `$name`."""

    def __init__(self, cur: duckdb.DuckDBPyConnection) -> None:
        self.cursor = cur
        self._calls: dict[str, tuple[str, list[str]]] = {}

    def run(
        self, sql: str, params: Mapping[str, Any], error: type[RolememError] = LineError
    ) -> list[tuple[Any, ...]]:
        prepared = self._calls.get(sql)
        if prepared is None:
            names = sorted(set(PARAMETER.findall(sql)))
            macro = f"rolemem_query_{len(self._calls)}"
            body = PARAMETER.sub(lambda match: f"p_{match.group(1)}", sql)
            self.cursor.execute(
                f"create or replace temp macro {macro}"
                f"({', '.join(f'p_{name}' for name in names)}) as table {body}"
            )
            call = f"select * from {macro}({', '.join(f'${name}' for name in names)})"
            prepared = self._calls[sql] = (call, names)
        call, names = prepared
        return run(self.cursor, call, {name: params[name] for name in names}, error)


def run(
    cur: duckdb.DuckDBPyConnection,
    sql: str,
    params: Mapping[str, Any],
    error: type[RolememError] = LineError,
) -> list[tuple[Any, ...]]:
    """Execute with bound parameters; a message the SQL raised on purpose becomes `error`.
    The statement runs for the current work token (rolemem.sql.cancel): cancelling the work
    interrupts it (BusyError)."""
    token = cancel.current.get()
    if token is not None:
        token.attach(cur)
    try:
        return cur.execute(sql, dict(params)).fetchall()
    except duckdb.InvalidInputException as exc:
        # only error('rolemem: ...') in the project's own SQL; a caller value that happens to
        # contain the prefix inside another engine error is not ours to translate
        text = str(exc)
        if text.startswith(_ERROR_FUNCTION_PREFIX):
            raise error(text[len(_ERROR_FUNCTION_PREFIX) :].strip()) from None
        raise
    except duckdb.InterruptException:
        if token is not None and token.cancelled:
            raise BusyError(token.reason or "cancelled") from None
        raise
    finally:
        if token is not None:
            token.detach(cur)
