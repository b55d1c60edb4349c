"""Players apart over HTTP: player B walks every route with each field that names a player
against player A's save, lines and memories, and finds nothing of A's read, written or
extracted; a save without an owner refuses every player unless the service is told the game
keeps ownership itself; idempotency keys are per player; chosen ids fit a JavaScript number.
Every test runs on the embedded DuckDB file and on PostgreSQL."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from rolemem.service import create_app
from rolemem.service.core.settings import ServiceSettings

from .conftest import demo_store, error_of, post, scripted_game, serving

KEY = {"X-API-Key": "game"}
OBSERVE = {"agent_id": "qiyu", "role_id": 1, "scene": "gallery", "user_name": "爱丽丝"}
ALICE_MEMORY = "爱丽丝给钦灵看了她的秘密日记"
EXTRACTED = json.dumps(
    {"events": [{"description": ALICE_MEMORY, "keywords": ["日记"], "message": 1}]},
    ensure_ascii=False,
)


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def game(request, tmp_path_factory):
    settings = ServiceSettings(api_key="game")
    with scripted_game(request, tmp_path_factory, "rolemem_apart", settings=settings) as served:
        yield served


def rows(app: Any, sql: str) -> list[tuple]:
    return [tuple(row) for row in app.state.store.engine.run(sql, {})]


def alices_rows(app: Any) -> dict[str, list[tuple]]:
    """Everything of alice's in the store."""
    return {
        "saves": rows(app, "select * from save where user_id = 'alice' order by id"),
        "lines": rows(
            app,
            "select line.* from line inner join save on save.id = line.save_id "
            "where save.user_id = 'alice' order by line.id",
        ),
        "events": rows(
            app,
            "select id, description, strength, save_id from memory_event "
            "where user_id = 'alice' order by id",
        ),
        "archive": rows(app, "select * from memory_archive where user_id = 'alice'"),
        "state": rows(
            app, "select * from memory_loop_state where user_id = 'alice' order by save_id"
        ),
    }


@pytest.fixture(scope="module")
def alice(game):
    """alice's save with two turns and one extracted memory; bob's own save."""
    client, app, llm = game
    save = post(client, "/saves", {"user_id": "alice"})["save_id"]
    lines: list[int] = []
    for index, (said, reply, scene) in enumerate(
        [("看我的日记", "好", "gallery"), ("别告诉别人", "嗯", "beach")]
    ):
        if scene == "beach":  # a scene change: every pending turn is due
            llm.push(EXTRACTED)
        answer = post(
            client,
            f"/saves/{save}/lines",
            {
                "user_id": "alice",
                "lines": [
                    {"attribute": "user", "content": said},
                    {"attribute": "assistant", "content": reply, "role_id": 1},
                ],
                "now": f"2024-05-01T20:0{index}:00",
                "observe": {**OBSERVE, "scene": scene},
            },
            {"Idempotency-Key": f"alice-{index}"},
        )
        lines += answer["line_ids"]
    deadline = time.monotonic() + 30
    while not rows(app, "select id from memory_event where user_id = 'alice'"):
        assert time.monotonic() < deadline, "alice's extraction did not finish"
        time.sleep(0.05)
    (event,) = rows(app, "select id from memory_event where user_id = 'alice'")
    bobs = post(client, "/saves", {"user_id": "bob"})["save_id"]
    post(client, f"/saves/{bobs}/lines", {"user_id": "bob", "lines": [_said("嗨")]})
    return {"save": save, "lines": lines, "event": event[0], "bobs": bobs}


def _said(content: str) -> dict[str, Any]:
    return {"attribute": "user", "content": content}


def _turn(save: int, user: str) -> dict[str, Any]:
    return {
        "save_id": save,
        "character_id": "qiyu",
        "role_id": 1,
        "user_id": user,
        "message": "日记",
    }


def test_bob_reaches_nothing_of_alices_through_any_field(game, alice):
    client, app, llm = game
    save, bobs, line, event = alice["save"], alice["bobs"], alice["lines"][0], alice["event"]
    before = alices_rows(app)
    llm_calls = len(llm.requests)
    status = {"agent_id": "qiyu", "role_id": 1}
    not_found = {
        "GET /saves/{id}": client.get(f"/saves/{save}", headers=KEY, params={"user_id": "bob"}),
        "GET /saves/{id} without a player": client.get(f"/saves/{save}", headers=KEY),
        "GET /saves/{id}/lines": client.get(
            f"/saves/{save}/lines", headers=KEY, params={"user_id": "bob"}
        ),
        "GET /saves/{id}/memory_status": client.get(
            f"/saves/{save}/memory_status", headers=KEY, params={"user_id": "bob", **status}
        ),
        "POST /saves/{id}/lines": client.post(
            f"/saves/{save}/lines", headers=KEY, json={"user_id": "bob", "lines": [_said("x")]}
        ),
        "POST /saves/{id}/lines, the player in observe": client.post(
            f"/saves/{save}/lines",
            headers=KEY,
            json={"lines": [_said("x")], "observe": {**OBSERVE, "user_id": "bob"}},
        ),
        "POST /lines": client.post(
            "/lines", headers=KEY, json={"save_id": save, "user_id": "bob", "lines": [_said("x")]}
        ),
        "POST /saves/{id}/regenerate": client.post(
            f"/saves/{save}/regenerate",
            headers=KEY,
            json={"user_id": "bob", "line": {"content": "x"}},
        ),
        "PUT /saves/{id}/tip": client.put(
            f"/saves/{save}/tip", headers=KEY, json={"user_id": "bob", "line_id": line}
        ),
        "POST /turn": client.post("/turn", headers=KEY, json=_turn(save, "bob")),
        "POST /query": client.post(
            "/query",
            headers=KEY,
            json={"query": "日记", "user_id": "bob", "agent_id": "qiyu", "save_id": save},
        ),
        "POST /query_simple": client.post(
            "/query_simple",
            headers=KEY,
            json={"query": "日记", "user_id": "bob", "agent_id": "qiyu", "save_id": save},
        ),
        "GET /users/{id}/timeline": client.get(
            "/users/bob/timeline", headers=KEY, params={"agent_id": "qiyu", "save_id": save}
        ),
    }
    for route, answer in not_found.items():
        assert answer.status_code == 404, (route, answer.text)
        assert error_of(answer) == {
            "type": "SaveNotFoundError",
            "message": f"no save with id {save}",
            "field": "save_id",
        }, route
    # alice's line and memory by id, from bob's own save and bob's own routes
    by_id = {
        "POST /saves (fork)": client.post(
            "/saves", headers=KEY, json={"user_id": "bob", "from_line_id": line}
        ),
        "PUT /saves/{bob's}/tip": client.put(
            f"/saves/{bobs}/tip", headers=KEY, json={"user_id": "bob", "line_id": line}
        ),
        "PATCH /users/{id}/memories": client.patch(
            f"/users/bob/memories/event/{event}", headers=KEY, json={"importance": 0.1}
        ),
        "DELETE /users/{id}/memories": client.delete(
            f"/users/bob/memories/event/{event}", headers=KEY
        ),
    }
    for route, answer in by_id.items():
        assert answer.status_code == 404, (route, answer.text)
        assert f"{line}" in error_of(answer)["message"] or f"{event}" in error_of(answer)["message"]
        assert f"save {save}" not in answer.text, route
    # bob's own save, alice named in observe: refused before anything is written
    mixed = client.post(
        f"/saves/{bobs}/lines",
        headers=KEY,
        json={
            "user_id": "bob",
            "lines": [_said("她的日记写了什么")],
            "observe": {**OBSERVE, "user_id": "alice", "scene": "library"},
        },
    )
    assert mixed.status_code == 409
    assert error_of(mixed) == {
        "type": "ConflictError",
        "message": "observe.user_id must be the request's user_id (the save's player)",
        "field": "observe.user_id",
    }
    # alice named in observe alone: the save is bob's, so not hers to extract from
    only_observe = client.post(
        f"/saves/{bobs}/lines",
        headers=KEY,
        json={"lines": [_said("x")], "observe": {**OBSERVE, "user_id": "alice"}},
    )
    assert only_observe.status_code == 404
    # bob's own reads show none of alice's memories
    for route in ("memories", "export", "archive"):
        answer = client.get(f"/users/bob/{route}", headers=KEY)
        assert answer.status_code == 200 and ALICE_MEMORY not in answer.text, route
    recalled = post(
        client, "/query", {"query": "日记", "user_id": "bob", "agent_id": "qiyu", "save_id": bobs}
    )
    assert ALICE_MEMORY not in json.dumps(recalled, ensure_ascii=False)
    turn = post(client, "/turn", _turn(bobs, "bob"))
    assert ALICE_MEMORY not in json.dumps(turn, ensure_ascii=False)
    # with an agent: bob's memories only, his save stays for the tests below
    purged = post(client, "/users/bob/forget", {"purge": True, "agent_id": "qiyu"})
    assert purged["events"] == 0
    time.sleep(0.3)  # an extraction wrongly scheduled would have reached the LLM by now
    assert len(llm.requests) == llm_calls
    assert alices_rows(app) == before
    assert rows(app, f"select count(*) from line where save_id = {bobs}") == [(1,)]


def test_idempotency_keys_are_per_player(game, alice):
    client, app, _ = game
    bobs, save = alice["bobs"], alice["save"]
    # bob takes alice's next key first, on his own save
    post(
        client,
        f"/saves/{bobs}/lines",
        {"user_id": "bob", "lines": [_said("抢先")]},
        {"Idempotency-Key": "alice-2"},
    )
    body = {"user_id": "alice", "lines": [_said("我的下一句")]}
    first = post(client, f"/saves/{save}/lines", body, {"Idempotency-Key": "alice-2"})
    again = post(client, f"/saves/{save}/lines", body, {"Idempotency-Key": "alice-2"})
    assert first == again and first["save_id"] == save
    contents = client.get(f"/saves/{save}/lines", headers=KEY, params={"user_id": "alice"})
    assert [line["content"] for line in contents.json()["lines"]][-1] == "我的下一句"
    assert rows(app, "select count(*) from line where content = '我的下一句'") == [(1,)]


def test_every_save_has_an_owner_and_ids_fit_a_javascript_number(game):
    client, _, _ = game
    nobody = client.post("/saves", headers=KEY, json={"name": "nobody's"})
    assert nobody.status_code == 422
    assert error_of(nobody) == {
        "type": "ValidationError",
        "message": "user_id: is required",
        "field": "user_id",
    }
    for route, body in (("/roles", {"name": "x"}), ("/saves", {"user_id": "bob"})):
        too_big = client.post(route, headers=KEY, json={**body, "id": 2**53})
        assert too_big.status_code == 422 and error_of(too_big)["field"] == "id", route
    assert client.get(f"/saves/{2**53}", headers=KEY).status_code == 422
    largest = post(client, "/roles", {"name": "最后", "id": 2**53 - 1})
    assert largest["role_id"] == 2**53 - 1
    # the next server id comes from the sequence, not max(id) + 1: a chosen id at the ceiling
    # pushes no later key out of range
    assert post(client, "/roles", {"name": "下一个"})["role_id"] == 2


def _ownerless_save(app: Any) -> tuple[int, int]:
    """A save the game wrote itself, without an owner, and its one line."""

    def write(cur: Any) -> tuple[int, int]:
        cur.execute("insert into save (id, name) values (900, 'the game''s own')")
        (line,) = cur.execute(
            "insert into line (save_id, attribute, content) values (900, 'user', '你好') "
            "returning id"
        ).fetchone()
        cur.execute("update save set last_message_id = $line where id = 900", {"line": line})
        return 900, line

    return app.state.store.write(write)


def test_a_save_without_an_owner_refuses_every_player(game):
    client, app, llm = game
    save, line = _ownerless_save(app)
    before = rows(app, "select count(*) from line")
    answers = [
        client.get(f"/saves/{save}", headers=KEY, params={"user_id": "eve"}),
        client.get(f"/saves/{save}/lines", headers=KEY),
        client.post(
            f"/saves/{save}/lines",
            headers=KEY,
            json={"user_id": "eve", "lines": [_said("x")], "observe": OBSERVE},
        ),
        client.put(f"/saves/{save}/tip", headers=KEY, json={"user_id": "eve", "line_id": line}),
        client.post("/turn", headers=KEY, json=_turn(save, "eve")),
        client.post(
            "/query",
            headers=KEY,
            json={"query": "你好", "user_id": "eve", "agent_id": "qiyu", "save_id": save},
        ),
    ]
    for answer in answers:
        assert answer.status_code == 403, (answer.request.url, answer.text)
        error = error_of(answer)
        assert (error["type"], error["field"]) == ("OwnerlessSaveError", "save_id")
        assert error["message"].startswith(f"save {save} has no owner, so no player may use it")
        assert "--open-ownerless-saves" in error["message"]
    fork = client.post("/saves", headers=KEY, json={"user_id": "eve", "from_line_id": line})
    assert fork.status_code == 403 and error_of(fork)["field"] == "from_line_id"
    assert rows(app, "select count(*) from line") == before


def test_a_game_that_keeps_ownership_itself_opens_ownerless_saves(tmp_path):
    path = demo_store(str(tmp_path / "open.duckdb"))
    settings = ServiceSettings(open_ownerless_saves=True)
    app = create_app(path, embedder=None, settings=settings)
    with serving(app) as client:
        save, line = _ownerless_save(app)
        answer = client.get(f"/saves/{save}", params={"user_id": "eve"})
        assert answer.status_code == 200 and answer.json()["user_id"] is None
        appended = client.post(
            f"/saves/{save}/lines", json={"user_id": "eve", "lines": [_said("好")]}
        )
        assert appended.status_code == 200, appended.text
        # an owned save stays its owner's
        assert client.get("/saves/1", params={"user_id": "eve"}).status_code == 404
