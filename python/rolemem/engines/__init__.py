"""Where the store lives, one module per engine: `duckdb` (the embedded file, the default) and
`postgres` (a server database, the game's own). The project's SQL is written once, in DuckDB's
dialect with dispatch macros (`adapter.dispatch`) where engines differ; an engine renders it for
itself, transpiles it once per statement and runs it with bound parameters. Both answer the same
calls: `run`, `records`, `columns`, `reading` and `transaction` (cursors whose `execute(sql,
params)` takes the project's dialect), `run_all`, `only_one` (one run of a named job across the
store's processes), and `conflicts` (what a write that met another writer raises, to retry)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from . import duckdb_connect
from .duckdb import DuckDBEngine
from .postgres import PostgresEngine
from .postgres_setup import is_postgres_url

Engine = DuckDBEngine | PostgresEngine

__all__ = [
    "DuckDBEngine",
    "Engine",
    "PostgresEngine",
    "engine_name",
    "reading",
    "resolve",
    "writing",
]


def resolve(
    db: Any, engine: PostgresEngine | None = None
) -> tuple[Any, PostgresEngine | None, bool]:
    """What a store argument names, as the CLI takes it (`--db`, `ROLEMEM_DB`): a DuckDB path
    or connection (returned as the DuckDB store), a DuckDB engine (its connection), a
    `postgresql://` URL (an engine opened here: the caller owns it, the third value) or a
    PostgreSQL engine. Returns (DuckDB store or None, PostgreSQL engine or None, owned)."""
    if engine is not None:
        return db, engine, False
    if isinstance(db, PostgresEngine):
        return None, db, False
    if isinstance(db, DuckDBEngine):
        return db.con, None, False
    if is_postgres_url(db):
        return None, PostgresEngine(db), True
    return db, None, False


def engine_name(db: Any) -> str:
    """The engine a store argument names: an engine's own, else DuckDB (a path, a connection,
    None for the default file)."""
    return db.name if isinstance(db, DuckDBEngine | PostgresEngine) else "duckdb"


def reading(db: Any, read_only: bool = False) -> contextlib.AbstractContextManager[Any]:
    """A cursor to read with: an engine's, or one on a DuckDB path (opened `read_only`, so
    several readers may share it) or connection."""
    if isinstance(db, DuckDBEngine | PostgresEngine):
        return db.reading()
    return duckdb_connect.cursor(db, read_only=read_only)


@contextlib.contextmanager
def writing(db: Any) -> Iterator[Any]:
    """One transaction: an engine's, or one on a DuckDB connection (or a path opened for it)."""
    # the library imported here: `duckdb` at the top would hide the package's module of the name
    import duckdb

    if isinstance(db, DuckDBEngine | PostgresEngine):
        with db.transaction() as cur:
            yield cur
    elif isinstance(db, duckdb.DuckDBPyConnection):
        with duckdb_connect.transaction(db) as cur:
            yield cur
    else:
        path = db or duckdb_connect.default_db_path()
        with (
            contextlib.closing(duckdb_connect.connect(path)) as con,
            duckdb_connect.transaction(con) as cur,
        ):
            yield cur
