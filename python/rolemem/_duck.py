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

from .errors import LineError, RolememError

DEFAULT_DB = "rolemem.duckdb"
_RAISED_PREFIX = "rolemem: "


def default_db_path() -> str:
    """`ROLEMEM_DB` if set, else `rolemem.duckdb` in the working directory (dbt reads the same)."""
    return os.environ.get("ROLEMEM_DB") or DEFAULT_DB


Database = str | os.PathLike[str] | duckdb.DuckDBPyConnection | None


@contextlib.contextmanager
def cursor(db: Database) -> Iterator[duckdb.DuckDBPyConnection]:
    """A cursor on `db`: a connection the caller owns (one cursor per call, so threads may share
    it), or a file path opened for this call only."""
    if isinstance(db, duckdb.DuckDBPyConnection):
        cur = db.cursor()
        try:
            yield cur
        finally:
            cur.close()
        return
    con = duckdb.connect(str(Path(db if db is not None else default_db_path())))
    try:
        yield con
    finally:
        con.close()


_local = threading.local()


def private_connection() -> duckdb.DuckDBPyConnection:
    """An in-memory database of rolemem's own. Projection pull-up is switched off: on the
    composed model queries (hundreds of operators) it costs ~10 ms of planning per call and
    gains nothing at per-turn sizes."""
    con = duckdb.connect(":memory:")
    con.execute("set global disabled_optimizers = 'projection_pullup'")
    return con


@functools.cache
def _scratch() -> duckdb.DuckDBPyConnection:
    return private_connection()


def scratch_cursor() -> duckdb.DuckDBPyConnection:
    """An in-memory cursor for queries over bound parameters only, one per thread."""
    cur = getattr(_local, "cursor", None)
    if cur is None:
        cur = _local.cursor = _scratch().cursor()
    return cur


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
