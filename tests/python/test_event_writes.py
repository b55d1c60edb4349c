"""Events written in bulk (a statement per table, every value bound as lists) leave exactly
the rows one insert per event left, on DuckDB and PostgreSQL: the same ids in input order,
players' and official events mixed, postings, vectors and source lines, and `merge`
strengthening a stored or just-written description instead of inserting it again."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

import duckdb
import pytest

from rolemem import DynamicMemory
from rolemem.cli import main
from rolemem.engines import PostgresEngine
from rolemem.schema.memory import VECTOR_COLUMNS, memory_table
from rolemem.sql.project import write_sql

from .conftest import fresh_database

NOW = datetime(2024, 5, 1, 20, 0)
AGENT = "qiyu"

# The statements one event was written with before the bulk write (the macros as they were,
# rendered for DuckDB; PostgreSQL's cursor transpiles them): the reference the bulk write
# must match row for row.
_ONE_EVENT = """
insert into {table} (
    scope, agent_id, user_id, scene, place, description, deepinsight, keywords,
    importance, feedback, strength, recall_count, token_count, save_id, first_line_id,
    last_line_id, root_line_id, batch_key, created_at, updated_at
)
values (
    $scope, $agent_id, $user_id, $scene, $place, $description, $deepinsight, $keywords,
    $importance, $feedback, 1, 0, $token_count, $save_id, $first_line_id,
    $last_line_id, $root_line_id, $batch_key, $created_at, $created_at
)
returning id
"""
_ONE_EVENTS_POSTINGS = """
insert into {table} (
    event_id, agent_id, scope, user_id, term, description_count, keyword_count, tag_count
)
select
    cast($event_id as bigint) as event_id,
    cast($agent_id as varchar) as agent_id,
    cast($scope as varchar) as scope,
    cast($user_id as varchar) as user_id,
    unnest(cast($terms as varchar[])) as term,
    unnest(cast($description_counts as integer[])) as description_count,
    unnest(cast($keyword_counts as integer[])) as keyword_count,
    unnest(cast($tag_counts as integer[])) as tag_count
"""
_ONE_EVENTS_VECTORS = """
insert into {table} (event_id, user_id, embedding, context_embedding, long_context_embedding)
values ($id, $user_id, $embedding, $context_embedding, $long_context_embedding)
"""
_ONE_EVENTS_LINES = """
insert into memory_event_line (event_id, line_id, user_id, target_key, batch_key, last_line_id)
select
    $event_id as event_id,
    unnest(cast($line_ids as bigint[])) as line_id,
    $user_id as user_id,
    $target_key as target_key,
    $batch_key as batch_key,
    $last_line_id as last_line_id
on conflict do nothing
"""
_LINES = ("line_ids", "target_key")


def written_one_by_one(
    memory: DynamicMemory, cur: Any, rows: list[dict[str, Any]], vectors: list[Any], merge: bool
) -> list[int]:
    """write_events as it was: each event its own statements, in turn."""
    ids = []
    engine = memory.store.name
    for row, vector in zip(rows, vectors, strict=True):
        terms = row["terms"]
        params = {k: v for k, v in row.items() if k != "terms" and k not in _LINES}
        scope = params["scope"]
        if merge:
            owner = ("scope", "agent_id", "user_id", "description", "created_at")
            existing = cur.execute(
                write_sql("reinforce_memory_event", engine=engine),
                {name: params[name] for name in owner},
            ).fetchone()
            if existing is not None:
                ids.append(int(existing[0]))
                continue
        table = memory_table("memory_event", scope)
        event_id = cur.execute(_ONE_EVENT.format(table=table), params).fetchone()[0]
        if terms["terms"]:
            cur.execute(
                _ONE_EVENTS_POSTINGS.format(table=memory_table("memory_event_term", scope)),
                {
                    "event_id": event_id,
                    **{name: params[name] for name in ("agent_id", "scope", "user_id")},
                    **terms,
                },
            )
        if vector is not None:
            cur.execute(
                _ONE_EVENTS_VECTORS.format(table=memory_table("memory_event_embedding", scope)),
                {
                    "id": event_id,
                    "user_id": params["user_id"],
                    **dict(zip(VECTOR_COLUMNS, vector, strict=True)),
                },
            )
        if row.get("line_ids"):
            cur.execute(
                _ONE_EVENTS_LINES,
                {
                    "event_id": event_id,
                    "line_ids": row["line_ids"],
                    "user_id": params["user_id"],
                    "target_key": row["target_key"],
                    "batch_key": params["batch_key"],
                    "last_line_id": params["last_line_id"],
                },
            )
        ids.append(event_id)
    return ids


class WavyEmbedder:
    """Vectors of full double precision (stored as reals: both writes must round alike)."""

    dim = 8

    def embed_query(self, text: str) -> list[float]:
        return [math.sin(len(text) * 1.37 + i * 0.91 + sum(map(ord, text)) % 97) for i in range(8)]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]


def events() -> list[dict[str, Any]]:
    """Two players' events and official ones interleaved, with and without postings, tags,
    places and source lines; one description said twice by a player."""
    said = [
        ("mumu", "木木的室友失恋了，我们陪她吃了一晚上火锅", ["室友", "火锅"], "火锅店"),
        (None, "祁煜的画廊在海边，开了三百年", ["画廊", "海边"], None),
        ("lulu", "露露第一次走进祁煜的画廊，被会变色的海洋画吸引", ["画廊"], "画廊"),
        ("mumu", "……", [], None),  # no term: no postings
        ("mumu", "木木在海边捡到一枚粉色贝壳送给祁煜", ["贝壳", "海边"], None),
        (None, "祁煜喜欢深海的颜色", [], None),
        ("mumu", "木木的室友失恋了，我们陪她吃了一晚上火锅", ["火锅"], None),  # said again
        ("lulu", "Lulu painted the sea at night, twice", ["paint"], "studio"),
    ]
    out = []
    for index, (user_id, description, keywords, place) in enumerate(said):
        event: dict[str, Any] = {
            "user_id": user_id,
            "agent_id": AGENT,
            "scope": "official" if user_id is None else "user",
            "description": description,
            "keywords": keywords,
            "place": place,
            "importance": round(0.1 + index * 0.11, 2),
            "feedback": 0.3 if index % 2 else None,
            "scene": "夜" if index % 3 == 0 else None,
            "deepinsight": "她很难过" if index == 0 else None,
            "created_at": NOW - timedelta(days=30 - 3 * index, minutes=index),
        }
        if user_id == "mumu" and index < 6:  # extracted from save 1's lines
            event |= {
                "save_id": 1,
                "first_line_id": 10 + index,
                "last_line_id": 12 + index,
                "root_line_id": 1,
                "batch_key": f"batch-{index}",
                "line_ids": [10 + index, 11 + index, 12 + index],
                "target_key": "qiyu:1",
            }
        out.append(event)
    return out


# every table the writes touch, in a stable order
TABLES = {
    "memory_event": "select * from memory_event order by id",
    "memory_event_term": "select * from memory_event_term order by event_id, term",
    "memory_event_embedding": "select * from memory_event_embedding order by event_id",
    "memory_event_line": "select * from memory_event_line order by event_id, line_id",
    "official_event": "select * from official_event order by id",
    "official_event_term": "select * from official_event_term order by event_id, term",
    "official_event_embedding": "select * from official_event_embedding order by event_id",
}


def written(memory: DynamicMemory, bulk: bool) -> tuple[list[list[int]], dict[str, list[Any]]]:
    """The events written three times (plain, merged into what is stored, plain again), in
    bulk or one by one: the ids each call answered, and every table's rows after."""
    given = events()
    answered = []
    for merge in (False, True, False):
        rows, vectors = memory.prepare_events(given)
        with memory.store.transaction() as cur:
            if bulk:
                answered.append(memory.write_events(cur, rows, vectors, merge=merge))
            else:
                answered.append(written_one_by_one(memory, cur, rows, vectors, merge))
    # merged into a fresh player: the repeat strengthens the description written just before
    fresh = [{**event, "user_id": "nini"} for event in given if event["user_id"] == "mumu"]
    rows, vectors = memory.prepare_events(fresh)
    with memory.store.transaction() as cur:
        if bulk:
            answered.append(memory.write_events(cur, rows, vectors, merge=True))
        else:
            answered.append(written_one_by_one(memory, cur, rows, vectors, True))
    with memory.store.reading() as cur:
        tables = {}
        for name, sql in TABLES.items():
            result = cur.execute(sql)
            tables[name] = [
                tuple(list(v) if isinstance(v, tuple | list) else v for v in row)
                for row in result.fetchall()
            ]
    return answered, tables


def test_a_bulk_write_leaves_the_rows_one_insert_per_event_left():
    with DynamicMemory(duckdb.connect(), embedder=WavyEmbedder()) as old:
        expected = written(old, bulk=False)
    with DynamicMemory(duckdb.connect(), embedder=WavyEmbedder()) as new:
        assert written(new, bulk=True) == expected
    ids, tables = expected
    assert ids[0] == list(range(1, 9)) and ids[2] == list(range(11, 19))
    # merged: players' events strengthened (the repeat too); official ones are never merged
    assert ids[1] == [1, 9, 3, 4, 5, 10, 1, 8]
    assert ids[3] == [19, 20, 21, 19]  # nini's repeat strengthens her event just written
    strength = {row[0]: row[11] for row in tables["memory_event"]}
    assert strength[19] > 1 and strength[20] == 1
    assert len(tables["official_event"]) == 6 and len(tables["memory_event_line"]) == 27


def test_a_bulk_write_without_vectors_leaves_the_same_rows():
    with DynamicMemory(duckdb.connect(), embedder=None) as old:
        expected = written(old, bulk=False)
    with DynamicMemory(duckdb.connect(), embedder=None) as new:
        assert written(new, bulk=True) == expected
    assert expected[1]["memory_event_embedding"] == []


def test_a_failed_bulk_write_writes_nothing():
    with DynamicMemory(duckdb.connect(), embedder=WavyEmbedder()) as memory:
        rows, vectors = memory.prepare_events(events())
        rows[0]["line_ids"] = ["not a line"]  # refused by the last statement
        with pytest.raises(duckdb.Error), memory.store.transaction() as cur:
            memory.write_events(cur, rows, vectors)
        with memory.store.reading() as cur:
            for sql in TABLES.values():
                assert cur.execute(sql).fetchall() == []


def test_a_bulk_write_leaves_the_same_rows_on_postgresql(postgres_url):
    found = []
    for name in ("rolemem_events_one_by_one", "rolemem_events_bulk"):
        url = fresh_database(postgres_url, name)
        assert main(["init-db", "--db", url]) == 0
        with (
            PostgresEngine(url) as engine,
            DynamicMemory(engine=engine, embedder=WavyEmbedder()) as memory,
        ):
            found.append(written(memory, bulk=name.endswith("bulk")))
    assert found[1] == found[0]
