"""Scenes with several characters, over HTTP on the embedded DuckDB file and on PostgreSQL: the
player is named in every other character's history and extraction transcript (the line's
display name, else the request's user_name, else the save's; 用户 only where none is known);
an append observes a list of characters, each one's batch extracted when due, whoever spoke;
/turn with regenerate answers the prompt for a new reply in place of the tip, storing nothing."""

from __future__ import annotations

import functools
import json
from typing import Any

import httpx
import pytest

from rolemem.service.core.settings import ServiceSettings

from . import conftest
from .conftest import error_of, new_save, scripted_game

PLAYER = "nana"
append = functools.partial(conftest.append, player=PLAYER)
settled = functools.partial(conftest.settled, player=PLAYER, agent_id=None)


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def game(request, tmp_path_factory):
    def extracted(request: dict[str, Any]) -> str:
        event = {"description": "一起聊了海", "keywords": ["海"]}
        return json.dumps({"events": [event], "entities": []}, ensure_ascii=False)

    with scripted_game(
        request,
        tmp_path_factory,
        "rolemem_several",
        settings=ServiceSettings(extraction_threads=1),
        responder=extracted,
    ) as (client, _, llm_server):
        roles = {
            agent: client.post(
                "/roles", json={"name": name, "character_id": agent, "agent_id": agent}
            ).json()["role_id"]
            for agent, name in (("qiyu", "祁煜"), ("qinling", "钦灵"))
        }
        yield client, llm_server, roles


def scene(roles: dict[str, int]) -> list[dict[str, Any]]:
    """The player asks 祁煜, then 钦灵; neither player line shows a display name."""
    return [
        {"attribute": "user", "content": "祁煜，你还记得海吗？"},
        {"attribute": "assistant", "content": "记得。", "role_id": roles["qiyu"]},
        {"attribute": "user", "content": "钦灵，你呢？"},
        {"attribute": "assistant", "content": "我也记得。", "role_id": roles["qinling"]},
    ]


def turn(client: httpx.Client, save: int, role: int, **fields: Any) -> dict[str, Any]:
    body = {
        "save_id": save,
        "role_id": role,
        "user_id": PLAYER,
        "message": "那我们再去一次吧",
        "now": "2024-05-02T09:00:00",
        "dry_run": True,
        **fields,
    }
    if body["message"] is None:
        del body["message"]
    answer = client.post("/turn", json=body)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def history(prompt: dict[str, Any]) -> list[dict[str, str]]:
    """The conversation of a /turn prompt: its messages after the system ones."""
    return [message for message in prompt["messages"] if message["role"] != "system"]


def memories(client: httpx.Client, agent: str) -> list[dict[str, Any]]:
    page = client.get(f"/users/{PLAYER}/memories", params={"agent_id": agent, "kind": "event"})
    assert page.status_code == 200, page.text
    return list(page.json()["items"])


def test_the_player_is_named_in_other_characters_histories_and_transcripts(game):
    client, llm, roles = game
    save = new_save(client, PLAYER, "木木")
    append(client, save, scene(roles), {"role_id": roles["qinling"], "scene": "gallery"})
    asked_qinling = {
        "role": "user",
        "content": "{木木：祁煜，你还记得海吗？\n祁煜：记得。}\n钦灵，你呢？",
    }
    # the save's name, where the line shows none
    assert history(turn(client, save, roles["qinling"])) == [
        asked_qinling,
        {"role": "assistant", "content": "我也记得。"},
        {"role": "user", "content": "那我们再去一次吧"},
    ]
    assert history(turn(client, save, roles["qiyu"])) == [
        {"role": "user", "content": "祁煜，你还记得海吗？"},
        {"role": "assistant", "content": "记得。"},
        {"role": "user", "content": "{木木：钦灵，你呢？\n钦灵：我也记得。}\n那我们再去一次吧"},
    ]
    # the request's name wins over the save's; the line's own name over both
    assert history(turn(client, save, roles["qinling"], user_name="阿远"))[0] == {
        "role": "user",
        "content": "{阿远：祁煜，你还记得海吗？\n祁煜：记得。}\n钦灵，你呢？",
    }
    named = new_save(client, PLAYER, "木木")
    lines = scene(roles)
    lines[0]["display_name"] = "小木"
    append(client, named, lines)
    assert history(turn(client, named, roles["qinling"], user_name="阿远"))[0]["content"] == (
        "{小木：祁煜，你还记得海吗？\n祁煜：记得。}\n钦灵，你呢？"
    )
    # a scene change sends 钦灵's batch: its transcript names the player as its history does
    calls = len(llm.requests)
    append(
        client,
        save,
        [{"attribute": "user", "content": "走吧"}],
        {"role_id": roles["qinling"], "scene": "beach"},
    )
    settled(client, llm, save, calls + 1, roles=[roles["qinling"]])
    transcript = llm.requests[calls]["messages"][1]["content"]
    assert transcript.startswith(
        "[1] user: {木木：祁煜，你还记得海吗？\n祁煜：记得。}\n钦灵，你呢？\n"
    )


def test_a_player_nobody_named_is_the_user(game):
    client, _, roles = game
    save = new_save(client, PLAYER, None)
    append(client, save, scene(roles))
    assert history(turn(client, save, roles["qinling"]))[0]["content"] == (
        "{用户：祁煜，你还记得海吗？\n祁煜：记得。}\n钦灵，你呢？"
    )


def observed_list(roles: dict[str, int], scene: str | None) -> list[dict[str, Any]]:
    return [{"role_id": roles[agent], "scene": scene} for agent in ("qiyu", "qinling")]


def test_a_list_of_observe_targets_extracts_each_characters_batch_when_due(game):
    client, llm, roles = game
    save = new_save(client, PLAYER, "木木")
    first = append(client, save, scene(roles), observed_list(roles, "gallery"))
    assert first["extraction"] == "not_due"
    assert first["observed"] == [
        {
            "role_id": roles["qiyu"],
            "script_role_id": None,
            "agent_id": "qiyu",
            "extraction": "not_due",
        },
        {
            "role_id": roles["qinling"],
            "script_role_id": None,
            "agent_id": "qinling",
            "extraction": "not_due",
        },
    ]
    calls = len(llm.requests)
    # only 祁煜 speaks on the beach: 钦灵's gallery turns are due all the same
    moved = append(
        client,
        save,
        [
            {"attribute": "user", "content": "去海边吧"},
            {"attribute": "assistant", "content": "好。", "role_id": roles["qiyu"]},
        ],
        observed_list(roles, None)[:1] + [{"role_id": roles["qinling"], "scene": "beach"}],
    )
    assert moved["extraction"] == "scheduled"
    assert [item["extraction"] for item in moved["observed"]] == ["scheduled", "scheduled"]
    settled(client, llm, save, calls + 2, roles=[roles["qiyu"]])
    settled(client, llm, save, calls + 2, roles=[roles["qinling"]])
    transcripts = sorted(request["messages"][1]["content"] for request in llm.requests[calls:])
    # each character's own batch, from its point of view (its own line is the assistant's)
    assert transcripts == [
        "[1] user: {木木：祁煜，你还记得海吗？\n祁煜：记得。}\n钦灵，你呢？\n"
        "[2] assistant: 我也记得。",
        "[1] user: 祁煜，你还记得海吗？\n[2] assistant: 记得。\n"
        "[3] user: {木木：钦灵，你呢？\n钦灵：我也记得。}",
    ]
    for agent in ("qiyu", "qinling"):
        assert [item["description"] for item in memories(client, agent)] == ["一起聊了海"]
    # the next append observes both again: nothing more is due
    again = append(
        client, save, [{"attribute": "user", "content": "到了"}], observed_list(roles, "beach")
    )
    assert again["extraction"] == "not_due"
    assert len(llm.requests) == calls + 2


def test_a_list_of_observe_targets_names_the_bad_one(game):
    client, _, roles = game
    save = new_save(client, PLAYER, "木木")
    line = [{"attribute": "user", "content": "在吗"}]

    def refused(observe: Any) -> tuple[int, dict[str, Any]]:
        answer = client.post(
            f"/saves/{save}/lines", json={"user_id": PLAYER, "lines": line, "observe": observe}
        )
        return answer.status_code, error_of(answer)

    scenes = [{"role_id": roles["qiyu"], "scene": "a"}, {"role_id": roles["qinling"], "scene": "b"}]
    status, error = refused(scenes)
    assert (status, error["field"]) == (422, "observe")
    other = [{"role_id": roles["qiyu"]}, {"role_id": roles["qinling"], "user_id": "someone"}]
    status, error = refused(other)
    assert (status, error["type"], error["field"]) == (409, "ConflictError", "observe[1].user_id")
    wrong = [{"role_id": roles["qiyu"]}, {"role_id": roles["qinling"], "agent_id": "qiyu"}]
    status, error = refused(wrong)
    assert (status, error["type"], error["field"]) == (409, "ConflictError", "observe[1].agent_id")
    status, error = refused([])
    assert (status, error["field"]) == (422, "observe")
    status, error = refused([{"role_id": roles["qiyu"]}, {"role_id": "二"}])
    assert (status, error["field"]) == (422, "observe[1].role_id")
    status, error = refused({"role_id": "二"})
    assert (status, error["field"]) == (422, "observe.role_id")
    # nothing was appended by any of them
    lines = client.get(f"/saves/{save}/lines", params={"user_id": PLAYER}).json()["lines"]
    assert lines == []
    # a character named twice is observed once, as its first entry says
    twice = [{"role_id": roles["qiyu"]}, {"role_id": roles["qinling"]}, {"role_id": roles["qiyu"]}]
    answer = append(client, save, line, twice)
    assert [item["agent_id"] for item in answer["observed"]] == ["qiyu", "qinling"]


def test_regenerate_answers_the_prompt_for_a_new_reply_and_stores_nothing(game):
    client, _, roles = game
    save = new_save(client, PLAYER, "木木")
    role = roles["qinling"]
    played = append(
        client,
        save,
        [
            {"attribute": "user", "content": "第一句"},
            {"attribute": "assistant", "content": "回答一", "role_id": role},
            {"attribute": "user", "content": "还记得海吗"},
            {"attribute": "assistant", "content": "回答二", "role_id": role},
        ],
    )
    branch = client.get(f"/saves/{save}/lines", params={"user_id": PLAYER}).json()
    # what a regenerate leaves as it is: the player's memories of the character, a preview
    kept = memories(client, "qinling")
    looked = turn(client, save, role)
    swipe = turn(client, save, role, message=None, regenerate=True, dry_run=False)
    assert set(swipe) == {"messages", "prompt_tokens", "trace"}
    # the prompt a /turn gave before the reply: a fork at the reply before it, asked the
    # same player line
    fork = client.post(
        "/saves", json={"user_id": PLAYER, "from_line_id": played["line_ids"][1]}
    ).json()["save_id"]
    before = turn(client, fork, role, message="还记得海吗")
    assert swipe["messages"] == before["messages"]
    assert history(swipe)[-2:] == [
        {"role": "assistant", "content": "回答一"},
        {"role": "user", "content": "还记得海吗"},
    ]
    said = [m for m in swipe["messages"] if "还记得海吗" in m["content"]]
    assert said == [{"role": "user", "content": "还记得海吗"}]  # once, last
    assert "回答二" not in json.dumps(swipe["messages"], ensure_ascii=False)
    # nothing stored: the branch and its tip are as they were, nothing counted or moved
    assert client.get(f"/saves/{save}/lines", params={"user_id": PLAYER}).json() == branch
    assert turn(client, save, role) == looked
    assert memories(client, "qinling") == kept
    assert (
        turn(client, save, role, message=None, regenerate=True)["messages"] == (swipe["messages"])
    )


def test_a_bad_regenerate_is_refused_naming_the_field(game):
    client, _, roles = game
    save = new_save(client, PLAYER, "木木")
    role = roles["qinling"]

    def refused(**fields: Any) -> tuple[int, str, str | None]:
        body = {"save_id": save, "role_id": role, "user_id": PLAYER, **fields}
        answer = client.post("/turn", json=body)
        error = error_of(answer)
        return answer.status_code, error["type"], error.get("field")

    assert refused(regenerate=True, message="又一句") == (422, "ValidationError", "message")
    assert refused() == (422, "ValidationError", "message")
    assert refused(regenerate=True) == (409, "ConflictError", "regenerate")  # an empty save
    append(client, save, [{"attribute": "user", "content": "在吗"}])
    assert refused(regenerate=True) == (409, "ConflictError", "regenerate")  # a player line
    append(client, save, [{"attribute": "assistant", "content": "在", "role_id": role}])
    lines = client.get(f"/saves/{save}/lines", params={"user_id": PLAYER}).json()["lines"]
    assert [line["content"] for line in lines] == ["在吗", "在"]
