"""`dbt build --target postgres`: the same models, seeds, data tests and unit tests on a real
PostgreSQL holding the demo store's rows, and every mart equal to the DuckDB build's."""

from __future__ import annotations

import datetime
import json
import math
import urllib.parse
from decimal import Decimal

import duckdb
import psycopg
import pytest
import sqlalchemy as sa
from sqlmodel import SQLModel

from rolemem import schema
from rolemem.engines.postgres_setup import copy_rows
from rolemem.schema.memory import OFFICIAL_TABLES
from rolemem.schema.store import create_memory_tables

from .conftest import REPO, _dbt, demo_store, run_dbt

SOURCES = [
    "role",
    "save",
    "line",
    "memory_entity",
    "memory_entity_mention",
    "memory_event",
    "memory_event_term",
    "memory_event_embedding",
    "memory_fact",
    "memory_recall_log",
    "memory_extraction_batch",
    "memory_loop_state",
    "memory_archive",
    "memory_maintenance_run",
    *OFFICIAL_TABLES.values(),  # the designers' memories, in tables of their own
    "character_attributes",
    "character_events",
    "character_dialogue_styles",
]
MARTS = sorted(path.stem for path in (REPO / "models" / "marts").rglob("*.sql"))


def normalised(value):
    """One value as both engines' drivers can agree on it."""
    if isinstance(value, float | Decimal):
        return None if math.isnan(float(value)) else round(float(value), 6)
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return normalised(json.loads(value))
        except ValueError:
            return value
    if isinstance(value, list | tuple):
        return [normalised(item) for item in value]
    if isinstance(value, dict):
        return {key: normalised(item) for key, item in value.items()}
    if isinstance(value, datetime.datetime):
        return value.replace(tzinfo=None)
    return value


@pytest.fixture(scope="module")
def builds(tmp_path_factory, postgres_url):
    """The demo store built by dbt on DuckDB (with its docs site), and its rows built by dbt on
    PostgreSQL; the file, the database's URL and the DuckDB build's target folder."""
    work = tmp_path_factory.mktemp("dbt-both")
    path = demo_store(str(work / "rolemem.duckdb"))
    run_dbt(path, work / "duckdb", "build")
    _dbt(path, work / "duckdb", "docs", "generate")
    database = "rolemem_dbt"
    with psycopg.connect(postgres_url, autocommit=True) as con:
        con.execute(f"drop database if exists {database}")
        con.execute(f"create database {database}")
    parts = urllib.parse.urlsplit(postgres_url)
    host = urllib.parse.parse_qs(parts.query)["host"][0]
    url = f"postgresql://postgres:@/{database}?host={host}"
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    SQLModel.metadata.create_all(
        engine, tables=[schema.Role.__table__, schema.Save.__table__, schema.Line.__table__]
    )
    SQLModel.metadata.create_all(engine, tables=list(schema.CONFIG_TABLES))
    create_memory_tables(engine)
    engine.dispose()
    with (
        duckdb.connect(path, read_only=True) as source,
        psycopg.connect(url, autocommit=True) as con,
        con.cursor() as cur,
    ):
        copy_rows(source, cur, SOURCES)
    _dbt(
        path,
        work / "postgres",
        "build",
        "--target",
        "postgres",
        env={"ROLEMEM_PG_HOST": host, "ROLEMEM_PG_DBNAME": database},
    )
    return path, url, work / "duckdb" / "target"


def test_the_docs_site_catalogues_every_model(builds):
    """`dbt docs generate` after the DuckDB build: its catalog holds every model."""
    _, _, target = builds
    nodes = json.loads((target / "catalog.json").read_text(encoding="utf-8"))["nodes"]
    built = {node["metadata"]["name"] for node in nodes.values()}
    assert {path.stem for path in (REPO / "models").rglob("*.sql")} <= built


def rows_of(cursor, table: str) -> list[dict]:
    cursor.execute(f"select * from {table}")
    names = [column[0] for column in cursor.description]
    rows = [dict(zip(names, map(normalised, row), strict=True)) for row in cursor.fetchall()]
    return sorted(rows, key=lambda row: json.dumps(row, sort_keys=True, default=str))


@pytest.mark.parametrize("mart", MARTS)
def test_every_mart_is_equal_on_both_engines(builds, mart):
    path, url, _ = builds
    with duckdb.connect(path, read_only=True) as con:
        on_duckdb = rows_of(con.cursor(), mart)
    with psycopg.connect(url, options="-c search_path=rolemem_dbt") as con:
        on_postgres = rows_of(con.cursor(), mart)
    for left, right in zip(on_postgres, on_duckdb, strict=False):  # the first row that differs
        assert {k: v for k, v in left.items() if right.get(k) != v} == {}, right
    assert on_postgres == on_duckdb
    assert on_duckdb or mart in EMPTY_ON_THE_DEMO, f"{mart} has no rows on the demo store"


EMPTY_ON_THE_DEMO = {
    "memory_archived_memories",
    "memory_cleanup_candidates",
    "memory_extraction_batches",
    "memory_recall_log_scored",
    "memory_strength_by_month",
}
