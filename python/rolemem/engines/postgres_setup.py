"""`rolemem init-db` on a PostgreSQL database (a `postgresql://` URL): the game's tables, the
config tables and the memory tables from the same SQLModel schema as the embedded file, and
with `--demo` the demo store's rows. The demo is loaded by the same loader into a scratch
DuckDB file and copied over, so both engines hold the same rows; each key sequence then
continues after the copied keys, so the game's next insert does not collide."""

from __future__ import annotations

import contextlib
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import PlayerRequiredError, RolememError

# a store's tables (what the demo loader writes), in an order that satisfies the foreign keys
_STORE_TABLES = (
    "role",
    "save",
    "line",
    "character_attributes",
    "character_events",
    "character_dialogue_styles",
    "memory_entity",
    "memory_entity_mention",
    "memory_event",
    "memory_event_term",
    "memory_event_embedding",
    "memory_fact",
    "official_entity",
    "official_event",
    "official_event_term",
    "official_event_embedding",
    "official_archive",
    "rolemem_migration",
)


# tables a store written before them lacks (nothing to copy)
_NEWER = ("memory_fact", "memory_entity_mention")
# tables whose rows' player is their owner's (by key, in table): macro owners_filled
_OWNERS = {"line": ("save_id", "save"), "memory_event_embedding": ("event_id", "memory_event")}


def is_postgres_url(db: object) -> bool:
    """Whether a `--db` / `ROLEMEM_DB` value names a PostgreSQL database (else a DuckDB file)."""
    return isinstance(db, str) and db.startswith(("postgresql://", "postgres://"))


@contextlib.contextmanager
def _sqlalchemy_engine(url: str) -> Iterator[Any]:
    """A SQLAlchemy engine on the database at `url` (psycopg) or on a DuckDB file, disposed
    of on the way out."""
    import sqlalchemy as sa

    from .sqlalchemy_engines import engine_for

    if is_postgres_url(url):
        engine = sa.create_engine("postgresql+psycopg://" + url.split("://", 1)[1])
    else:
        engine = engine_for(url)
    try:
        yield engine
    finally:
        engine.dispose()


def init_database(url: str, *, store: str | Path | None = None) -> int:
    """Create rolemem's tables on the database at `url` (or a DuckDB file) if missing; on a
    database with the citus extension, in Citus's shape (schema.citus). `store`: recreate
    them (keys restart at 1) and copy the rows of that embedded DuckDB store (`rolemem init-db
    --demo` copies the demo store this way). Returns how many of the store's rows were left
    out: on Citus, rows of player tables without a player (official memories have tables of
    their own, copied as reference tables); without `store`, how many rows of a store made
    here before the extension were set aside when it was distributed in place
    (schema.citus.SET_ASIDE)."""
    from ..schema import drop_all
    from ..schema.citus import shape_for_citus
    from ..schema.game import has_citus
    from ..schema.memory import drop_memory_tables
    from ..schema.store import create_all, create_memory_tables, move_sequences_past_keys

    with _sqlalchemy_engine(url) as engine:
        if store is not None:
            drop_memory_tables(engine)
            drop_all(engine)
        # an existing store migrated before it is distributed in place (a migration's walk
        # runs on one database only)
        create_all(engine)
        create_memory_tables(engine)
        with engine.begin() as connection:
            citus = has_citus(connection)
            # a game's rows written with ids of their own: the next key is past them
            move_sequences_past_keys(connection)
            set_aside = shape_for_citus(connection) if citus else 0
        return _copy_store(engine, store, citus=citus) if store is not None else set_aside


def migrate_database(url: str) -> list[str]:
    """The migrations (schema.migrations) the store at `url` has not recorded, applied, as
    every process opening it does; the names of those run."""
    from ..schema.migrations import migrate

    with _sqlalchemy_engine(url) as engine:
        return migrate(engine)


def _copy_store(engine: Any, path: str | Path, *, citus: bool) -> int:
    """A DuckDB store's rows copied into the (empty) tables in one transaction, its own
    migration records with them (what it has not recorded runs after the copy); on Citus the
    rows of player tables without a player are left out: how many."""
    import duckdb

    from ..schema.citus import PLAYER_TABLES
    from ..schema.migrations import migrate
    from ..schema.store import move_sequences_past_keys
    from ..sql.project import render_macro

    with duckdb.connect(str(path), read_only=True) as source, engine.begin() as connection:
        present = {
            row[0] for row in source.execute("select table_name from duckdb_tables()").fetchall()
        }
        # a store older than the official tables is upgraded where it is (opened once by
        # rolemem), not half-copied here: on Citus its official rows would be left out
        if "official_event" not in present:
            raise RolememError(
                f"{path} was written before official memories had tables of their own: "
                f"upgrade it first (`rolemem init-db --db {path}`), then copy it"
            )
        owned: dict[str, str] = {}
        if citus:
            (ownerless,) = source.execute(
                "select count(*) from save where user_id is null"
            ).fetchone() or (0,)
            if ownerless:
                raise PlayerRequiredError(
                    f"{path}: {ownerless} saves have no player (user_id), which a database "
                    "sharded by player (Citus) cannot store",
                    field="user_id",
                )
            owned = {table: "user_id is not null" for table in PLAYER_TABLES}
        # the store's own migration records come with it
        connection.exec_driver_sql("delete from rolemem_migration")
        left_out = copy_rows(
            source,
            connection.connection.dbapi_connection.cursor(),
            # a store written before facts or entity mentions has none to copy
            [table for table in _STORE_TABLES if table not in _NEWER or table in present],
            owned,
            # rows whose player is their save's or event's (a store written before it was
            # stored on them): with it, never left out as ownerless
            {table: render_macro("owners_filled", table, *key) for table, key in _OWNERS.items()}
            if citus
            else None,
        )
        move_sequences_past_keys(connection)
    migrate(engine)
    # a bulk copy: statistics for the planner and the visibility map for index-only reads
    # (recall reads a player's postings from their index alone), outside any transaction
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.exec_driver_sql(f"vacuum (analyze) {', '.join(_STORE_TABLES)}")
    return left_out


def copy_rows(
    source: Any,
    cursor: Any,
    tables: Sequence[str],
    where: Mapping[str, str] | None = None,
    rows_of: Mapping[str, str] | None = None,
) -> int:
    """Every row of `tables` of the DuckDB connection `source` appended to the same tables
    through the psycopg `cursor` (COPY, column by name; the caller's transaction). `where`: a
    table's condition on the rows to copy (rolemem's own text); `rows_of`: a table's rows as
    a query of its own (rolemem's text); returns how many it left out."""
    left_out = 0
    for table in tables:
        condition = (where or {}).get(table)
        rows = f"({(rows_of or {}).get(table) or f'select * from {table}'}) as rows"
        if condition:
            counted = source.execute(f"select count(*) from {rows} where not ({condition})")
            left_out += (counted.fetchone() or (0,))[0]
        result = source.execute(f"select * from {rows} where {condition or 'true'}")
        columns = ", ".join(column[0] for column in result.description)
        with cursor.copy(f"copy {table} ({columns}) from stdin") as copy:
            for row in result.fetchall():  # fixed-size arrays (vectors) come back as tuples
                copy.write_row([list(v) if isinstance(v, tuple) else v for v in row])
    return left_out


def dbt_environment(url: str) -> dict[str, str]:
    """The `ROLEMEM_PG_*` variables `profiles.yml`'s postgres target reads, from a URL (a
    socket directory given as `?host=` included)."""
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qs(parts.query)
    host = query.get("host", [parts.hostname or "localhost"])[0]
    return {
        "ROLEMEM_PG_HOST": host,
        "ROLEMEM_PG_PORT": str(parts.port or query.get("port", ["5432"])[0]),
        "ROLEMEM_PG_USER": urllib.parse.unquote(parts.username or "postgres"),
        "ROLEMEM_PG_PASSWORD": urllib.parse.unquote(parts.password or ""),
        "ROLEMEM_PG_DBNAME": parts.path.lstrip("/") or "postgres",
    }


def main() -> None:
    """`python -m rolemem.engines.postgres_setup URL`: the dbt variables as shell exports
    (scripts/demo.sh evaluates them)."""
    import shlex
    import sys

    for name, value in dbt_environment(sys.argv[1]).items():
        print(f"export {name}={shlex.quote(value)}")


if __name__ == "__main__":
    main()
