"""How many physical operators DuckDB plans for a statement (EXPLAIN (FORMAT JSON)).

Each operator costs about 0.3 ms on tiny inputs (bind, optimise, execute), so the operator
count is what the per-turn SQL is kept small by; the benchmarks print it beside the timings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import duckdb


def operator_count(
    cur: duckdb.DuckDBPyConnection, sql: str, params: Mapping[str, Any] | None = None
) -> int:
    rows = cur.execute("explain (format json) " + sql, dict(params or {})).fetchall()

    def count(nodes: list[dict[str, Any]]) -> int:
        return sum(1 + count(node.get("children", [])) for node in nodes)

    return sum(count(json.loads(plan)) for _, plan in rows)
