"""A batch of requests as rows: each field bound as one list with a position per request, the
batch's constants bound once. The models carry the request key, so one statement answers
every request of the batch (rolemem.sql.batching).

PostgreSQL's arrays are rectangular and its unnest flattens every dimension: there a field that
is itself a list travels as JSON text per request (`bound_lists`) and becomes a list again per
row (macro json_text_list)."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from .project import render_macro


def bound_rows(prefix: str, columns: Mapping[str, str]) -> str:
    """`select` of rows a caller computed, bound as one list per column (`$<prefix>_<name>`,
    of its DuckDB type): a model's rows standing in for the model (e.g. numpy's dense
    candidates)."""
    return "    select\n" + ",\n".join(
        f"        unnest(cast(${prefix}_{name} as {kind}[])) as {name}"
        for name, kind in columns.items()
    )


def request_rows_sql(
    key: str,
    fields: Mapping[str, str],
    engine: str,
    constants: Mapping[str, str] | None = None,
) -> str:
    """`select` of one row per request: `key` (integer), then `fields` (name: DuckDB type,
    each bound as a list), then `constants` (name: type, each bound as one value)."""
    return _request_rows_sql(key, tuple(fields.items()), engine, tuple((constants or {}).items()))


@functools.cache  # rendered once per statement kind and engine, not per batch
def _request_rows_sql(
    key: str,
    fields: tuple[tuple[str, str], ...],
    engine: str,
    constants: tuple[tuple[str, str], ...],
) -> str:
    given = [f"unnest(cast(${key} as integer[])) as {key}"]
    columns = [key]
    for name, kind in fields:
        if engine != "duckdb" and kind.endswith("[]"):
            as_list = render_macro("json_text_list", f"cast({name} as json)", engine=engine)
            given.append(f"unnest(cast(${name} as varchar[])) as {name}")
            columns.append(f"cast({as_list} as {kind}) as {name}")
        else:
            given.append(f"unnest(cast(${name} as {kind}[])) as {name}")
            columns.append(name)
    bound = [f"cast(${name} as {kind}) as {name}" for name, kind in constants]
    if engine == "duckdb":
        return "    select\n        " + ",\n        ".join(given + bound) + "\n"
    return (
        "    select\n        "
        + ",\n        ".join(columns + bound)
        + "\n    from (\n        select\n            "
        + ",\n            ".join(given)
        + "\n    ) as given\n"
    )


def bound_lists(
    fields: Mapping[str, str], params: Mapping[str, Any], engine: str
) -> dict[str, Any]:
    """`params` as `request_rows_sql` binds them on `engine`: on PostgreSQL each value of a
    list field as JSON text."""
    if engine == "duckdb":
        return dict(params)
    return {
        name: [None if value is None else json.dumps(value, ensure_ascii=False) for value in values]
        if fields.get(name, "").endswith("[]")
        else values
        for name, values in params.items()
    }
