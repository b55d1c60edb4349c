"""PostgreSQL through psycopg 3: a connection pool, the per-turn SQL transpiled by sqlglot once
per statement and prepared on the server (PostgreSQL caches the plan: no replanning per call,
unlike DuckDB)."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from ..errors import LineError, RolememError

NAME = "postgres"
_RAISED_PREFIX = "rolemem: "
# `rolemem_raise` (macros/rolemem_raise.sql) on PostgreSQL: raise with the message, typed as
# text so it can stand in a CASE branch of text values
_RAISE_FUNCTION = """
create or replace function rolemem_raise(message text) returns text
language plpgsql immutable as $$
begin
    raise exception using message = message;
end
$$
"""
# a psycopg placeholder, %(name)s; any other % is a literal and must be doubled
_LITERAL_PERCENT = re.compile(r"%(?!\(\w+\)s)")


@functools.lru_cache(maxsize=256)
def transpile(sql: str) -> str:
    """The project's DuckDB-dialect statement (rendered with postgres dispatch macros) as
    PostgreSQL with psycopg placeholders: `$name` becomes `%(name)s`."""
    import sqlglot

    text = sqlglot.transpile(sql, read="duckdb", write="postgres")[0]
    return _LITERAL_PERCENT.sub("%%", text)


class PostgresEngine:
    """A PostgreSQL database by URL (`postgresql://…`). Threads share the pool; each call takes
    a connection for one statement. Statements are prepared server-side by psycopg after they
    have run once on a connection."""

    name = NAME

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 8) -> None:
        import psycopg
        from psycopg_pool import ConnectionPool

        with psycopg.connect(url, autocommit=True) as con:
            con.execute(_RAISE_FUNCTION)
        self.url = url
        self._pool = ConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            kwargs={"autocommit": True, "prepare_threshold": 0},
            open=True,
        )

    def run(
        self, sql: str, params: Mapping[str, Any], error: type[RolememError] = LineError
    ) -> list[tuple[Any, ...]]:
        """`sql` in the project's dialect, with bound parameters; a message the SQL raised on
        purpose (`rolemem_raise`) becomes `error`."""
        import psycopg

        text = transpile(sql)
        with self._pool.connection() as con:
            try:
                return con.execute(text, dict(params)).fetchall()
            except psycopg.errors.RaiseException as exc:
                message = exc.diag.message_primary or ""
                if message.startswith(_RAISED_PREFIX):
                    raise error(message[len(_RAISED_PREFIX) :]) from None
                raise

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> PostgresEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
