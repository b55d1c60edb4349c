"""SQLAlchemy engines on the embedded DuckDB file, for the SQLModel schema (create, drop, add
columns): the one place a SQLAlchemy engine is built over rolemem's DuckDB connections."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa


def engine_for(path: str) -> sa.Engine:
    """A SQLAlchemy engine on an embedded DuckDB file (a file another process holds is a
    DatabaseLockedError, as everywhere in rolemem)."""
    from duckdb_engine import ConnectionWrapper

    from .duckdb_connect import connect

    return sa.create_engine("duckdb://", creator=lambda: ConnectionWrapper(connect(path)))


def engine_on(con: Any) -> sa.Engine:
    """A SQLAlchemy engine over cursors of an open DuckDB connection (the caller keeps it)."""
    from duckdb_engine import ConnectionWrapper

    return sa.create_engine("duckdb://", creator=lambda: ConnectionWrapper(con.cursor()))
