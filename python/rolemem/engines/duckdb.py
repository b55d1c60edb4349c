"""The embedded DuckDB file as an engine: the one connection the process owns (DuckDB lets one
process write a file), a cursor per thread that keeps each composed statement as a temp macro,
transactions on a cursor of their own, and what a conflicting write raises. PostgresEngine
answers the same calls on a server database."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import duckdb

from ..errors import LineError, RolememError, WriteConflictError
from . import duckdb_connect

NAME = "duckdb"


class DuckDBEngine:
    """Statements in the project's dialect on the DuckDB connection `con` (the caller's: it
    stays open when the engine goes). Threads may share it: each runs on a cursor of its own."""

    name = NAME
    # what a write that met another transaction's write raises (the caller may retry it)
    conflicts: tuple[type[Exception], ...] = (duckdb.TransactionException, WriteConflictError)

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self._local = threading.local()
        self._runs: dict[str, threading.Lock] = {}
        self._runs_guard = threading.Lock()

    @contextlib.contextmanager
    def only_one(self, name: str) -> Iterator[bool]:
        """Whether this caller holds the one run of `name` (False: another holds it): one
        process owns the file, so a lock of this process is the store's."""
        with self._runs_guard:
            lock = self._runs.setdefault(name, threading.Lock())
        if not lock.acquire(blocking=False):
            yield False
            return
        try:
            yield True
        finally:
            lock.release()

    def cursor(self) -> duckdb_connect.PreparedCursor:
        """This thread's cursor (composed statements kept as temp macros on it)."""
        cur = getattr(self._local, "cursor", None)
        if cur is None:
            cur = self._local.cursor = duckdb_connect.PreparedCursor(
                duckdb_connect.tuned_cursor(self.con)
            )
        return cur

    def run(
        self, sql: str, params: Mapping[str, Any], error: type[RolememError] = LineError
    ) -> list[tuple[Any, ...]]:
        """`sql` with bound parameters (those it names); a message the SQL raised on purpose
        becomes `error`."""
        return self.cursor().run(sql, params, error)

    def records(
        self,
        sql: str,
        params: Mapping[str, Any],
        planner: Mapping[str, str] | None = None,
        json_as_text: bool = True,
    ) -> list[dict[str, Any]]:
        """`sql`'s rows as dicts by column name: a JSON column as its text, lists of objects
        as lists of dicts. `planner` and `json_as_text` are another engine's
        (PostgresEngine.records): DuckDB answers alike without them."""
        cur = self.cursor()
        rows = cur.run(sql, params)
        names = [column[0] for column in cur.cursor.description or ()]
        return [dict(zip(names, row, strict=True)) for row in rows]

    def columns(self, sql: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
        """`sql`'s result as columns (name -> numpy array)."""
        cur = self.cursor().cursor
        return cur.execute(sql, duckdb_connect.used(sql, params)).fetchnumpy()

    def transaction(self) -> contextlib.AbstractContextManager[duckdb.DuckDBPyConnection]:
        """A cursor inside BEGIN ... COMMIT; any error rolls everything back."""
        return duckdb_connect.transaction(self.con)

    def run_all(self, statements: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        """Write statements in one transaction: all or nothing."""
        with self.transaction() as cur:
            for sql, params in statements:
                cur.execute(sql, duckdb_connect.used(sql, params))

    def reading(self) -> contextlib.AbstractContextManager[duckdb.DuckDBPyConnection]:
        """A cursor of its own to read with (no transaction opened; point reads, so without
        the planner setting of the composed statements')."""
        return duckdb_connect.cursor(self.con, tuned=False)
