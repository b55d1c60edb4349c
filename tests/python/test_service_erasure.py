"""Erasure that leaves nothing: `DELETE /saves/{id}` (a fork's parent refused while the fork
lives), `GET /users/{id}/saves`, and a purge that deletes every row of a player in every table
rolemem writes, while another player's rows all stay. Both engines."""

from __future__ import annotations

import concurrent.futures
import json
import time

import httpx
import pytest

from rolemem.memory_builder import erasure, history
from rolemem.schema.game import APP_TABLES, CONFIG_TABLES
from rolemem.schema.memory import MEMORY_TABLES
from rolemem.service.core.settings import ServiceSettings

from .conftest import error_of, memory_status, post, scripted_game

KEY = {"X-API-Key": "game"}
ANA = "player-ana-7f3"
BEN = "player-ben-2c9"
OBSERVE = {"agent_id": "qiyu", "role_id": 1, "scene": "gallery"}
EXTRACTED = json.dumps(
    {
        "events": [
            {"description": "玩家和钦灵打了招呼", "keywords": ["打招呼"], "message": 1},
            {"description": "玩家夸钦灵的画好看", "keywords": ["夸奖"]},
        ],
        "entities": [],
    },
    ensure_ascii=False,
)


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def game(request, tmp_path_factory):
    settings = ServiceSettings(api_key="game")
    with scripted_game(request, tmp_path_factory, "rolemem_erasure", settings=settings) as served:
        yield served


def said(player: str, text: str) -> str:
    return f"{player}: {text}"


def append(client, save: int, player: str, turns, now: str, scene: str = "gallery") -> dict:
    lines = []
    for user, reply in turns:
        lines.append({"attribute": "user", "content": said(player, user)})
        if reply:
            lines.append({"attribute": "assistant", "content": said(player, reply), "role_id": 1})
    body = {"user_id": player, "lines": lines, "now": now, "observe": {**OBSERVE, "scene": scene}}
    return post(client, f"/saves/{save}/lines", body)


def wait_for_batch(client: httpx.Client, save: int, player: str) -> dict:
    deadline = time.monotonic() + 30
    while True:
        status = memory_status(client, save, player)
        if status["last_batch_key"] is not None and status["extraction"] == "idle":
            return status
        assert time.monotonic() < deadline, status
        time.sleep(0.05)


def play(client, llm, player: str) -> dict:
    """A save with an extraction, an idempotent append, a turn; two forks (each with a line of
    its own); one memory deleted (archived). Returns the save ids and every line text."""
    save = post(client, "/saves", {"user_id": player, "name": "第一章"})["save_id"]
    append(client, save, player, [("你好", "你好呀")], "2024-05-01T20:00:00")
    llm.push(EXTRACTED)
    answer = append(client, save, player, [("好看", "谢谢")], "2024-05-01T20:05:00", "beach")
    assert answer["extraction"] == "scheduled"
    wait_for_batch(client, save, player)
    # no character named: the one the loop observed last on the save
    named, unnamed = (
        client.get(f"/saves/{save}/memory_status", headers=KEY, params=params).json()
        for params in ({"user_id": player, "agent_id": "qiyu", "role_id": 1}, {"user_id": player})
    )
    assert unnamed == named and named["watermark_line_id"] is not None
    keyed = {"user_id": player, "lines": [{"attribute": "user", "content": said(player, "重试")}]}
    first = post(client, f"/saves/{save}/lines", keyed, {"Idempotency-Key": "k-1"})
    assert post(client, f"/saves/{save}/lines", keyed, {"Idempotency-Key": "k-1"}) == first
    turn = {"save_id": save, "character_id": "qiyu", "role_id": 1, "user_id": player}
    post(client, "/turn", {**turn, "message": said(player, "出发")})
    lines = client.get(f"/saves/{save}/lines", headers=KEY, params={"user_id": player}).json()
    fork_at = lines["lines"][1]["line_id"]
    forks = []
    for name in ("岔路一", "岔路二"):
        fork = post(client, "/saves", {"user_id": player, "name": name, "from_line_id": fork_at})
        body = {"user_id": player, "lines": [{"attribute": "user", "content": said(player, name)}]}
        post(client, f"/saves/{fork['save_id']}/lines", body)
        forks.append(fork["save_id"])
    events = client.get(f"/users/{player}/memories", headers=KEY, params={"kind": "event"}).json()[
        "items"
    ]
    assert len(events) == 2
    deleted = client.delete(f"/users/{player}/memories/event/{events[0]['memory_id']}", headers=KEY)
    assert deleted.status_code == 200
    texts = [said(player, text) for text in ("你好", "你好呀", "好看", "谢谢", "重试")]
    return {"save": save, "forks": forks, "texts": texts + [said(player, "岔路一")]}


def tables(app) -> list[str]:
    names = [table.name for table in APP_TABLES + CONFIG_TABLES + MEMORY_TABLES]
    names.append("memory_event_embedding")
    if app.state.store.engine.name == "duckdb":
        names += list(history.TABLES)
    return names


def rows_of(app, needles: list[str]) -> dict[str, int]:
    """Per table, the rows holding any of `needles` in any column."""
    found = {}
    for table in tables(app):
        rows = app.state.store.engine.run(f"select * from {table}", {})
        found[table] = sum(
            1 for row in rows if any(needle in str(value) for value in row for needle in needles)
        )
    return found


def test_delete_a_save_list_saves_and_purge_a_player(game):
    client, app, llm = game
    ana = play(client, llm, ANA)
    ben = play(client, llm, BEN)
    save, (fork, other_fork) = ana["save"], ana["forks"]
    listed = client.get(f"/users/{ANA}/saves", headers=KEY).json()
    assert listed["total"] == 3
    assert [item["save_id"] for item in listed["items"]] == [save, fork, other_fork]
    assert listed["items"][0]["name"] == "第一章"
    assert listed["items"][1]["forked_from_line_id"] is not None
    page = client.get(f"/users/{ANA}/saves", headers=KEY, params={"limit": 1, "offset": 1})
    assert [item["save_id"] for item in page.json()["items"]] == [fork]

    # the parent of living forks: 409 naming them, nothing deleted
    before = rows_of(app, [ANA])
    refused = client.delete(f"/saves/{save}", headers=KEY, params={"user_id": ANA})
    assert refused.status_code == 409
    assert error_of(refused)["field"] == "save_id"
    assert str([fork, other_fork]) in error_of(refused)["message"]
    # another player's save: 404, nothing deleted
    stranger = client.delete(f"/saves/{fork}", headers=KEY, params={"user_id": BEN})
    assert stranger.status_code == 404
    assert rows_of(app, [ANA]) == before

    # a fork goes with its own line; its parent's lines stay
    gone = client.delete(f"/saves/{fork}", headers=KEY, params={"user_id": ANA})
    assert gone.status_code == 200, gone.text
    body = gone.json()
    assert body["save_id"] == fork
    assert (body["deleted"]["save"], body["deleted"]["line"]) == (1, 1)
    again = client.delete(f"/saves/{fork}", headers=KEY, params={"user_id": ANA})
    assert again.status_code == 404
    assert [
        item["save_id"] for item in client.get(f"/users/{ANA}/saves", headers=KEY).json()["items"]
    ] == [save, other_fork]
    assert rows_of(app, [said(ANA, "岔路一")])["line"] == 0
    assert rows_of(app, [said(ANA, "你好呀")])["line"] == 1

    # the purge: nothing of ana anywhere, every row of ben still there
    bens = rows_of(app, [BEN, *ben["texts"]])
    assert bens["line"] > 0 and bens["memory_event"] > 0 and bens["rolemem_idempotency"] > 0
    anas = rows_of(app, [ANA, *ana["texts"]])
    written = ["save", "line", "memory_event", "memory_archive", "memory_extracted_line"]
    if app.state.store.engine.name == "duckdb":
        written += ["int_lines_chained_to_root", "memory_messages"]  # the tips hold no text
    assert [table for table in written if not anas[table]] == [], anas
    purged = post(client, f"/users/{ANA}/forget", {"purge": True})
    assert (purged["events"], purged["archived_rows"]) == (1, 1)
    deleted = purged["deleted"]
    assert (deleted["save"], deleted["line"]) == (2, 6)
    assert deleted["memory_event"] == 1 and deleted["memory_extraction_batch"] == 1
    assert deleted["rolemem_idempotency"] >= 1 and deleted["memory_loop_state"] >= 1
    left = rows_of(app, [ANA, *ana["texts"]])
    assert left == dict.fromkeys(left, 0)
    assert rows_of(app, [BEN, *ben["texts"]]) == bens
    if app.state.store.engine.name == "duckdb":  # the tips hold a save id only
        tips = f"select count(*) from int_save_history_tips where save_id in ({save}, {fork})"
        assert app.state.store.engine.run(tips, {}) == [(0,)]
    assert client.get(f"/users/{ANA}/saves", headers=KEY).json()["items"] == []
    turn = {"save_id": save, "character_id": "qiyu", "role_id": 1, "user_id": ANA}
    answer = client.post("/turn", headers=KEY, json={**turn, "message": "还在吗"})
    assert answer.status_code == 404
    # ben's game goes on
    post(client, "/turn", {**turn, "save_id": ben["save"], "user_id": BEN, "message": "还在"})


def test_a_purge_with_an_agent_keeps_the_saves(game):
    client, app, _ = game
    save = post(client, "/saves", {"user_id": "player-cy"})["save_id"]
    body = {"user_id": "player-cy", "lines": [{"attribute": "user", "content": "cy: 你好"}]}
    post(client, f"/saves/{save}/lines", body)
    purged = post(client, "/users/player-cy/forget", {"purge": True, "agent_id": "qiyu"})
    assert "save" not in purged["deleted"] and "line" not in purged["deleted"]
    listed = client.get("/users/player-cy/saves", headers=KEY).json()
    assert [item["save_id"] for item in listed["items"]] == [save]


def test_a_save_part_erased_reads_as_gone_and_the_next_delete_finishes_it(game):
    """DuckDB erases a save's lines a level per transaction: after the first step (a delete cut
    short, or another delete still running) the save reads as gone everywhere, and deleting it
    again finishes it. PostgreSQL's first step erases it whole."""
    client, app, _ = game
    player = "player-dee"
    save = post(client, "/saves", {"user_id": player})["save_id"]
    lines = [{"attribute": "user", "content": f"dee: {n}"} for n in range(3)]
    keyed = {"Idempotency-Key": "k-dee"}
    post(client, f"/saves/{save}/lines", {"user_id": player, "lines": lines}, keyed)
    store = app.state.store
    first = store.write(
        lambda cur: erasure.delete_save(cur, save, player, engine=store.engine.name)
    )
    duckdb = store.engine.name == "duckdb"
    assert (first["deleted"]["line"], first["deleted"]["save"]) == ((1, 0) if duckdb else (3, 1))
    mine = {"user_id": player}
    assert client.get(f"/saves/{save}", headers=KEY, params=mine).status_code == 404
    assert client.get(f"/saves/{save}/lines", headers=KEY, params=mine).status_code == 404
    assert client.get(f"/users/{player}/saves", headers=KEY).json()["items"] == []
    turn = {"save_id": save, "character_id": "qiyu", "role_id": 1, "user_id": player}
    answer = client.post("/turn", headers=KEY, json={**turn, "message": "dee: 还在吗"})
    assert (answer.status_code, error_of(answer)["field"]) == (404, "save_id")
    appended = client.post(f"/saves/{save}/lines", headers=KEY, json={**mine, "lines": lines})
    assert appended.status_code == 404
    finished = client.delete(f"/saves/{save}", headers=KEY, params=mine)
    if duckdb:
        assert finished.status_code == 200, finished.text
        assert (finished.json()["deleted"]["line"], finished.json()["deleted"]["save"]) == (2, 1)
    assert client.delete(f"/saves/{save}", headers=KEY, params=mine).status_code == 404
    assert store.engine.run("select count(*) from line where save_id = $s", {"s": save}) == [(0,)]
    # its idempotency records went with it: the append replayed runs again, and is not found
    replayed = client.post(
        f"/saves/{save}/lines", headers={**KEY, **keyed}, json={**mine, "lines": lines}
    )
    assert (replayed.status_code, error_of(replayed)["field"]) == (404, "save_id")


def test_a_purge_waits_for_the_write_lock_a_saves_erasure_steps_hold(game):
    """On DuckDB a save's erasure runs step by step under the service's write lock (one writer
    per file); a purge's first transaction takes it too, so it waits for a step instead of
    meeting it as a conflict (503 until the erasure ended). The lock is held here as a step
    holds it; PostgreSQL's transactions lock the rows they change instead."""
    client, app, _ = game
    store = app.state.store
    if store.engine.name != "duckdb":
        pytest.skip("the write lock is DuckDB's one writer")
    player = "player-eve"
    post(client, "/saves", {"user_id": player})
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        with store.write_lock:
            purge = pool.submit(
                client.post, f"/users/{player}/forget", headers=KEY, json={"purge": True}
            )
            time.sleep(1.0)
            assert not purge.done()  # waiting for the lock, not answered
        answer = purge.result(timeout=30)
    assert answer.status_code == 200, answer.text
    assert answer.json()["deleted"]["save"] == 1
