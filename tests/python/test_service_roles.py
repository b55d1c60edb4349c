"""One character, one id (issue 30, item 7): a role carries its designer config and its memory
owner, so `/turn`, appends' `observe` and `memory_status` need only the role (and the player);
an id a request gives anyway must be the role's (409 naming the field); a role id of no role
is a 404. Also: a line's speaker known by its role is named from the role table, and a reload
onto a player line is refused.
Every test runs on the embedded DuckDB file and on PostgreSQL."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from rolemem.service.core.settings import ServiceSettings

from .conftest import error_of, post, scripted_game

KEY = {"X-API-Key": "game"}
NOW = "2024-05-01T20:00:00"
PAINTED = "安娜和祁煜在画廊里一起画了海"
EXTRACTED = json.dumps(
    {"events": [{"description": PAINTED, "keywords": ["画廊"], "message": 1}]},
    ensure_ascii=False,
)


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def game(request, tmp_path_factory):
    settings = ServiceSettings(api_key="game")
    with scripted_game(request, tmp_path_factory, "rolemem_roles", settings=settings) as served:
        yield served


def rows(app, sql: str) -> list[tuple]:
    return [tuple(row) for row in app.state.store.engine.run(sql, {})]


@pytest.fixture(scope="module")
def roles(game):
    """Roles with both ids, with the character only, with the agent only, with neither."""
    client, _, _ = game
    return {
        "both": post(
            client, "/roles", {"name": "祁煜", "character_id": "qiyu", "agent_id": "painter"}
        ),
        "character": post(client, "/roles", {"name": "祁煜", "character_id": "qiyu"}),
        "agent": post(client, "/roles", {"name": "莉莉", "agent_id": "lily"}),
        "neither": post(client, "/roles", {"name": "路人"}),
    }


def test_a_role_carries_its_character_and_its_memory_owner(roles):
    # none is a narrator unless it says so (POST /roles omniscient)
    assert {name: role.pop("omniscient") for name, role in roles.items()} == dict.fromkeys(
        roles, False
    )
    assert roles == {
        "both": {"role_id": 2, "name": "祁煜", "character_id": "qiyu", "agent_id": "painter"},
        # the memory owner defaults to the character's id
        "character": {"role_id": 3, "name": "祁煜", "character_id": "qiyu", "agent_id": "qiyu"},
        "agent": {"role_id": 4, "name": "莉莉", "character_id": None, "agent_id": "lily"},
        "neither": {"role_id": 5, "name": "路人", "character_id": None, "agent_id": None},
    }


def test_the_demo_role_plays_the_demo_character(game):
    _, app, _ = game
    assert rows(app, "select id, name, character_id, agent_id from role where id = 1") == [
        (1, "钦灵", "qiyu", None)
    ]


def _turn(client: httpx.Client, **fields) -> httpx.Response:
    body = {"save_id": 2, "user_id": "mumu", "message": "今天画画时你好温柔", "now": NOW}
    return client.post("/turn", headers=KEY, json={**body, "dry_run": True, **fields})


def test_a_turn_needs_only_the_role_and_the_player(game):
    client, _, _ = game
    by_role = _turn(client, role_id=1)
    assert by_role.status_code == 200, by_role.text
    spelled_out = _turn(client, role_id=1, character_id="qiyu", agent_id="qiyu")
    assert spelled_out.status_code == 200, spelled_out.text
    assert by_role.json() == spelled_out.json()
    messages = by_role.json()["messages"]
    # the role's config: qiyu's attribute and dialogue example fill the save's prompt
    assert messages[0]["role"] == "system"
    assert "性格特征：温柔" in messages[0]["content"]
    assert "谢谢你的夸奖，不过比起画作，我更想听听你的想法" in messages[0]["content"]
    assert messages[-1] == {"role": "user", "content": "今天画画时你好温柔"}


def test_an_id_that_is_not_the_roles_is_a_409_naming_both(game, roles):
    client, _, _ = game
    answer = _turn(client, role_id=1, character_id="qinling")
    assert answer.status_code == 409
    assert error_of(answer) == {
        "type": "ConflictError",
        "message": "character_id 'qinling' is not role 1's character_id ('qiyu'): omit "
        "character_id (the role_id says it) or give the role's",
        "field": "character_id",
    }
    answer = _turn(client, role_id=roles["both"]["role_id"], agent_id="qiyu")
    assert answer.status_code == 409
    assert error_of(answer) == {
        "type": "ConflictError",
        "message": "agent_id 'qiyu' is not role 2's agent_id ('painter'): omit agent_id "
        "(the role_id says it) or give the role's",
        "field": "agent_id",
    }


def test_a_role_without_a_character_keeps_the_character_id_required(game, roles):
    client, _, _ = game
    neither = roles["neither"]["role_id"]
    answer = _turn(client, role_id=neither)
    assert answer.status_code == 409  # the stored role lacks it
    assert error_of(answer) == {
        "type": "ConflictError",
        "message": f"role {neither} has no character_id: give character_id",
        "field": "character_id",
    }
    answer = _turn(client, script_role_id="7")
    assert answer.status_code == 422  # the schema requires it with a script_role_id
    assert error_of(answer)["message"] == (
        "character_id: is required: give it: a script NPC has no role"
    )
    # given, as before roles carried it: the same prompt as the role that carries it
    given = _turn(client, role_id=neither, character_id="qiyu")
    carried = _turn(client, role_id=roles["character"]["role_id"])
    assert given.status_code == carried.status_code == 200
    assert given.json()["messages"][0] == carried.json()["messages"][0]


def test_a_role_id_of_no_role_is_a_404_naming_its_field_on_every_route(game):
    """The turn, the memory status, an append's lines (a speaker or one present) and observe,
    a regenerate: one answer, whatever else the request gives, and nothing written."""
    client, app, _ = game
    lines_before = rows(app, "select count(*) from line")
    mumu = {"user_id": "mumu"}
    said = {"attribute": "user", "content": "你好"}
    reply = {"attribute": "assistant", "content": "你好呀", "role_id": 99999}
    answers = {
        "role_id": [
            _turn(client, role_id=99999),
            _turn(client, role_id=99999, character_id="qiyu"),
            client.get("/saves/2/memory_status", headers=KEY, params={**mumu, "role_id": 99999}),
        ],
        "lines[1].role_id": [
            client.post("/saves/2/lines", headers=KEY, json={**mumu, "lines": [said, reply]})
        ],
        "lines[0].present_role_ids[1]": [
            client.post(
                "/saves/2/lines",
                headers=KEY,
                json={**mumu, "lines": [{**said, "present_role_ids": [1, 99999]}]},
            )
        ],
        "observe.role_id": [
            client.post(
                "/saves/2/lines",
                headers=KEY,
                json={**mumu, "lines": [said], "observe": {"role_id": 99999}},
            )
        ],
        "line.role_id": [
            client.post(
                "/saves/2/regenerate",
                headers=KEY,
                json={**mumu, "line": {"content": "你好呀", "role_id": 99999}},
            )
        ],
    }
    message = "no role with id 99999 (create it with POST /roles first)"
    for field, sent in answers.items():
        for answer in sent:
            assert answer.status_code == 404, answer.text
            assert error_of(answer) == {"type": "NotFoundError", "message": message, "field": field}
    assert rows(app, "select count(*) from line") == lines_before


def test_memory_status_needs_only_the_role(game):
    client, _, _ = game
    status = client.get(
        "/saves/2/memory_status", headers=KEY, params={"role_id": 1, "user_id": "mumu"}
    )
    assert status.status_code == 200, status.text
    spelled = client.get(
        "/saves/2/memory_status",
        headers=KEY,
        params={"role_id": 1, "user_id": "mumu", "agent_id": "qiyu"},
    )
    assert status.json() == spelled.json()
    assert status.json()["agent_id"] == "qiyu"
    answer = client.get(
        "/saves/2/memory_status", headers=KEY, params={"role_id": 1, "agent_id": "lily"}
    )
    assert answer.status_code == 409
    assert error_of(answer)["field"] == "agent_id"
    # a character not fully named: the one the loop observed last among those named
    answer = client.get(
        "/saves/2/memory_status", headers=KEY, params={"script_role_id": "7", "user_id": "mumu"}
    )
    assert answer.status_code == 404
    assert error_of(answer) == {
        "type": "NotFoundError",
        "message": "the memory loop has not observed save 2: give agent_id with role_id or "
        "script_role_id",
        "field": "agent_id",
    }
    unnamed = client.get("/saves/2/memory_status", headers=KEY, params={"user_id": "mumu"})
    assert (unnamed.status_code, error_of(unnamed)) == (404, error_of(answer))


def _lines(said: str, reply: str, role_id: int) -> list[dict]:
    return [
        {"attribute": "user", "content": said},
        {"attribute": "assistant", "content": reply, "role_id": role_id},
    ]


def test_observe_without_an_agent_extracts_into_the_roles_agent(game, roles):
    client, app, llm = game
    role = roles["both"]["role_id"]
    save = post(client, "/saves", {"user_id": "ana", "user_name": "安娜"})["save_id"]
    for index, (said, reply, scene) in enumerate(
        [("一起画海吧", "好", "gallery"), ("去海边", "走吧", "beach")]
    ):
        if scene == "beach":  # a scene change: the turn before it is due
            llm.push(EXTRACTED)
        answer = post(
            client,
            f"/saves/{save}/lines",
            {
                "user_id": "ana",
                "lines": _lines(said, reply, role),
                "now": f"2024-05-01T20:0{index}:00",
                "observe": {"role_id": role, "scene": scene},
            },
        )
        assert answer["extraction"] == ("scheduled" if scene == "beach" else "not_due")
    deadline = time.monotonic() + 30
    while not rows(app, "select id from memory_event where user_id = 'ana'"):
        assert time.monotonic() < deadline, "ana's extraction did not finish"
        time.sleep(0.05)
    assert rows(app, "select agent_id, description from memory_event where user_id = 'ana'") == [
        ("painter", PAINTED)
    ]


def test_an_observe_agent_that_is_not_the_roles_writes_nothing(game, roles):
    client, app, _ = game
    save = post(client, "/saves", {"user_id": "ana"})["save_id"]
    before = rows(app, f"select count(*) from line where save_id = {save}")
    for observe, status, error in (
        (
            {"role_id": roles["both"]["role_id"], "agent_id": "qiyu"},
            409,
            {
                "type": "ConflictError",
                "message": "observe.agent_id 'qiyu' is not role 2's agent_id ('painter'): omit "
                "observe.agent_id (the role_id says it) or give the role's",
                "field": "observe.agent_id",
            },
        ),
        (
            {"role_id": roles["neither"]["role_id"]},
            409,
            {
                "type": "ConflictError",
                "message": f"role {roles['neither']['role_id']} has no agent_id: give "
                "observe.agent_id",
                "field": "observe.agent_id",
            },
        ),
    ):
        answer = client.post(
            f"/saves/{save}/lines",
            headers=KEY,
            json={"user_id": "ana", "lines": _lines("你好", "嗯", 1), "observe": observe},
        )
        assert answer.status_code == status
        assert error_of(answer) == error
    assert rows(app, f"select count(*) from line where save_id = {save}") == before


def test_a_speaker_known_by_its_role_is_named_from_the_role_table(game, roles):
    client, _, _ = game
    painter, lily = roles["both"]["role_id"], roles["agent"]["role_id"]
    save = post(client, "/saves", {"user_id": "ana", "user_name": "安娜"})["save_id"]
    post(
        client,
        f"/saves/{save}/lines",
        {
            "user_id": "ana",
            "lines": [
                {"attribute": "system", "content": "你是莉莉", "role_id": lily},
                {"attribute": "user", "content": "你们认识吗？"},
                {"attribute": "assistant", "content": "很久了", "role_id": lily},
                {"attribute": "assistant", "content": "认识", "role_id": painter},
                {"attribute": "assistant", "content": "夜深了"},
            ],
        },
    )
    answer = client.post(
        "/turn",
        headers=KEY,
        json={
            "save_id": save,
            "user_id": "ana",
            "role_id": lily,
            "character_id": "qiyu",
            "message": "真的吗？",
            "now": NOW,
            "dry_run": True,
        },
    )
    assert answer.status_code == 200, answer.text
    conversation = [m for m in answer.json()["messages"] if m["role"] != "system"]
    # 祁煜's line shows no display name: its role names it; a line with no role is 旁白's
    assert conversation == [
        {"role": "user", "content": "你们认识吗？"},
        {"role": "assistant", "content": "很久了"},
        {"role": "user", "content": "{祁煜：认识\n旁白：夜深了}\n真的吗？"},
    ]


def test_a_reload_onto_a_player_line_is_a_409(game):
    client, app, _ = game
    save = post(client, "/saves", {"user_id": "ana"})["save_id"]
    said, reply = post(
        client, f"/saves/{save}/lines", {"user_id": "ana", "lines": _lines("你好", "嗯", 1)}
    )["line_ids"]
    answer = client.put(f"/saves/{save}/tip", headers=KEY, json={"user_id": "ana", "line_id": said})
    assert answer.status_code == 409
    assert error_of(answer) == {
        "type": "ConflictError",
        "message": f"line {said} is a player (user) line: a save point is a reply or a system "
        "line (the player's next line follows it); reload the line before it",
        "field": "line_id",
    }
    assert rows(app, f"select last_message_id from save where id = {save}") == [(reply,)]
    moved = client.put(f"/saves/{save}/tip", headers=KEY, json={"user_id": "ana", "line_id": reply})
    assert moved.json() == {"save_id": save, "tip_line_id": reply}
