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
