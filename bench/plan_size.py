"""How many physical operators DuckDB plans for a statement (EXPLAIN (FORMAT JSON)).

Each operator costs about 0.3 ms on tiny inputs (bind, optimise, execute), so the operator
count is what the per-turn SQL is kept small by; the benchmarks print it beside the timings.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

import duckdb


def operator_count(
    cur: duckdb.DuckDBPyConnection, sql: str, params: Mapping[str, Any] | None = None
) -> int:
    rows = cur.execute("explain (format json) " + sql, dict(params or {})).fetchall()

    def count(nodes: list[dict[str, Any]]) -> int:
        return sum(1 + count(node.get("children", [])) for node in nodes)

    return sum(count(json.loads(plan)) for _, plan in rows)


@contextlib.contextmanager
def captured_queries() -> Iterator[list[tuple[str, dict[str, Any], duckdb.DuckDBPyConnection]]]:
    """Record each statement rolemem runs on its per-thread cursors (text, parameters,
    cursor), composed queries and reads as columns alike, so a benchmark can count the
    operators of exactly what it timed."""
    from rolemem.engines import duckdb_connect
    from rolemem.engines.duckdb import DuckDBEngine

    seen: list[tuple[str, dict[str, Any], duckdb.DuckDBPyConnection]] = []
    original = duckdb_connect.PreparedCursor.run
    original_columns = DuckDBEngine.columns

    def run(
        self: duckdb_connect.PreparedCursor,
        sql: str,
        params: Mapping[str, Any],
        *args: Any,
        **kw: Any,
    ) -> Any:
        seen.append((sql, dict(params), self.cursor))
        return original(self, sql, params, *args, **kw)

    def columns(self: DuckDBEngine, sql: str, params: Mapping[str, Any]) -> Any:
        seen.append((sql, dict(params), self.cursor().cursor))
        return original_columns(self, sql, params)

    duckdb_connect.PreparedCursor.run = run  # type: ignore[method-assign]
    DuckDBEngine.columns = columns  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        duckdb_connect.PreparedCursor.run = original  # type: ignore[method-assign]
        DuckDBEngine.columns = original_columns  # type: ignore[method-assign]


def operators_of(seen: list[tuple[str, dict[str, Any], duckdb.DuckDBPyConnection]]) -> int:
    """Operators of every captured statement, each planned on the cursor it ran on (0: none
    ran, the answer was computed in Python)."""
    total = 0
    for sql, params, cur in seen:
        names = set(re.findall(r"\$(\w+)", sql))
        total += operator_count(cur, sql, {name: params[name] for name in names})
    return total
