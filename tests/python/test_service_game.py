"""A game's lifecycle over HTTP only (issue 16): roles, saves, appends, swipes, reloads, forks,
extraction the game can see, the prompt that keeps the conversation, previews, and a player's
memories — with players kept apart and retries stored once. Every test runs twice: the service
over the embedded DuckDB file, and over a PostgreSQL database (`rolemem serve --db
postgresql://…`) holding the same demo rows, with the same answers."""

from __future__ import annotations

import json
from datetime import datetime

import httpx
import pytest

from rolemem.service.core.settings import ServiceSettings
from rolemem.testing.scripted_llm import Status

from .conftest import error_of, post, scripted_game, wait_for_status

KEY = {"X-API-Key": "game"}
DESIGNER = {"X-API-Key": "designer"}


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def game(request, tmp_path_factory):
    # a failed extraction's back-off: a second, so the service's own retry is seen
    settings = ServiceSettings(api_key="game", designer_key="designer", extraction_retry_seconds=1)
    with scripted_game(request, tmp_path_factory, "rolemem_game", settings=settings) as served:
        yield served


def one(app, sql: str) -> tuple:
    """A row of the store, on whichever engine serves it."""
    return app.state.store.engine.run(sql, {})[0]


def count(app, table: str) -> int:
    return one(app, f"select count(*) from {table}")[0]


@pytest.fixture(scope="module")
def played(game):
    """mumu's save with 祁煜 (role 2 in the demo store) and two turns."""
    client, app, _ = game
    role = post(client, "/roles", {"name": "祁煜"})
    assert role == {
        "role_id": 2,
        "name": "祁煜",
        "character_id": None,
        "agent_id": None,
        "omniscient": False,
    }
    save = post(client, "/saves", {"user_id": "mumu", "name": "第一章"})
    assert save == {
        "save_id": 4,
        "user_id": "mumu",
        "name": "第一章",
        "tip_line_id": None,
        "forked_from_line_id": None,
        "user_name": None,
    }
    lines = post(
        client,
        "/saves/4/lines",
        {
            "user_id": "mumu",
            "lines": [
                {"attribute": "user", "content": "你好"},
                {"attribute": "assistant", "content": "你好呀", "role_id": 2},
                {"attribute": "user", "content": "在画什么"},
                {"attribute": "assistant", "content": "海", "role_id": 2},
            ],
        },
    )
    assert lines["extraction"] == "disabled"
    return lines["line_ids"]


def branch(client: httpx.Client, save_id: int, user_id: str = "mumu") -> list[str]:
    answer = client.get(f"/saves/{save_id}/lines", headers=KEY, params={"user_id": user_id})
    assert answer.status_code == 200, answer.text
    return [line["content"] for line in answer.json()["lines"]]


def test_a_save_is_described_and_paged(game, played):
    client, _, _ = game
    detail = client.get("/saves/4", headers=KEY, params={"user_id": "mumu"}).json()
    assert detail == {
        "save_id": 4,
        "user_id": "mumu",
        "name": "第一章",
        "tip_line_id": played[-1],
        "forked_from_line_id": None,
        "user_name": None,
        "line_count": 4,
        "chain_problem": None,
        "speakers": [
            {
                "role_id": 2,
                "script_role_id": None,
                "role_name": "祁煜",
                "display_name": None,
                "line_count": 2,
            }
        ],
    }
    page = client.get("/saves/4/lines", headers=KEY, params={"user_id": "mumu", "limit": 3}).json()
    assert [line["line_id"] for line in page["lines"]] == played[1:]
    assert (page["has_more"], page["next_before"]) == (True, played[1])
    rest = client.get(
        "/saves/4/lines", headers=KEY, params={"user_id": "mumu", "before": played[1]}
    ).json()
    assert [line["content"] for line in rest["lines"]] == ["你好"]


def test_swipe_reload_and_fork(game, played):
    client, app, _ = game
    swiped = post(client, "/saves/4/regenerate", {"user_id": "mumu", "line": {"content": "山"}})
    assert swiped["replaced_line_id"] == played[-1]
    assert swiped["tip_line_id"] == swiped["line_ids"][0]
    assert branch(client, 4) == ["你好", "你好呀", "在画什么", "山"]
    # reload the first reply: the swiped branch is kept and reachable again
    tip = client.put("/saves/4/tip", headers=KEY, json={"user_id": "mumu", "line_id": played[-1]})
    assert tip.json() == {"save_id": 4, "tip_line_id": played[-1]}
    assert branch(client, 4) == ["你好", "你好呀", "在画什么", "海"]
    other = client.put("/saves/4/tip", headers=KEY, json={"user_id": "mumu", "line_id": 3})
    assert other.status_code == 400
    assert error_of(other) == {
        "type": "RolememError",
        "message": "line 3 is not in save 4's tree (it belongs to save 1): fork that save "
        "instead (POST /saves with from_line_id)",
        "field": "line_id",
    }
    # a fork shares the lines up to its start
    lines_before = count(app, "line")
    fork = post(client, "/saves", {"user_id": "mumu", "from_line_id": played[1]})
    assert (fork["tip_line_id"], fork["forked_from_line_id"]) == (played[1], played[1])
    assert count(app, "line") == lines_before
    post(
        client,
        f"/saves/{fork['save_id']}/lines",
        {"user_id": "mumu", "lines": [{"attribute": "user", "content": "去海边吧"}]},
    )
    assert branch(client, fork["save_id"]) == ["你好", "你好呀", "去海边吧"]
    assert branch(client, 4) == ["你好", "你好呀", "在画什么", "海"]


def test_another_players_save_is_a_404_and_nothing_changes(game, played):
    client, app, _ = game
    before = {table: count(app, table) for table in ("line", "save", "memory_event")}
    attempts = [
        client.get("/saves/4", headers=KEY, params={"user_id": "stranger"}),
        client.get("/saves/4", headers=KEY),
        client.get("/saves/4/lines", headers=KEY, params={"user_id": "stranger"}),
        client.post(
            "/saves/4/lines",
            headers=KEY,
            json={"user_id": "stranger", "lines": [{"attribute": "user", "content": "x"}]},
        ),
        client.post(
            "/lines",
            headers=KEY,
            json={"save_id": 4, "lines": [{"attribute": "user", "content": "x"}]},
        ),
        client.post(
            "/saves/4/regenerate",
            headers=KEY,
            json={"user_id": "stranger", "line": {"content": "x"}},
        ),
        client.put("/saves/4/tip", headers=KEY, json={"user_id": "stranger", "line_id": played[0]}),
        client.post(
            "/turn",
            headers=KEY,
            json={
                "save_id": 4,
                "character_id": "qiyu",
                "role_id": 2,
                "user_id": "stranger",
                "message": "你好",
            },
        ),
        client.post(
            "/query",
            headers=KEY,
            json={"query": "海", "user_id": "stranger", "agent_id": "qiyu", "save_id": 4},
        ),
        client.get(
            "/saves/4/memory_status",
            headers=KEY,
            params={"user_id": "stranger", "agent_id": "qiyu", "role_id": 2},
        ),
    ]
    for answer in attempts:
        assert answer.status_code == 404, (answer.request.url, answer.text)
        assert error_of(answer) == {
            "type": "SaveNotFoundError",
            "message": "no save with id 4",
            "field": "save_id",
        }
    fork = client.post(
        "/saves", headers=KEY, json={"user_id": "stranger", "from_line_id": played[0]}
    )
    assert fork.status_code == 404 and error_of(fork)["field"] == "from_line_id"
    assert {table: count(app, table) for table in before} == before


def test_a_retried_append_is_stored_once(game, played):
    client, app, _ = game
    body = {"user_id": "mumu", "lines": [{"attribute": "user", "content": "重试"}]}
    before = count(app, "line")
    # a client that gives up at once, then retries with the same key: one line stored
    with httpx.Client(base_url=client.base_url, timeout=0.001) as impatient:
        try:
            impatient.post("/saves/4/lines", headers={**KEY, "Idempotency-Key": "k-1"}, json=body)
        except httpx.TimeoutException:
            pass
    first = post(client, "/saves/4/lines", body, {"Idempotency-Key": "k-1"})
    again = post(client, "/saves/4/lines", body, {"Idempotency-Key": "k-1"})
    assert first == again
    assert count(app, "line") == before + 1
    other = client.post(
        "/saves/4/lines",
        headers={**KEY, "Idempotency-Key": "k-1"},
        json={**body, "lines": [{"attribute": "user", "content": "别的"}]},
    )
    assert other.status_code == 409
    assert error_of(other)["field"] == "Idempotency-Key"
    swipe = {"user_id": "mumu", "line": {"content": "换个回答"}}
    post(
        client,
        "/saves/4/lines",
        {"user_id": "mumu", "lines": [{"attribute": "assistant", "content": "好", "role_id": 2}]},
    )
    one = post(client, "/saves/4/regenerate", swipe, {"Idempotency-Key": "swipe-1"})
    two = post(client, "/saves/4/regenerate", swipe, {"Idempotency-Key": "swipe-1"})
    assert one == two and count(app, "line") == before + 3


def test_player_memories_are_the_players_own(game):
    client, app, _ = game
    page = client.get("/users/mumu/memories", headers=KEY, params={"kind": "event", "limit": 2})
    assert page.status_code == 200
    body = page.json()
    assert (body["total"], body["limit"], body["offset"]) == (14, 2, 0)
    newest = body["items"][0]
    assert (newest["memory_type"], newest["description"]) == (
        "event",
        "木木问祁煜为什么总穿深色的衣服。",
    )
    assert [item["created_at"] for item in body["items"]] == [
        "2021-02-20T11:00:00",
        "2021-02-18T12:00:00",
    ]
    found = client.get("/users/mumu/memories", headers=KEY, params={"q": "星座"}).json()
    assert [item["memory_type"] for item in found["items"]] == ["entity"]
    # pin, then delete: archived with the reason, never destroyed
    event_id = newest["memory_id"]
    pinned = client.patch(
        f"/users/mumu/memories/event/{event_id}", headers=KEY, json={"is_pinned": True}
    )
    assert pinned.json() == {"memory_type": "event", "memory_id": event_id, "status": "updated"}
    # the designer route refuses a player's memory, the player route an official one
    official = client.get("/official/qiyu", headers=DESIGNER).json()
    official_id = one(app, "select min(id) from official_event")[0]
    before = count(app, "memory_event"), count(app, "memory_archive")
    refused = [
        client.delete(f"/official/events/{event_id}", headers=DESIGNER),
        client.patch(f"/official/events/{event_id}", headers=DESIGNER, json={"strength": 9}),
        client.delete(f"/users/mumu/memories/event/{official_id}", headers=KEY),
        client.patch(
            f"/users/mumu/memories/event/{official_id}", headers=KEY, json={"strength": 9}
        ),
        client.delete(f"/users/stranger/memories/event/{event_id}", headers=KEY),
    ]
    assert [answer.status_code for answer in refused] == [404] * 5
    assert error_of(refused[0])["message"] == f"no event memory {event_id} of official"
    assert (count(app, "memory_event"), count(app, "memory_archive")) == before
    assert client.get("/official/qiyu", headers=DESIGNER).json() == official
    deleted = client.delete(f"/users/mumu/memories/event/{event_id}", headers=KEY)
    assert deleted.json() == {"memory_type": "event", "memory_id": event_id, "status": "archived"}
    archive = client.get("/users/mumu/archive", headers=KEY).json()["items"]
    assert [(row["memory_id"], row["reason"]) for row in archive] == [(event_id, "deleted")]
    assert archive[0]["memory"]["is_pinned"] is True
    timeline = client.get("/users/mumu/timeline", headers=KEY, params={"agent_id": "qiyu"})
    assert event_id not in [row["event_id"] for row in timeline.json()]


def test_forget_archives_and_purge_removes(game):
    client, app, _ = game
    forgotten = client.post("/users/mumu/forget", headers=KEY, json={"agent_id": "qiyu"}).json()
    assert forgotten == {
        "events": 13,
        "entities": 6,
        "facts": 5,  # the demo's facts
        "archived_rows": None,
        "recall_log_rows": None,
        "deleted": None,
    }
    exported = client.get("/users/mumu/export", headers=KEY).json()
    assert exported["memories"] == []
    assert len(exported["archived"]) == 25
    assert {row["reason"] for row in exported["archived"]} == {"deleted", "forgotten"}
    saves = one(app, "select count(*) from save where user_id = 'mumu'")[0]
    purged = client.post("/users/mumu/forget", headers=KEY, json={"purge": True}).json()
    deleted = purged.pop("deleted")
    assert purged == {
        "events": 0,
        "entities": 0,
        "facts": 0,
        "archived_rows": 25,
        "recall_log_rows": 0,
    }
    # a purge without an agent deletes the player's saves too
    assert deleted["save"] == saves > 0 and deleted["memory_archive"] == 25
    assert one(app, "select count(*) from save where user_id = 'mumu'") == (0,)
    assert client.get("/users/mumu/export", headers=KEY).json()["archived"] == []
    assert one(app, "select count(*) from memory_archive where user_id = 'mumu'") == (0,)


EXTRACTED = json.dumps(
    {
        "events": [
            {"description": "阿雅和钦灵打了招呼", "keywords": ["打招呼"], "message": 1},
            {"description": "阿雅问钦灵在画什么，钦灵说在画海", "keywords": ["海"], "message": 4},
            {"description": "阿雅夸钦灵的画好看", "keywords": ["夸奖"]},
            {"description": "阿雅提议去海边", "keywords": ["海边"], "message": 7},
        ],
        "entities": [],
    },
    ensure_ascii=False,
)


def test_extraction_the_game_can_see(game):
    client, app, llm = game
    save = post(client, "/saves", {"user_id": "aya"})["save_id"]
    observe = {"agent_id": "qiyu", "role_id": 1, "scene": "gallery", "user_name": "阿雅"}
    turns = [("你好", "你好呀"), ("在画什么", "海"), ("好看", "谢谢")]
    for index, (said, reply) in enumerate(turns):
        answer = post(
            client,
            f"/saves/{save}/lines",
            {
                "user_id": "aya",
                "lines": [
                    {"attribute": "user", "content": said},
                    {"attribute": "assistant", "content": reply, "role_id": 1},
                ],
                "now": f"2024-05-01T20:0{2 * index}:00",
                "observe": observe,
            },
        )
        assert answer["extraction"] == "not_due"
    # a scene change makes the gallery's turns due; the LLM fails (one attempt, one call)
    llm.push(Status(500))
    answer = post(
        client,
        f"/saves/{save}/lines",
        {
            "user_id": "aya",
            "lines": [{"attribute": "user", "content": "我们去海边吧"}],
            "now": "2024-05-01T20:06:00",
            "observe": {**observe, "scene": "beach"},
        },
    )
    assert answer["extraction"] == "scheduled"
    status = wait_for_status(client, save, lambda s: s["failed_attempts"] == 1)
    assert status["failed_attempts"] == 1
    assert status["last_error"].startswith("ExtractionError: extraction failed: ")
    assert "HTTP 500" in status["last_error"]
    assert status["next_attempt_at"] is not None  # a second after the failure
    # the service's own clock, with its UTC offset (the lines' times are the game's, naive)
    failed_at = datetime.fromisoformat(status["last_error_at"])
    assert failed_at.tzinfo is not None
    assert datetime.fromisoformat(status["next_attempt_at"]) > failed_at
    assert (status["pending_turns"], status["last_batch_key"]) == (4, None)
    # an append in the back-off waits for it; then the service tries again, and the LLM answers
    llm.push(EXTRACTED)
    answer = post(
        client,
        f"/saves/{save}/lines",
        {
            "user_id": "aya",
            "lines": [{"attribute": "assistant", "content": "好呀", "role_id": 1}],
            "now": "2024-05-01T20:07:00",
            "observe": {**observe, "scene": "beach"},
        },
    )
    assert answer["extraction"] == "scheduled"
    status = wait_for_status(
        client, save, lambda s: s["last_batch_key"] is not None and s["extraction"] == "idle"
    )
    assert status["failed_attempts"] == 0
    assert status["extraction"] == "idle"
    # the events carry the times of their own lines (the message the LLM names, else their
    # share of the batch), in order: never one stamp for all
    timeline = client.get(
        "/users/aya/timeline", headers=KEY, params={"agent_id": "qiyu", "save_id": save}
    ).json()
    # (the batch is the gallery's 6 messages: an event naming a 7th is placed at its end)
    assert [(row["description"], row["created_at"]) for row in timeline] == [
        ("阿雅和钦灵打了招呼", "2024-05-01T20:00:00"),
        ("阿雅问钦灵在画什么，钦灵说在画海", "2024-05-01T20:02:00"),
        ("阿雅夸钦灵的画好看", "2024-05-01T20:04:00"),
        ("阿雅提议去海边", "2024-05-01T20:04:01"),
    ]
    # the prompt says names, never ids
    prompt = llm.requests[-1]["messages"][0]["content"]
    assert "「钦灵」" in prompt and "「阿雅」" in prompt and "aya" not in prompt
    # right after the extraction the window still holds the conversation
    turn = post(
        client,
        "/turn",
        {
            "save_id": save,
            "character_id": "qiyu",
            "role_id": 1,
            "user_id": "aya",
            "message": "出发",
        },
    )
    said = [m["content"] for m in turn["messages"] if m["role"] != "system"]
    assert said == [
        "你好",
        "你好呀",
        "在画什么",
        "海",
        "好看",
        "谢谢",
        "我们去海边吧",
        "好呀",
        "出发",
    ]
    history = next(row for row in turn["trace"] if row["layer"] == "history")
    status = wait_for_status(client, save, lambda s: True)
    assert history["why"] == (
        f"save {save}, current branch: the newest 4 turns (1 after the extraction watermark, "
        f"line {status['watermark_line_id']})"
    )


def test_no_placeholder_reaches_the_llm_and_previews_change_nothing(game):
    client, app, _ = game
    save = post(client, "/saves", {"user_id": "bo"})["save_id"]
    post(
        client,
        f"/saves/{save}/lines",
        {
            "user_id": "bo",
            "lines": [
                {"attribute": "system", "content": "你是{{char}}，正在和{{user}}聊天。"},
                {"attribute": "user", "content": "你好"},
                {"attribute": "assistant", "content": "你好呀", "role_id": 1},
            ],
        },
    )
    body = {
        "save_id": save,
        "character_id": "qiyu",
        "role_id": 1,
        "user_id": "bo",
        "message": "今天画画时你好温柔",
        "context": {"intimacy": 3, "exploration": 3, "scene": "studio"},
        "dry_run": True,
    }
    before = (
        count(app, "memory_event"),
        one(app, "select sum(strength), sum(recall_count) from memory_event"),
    )
    turn = post(client, "/turn", body)
    system = turn["messages"][0]["content"]
    assert system.startswith("你是钦灵，正在和用户聊天。")
    assert "{{" not in json.dumps(turn["messages"], ensure_ascii=False)
    after = (
        count(app, "memory_event"),
        one(app, "select sum(strength), sum(recall_count) from memory_event"),
    )
    assert after == before
    # the preview left the sticky queue alone: the same turn again is the same prompt
    assert post(client, "/turn", body)["messages"] == turn["messages"]
    named = post(client, "/turn", {**body, "user_name": "波波", "char_name": "小钦"})
    assert named["messages"][0]["content"].startswith("你是小钦，正在和波波聊天。")
