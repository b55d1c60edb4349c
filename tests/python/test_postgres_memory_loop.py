"""The memory loop on PostgreSQL: a game writes its own `save`/`line` rows (the SQLModel schema)
and the loop observes them there, as it does over an embedded file. The same turns played on
both engines, with the same scripted LLM, give the same reports, context windows, timelines,
memories, batches (the watermark), loop states, failures and maintenance: the chains are walked
in PostgreSQL by the same models that DuckDB keeps as write-time tables."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Any

import duckdb
import psycopg
import pytest

from rolemem import DynamicMemory
from rolemem.cli import main
from rolemem.engines import PostgresEngine
from rolemem.memory_loop import MemoryLoop
from rolemem.memory_loop.extraction_reply import ExtractionError
from rolemem.memory_loop.llm import OpenAICompatibleLLM
from rolemem.testing.scripted_llm import ScriptedChatServer

from .conftest import fresh_database, recall_shown

NOW = datetime(2024, 5, 1, 20, 0)
USER, AGENT = "mumu", "qiyu"
SETTINGS = {
    "extract_at_turns": 4,
    "extract_turns": 2,
    "context_max_turns": 3,
    "min_window_turns": 2,
    "llm_max_attempts": 1,
    "cleanup_threshold": 3,
    "cleanup_share": 0.5,
}
# what the loop writes, in a stable order, without the columns that take the wall clock
TABLES = {
    "memory_event": ("select * from memory_event order by id", ()),
    "memory_entity": ("select * from memory_entity order by id", ()),
    "memory_extraction_batch": (
        "select * from memory_extraction_batch order by first_line_id",
        (),
    ),
    "memory_loop_state": (
        "select * from memory_loop_state order by save_id, target_key",
        ("last_error_at", "last_observed_at"),
    ),
    "memory_archive": ("select * from memory_archive order by id", ("archived_at",)),
    "memory_maintenance_run": ("select * from memory_maintenance_run order by id", ()),
}


def reply(*descriptions: str, entity: str | None = None) -> str:
    return json.dumps(
        {
            "events": [{"description": d, "keywords": [d[:2]]} for d in descriptions],
            "entities": [
                {
                    "entity_name": "木木",
                    "entity_type": "客体",
                    "kind": "用户属性",
                    "keyword": "兴趣",
                    "description": entity,
                }
            ]
            if entity
            else [],
        },
        ensure_ascii=False,
    )


class Game:
    """The game's own writes (roles, a save, its lines, its tip), on one engine."""

    def __init__(self, write: Callable[[str, list[Any]], None]) -> None:
        self.write = write
        self.next_id, self.tip = 1, None
        write("insert into role (id, name) values (?, ?)", [1, "祁煜"])
        write("insert into save (id, name, user_id) values (?, ?, ?)", [1, "第一章", USER])

    def say(self, attribute: str, content: str, parent: int | None = None) -> int:
        line_id, self.next_id = self.next_id, self.next_id + 1
        role = 1 if attribute in ("assistant", "system") else None
        self.write(
            "insert into line (id, save_id, parent_line_id, attribute, content, role_id, "
            "display_name, created_at) values (?, 1, ?, ?, ?, ?, ?, ?)",
            [
                line_id,
                self.tip if parent is None else parent,
                attribute,
                content,
                role,
                "祁煜" if role else None,
                NOW - timedelta(hours=10) + timedelta(minutes=line_id),
            ],
        )
        self.move(line_id)
        return line_id

    def turn(self, n: int) -> int:
        self.say("user", f"玩家第{n}句")
        return self.say("assistant", f"祁煜第{n}句")

    def move(self, line_id: int) -> None:
        self.tip = line_id
        self.write("update save set last_message_id = ? where id = 1", [line_id])


def played(loop: MemoryLoop, game: Game, server: ScriptedChatServer) -> list[Any]:
    """Turns played and observed; what every call answered."""
    answers: list[Any] = []

    def observe(scene: str = "gallery") -> None:
        report = loop.observe(
            save_id=1, user_id=USER, agent_id=AGENT, role_id=1, scene=scene, now=NOW
        )
        answers.append(asdict(report))
        answers.append(loop.context_window(save_id=1, role_id=1))

    game.say("system", "你是祁煜")
    for n in range(3):
        game.turn(n)
    observe()  # three pending turns: nothing due
    game.turn(3)
    server.push(reply("木木说起了画画", entity="木木喜欢画画"))
    observe()  # four: the oldest two go to the LLM
    replied = game.turn(4)
    game.say("user", "我们去海边吧")
    game.say("assistant", "好呀")
    server.push(reply("木木想去海边", "祁煜答应了", entity="木木喜欢大海"))
    observe("beach")  # a new scene sends the turns before it, in the old one
    # turn 4's reply regenerated: the branch moves off the second batch's last line
    game.say("assistant", "今天不行", parent=replied - 1)
    answers.append(loop.timeline(user_id=USER, agent_id=AGENT, save_id=1))
    answers.append(
        loop.due(save_id=1, user_id=USER, agent_id=AGENT, role_id=1, scene="beach", record=True)
    )
    for n in range(5, 9):
        game.turn(n)
    server.push("这不是 JSON")
    with pytest.raises(ExtractionError):
        observe("beach")
    answer = loop.memory.query("海边", user_id=USER, agent_id=AGENT, now=NOW, save_id=1)
    answers.append(recall_shown(answer))
    # (the merged entity is told on two branches: nothing for the LLM to consolidate)
    report = loop.maintain(now=NOW)
    answers.append((report.archived, report.archived_ids, report.consolidated_entities))
    return answers


def rows_of(fetch: Callable[[str], list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    tables = {
        name: [{k: v for k, v in row.items() if k not in clock} for row in fetch(sql)]
        for name, (sql, clock) in TABLES.items()
    }
    for row in tables["memory_archive"]:
        row["memory"] = json.loads(row["memory"])
    return tables


@pytest.fixture(scope="module")
def url(postgres_url):
    url = fresh_database(postgres_url, "rolemem_loop")
    assert main(["init-db", "--db", url]) == 0
    return url


def test_the_loop_plays_alike_on_both_engines(url, tmp_path):
    con = duckdb.connect(str(tmp_path / "game.duckdb"))
    DynamicMemory(con, embedder=None).close()  # the game's and the memory tables

    def duck_write(sql: str, params: list[Any]) -> None:
        con.execute(sql, params)

    with ScriptedChatServer() as server:
        llm = OpenAICompatibleLLM(base_url=server.base_url, model="scripted", max_retries=0)
        with MemoryLoop(con, llm=llm, settings=SETTINGS) as loop:
            expected = played(loop, Game(duck_write), server)

    with psycopg.connect(url, autocommit=True) as game_con, PostgresEngine(url) as engine:

        def pg_write(sql: str, params: list[Any]) -> None:
            game_con.execute(sql.replace("?", "%s"), params)

        with ScriptedChatServer() as server:
            llm = OpenAICompatibleLLM(base_url=server.base_url, model="scripted", max_retries=0)
            memory = DynamicMemory(engine=engine, embedder=None)
            with MemoryLoop(llm=llm, settings=SETTINGS, memory=memory) as loop:
                assert played(loop, Game(pg_write), server) == expected
            memory.close()
        on_postgres = rows_of(lambda sql: engine.records(sql, {}))

    def duck_rows(sql: str) -> list[dict[str, Any]]:
        result = con.execute(sql)
        names = [d[0] for d in result.description]
        return [dict(zip(names, row, strict=True)) for row in result.fetchall()]

    on_duckdb = rows_of(duck_rows)
    assert on_postgres == on_duckdb
    # what was played: a full window, then the scene change (the turns before it in the old
    # scene, the turn played in the new one), the regenerated reply hid the second batch's
    # events, the failure is on the state, cleanup ran
    batches = [
        (b["batch_key"], b["reason"], b["event_count"])
        for b in on_duckdb["memory_extraction_batch"]
    ]
    assert batches == [
        ("1:role_id=1:2:5", "window_full", 1),
        ("1:role_id=1:6:11", "scene_change", 2),
        ("1:role_id=1:12:13", "scene_change", 0),
    ]
    [state] = on_duckdb["memory_loop_state"]
    assert state["failed_attempts"] == 1 and "ExtractionError" in state["last_error"]
    timeline = expected[6]
    assert [e["description"] for e in timeline] == ["木木说起了画画"]
    # the merged entity's second fragment came from the batch the regenerated reply cut off:
    # its fragments lie on two branches, so they stay apart (not consolidated)
    assert expected[-1][2] == 0


def test_a_memory_pinned_while_cleanup_waits_is_not_archived(postgres_url):
    """On PostgreSQL cleanup reads its candidates before its transaction: a pin in progress
    then is waited for (the archive locks its candidates) and keeps its memory, which
    cleanup's read had chosen; the rest of the weakest share is archived."""
    url = fresh_database(postgres_url, "rolemem_cleanup_race")
    assert main(["init-db", "--db", url]) == 0
    settings = {"cleanup_threshold": 4, "cleanup_share": 0.5, "cleanup_interval_days": 7}
    with PostgresEngine(url) as engine, DynamicMemory(engine=engine, embedder=None) as memory:
        rows = [
            {
                "user_id": USER,
                "agent_id": AGENT,
                "description": f"木木的事{i}",
                "created_at": NOW.replace(hour=9, minute=i),
            }
            for i in range(4)
        ]
        ids = memory.add_events(rows)
        engine.run("update memory_event set strength = 1 where id = $id", {"id": ids[0]})
        loop = MemoryLoop(llm=None, settings=settings, memory=memory)
        with psycopg.connect(url) as pin, ThreadPoolExecutor(1) as pool:
            pin.execute("update memory_event set is_pinned = true where id = %s", [ids[0]])
            cleaned = pool.submit(loop.maintain, now=NOW)
            while not engine.run(WAITING, {}) and not cleaned.done():
                time.sleep(0.01)  # till cleanup waits on the row the pin holds
            pin.commit()
            report = cleaned.result(timeout=60)
        assert report.archived_ids == [("event", ids[1])]
        archived = engine.run("select memory_id from memory_archive", {})
        assert archived == [(ids[1],)]


# a statement of another session waiting for a lock this test's transaction holds
WAITING = "select pid from pg_stat_activity where wait_event_type = 'Lock'"
