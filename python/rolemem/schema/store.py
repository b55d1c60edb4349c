"""A store's tables as rolemem opens them: made where missing (SQLModel), then brought up to
date (`migrations`), then indexed where PostgreSQL needs it."""

from __future__ import annotations

import functools
from typing import Any

import sqlalchemy as sa
from sqlmodel import SQLModel

from ..sql.project import write_sql
from .game import (
    APP_TABLES,
    CONFIG_TABLES,
    create_postgres_indexes,
    is_distributed,
)
from .memory import (
    MEMORY_TABLES,
    VECTOR_TABLES,
    create_vector_tables,
)
from .migrations import migrate, tables


def create_all(engine: sa.Engine) -> None:
    """The application and config tables (and their sequences) where missing, an older
    store's migrated, and the lines the game wrote without their player given their save's."""
    before = _existing(engine)
    SQLModel.metadata.create_all(engine, tables=APP_TABLES + CONFIG_TABLES)  # type: ignore[arg-type]
    migrate(engine, {table.name for table in APP_TABLES + CONFIG_TABLES} - before)
    create_postgres_indexes(engine, "app")
    with engine.begin() as connection:
        # on Citus user_id is NOT NULL (the shard key: schema.citus), and never updated
        if not is_distributed(connection, "line"):
            connection.exec_driver_sql(write_sql("fill_missing_owners", "line", "save_id", "save"))


def create_memory_tables(engine: sa.Engine, embedding_dim: int = 384) -> None:
    """The memory tables where missing (the vectors of `embedding_dim`), an older store's
    migrated."""
    before = _existing(engine)
    SQLModel.metadata.create_all(engine, tables=MEMORY_TABLES)
    with engine.begin() as connection:
        create_vector_tables(connection, embedding_dim)
    made = {table.name for table in MEMORY_TABLES} | set(VECTOR_TABLES)
    migrate(engine, made - before)
    create_postgres_indexes(engine, "memory")


def move_sequences_past_keys(connection: Any) -> None:
    """Every key sequence moved past the keys its tables hold, never back (the caller's
    transaction; macro move_sequence_past_keys). A sequence shared by a player table and its
    official twin continues after both; one a game's table lacks is made."""
    keyed: dict[str, list[tuple[str, str]]] = {}
    for table in APP_TABLES + CONFIG_TABLES + MEMORY_TABLES:
        for column in table.columns:
            if isinstance(column.default, sa.Sequence):
                keyed.setdefault(column.default.name, []).append((table.name, column.name))
    engine = "duckdb" if connection.dialect.name == "duckdb" else "postgres"
    for sequence, keys in keyed.items():
        # a game's own table made before rolemem's came without its sequence
        connection.exec_driver_sql(f"create sequence if not exists {sequence}")
        moved = write_sql("move_sequence_past_keys", sequence, tuple(keys), engine=engine)
        connection.exec_driver_sql(moved)


def create_config_tables(con: Any) -> None:
    """The config tables on a raw DuckDB connection (a private one, or a store without them):
    the SQLModel definitions compiled once to DuckDB DDL; an older store's migrated."""
    from duckdb_engine import ConnectionWrapper

    for statement in _config_ddl():
        con.execute(statement)
    # (not engines.sqlalchemy_engines.engine_on: the engines import the schema)
    engine = sa.create_engine("duckdb://", creator=lambda: ConnectionWrapper(con.cursor()))
    migrate(engine)
    engine.dispose()


def _existing(engine: sa.Engine) -> set[str]:
    with engine.connect() as connection:
        return set(tables(connection))


@functools.cache
def _config_ddl() -> list[str]:
    from duckdb_engine import Dialect
    from sqlalchemy.schema import CreateTable

    return [
        str(CreateTable(table, if_not_exists=True).compile(dialect=Dialect()))
        for table in CONFIG_TABLES
    ]
