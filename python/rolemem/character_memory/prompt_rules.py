"""The prompt template rules (macros label_memory_blocks and fill_prompt_template) for a
template filled outside a recall (`RecallResult.fill` / `labelled`): each rendered once and run
on a private in-memory DuckDB connection, every text a bound parameter. A turn reads the same
rules' columns from its recall's statement (model character_memory_prompts)."""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Mapping
from typing import Any

import duckdb

from ..sql.project import render_macro

LABEL_SQL = "select " + render_macro("label_memory_blocks", "cast($template as varchar)")

_connection: duckdb.DuckDBPyConnection | None = None
_lock = threading.Lock()


@functools.cache  # rendered once per number of placeholders
def _fill_sql(count: int) -> str:
    pairs = [(f"cast($p{i} as varchar)", f"cast($v{i} as varchar)") for i in range(count)]
    return "select " + render_macro("fill_prompt_template", "cast($template as varchar)", pairs)


def run(sql: str, params: Mapping[str, Any]) -> Any:
    """The one value `sql` answers."""
    global _connection
    with _lock:
        if _connection is None:
            _connection = duckdb.connect()
        cursor = _connection.cursor()
    with contextlib.closing(cursor):
        row = cursor.execute(sql, dict(params)).fetchone()
    return row[0] if row else None


def fill(template: str, values: Mapping[str, str | None]) -> str:
    """`template` with each placeholder of `values` ({"{{name}}": text}) filled in one pass."""
    if not isinstance(template, str):
        raise TypeError("template must be a string")
    if len(values) > 64:  # the macro's marks: 64 placeholders at most
        raise TypeError("at most 64 placeholders can be filled at once")
    params: dict[str, Any] = {"template": template}
    for index, (placeholder, value) in enumerate(values.items()):
        params[f"p{index}"], params[f"v{index}"] = placeholder, value
    return str(run(_fill_sql(len(values)), params))
