"""DuckDB connections: the embedded file by default, and errors raised by the project's SQL."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import duckdb

from .errors import LineError, RolememError

DEFAULT_DB = "rolemem.duckdb"
_RAISED_PREFIX = "rolemem: "


def default_db_path() -> str:
    """`ROLEMEM_DB` if set, else `rolemem.duckdb` in the working directory (dbt reads the same)."""
    return os.environ.get("ROLEMEM_DB") or DEFAULT_DB


Database = str | os.PathLike[str] | duckdb.DuckDBPyConnection | None


@contextlib.contextmanager
def cursor(db: Database, *, tuned: bool = True) -> Iterator[duckdb.DuckDBPyConnection]:
    """A cursor on `db`: a connection the caller owns (one cursor per call, so threads may share
    it), or a file path opened for this call only. `tuned=False` skips the optimizer setting
    (for point reads, where one statement less is a quarter of the call)."""
    if isinstance(db, duckdb.DuckDBPyConnection):
        cur = tuned_cursor(db) if tuned else db.cursor()
        try:
            yield cur
        finally:
            cur.close()
        return
    path = Path(db if db is not None else default_db_path())
    if not path.exists():  # connecting would create an empty database file
        raise RolememError(f"{path}: no such database file (run `rolemem init-db`)")
    con = duckdb.connect(str(path))
    con.execute(_TUNING)
    try:
        yield con
    finally:
        con.close()


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """A cursor of its own inside BEGIN ... COMMIT; any error rolls everything back."""
    cur = tuned_cursor(con)
    cur.execute("begin")
    try:
        yield cur
        cur.execute("commit")
    except BaseException:
        cur.execute("rollback")
        raise
    finally:
        cur.close()


_local = threading.local()


# Projection pull-up costs 10-20 ms of planning on the composed model queries (hundreds of
# operators) and gains nothing at per-turn sizes; switched off on rolemem's own cursors only.
_TUNING = "set disabled_optimizers = 'projection_pullup'"


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


def scratch_cursor() -> PreparedCursor:
    """An in-memory cursor for queries over bound parameters only, one per thread."""
    cur = getattr(_local, "cursor", None)
    if cur is None:
        cur = _local.cursor = PreparedCursor(_scratch().cursor())
    return cur


_PARAMETER = re.compile(r"\$(\w+)")


class PreparedCursor:
    """A long-lived cursor (one per thread) that keeps every composed query as a temporary
    table macro: DuckDB parses the few hundred lines once, and each call only binds and runs
    (about a fifth off a per-turn call). Parameters stay bound values: `$name` in the query
    becomes the macro parameter `p_name`, and the call passes `$name`."""

    def __init__(self, cur: duckdb.DuckDBPyConnection) -> None:
        self.cursor = cur
        self._calls: dict[str, tuple[str, list[str]]] = {}

    def run(self, sql: str, params: Mapping[str, Any],
            error: type[RolememError] = LineError) -> list[tuple[Any, ...]]:
        prepared = self._calls.get(sql)
        if prepared is None:
            names = sorted(set(_PARAMETER.findall(sql)))
            macro = f"rolemem_query_{len(self._calls)}"
            body = _PARAMETER.sub(lambda match: f"p_{match.group(1)}", sql)
            self.cursor.execute(
                f"create or replace temp macro {macro}"
                f"({', '.join(f'p_{name}' for name in names)}) as table {body}")
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
    """Execute with bound parameters; a message the SQL raised on purpose becomes `error`."""
    try:
        return cur.execute(sql, dict(params)).fetchall()
    except duckdb.Error as exc:
        text = str(exc)
        if _RAISED_PREFIX in text:
            raise error(text.split(_RAISED_PREFIX, 1)[1].strip()) from None
        raise
