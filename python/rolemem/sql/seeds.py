"""The dbt seeds as the Python package reads them: same CSV files, same column types.

Column types come from the seeds' YAML (`config.column_types`), so dbt and Python cannot
disagree on them. Path and types reach DuckDB's read_csv as bound parameters.
"""

from __future__ import annotations

import contextlib
import copy
import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb

from .project import project_dir


@functools.cache
def seed_specs() -> dict[str, tuple[Path, dict[str, str]]]:
    """seed name -> (CSV path, {column: DuckDB type})."""
    import yaml

    root = project_dir("seeds")
    specs: dict[str, tuple[Path, dict[str, str]]] = {}
    for yml in sorted(root.rglob("*.yml")):
        for seed in (yaml.safe_load(yml.read_text(encoding="utf-8")) or {}).get("seeds", []):
            csv_path = yml.parent / f"{seed['name']}.csv"
            types = (seed.get("config") or {}).get("column_types") or {}
            specs[seed["name"]] = (csv_path, {col: str(t).upper() for col, t in types.items()})
    return specs


def load_seed(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """Create table `name` from the seed's CSV."""
    path, columns = seed_specs()[name]
    con.execute(
        f'create or replace table "{name}" as '
        "select * from read_csv($path, header = true, columns = $columns)",
        {"path": str(path), "columns": columns},
    )


def read_settings(con: duckdb.DuckDBPyConnection, *seeds: str) -> dict[str, Any]:
    """The one-row settings seeds (e.g. recall_limits) of `con` as one dict; a JSON
    `filter_levels` is parsed. A missing or empty table contributes nothing."""
    import json

    settings: dict[str, Any] = {}
    for seed in seeds:
        with con.cursor() as cur:  # never leave a result open on the caller's connection
            try:
                cur.execute(f"select * from {seed}")  # names from this package, not callers
            except duckdb.CatalogException:
                continue
            rows = cur.fetchall()
            if rows:
                settings.update(zip([d[0] for d in cur.description], rows[0], strict=True))
    if isinstance(settings.get("filter_levels"), str):
        settings["filter_levels"] = json.loads(settings["filter_levels"])
    return settings


def shipped_rows(seed: str) -> list[dict[str, Any]]:
    """The rows of a seed as rolemem ships it, typed as dbt seeds them (load_seed)."""
    with _shipped(seed) as con:
        cur = con.execute(f'select * from "{seed}"')  # a name from this package's seeds
        names = [column[0] for column in cur.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def shipped_settings(*seeds: str) -> dict[str, Any]:
    """read_settings over the CSVs shipped with rolemem (read once per process; a copy, so
    callers may change theirs)."""
    return copy.deepcopy(_shipped_settings(seeds))


@functools.cache
def _shipped_settings(seeds: tuple[str, ...]) -> dict[str, Any]:
    with _shipped(*seeds) as con:
        return read_settings(con, *seeds)


@contextlib.contextmanager
def _shipped(*seeds: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """An in-memory database holding the shipped CSVs of `seeds`, closed on the way out."""
    with duckdb.connect(":memory:") as con:
        for seed in seeds:
            load_seed(con, seed)
        yield con
