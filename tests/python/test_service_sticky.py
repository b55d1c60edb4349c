"""The sticky recall queue of a save x character lives in the store: two `rolemem serve`
processes on one PostgreSQL database, taking a player's turns in turn, count an entry's
停留轮数 down as one; on the embedded DuckDB file a restarted service goes on where the last
one stopped."""

from __future__ import annotations

from typing import Any

import duckdb
import httpx
import psycopg

from rolemem.cli import main
from rolemem.service import create_app
from rolemem.service.core.settings import ServiceSettings
from rolemem.testing.scripted_llm import ScriptedChatServer

from .conftest import demo_store, fresh_database, serving
from .test_postgres_processes import KEY, service

# the demo's qiyu entry 温柔 stays six turns (the queue's default is three)
STICKY = (
    "update character_attributes set sticky_turns = 6 "
    "where character_id = 'qiyu' and content = '温柔'"
)
MESSAGES = ["今天画画时你好温柔", *["嗯"] * 6]
EXPECTED = [("shown", 6), ("shown", 5), ("shown", 4), ("shown", 3), ("shown", 2), ("shown", 1)]


def sticky(client: httpx.Client, message: str) -> tuple[str, int | None]:
    answer = client.post(
        "/turn",
        headers=KEY,
        json={
            "save_id": 2,
            "character_id": "qiyu",
            "role_id": 1,
            "user_id": "mumu",
            "message": message,
            "context": {"intimacy": 2, "exploration": 3, "scene": "studio"},
            "now": "2021-02-21T12:00:00",
            "user_name": "木木",
            "char_name": "钦灵",
        },
    )
    assert answer.status_code == 200, answer.text
    row: dict[str, Any] = next(r for r in answer.json()["trace"] if r["item"] == "温柔")
    return row["status"], row["sticky_turns_left"]


def test_two_processes_on_postgresql_count_down_as_one(postgres_url):
    url = fresh_database(postgres_url, "rolemem_sticky")
    assert main(["init-db", "--db", url, "--demo"]) == 0
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(STICKY)
    with (
        ScriptedChatServer() as llm,
        service(url, llm.base_url) as first,
        service(url, llm.base_url) as second,
        httpx.Client(base_url=first, timeout=60) as one,
        httpx.Client(base_url=second, timeout=60) as other,
    ):
        left = [sticky((one, other)[n % 2], message) for n, message in enumerate(MESSAGES)]
    assert left == [*EXPECTED, ("not relevant", None)]
    with psycopg.connect(url) as con:
        stored = con.execute(
            "select save_id, character_id, user_id, turn_number from character_recall_queue"
        ).fetchall()
    assert stored == [(2, "qiyu", "mumu", 7)]


def test_a_restart_on_duckdb_goes_on_counting(tmp_path):
    path = demo_store(str(tmp_path / "sticky.duckdb"))
    with duckdb.connect(path) as con:
        con.execute(STICKY)
    settings = ServiceSettings(api_key="game")
    left = []
    for messages in (MESSAGES[:3], MESSAGES[3:]):  # the service stopped and started between
        with serving(create_app(path, embedder=None, settings=settings)) as client:
            left += [sticky(client, message) for message in messages]
    assert left == [*EXPECTED, ("not relevant", None)]
