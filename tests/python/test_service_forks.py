"""Extraction follows lines, not saves, over HTTP: a memory keeps the lines it came from, so a
fork and a reload send a line extracted before to the LLM again only when the memories citing
it were cut off the chain and none shown there cites it (a replacement, hidden wherever the
original shows: going back costs no LLM call), and a memory the player deleted stays deleted
on every save that shares its lines. Runs on the embedded DuckDB file and on PostgreSQL."""

from __future__ import annotations

import functools
import itertools
import json
from typing import Any

import httpx
import pytest

from rolemem.service.core.settings import ServiceSettings

from . import conftest
from .conftest import scripted_game, sent_turns

PLAYER = "fay"
OBSERVE = {"agent_id": "qiyu", "role_id": 1, "user_name": "菲"}
play = functools.partial(conftest.play, player=PLAYER, observe=OBSERVE)
settled = functools.partial(conftest.settled, player=PLAYER)
status = functools.partial(conftest.memory_status, player=PLAYER)


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def game(request, tmp_path_factory):
    numbers = itertools.count(1)

    def extracted(request: dict[str, Any]) -> str:
        # one memory of the batch's first message, one of the whole batch (its last line is
        # the batch's last)
        n = next(numbers)
        events = [
            {"description": f"第{n}次提取的事", "keywords": ["事"], "message": 1},
            {"description": f"第{n}批的整段", "keywords": ["整段"]},
        ]
        return json.dumps({"events": events, "entities": []}, ensure_ascii=False)

    with scripted_game(
        request, tmp_path_factory, "rolemem_forks", settings=ServiceSettings(), responder=extracted
    ) as (client, _, llm_server):
        yield client, llm_server


def prompt(client: httpx.Client, save: int, *saves: int) -> dict[str, Any]:
    """/turn's dry run on `save`; the trace's mentions of `saves` made alike."""
    body = {
        "save_id": save,
        "character_id": "qiyu",
        "role_id": 1,
        "user_id": PLAYER,
        "message": "还记得那件事吗",
        "now": "2024-05-02T09:00:00",
        "context": {"亲密度": 50},
        "dry_run": True,
    }
    answer = client.post("/turn", json=body)
    assert answer.status_code == 200, answer.text
    turn = answer.json()
    # the trace names the saves it read (the memories' sources too); all else is the same
    for row in turn["trace"]:
        for named in saves:
            if row.get("why"):
                row["why"] = row["why"].replace(f"save {named}", "save S")
    return turn


def live_events(client: httpx.Client) -> list[str]:
    page = client.get(f"/users/{PLAYER}/memories", params={"kind": "event", "limit": 100})
    return sorted(item["description"] for item in page.json()["items"])


def memory_lines(client: httpx.Client) -> dict[str, list[int]]:
    page = client.get(f"/users/{PLAYER}/memories", params={"kind": "event", "limit": 100})
    return {item["description"]: item["line_ids"] for item in page.json()["items"]}


def test_a_fork_and_a_reload_replay_only_what_a_cut_left_and_deletes_stay(game):
    client, llm = game
    parent = client.post("/saves", json={"user_id": PLAYER}).json()["save_id"]
    lines = play(client, parent, range(1, 5), "gallery")
    # a scene change: the gallery's turns 1-4 sent (turn 5 was played on the beach)
    lines += play(client, parent, range(5, 6), "beach")
    settled(client, llm, parent, 1)
    lines += play(client, parent, range(6, 9), "beach")
    lines += play(client, parent, range(9, 10), "park")  # the beach's turns 5-8 sent
    settled(client, llm, parent, 2)
    assert [sent_turns(request) for request in llm.requests] == [[1, 2, 3, 4], [5, 6, 7, 8]]
    assert live_events(client) == ["第1批的整段", "第1次提取的事", "第2批的整段", "第2次提取的事"]
    # a memory keeps the lines it came from: its message's, else its batch's
    assert memory_lines(client) == {
        "第1次提取的事": [lines[0]],
        "第1批的整段": lines[0:8],
        "第2次提取的事": [lines[8]],
        "第2批的整段": lines[8:16],
    }
    # the player deletes the memory of the first batch
    first = client.get(f"/users/{PLAYER}/memories", params={"kind": "event"}).json()["items"]
    deleted = next(item for item in first if item["description"] == "第1次提取的事")
    gone = client.delete(f"/users/{PLAYER}/memories/event/{deleted['memory_id']}")
    assert gone.status_code == 200, gone.text
    # a fork in the middle of the second batch: the batch's whole-span memory ends after the
    # fork point (cut off the fork); of the lines it cited there, only turn 5's player line
    # is cited by a memory the fork shows, so turn 5's reply and turns 6-7 wait to be
    # replayed; the first batch's lines stay covered (the deleted memory never returns)
    reply_7 = lines[13]  # turn 7's reply
    fork = client.post("/saves", json={"user_id": PLAYER, "from_line_id": reply_7}).json()
    forked = status(client, fork["save_id"])
    assert (forked["watermark_line_id"], forked["pending_turns"]) == (lines[8], 3)
    # the parent reloaded at the fork point prompts exactly as the fork does: the same
    # window, blocks and timeline
    reload = client.put(f"/saves/{parent}/tip", json={"user_id": PLAYER, "line_id": reply_7})
    assert reload.status_code == 200, reload.text
    reloaded = status(client, parent)
    assert (reloaded["watermark_line_id"], reloaded["pending_turns"]) == (lines[8], 3)
    fork_prompt = prompt(client, fork["save_id"], fork["save_id"], parent)
    assert fork_prompt == prompt(client, parent, fork["save_id"], parent)
    prompt_text = json.dumps(fork_prompt["messages"], ensure_ascii=False)
    assert "第1批的整段" in prompt_text and "第2批的整段" not in prompt_text
    # the fork plays on: the cut stretch goes at once as a replacement, then its own turns
    play(client, fork["save_id"], range(10, 11), "park")
    settled(client, llm, fork["save_id"], 3)
    play(client, fork["save_id"], range(11, 12), "park")
    play(client, fork["save_id"], range(12, 13), "cave")  # turns 10-11 sent, nothing shared
    settled(client, llm, fork["save_id"], 4)
    # (turn 5's player line stays covered: the replacement starts at its reply)
    assert [sent_turns(request) for request in llm.requests[2:]] == [[6, 7], [10, 11]]
    assert "钦灵第5句" in json.dumps(llm.requests[2]["messages"], ensure_ascii=False)
    replaced = memory_lines(client)
    # the replacement's lines start at turn 5's reply (its player line stayed covered)
    assert replaced["第3批的整段"] == lines[9:14] and replaced["第3次提取的事"] == [lines[9]]
    # back on the parent's own tip: the originals show, the replacement not, no LLM call
    tip = client.put(f"/saves/{parent}/tip", json={"user_id": PLAYER, "line_id": lines[17]})
    assert tip.status_code == 200, tip.text
    back = status(client, parent)
    assert (back["watermark_line_id"], back["pending_turns"]) == (lines[15], 1)  # turn 9
    back_text = json.dumps(prompt(client, parent)["messages"], ensure_ascii=False)
    assert "第2批的整段" in back_text and "第3批的整段" not in back_text
    # the fork's own memories never reach its parent
    assert "第4批的整段" not in back_text and "第4次提取的事" not in back_text
    assert len(llm.requests) == 4
    # reloaded at turn 7 again, the parent shows the replacement (its lines are there, the
    # cut memory's last line is not): nothing is pending there, and its new turns go alone
    reload = client.put(f"/saves/{parent}/tip", json={"user_id": PLAYER, "line_id": reply_7})
    assert reload.status_code == 200, reload.text
    assert status(client, parent)["pending_turns"] == 0
    # the trace names each event's save and lines
    shown = {
        row["item"]: (row["save_id"], row["line_ids"])
        for row in prompt(client, parent)["trace"]
        if row["layer"] == "timeline"
    }
    assert shown["第3批的整段"] == (fork["save_id"], lines[9:14])
    assert shown["第1批的整段"] == (parent, lines[0:8])
    play(client, parent, range(20, 21), "park")
    play(client, parent, range(21, 22), "lake")  # turn 20 sent
    settled(client, llm, parent, 5)
    assert sent_turns(llm.requests[-1]) == [20]
    # what the character knows there: the memories the parent's branch shows, with their lines
    known = client.get(f"/users/{PLAYER}/knowledge", params={"agent_id": "qiyu", "save_id": parent})
    assert known.status_code == 200, known.text
    events = {item["content"]: item["line_ids"] for item in known.json()["events"]}
    assert events == {
        "第1批的整段": lines[0:8],
        "第2次提取的事": [lines[8]],
        "第3批的整段": lines[9:14],
        "第3次提取的事": [lines[9]],
        "第5批的整段": events["第5批的整段"],
        "第5次提取的事": events["第5次提取的事"],
    }
    assert events["第5次提取的事"] == events["第5批的整段"][:1]
    # what the player deleted stayed deleted: no save extracted its lines again
    assert live_events(client) == [
        "第1批的整段",
        "第2批的整段",
        "第2次提取的事",
        "第3批的整段",
        "第3次提取的事",
        "第4批的整段",
        "第4次提取的事",
        "第5批的整段",
        "第5次提取的事",
    ]
