"""Facts that change, over HTTP with a scripted LLM, on the embedded DuckDB file and on
PostgreSQL: a slot's current value is resolved per save chain at query time (model
int_memory_facts_resolved), so a reload, a fork and a return to the tip change what /turn shows
and write nothing."""

from __future__ import annotations

import functools
import json
from typing import Any

import httpx
import pytest

from rolemem.service.core.settings import ServiceSettings

from . import conftest
from .conftest import error_of, scripted_game

PLAYER = "yuan"
OBSERVE = {"agent_id": "qiyu", "role_id": 1, "user_name": "阿远"}
SAID = {
    1: "我住在上海，平时喜欢摄影",
    2: "周末我还会去爬山",
    3: "告诉你，我搬到北京了",
    4: "今天天气不错",
    5: "我们去公园吧",
}
play = functools.partial(conftest.play, player=PLAYER, observe=OBSERVE, said=SAID.__getitem__)
settled = functools.partial(conftest.settled, player=PLAYER)
# the batch of turns 1-3: message n of its transcript is turn (n + 1) // 2's player line
# (odd) or reply (even)
FACTS = [
    {"subject": "阿远", "attribute": "居住地", "value": "上海", "message": 1},
    {"subject": "阿远", "attribute": "兴趣", "value": "摄影", "message": 1},
    {"subject": "阿远", "attribute": "兴趣", "value": "爬山", "message": 3},
    {"subject": "阿远", "attribute": "住址", "value": "北京", "message": 5},
]


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def game(request, tmp_path_factory):
    def extracted(request: dict[str, Any]) -> str:
        # the facts from the first batch only
        first = "上海" in request["messages"][-1]["content"]
        reply = {"events": [], "entities": [], "facts": FACTS if first else []}
        return json.dumps(reply, ensure_ascii=False)

    with scripted_game(
        request, tmp_path_factory, "rolemem_facts", settings=ServiceSettings(), responder=extracted
    ) as (client, app, llm_server):
        yield client, app, llm_server


def turn(client: httpx.Client, save: int, message: str = "你还记得我的住址吗") -> dict[str, Any]:
    body = {
        "save_id": save,
        "character_id": "qiyu",
        "role_id": 1,
        "user_id": PLAYER,
        "message": message,
        "now": "2024-05-02T09:00:00",
        "context": {"亲密度": 50},
        "dry_run": True,
        "user_name": "阿远",
    }
    answer = client.post("/turn", json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()


def prompt_text(answer: dict[str, Any]) -> str:
    """The recalled memory's part of the prompt (the history holds the lines themselves)."""
    return "\n".join(
        message["content"]
        for message in answer["messages"]
        if message["role"] == "system" and "脑海中回想起的片段" in message["content"]
    )


def current(client: httpx.Client, save: int) -> list[tuple[str, str, list[int]]]:
    answer = client.get(f"/users/{PLAYER}/facts", params={"agent_id": "qiyu", "save_id": save})
    assert answer.status_code == 200, answer.text
    return [(item["attribute"], item["value"], item["line_ids"]) for item in answer.json()]


def fact_rows(app: Any) -> list[tuple[Any, ...]]:
    sql = (
        "select id, subject, attribute, value, save_id, line_id, cast(line_ids as varchar), "
        "created_at from memory_fact where user_id = 'yuan' order by id"
    )
    return [tuple(row) for row in app.state.store.engine.run(sql, {})]


def test_a_slot_follows_the_chain_and_no_fact_row_is_updated(game):
    client, app, llm = game
    save = client.post("/saves", json={"user_id": PLAYER}).json()["save_id"]
    ids = play(client, save, range(1, 4), "home")
    ids += play(client, save, range(4, 5), "street")  # a scene change: turns 1-3 sent
    settled(client, llm, save, 1)
    transcript = llm.requests[0]["messages"][-1]["content"]
    assert f"[5] user: {SAID[3]}" in transcript
    facts = fact_rows(app)
    hobbies = [("兴趣", "摄影", [ids[0]]), ("兴趣", "爬山", [ids[2]])]
    # each fact carries the lines of the message stating it: the player's line
    assert [(row[3], row[5]) for row in facts] == [
        ("上海", ids[0]),
        ("摄影", ids[0]),
        ("爬山", ids[2]),
        ("北京", ids[4]),
    ]
    assert {json.loads(row[6])[0] for row in facts} == {ids[0], ids[2], ids[4]}

    assert current(client, save) == [("住址", "北京", [ids[4]]), *hobbies]
    # what the character knows about the player on the save: the current facts, with lines
    known = client.get(f"/users/{PLAYER}/knowledge", params={"agent_id": "qiyu", "save_id": save})
    assert known.status_code == 200, known.text
    assert [
        (item["attribute"], item["content"], item["line_ids"]) for item in known.json()["facts"]
    ] == [("住址", "北京", [ids[4]]), *hobbies]
    answer = turn(client, save)
    at_tip = prompt_text(answer)
    # 上海 was replaced: counted in the trace, never a candidate
    assert [row["item"] for row in answer["trace"] if row["status"] == "superseded"] == [
        "1 superseded facts"
    ]
    assert "阿远的住址：北京" in at_tip and "上海" not in at_tip
    # asked about an earlier time, the value before it on the chain too
    earlier = prompt_text(turn(client, save, "你还记得我以前的住址吗"))
    assert "阿远的住址：以前上海，现在北京" in earlier
    # the tip on turn 2's reply: 北京 (turn 3) is off the chain, 上海 is current again
    moved = client.put(f"/saves/{save}/tip", json={"user_id": PLAYER, "line_id": ids[3]})
    assert moved.status_code == 200, moved.text
    assert current(client, save) == [("住址", "上海", [ids[0]]), *hobbies]
    reloaded = prompt_text(turn(client, save))
    assert "阿远的住址：上海" in reloaded and "北京" not in reloaded
    back = client.put(f"/saves/{save}/tip", json={"user_id": PLAYER, "line_id": ids[-1]})
    assert back.status_code == 200, back.text
    assert "阿远的住址：北京" in prompt_text(turn(client, save))
    # the history: 上海 ended by 北京's line
    history = client.get(
        f"/users/{PLAYER}/facts", params={"agent_id": "qiyu", "save_id": save, "history": True}
    ).json()
    assert [
        (item["value"], item["stated_attribute"], item["is_current"], item["ended_at_line_id"])
        for item in history
        if item["attribute"] == "住址"
    ] == [("上海", "居住地", False, ids[4]), ("北京", "住址", True, None)]
    # a fork from turn 2's reply shares the lines up to it: 上海
    fork = client.post("/saves", json={"user_id": PLAYER, "from_line_id": ids[3]}).json()
    assert current(client, fork["save_id"])[0] == ("住址", "上海", [ids[0]])
    forked = prompt_text(turn(client, fork["save_id"]))
    assert "阿远的住址：上海" in forked and "北京" not in forked
    # a `many` attribute: both values current
    hobbies = prompt_text(turn(client, save, "我的兴趣是什么"))
    assert "阿远的兴趣：摄影" in hobbies and "阿远的兴趣：爬山" in hobbies
    # none of these moves wrote a fact
    assert fact_rows(app) == facts
    # the next batch's prompt lists the attributes and what is current on the chain
    first_prompt = llm.requests[0]["messages"][0]["content"]
    assert "住址（住处、地址、居住地）" in first_prompt and "（暂无）" in first_prompt
    play(client, save, range(5, 6), "park")  # turn 4 (the street) sent
    settled(client, llm, save, 2)
    known = llm.requests[1]["messages"][0]["content"]
    assert "阿远 住址：北京" in known and "阿远 兴趣：爬山" in known and "上海" not in known


def test_another_player_reads_none_of_the_facts(game):
    client, _, _ = game
    save = client.get(f"/users/{PLAYER}/saves").json()["items"][0]["save_id"]
    theirs = client.get("/users/other/facts", params={"agent_id": "qiyu", "save_id": save})
    assert theirs.status_code in (403, 404), theirs.text
    assert error_of(theirs)["field"] == "save_id"
    assert client.get("/users/other/facts", params={"agent_id": "qiyu"}).json() == []
    # nor what the character knows about this player
    theirs = client.get("/users/other/knowledge", params={"agent_id": "qiyu", "save_id": save})
    assert theirs.status_code in (403, 404) and error_of(theirs)["field"] == "save_id"
    assert client.get("/users/other/knowledge", params={"agent_id": "qiyu"}).json() == {
        "facts": [],
        "entities": [],
        "events": [],
    }


def test_a_changed_fact_is_a_new_row_and_a_deleted_one_gives_the_slot_back(game):
    client, app, _ = game
    save = client.get(f"/users/{PLAYER}/saves").json()["items"][0]["save_id"]
    before = fact_rows(app)
    beijing = next(row[0] for row in before if row[3] == "北京")
    # another player reaches none of it
    theirs = client.patch(f"/users/other/memories/fact/{beijing}", json={"value": "杭州"})
    assert theirs.status_code == 404 and error_of(theirs)["field"] == "id"
    assert client.delete(f"/users/other/memories/fact/{beijing}").status_code == 404
    changed = client.patch(f"/users/{PLAYER}/memories/fact/{beijing}", json={"value": "杭州"})
    assert changed.status_code == 200, changed.text
    hangzhou = changed.json()["memory_id"]
    assert changed.json() == {"memory_type": "fact", "memory_id": hangzhou, "status": "updated"}
    assert current(client, save)[0][:2] == ("住址", "杭州")
    # the old rows as they were, the new one beside them
    assert fact_rows(app)[: len(before)] == before
    # the current value deleted: the value before it on the chain is current again
    gone = client.delete(f"/users/{PLAYER}/memories/fact/{hangzhou}")
    assert gone.json() == {"memory_type": "fact", "memory_id": hangzhou, "status": "archived"}
    assert current(client, save)[0][:2] == ("住址", "北京")
    assert client.delete(f"/users/{PLAYER}/memories/fact/{beijing}").status_code == 200
    assert current(client, save)[0][:2] == ("住址", "上海")
    archived = client.get(f"/users/{PLAYER}/archive").json()["items"]
    assert [(item["memory_type"], item["memory"]["value"]) for item in archived[-2:]] == [
        ("fact", "杭州"),
        ("fact", "北京"),
    ]
    assert fact_rows(app) == [row for row in before if row[0] != beijing]
