"""Every per-turn statement names its player (issue 32 item 2) on a real Citus cluster: a
game's lifecycle over HTTP on the coordinator (keyword-only: no embedder) answers 2xx to every
request, and each statement it sent that names the player (macro player_filter, the engine
`citus`) is a single-task router plan (EXPLAIN: "Task Count: 1"), as are the upserts whose
conflict target leads with the player there (macro player_key)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import psycopg
import pytest

from rolemem.cli import main
from rolemem.engines.postgres import transpile
from rolemem.service import create_app
from rolemem.service.core.settings import ServiceSettings
from rolemem.sql.project import write_sql

from .conftest import serving

KEY = {"X-API-Key": "game"}
PLAYER = "mumu"
# a statement naming its player on Citus, as the engine sends it (psycopg placeholders)
_NAMES_PLAYER = ("user_id = %(user_id)s", "user_id = %(save_user_id)s")
_MEMORY_TABLE = re.compile(r"\b(FROM|JOIN)\s+(memory_|character_recall)", re.IGNORECASE)


@pytest.fixture(scope="module")
def citus_store(citus_cluster: Any) -> str:
    url = citus_cluster.create_database("rolemem_citus_routing")
    assert main(["init-db", "--db", url, "--demo"]) == 0
    return str(url)


@pytest.fixture(scope="module")
def played(citus_store: str) -> Iterator[tuple[list[tuple[str, int, str]], list[Any]]]:
    """The lifecycle played over HTTP: every request with its status, and every statement
    the service sent (text, parameters)."""
    sent: list[tuple[str, dict[str, Any]]] = []
    execute = psycopg.Cursor.execute

    def recording(self: Any, query: Any, params: Any = None, **options: Any) -> Any:
        if isinstance(query, str) and isinstance(params, dict):
            sent.append((query, dict(params)))
        return execute(self, query, params, **options)

    settings = ServiceSettings(api_key="game", designer_key="designer")
    app = create_app(citus_store, embedder=None, settings=settings)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(psycopg.Cursor, "execute", recording)
        with serving(app) as client:
            yield _play(client), sent


def _play(client: Any) -> list[tuple[str, int, str]]:
    done: list[tuple[str, int, str]] = []

    def call(method: str, route: str, **kwargs: Any) -> Any:
        answer = client.request(method, route, headers=KEY, **kwargs)
        done.append((f"{method} {route}", answer.status_code, answer.text[:300]))
        return answer.json()

    role_id = call("POST", "/roles", json={"name": "祁煜", "character_id": "qiyu"})["role_id"]
    save_id = call("POST", "/saves", json={"user_id": PLAYER, "name": "第一章"})["save_id"]
    lines = [
        {"attribute": "user", "content": "你好"},
        {"attribute": "assistant", "content": "你好呀", "role_id": role_id},
        {"attribute": "user", "content": "在画什么"},
        {"attribute": "assistant", "content": "海", "role_id": role_id},
    ]
    owner = {"user_id": PLAYER}
    line_ids = call("POST", f"/saves/{save_id}/lines", json={**owner, "lines": lines})["line_ids"]
    call("GET", f"/saves/{save_id}", params=owner)
    call("GET", f"/saves/{save_id}/lines", params={**owner, "limit": 2})
    turn = {"save_id": save_id, "user_id": PLAYER, "role_id": role_id, "message": "你喜欢海吗"}
    call("POST", "/turn", json=turn)
    call("POST", f"/saves/{save_id}/regenerate", json={**owner, "line": {"content": "山"}})
    call("PUT", f"/saves/{save_id}/tip", json={**owner, "line_id": line_ids[1]})
    fork_id = call("POST", "/saves", json={**owner, "from_line_id": line_ids[1]})["save_id"]
    call("POST", f"/saves/{fork_id}/lines", json={**owner, "lines": lines[2:3]})
    call("GET", f"/saves/{fork_id}/lines", params=owner)
    call("GET", f"/users/{PLAYER}/memories", params={"kind": "event"})
    call("GET", f"/users/{PLAYER}/export")
    call("POST", f"/users/{PLAYER}/forget", json={"purge": True})
    return done


def _task_count(url: str, sql: str, params: dict[str, Any]) -> str:
    # the service's search path: rolemem's tables, then the game's
    with psycopg.connect(url, options="-c search_path=rolemem,public") as con:
        plan = [row[0] for row in con.execute(f"explain {sql}", params).fetchall()]
    counts = [line.strip() for line in plan if "Task Count" in line]
    return counts[0] if len(counts) == 1 else "\n".join(plan)


def test_a_lifecycle_over_http_answers_2xx_to_every_request(played):
    requests, _ = played
    assert [(route, status) for route, status, _ in requests if not 200 <= status < 300] == []
    assert [route for route, _, _ in requests][-1] == f"POST /users/{PLAYER}/forget"


def test_every_statement_naming_its_player_is_a_single_task_router_plan(played, citus_store):
    _, sent = played
    # the statements of the save routes (saves, lines, tips, chains, the purge's save delete);
    # reads of the memory tables (dynamic recall, the loop's state) are item 2's next layer
    naming = {
        sql: params
        for sql, params in sent
        if any(name in sql for name in _NAMES_PLAYER) and not _MEMORY_TABLE.search(sql)
    }
    # the save's locked read, the tip moves, the tip walk and its budget, the lineage walk,
    # the chain's reads and the purge's save delete (issue 32 item 2's worklist, 1-4 and 6)
    heads = {" ".join(sql.split())[:60] for sql in naming}
    # EXPLAIN plans a statement without running it (the writes change nothing here)
    for expected in (
        "FOR UPDATE",
        "UPDATE save SET last_message_id",
        "WITH RECURSIVE up",
        "WITH RECURSIVE lineage",
        "DELETE FROM save",
        "SELECT COUNT(*) FROM line",
    ):
        assert any(expected in " ".join(sql.split()) for sql in naming), (expected, heads)
    plans = {
        " ".join(sql.split())[:120]: _task_count(citus_store, sql, params)
        for sql, params in naming.items()
    }
    assert {head: plan for head, plan in plans.items() if plan != "Task Count: 1"} == {}


@pytest.mark.parametrize(
    ("name", "params"),
    [
        (
            "write_recall_queue",
            {"character_id": "qiyu", "turn_number": 1, "queue": "[]"},
        ),
        (
            "upsert_loop_state",
            {
                "target_key": "1|",
                "agent_id": "qiyu",
                "scene": None,
                "role_id": 1,
                "script_role_id": None,
                "keep_scene": False,
                "extracted": True,
            },
        ),
        (
            "record_loop_failure",
            {
                "target_key": "1|",
                "agent_id": "qiyu",
                "role_id": 1,
                "script_role_id": None,
                "error": "e",
            },
        ),
    ],
)
def test_an_upsert_on_a_players_key_is_a_single_task_router_plan(name, params, citus_store):
    sql = transpile(write_sql(name, engine="citus"))
    assert "ON CONFLICT(user_id, save_id" in sql.replace("ON CONFLICT (", "ON CONFLICT(")
    bound = {**params, "save_id": 1, "user_id": PLAYER, "now": datetime(2026, 1, 1)}
    assert _task_count(citus_store, sql, bound) == "Task Count: 1"
