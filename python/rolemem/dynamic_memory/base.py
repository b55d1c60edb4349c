"""What every part of a DynamicMemory shares: connection, embedder, settings, calls in flight,
the store's tables; and `forward`, which makes a part's method one of DynamicMemory's."""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar

import duckdb

from ..engines import PostgresEngine, duckdb_connect, resolve
from ..engines.duckdb import DuckDBEngine
from ..memory_builder.history import ensure_tables
from ..sql.project import render_macro
from ..sql.seeds import load_seed, read_settings, shipped_settings
from ..text.embedders import Embedder, EmbeddingError, default_embedder
from .checks import MemoryInputError, _setting, checked_weights
from .settings import QUERY_SETTINGS, SETTING_SEEDS
from .time_windows import TimeWindows

# the engine holding a store's memories: its own DuckDB connection, or a server's database
Store = DuckDBEngine | PostgresEngine


P = ParamSpec("P")
T = TypeVar("T")
Part = TypeVar("Part")


def forward(
    part: str, method: Callable[Concatenate[Part, P], T], *, tracked: bool = True
) -> Callable[Concatenate[Any, P], T]:
    """`method` of the part held as attribute `part`, as a method of its holder (signature and
    docstring its own); `tracked`: counted while it runs (close() waits for it)."""

    def call(self: Any, *args: P.args, **kwargs: P.kwargs) -> T:
        with self._context.call() if tracked else contextlib.nullcontext():
            return method(getattr(self, part), *args, **kwargs)

    functools.update_wrapper(call, method)
    return call


class Context:
    """What every part of a DynamicMemory shares: the store's engine, the embedder, the
    settings, the calls in flight. `con` is a DuckDB connection: the store's own, or (on
    another engine) a private one holding the settings' seeds."""

    def __init__(
        self,
        db: duckdb_connect.Database = None,
        *,
        embedder: Embedder | None | Literal["default"] = "default",
        profile: Mapping[str, Any] | None = None,
        read_only: bool = False,
        engine: PostgresEngine | None = None,
    ) -> None:
        # what the CLI takes: a DuckDB path or connection, a postgresql:// URL or an engine
        db, engine, self._owns_engine = resolve(db, engine)
        if db is not None and not isinstance(db, str | os.PathLike | duckdb.DuckDBPyConnection):
            raise MemoryInputError(
                "db must be a DuckDB file path or connection, a postgresql:// URL or an "
                f"engine, got {type(db).__name__}"
            )
        self.engine = engine
        if engine is not None:
            if db is not None:
                raise MemoryInputError("give db (a DuckDB store) or engine, not both")
            # the settings and seeds, read as on DuckDB; the store is the engine's
            db = duckdb_connect.private_connection()
        if embedder == "default":
            embedder = default_embedder()
        self.read_only = read_only
        if isinstance(db, duckdb.DuckDBPyConnection):
            self.con, self._owned = db, False
        else:
            path = db or duckdb_connect.default_db_path()
            if read_only and not Path(path).exists():
                raise MemoryInputError(f"{path}: no such database file (run `rolemem init-db`)")
            self.con = duckdb_connect.connect(path, read_only=read_only)
            self._owned = True
        # the DuckDB connection as an engine: its per-thread cursors are the store's on DuckDB
        self.duckdb = DuckDBEngine(self.con)
        self.store: Store = engine if engine is not None else self.duckdb
        self.embedder = embedder
        self._running, self._closed = 0, False
        self._idle = threading.Condition()
        if read_only:
            self._check_tables()
        else:
            self._ensure_tables()
        self.settings = self._default_settings()
        for name, value in (profile or {}).items():
            if name not in self.settings:
                raise MemoryInputError(
                    f"unknown profile setting {name!r}; known: {', '.join(sorted(self.settings))}"
                )
            self.settings[name] = _setting(name, value)
        checked_weights(self.settings)
        # the seed's time expressions: the windows a batch names (recall.py), read once, as
        # the settings are
        with self.con.cursor() as cur:
            self.time_windows = TimeWindows.read(cur)
            # a batch whose tokens hold none of these (and no time window) plans no 以前…现在…
            self.past_words = frozenset(
                row[0] for row in cur.execute("select word from memory_fact_past_words").fetchall()
            )
            # a batch whose texts hold none of these plans no test of which events name a time
            self.time_question_words = tuple(
                row[0] for row in cur.execute(render_macro("time_question_words")).fetchall()
            )
            # which candidates name a time, tested in Python for a lone recall (scope)
            self.time_words: tuple[tuple[str, bool], ...] = tuple(
                (row[0], row[1]) for row in cur.execute(render_macro("time_words")).fetchall()
            )
        if engine is not None:  # recall there reads its copies of the seeds
            engine.replace_tables(self.con, SETTING_SEEDS)

    @contextlib.contextmanager
    def call(self) -> Iterator[None]:
        """Count a running call, so close() can wait for it; refuse calls after close()."""
        with self._idle:
            if self._closed:
                raise MemoryInputError("this DynamicMemory is closed")
            self._running += 1
        try:
            yield
        finally:
            with self._idle:
                self._running -= 1
                self._idle.notify_all()

    def close(self) -> None:
        """Wait for running calls, then close the connection this object opened."""
        with self._idle:
            self._closed = True
            self._idle.wait_for(lambda: self._running == 0)
        if self._owned:
            self.con.close()
        if self._owns_engine and self.engine is not None:
            self.engine.close()

    def _ensure_tables(self) -> None:
        import sqlalchemy as sa
        from duckdb_engine import ConnectionWrapper

        from ..schema.store import create_all, create_memory_tables

        dim = self.embedder.dim if self.embedder is not None else 384
        engine = sa.create_engine("duckdb://", creator=lambda: ConnectionWrapper(self.con.cursor()))
        create_all(engine)  # branch-aware recall reads the saves' chains (empty if none)
        create_memory_tables(engine, dim)
        engine.dispose()
        if self.engine is not None:  # the server's store (the DuckDB above: settings only)
            from ..engines.postgres_setup import migrate_database

            migrate_database(self.engine.url)
        row = self.con.cursor().execute(render_macro("stored_embedding_type")).fetchone()
        if self.embedder is not None and row and row[0] != f"FLOAT[{dim}]":
            raise EmbeddingError(
                f"the store's embeddings are {row[0]} but the embedder gives FLOAT[{dim}]"
            )
        tables = self._tables()
        for seed in SETTING_SEEDS:
            if seed not in tables:  # dbt seed writes the same CSVs with the same types
                load_seed(self.con, seed)
        # migrated, then the history's tables (they read the seeds of facts' slots)
        with self.con.cursor() as cur:
            ensure_tables(cur)

    def _check_tables(self) -> None:
        """A store opened read-only must already have every table recall reads."""
        from ..memory_builder.history import WRITE_TIME_TABLES as HISTORY_TABLES
        from ..schema.memory import MEMORY_TABLES

        needed = {t.name for t in MEMORY_TABLES} | {
            "memory_event_embedding",
            "official_event_embedding",
            "line",
            "save",
            *HISTORY_TABLES,
            *SETTING_SEEDS,
        }
        missing = sorted(needed - self._tables())
        if missing:
            raise MemoryInputError(
                f"the store lacks {', '.join(missing)}: open it once without read_only (or "
                "run `rolemem init-db` / `rolemem config load`)"
            )

    def _tables(self) -> set[str]:
        with duckdb_connect.cursor(self.con, tuned=False) as cur:
            rows = cur.execute("select table_name from duckdb_tables()").fetchall()
        return {name for (name,) in rows}

    def writable(self) -> None:
        if self.read_only:
            raise MemoryInputError("this DynamicMemory was opened read_only: it cannot write")

    def _default_settings(self) -> dict[str, Any]:
        """The seeds' settings: the store's own seed tables (dbt may have loaded edited ones)
        over the CSVs shipped with rolemem, so a setting newer than the store's table still
        has its default."""
        keep = {*QUERY_SETTINGS, "memory_scope"}
        seeds = ("memory_scoring_profile", "recall_limits", "memory_loop_settings")
        settings = {**shipped_settings(*seeds), **read_settings(self.con, *seeds)}
        return {k: v for k, v in settings.items() if k in keep}
