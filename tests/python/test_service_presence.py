"""What each character witnessed, over HTTP on the embedded DuckDB file and on PostgreSQL: a
line's present_role_ids (omitted: as the line before it) decide which characters witnessed
it; a character absent for lines 6-9 never sees them, not in its history, its extraction
requests or its memories; the characters present do; a narrator (an omniscient role) sees
everything."""

from __future__ import annotations

import functools
import json
from typing import Any

import httpx
import pytest

from rolemem.service.core.settings import ServiceSettings

from . import conftest
from .conftest import error_of, new_save, scripted_game

PLAYER = "lulu"
append = functools.partial(conftest.append, player=PLAYER)
settled = functools.partial(conftest.settled, player=PLAYER, agent_id=None)


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def game(request, tmp_path_factory):
    def extracted(request: dict[str, Any]) -> str:
        # one event per transcript message: each keeps the lines it came from
        transcript = request["messages"][1]["content"]
        count = sum(1 for line in transcript.splitlines() if line.startswith("["))
        events = [
            {"description": f"第{number}句", "keywords": ["聊天"], "message": number}
            for number in range(1, count + 1)
        ]
        return json.dumps({"events": events, "entities": []}, ensure_ascii=False)

    with scripted_game(
        request,
        tmp_path_factory,
        "rolemem_presence",
        settings=ServiceSettings(extraction_threads=1),
        responder=extracted,
    ) as (client, _, llm_server):
        roles = {}
        for agent, name, omniscient in (
            ("qiyu", "祁煜", False),
            ("qinling", "钦灵", False),
            ("narrator", "旁白", True),
        ):
            made = client.post(
                "/roles",
                json={
                    "name": name,
                    "character_id": "qiyu" if agent == "narrator" else agent,
                    "agent_id": agent,
                    "omniscient": omniscient,
                },
            )
            assert made.status_code == 201, made.text
            assert made.json()["omniscient"] is omniscient
            roles[agent] = made.json()["role_id"]
        yield client, llm_server, roles


def story(roles: dict[str, int]) -> list[dict[str, Any]]:
    """钦灵 leaves after line 5 and is back for line 10: lines 6-9 are said without her."""
    qiyu, qinling = roles["qiyu"], roles["qinling"]
    return [
        {"attribute": "user", "content": "大家好"},
        {"attribute": "assistant", "content": "你好", "role_id": qiyu},
        {"attribute": "assistant", "content": "欢迎", "role_id": qinling},
        {"attribute": "user", "content": "钦灵，我先和祁煜说点事"},
        {"attribute": "assistant", "content": "好，我去厨房", "role_id": qinling},
        {"attribute": "user", "content": "祁煜，我其实怕黑", "present_role_ids": [qiyu]},
        {"attribute": "assistant", "content": "我会陪着你", "role_id": qiyu},
        {"attribute": "user", "content": "别告诉钦灵"},
        {"attribute": "assistant", "content": "好", "role_id": qiyu},
        {"attribute": "user", "content": "钦灵回来了", "present_role_ids": [qiyu, qinling]},
        {"attribute": "assistant", "content": "我回来啦", "role_id": qinling},
    ]


def history(client: httpx.Client, save: int, role: int) -> list[dict[str, str]]:
    answer = client.post(
        "/turn",
        json={
            "save_id": save,
            "role_id": role,
            "user_id": PLAYER,
            "message": "我们去散步吧",
            "now": "2024-05-02T09:00:00",
            "dry_run": True,
        },
    )
    assert answer.status_code == 200, answer.text
    return [message for message in answer.json()["messages"] if message["role"] != "system"]


SECRET = ("祁煜，我其实怕黑", "我会陪着你", "别告诉钦灵")


def test_an_absent_character_never_sees_what_was_said_without_it(game):
    client, llm, roles = game
    save = new_save(client, PLAYER, "木木")
    home = [{"role_id": roles[agent], "scene": "home"} for agent in roles]
    ids = append(client, save, story(roles), home)["line_ids"]
    assert history(client, save, roles["qinling"]) == [
        {"role": "user", "content": "{木木：大家好\n祁煜：你好}"},
        {"role": "assistant", "content": "欢迎"},
        {"role": "user", "content": "钦灵，我先和祁煜说点事"},
        {"role": "assistant", "content": "好，我去厨房"},
        {"role": "user", "content": "钦灵回来了"},
        {"role": "assistant", "content": "我回来啦"},
        {"role": "user", "content": "我们去散步吧"},
    ]
    qiyu = json.dumps(history(client, save, roles["qiyu"]), ensure_ascii=False)
    narrator = json.dumps(history(client, save, roles["narrator"]), ensure_ascii=False)
    for said in SECRET:
        assert said in qiyu and said in narrator
    # the branch says who was present for each line: a line that does not is as the one before
    lines = client.get(f"/saves/{save}/lines", params={"user_id": PLAYER}).json()["lines"]
    assert [line["present_role_ids"] for line in lines] == [None] * 5 + [[roles["qiyu"]]] * 4 + [
        [roles["qiyu"], roles["qinling"]]
    ] * 2
    assert [line["line_id"] for line in lines] == ids

    # a scene change sends each character's batch: only what it witnessed
    calls = len(llm.requests)
    observed = [{"role_id": roles[agent], "scene": "park"} for agent in roles]
    append(client, save, [{"attribute": "user", "content": "走吧"}], observed)
    settled(client, llm, save, calls + 3, roles=roles.values())
    transcripts = [request["messages"][1]["content"] for request in llm.requests[calls:]]
    assert len(transcripts) == 3
    sent = sorted(transcripts, key=lambda text: sum(said in text for said in SECRET))
    absent, *present = sent
    assert not any(said in absent for said in SECRET)
    assert "钦灵回来了" in absent
    assert all(all(said in text for said in SECRET) for text in present)

    # its memories cite only lines it witnessed; the others' cite lines 6-9 too
    def cited(agent: str) -> set[int]:
        page = client.get(
            f"/users/{PLAYER}/memories", params={"agent_id": agent, "kind": "event"}
        ).json()
        return {line for item in page["items"] for line in item["line_ids"]}

    unseen = set(ids[5:9])
    assert cited("qinling") and not cited("qinling") & unseen
    assert unseen <= cited("qiyu")
    assert unseen <= cited("narrator")


def test_presence_is_checked(game):
    client, _, roles = game
    save = new_save(client, PLAYER, "木木")
    for bad, field in (
        ({"present_role_ids": ["一"]}, "lines[0].present_role_ids[0]"),
        ({"present_role_ids": 3}, "lines[0].present_role_ids"),
        ({"present_script_role_ids": [""]}, "lines[0].present_script_role_ids[0]"),
        ({"present_role_ids": list(range(1, 66))}, "lines[0].present_role_ids"),
    ):
        answer = client.post(
            f"/saves/{save}/lines",
            json={"user_id": PLAYER, "lines": [{"attribute": "user", "content": "在吗", **bad}]},
        )
        assert (answer.status_code, error_of(answer)["field"]) == (422, field), answer.text
    role = client.post("/roles", json={"name": "甲", "omniscient": "yes"})
    assert (role.status_code, error_of(role)["field"]) == (422, "omniscient")
    assert client.get(f"/saves/{save}/lines", params={"user_id": PLAYER}).json()["lines"] == []
    assert roles
