"""Every Python entry point that takes a store takes what the CLI takes: a DuckDB path or
connection, a `postgresql://` URL or an engine — with the same answers."""

from __future__ import annotations

import duckdb
import pytest

from rolemem import CharacterMemory, Companion, DynamicMemory, MemoryLoop, build_memory_for_save
from rolemem.cli import main
from rolemem.engines import DuckDBEngine, PostgresEngine

from .conftest import demo_store, fresh_database

TURN = {"save_id": 2, "user_id": "mumu", "role_id": 1, "message": "今天画画时你好温柔"}


def answers(db) -> dict:
    """What each entry point answers on the store `db`."""
    with DynamicMemory(db, embedder=None) as memory:
        recalled = memory.query("海边", user_id="mumu", agent_id="qiyu", update=False)
    with MemoryLoop(db) as loop:
        timeline = loop.timeline(user_id="mumu", agent_id="qiyu", save_id=2)
    with Companion(db, character_id="qiyu", embedder=None) as companion:
        turn = companion.turn(**TURN, dry_run=True)
    recall = CharacterMemory(db, character_id="qiyu").session("mumu").recall("今天画画时你好温柔")
    return {
        "events": [e["description"] for e in recalled.memory_events],
        "timeline": [e["description"] for e in timeline],
        "turn": turn.messages,
        "recall": (recall.attributes, recall.events, recall.dialogue_style),
        "builder": build_memory_for_save(db, 2, role_id=1),
    }


def test_a_url_an_engine_a_path_and_a_connection_answer_alike(tmp_path, postgres_url):
    path = demo_store(str(tmp_path / "demo.duckdb"))
    url = fresh_database(postgres_url, "rolemem_arguments")
    assert main(["init-db", "--db", url, "--demo"]) == 0
    expected = answers(path)
    assert expected["events"] and expected["timeline"] and expected["turn"]
    assert answers(url) == expected
    with PostgresEngine(url) as engine:
        assert answers(engine) == expected
    con = duckdb.connect(path)
    try:
        assert answers(con) == expected
        assert answers(DuckDBEngine(con)) == expected
    finally:
        con.close()


def test_a_store_argument_of_another_kind_is_refused():
    with pytest.raises(Exception, match="a postgresql:// URL or an engine"):
        DynamicMemory(42, embedder=None)  # type: ignore[arg-type]


def played_saves(db) -> dict:
    """What `Saves` answers on the store `db` for one game: a role, a save, two turns, a
    reload, a swipe, the branch and the save."""
    from rolemem.memory_builder.saves import Saves

    with Saves(db) as book:
        role = book.create_role("祁煜", character_id="qiyu")
        save = book.create_save(user_id="ana", user_name="安娜")["save_id"]
        first = book.append(
            save,
            [
                {"attribute": "user", "content": "你好"},
                {"attribute": "assistant", "content": "嗯", "role_id": role["role_id"]},
            ],
            user_id="ana",
        )
        second = book.append(
            save,
            [
                {"attribute": "user", "content": "画画吗"},
                {"attribute": "assistant", "content": "好", "role_id": role["role_id"]},
            ],
            user_id="ana",
        )
        reload = book.set_tip(save, first["tip_line_id"], user_id="ana")
        swipe = book.regenerate(save, {"content": "不要"}, user_id="ana")
        return {
            "role": role,
            "appends": [first, second],
            "reload": reload,
            "swipe": swipe,
            "lines": book.lines(save, user_id="ana"),
            "save": book.get(save, user_id="ana"),
        }


def test_saves_take_a_url_an_engine_a_path_and_a_connection_alike(tmp_path, postgres_url):
    expected = played_saves(demo_store(str(tmp_path / "path.duckdb")))
    assert expected["role"] == {
        "role_id": 2,
        "name": "祁煜",
        "character_id": "qiyu",
        "agent_id": "qiyu",
        "omniscient": False,
    }
    assert [line["content"] for line in expected["lines"]["lines"]] == ["你好", "不要"]
    url = fresh_database(postgres_url, "rolemem_saves_url")
    assert main(["init-db", "--db", url, "--demo"]) == 0
    assert played_saves(url) == expected
    url = fresh_database(postgres_url, "rolemem_saves_engine")
    assert main(["init-db", "--db", url, "--demo"]) == 0
    with PostgresEngine(url) as engine:
        assert played_saves(engine) == expected
    con = duckdb.connect(demo_store(str(tmp_path / "connection.duckdb")))
    try:
        assert played_saves(con) == expected
    finally:
        con.close()
