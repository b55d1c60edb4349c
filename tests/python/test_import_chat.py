"""`rolemem import-chat` (issue 33 item 5): a SillyTavern chat into a DuckDB file, and
OpenAI-style messages through a running service whose memory loop then catches up (`--wait`),
the lines stored in order with their speakers, names and times."""

from __future__ import annotations

import json

import pytest

from rolemem.cli.main import main
from rolemem.memory_builder.saves import Saves
from rolemem.service.core.settings import ServiceSettings

from .conftest import fresh_database, scripted_game

SILLYTAVERN = [
    {
        "user_name": "阿雅",
        "character_name": "祁煜",
        "create_date": "2024-05-01@20h00m00s",
        "chat_metadata": {"note_prompt": ""},
    },
    {
        "name": "祁煜",
        "is_user": False,
        "is_system": False,
        "send_date": "May 1, 2024 8:00pm",
        "mes": "你来了。",
        "swipes": ["你来了。"],
        "extra": {},
    },
    {
        "name": "阿雅",
        "is_user": True,
        "is_system": False,
        "send_date": "2024-05-01T12:01:30.000Z",
        "mes": "在画什么？",
        "extra": {},
    },
    {"name": "祁煜", "is_user": False, "send_date": 1714564920000, "mes": "海。"},
    {
        "name": "旁白",
        "is_user": False,
        "is_system": True,
        "send_date": "May 1, 2024 8:03pm",
        "mes": "窗外下起了雨。",
    },
    {"name": "阿雅", "is_user": True, "send_date": "May 1, 2024 8:04pm", "mes": ""},
]


def test_a_sillytavern_chat_into_a_duckdb_file(tmp_path, capsys):
    path = str(tmp_path / "chat.duckdb")
    with Saves(path) as saves:
        role = saves.create_role("祁煜")["role_id"]
        save = saves.create_save(user_id="aya")["save_id"]
        saves.append(save, [{"attribute": "system", "content": "第一章"}], user_id="aya")
    chat = tmp_path / "qiyu.jsonl"
    chat.write_text(
        "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in SILLYTAVERN), "utf-8"
    )
    argv = ["import-chat", str(chat), "--save-id", str(save), "--user-id", "aya"]
    assert main([*argv, "--role-id", str(role), "--db", path]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer == {"save_id": save, "line_count": 4, "first_line_id": 2, "tip_line_id": 5}
    with Saves(path) as saves:
        lines = saves.lines(save, user_id="aya")["lines"]
    assert [
        (
            line["parent_line_id"],
            line["attribute"],
            line["role_id"],
            line["display_name"],
            line["content"],
            str(line["created_at"]),
        )
        for line in lines[1:]
    ] == [
        (1, "assistant", role, "祁煜", "你来了。", "2024-05-01 20:00:00"),
        (2, "user", None, "阿雅", "在画什么？", "2024-05-01 12:01:30"),
        (3, "assistant", role, "祁煜", "海。", "2024-05-01 12:02:00"),
        (4, "system", None, "旁白", "窗外下起了雨。", "2024-05-01 20:03:00"),
    ]
    # a file that is no chat: one line, exit 2, nothing written
    (tmp_path / "bad.json").write_text('[{"role": "tool", "content": "{}"}]', "utf-8")
    assert main([*argv[:1], str(tmp_path / "bad.json"), *argv[2:], "--db", path]) == 2
    assert capsys.readouterr().err == (
        "rolemem: error: rows[0].role must be one of ['assistant', 'system', 'user'], got 'tool'\n"
    )


def test_a_send_date_past_the_calendar_is_unreadable_not_an_error(tmp_path, capsys):
    """A row's milliseconds past what a clock holds (1e20) read as no date: the line takes the
    import's time, and a row without text is skipped whatever its date."""
    path = str(tmp_path / "chat.duckdb")
    with Saves(path) as saves:
        save = saves.create_save(user_id="aya")["save_id"]
    rows = [
        {"name": "阿雅", "is_user": True, "send_date": 1e20, "mes": "  "},
        {"name": "阿雅", "is_user": True, "send_date": 1e20, "mes": "在吗？"},
    ]
    chat = tmp_path / "far.jsonl"
    chat.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), "utf-8")
    argv = ["import-chat", str(chat), "--save-id", str(save), "--user-id", "aya", "--db", path]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["line_count"] == 1
    with Saves(path) as saves:
        [line] = saves.lines(save, user_id="aya")["lines"]
    assert line["content"] == "在吗？" and line["created_at"].year >= 2026


def test_a_chat_into_the_postgresql_database_rolemem_db_names(
    postgres_url, tmp_path, capsys, monkeypatch
):
    """`ROLEMEM_DB=postgresql://…` serves import-chat as it serves serve, memory and config."""
    url = fresh_database(postgres_url, "rolemem_import_env")
    assert main(["init-db", "--db", url]) == 0
    with Saves(url) as saves:
        role = saves.create_role("祁煜")["role_id"]
        save = saves.create_save(user_id="aya")["save_id"]
    chat = tmp_path / "qiyu.jsonl"
    chat.write_text(
        "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in SILLYTAVERN), "utf-8"
    )
    monkeypatch.setenv("ROLEMEM_DB", url)
    argv = ["import-chat", str(chat), "--save-id", str(save), "--user-id", "aya"]
    capsys.readouterr()
    assert main([*argv, "--role-id", str(role)]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["save_id"] == save and answer["line_count"] == 4
    with Saves(url) as saves:
        contents = [line["content"] for line in saves.lines(save, user_id="aya")["lines"]]
    assert contents == ["你来了。", "在画什么？", "海。", "窗外下起了雨。"]


@pytest.fixture(params=["duckdb"])
def game(request, tmp_path_factory):
    settings = ServiceSettings(api_key="game")
    with scripted_game(request, tmp_path_factory, "rolemem_import_chat", settings=settings) as g:
        yield g


def test_openai_messages_through_a_service_and_the_loop_catches_up(game, tmp_path, capsys):
    client, app, llm = game
    key = {"X-API-Key": "game"}
    role = client.post(
        "/roles", headers=key, json={"name": "祁煜", "character_id": "qiyu", "agent_id": "qiyu"}
    ).json()["role_id"]
    save = client.post("/saves", headers=key, json={"user_id": "aya"}).json()["save_id"]
    messages = [{"role": "system", "content": "你是祁煜。"}]
    for turn in range(30):
        messages.append({"role": "user", "name": "阿雅", "content": f"第{turn}句"})
        messages.append({"role": "assistant", "content": [{"type": "text", "text": f"第{turn}答"}]})
    messages.append({"role": "assistant", "content": None})  # a tool call's: no text, skipped
    chat = tmp_path / "messages.json"
    chat.write_text(json.dumps(messages, ensure_ascii=False), "utf-8")
    argv = ["import-chat", str(chat), "--save-id", str(save), "--user-id", "aya"]
    url = ["--url", str(client.base_url), "--api-key", "game", "--role-id", str(role)]
    assert main([*argv, *url, "--idempotency-key", "chat-1", "--wait"]) == 0
    answer = json.loads(capsys.readouterr().out)
    first = answer["first_line_id"]
    assert answer == {
        "save_id": save,
        "line_count": 61,
        "first_line_id": first,
        "tip_line_id": first + 60,
        "observed": [
            {
                "role_id": role,
                "agent_id": "qiyu",
                "extraction": "scheduled",
                "pending_turns": 10,
                "last_error": None,
            }
        ],
    }
    assert len(llm.requests) == 2  # two batches of 10 turns
    page = client.get(
        f"/saves/{save}/lines", headers=key, params={"user_id": "aya", "limit": 3}
    ).json()["lines"]
    assert [(row["attribute"], row["display_name"], row["content"]) for row in page] == [
        ("assistant", None, "第28答"),
        ("user", "阿雅", "第29句"),
        ("assistant", None, "第29答"),
    ]
    # the same key again: the first answer, nothing written twice
    assert main([*argv, *url, "--idempotency-key", "chat-1"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["tip_line_id"] == first + 60 and again["line_count"] == 61
    detail = client.get(f"/saves/{save}", headers=key, params={"user_id": "aya"}).json()
    assert detail["line_count"] == 61
    # a refusal is one line naming the field
    assert main([*argv[:3], "99", *argv[4:], *url]) == 2
    assert capsys.readouterr().err.startswith("rolemem: error: the service answered 404: ")


def test_flush_extracts_the_remainder_below_the_batch_size(game, tmp_path, capsys):
    """25 turns: `--wait` alone would leave the 5 below the batch size (extract_at_turns 20,
    extract_turns 10) pending; `--flush` sends them too, as a third, smaller batch."""
    client, app, llm = game
    key = {"X-API-Key": "game"}
    role = client.post(
        "/roles", headers=key, json={"name": "祁煜", "character_id": "qiyu", "agent_id": "qiyu"}
    ).json()["role_id"]
    save = client.post("/saves", headers=key, json={"user_id": "aya"}).json()["save_id"]
    messages = []
    for turn in range(25):
        messages.append({"role": "user", "name": "阿雅", "content": f"第{turn}句"})
        messages.append({"role": "assistant", "content": f"第{turn}答"})
    chat = tmp_path / "messages.json"
    chat.write_text(json.dumps(messages, ensure_ascii=False), "utf-8")
    argv = ["import-chat", str(chat), "--save-id", str(save), "--user-id", "aya"]
    url = ["--url", str(client.base_url), "--api-key", "game", "--role-id", str(role)]
    assert main([*argv, *url, "--flush"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["line_count"] == 50
    assert answer["observed"] == [
        {
            "role_id": role,
            "agent_id": "qiyu",
            "extraction": "scheduled",
            "pending_turns": 0,
            "last_error": None,
        }
    ]
    # three calls, each line sent once: two batches of 10 turns, then the remaining 5
    sent = [json.dumps(request, ensure_ascii=False) for request in llm.requests]
    assert [[n for n in range(25) if f"第{n}句" in body] for body in sent] == [
        list(range(0, 10)),
        list(range(10, 20)),
        list(range(20, 25)),
    ]
    status = client.get(
        f"/saves/{save}/memory_status", headers=key, params={"user_id": "aya", "role_id": role}
    ).json()
    # every line extracted: the watermark is the tip, the last batch ends there
    first, tip = answer["first_line_id"], answer["tip_line_id"]
    assert (status["pending_turns"], status["watermark_line_id"]) == (0, tip)
    assert status["last_batch_key"] == f"{save}:role_id={role}:{first + 40}:{tip}"
    # without --url there is no loop to follow
    assert main([*argv, "--role-id", str(role), "--db", str(tmp_path / "x.duckdb"), "--flush"]) == 2
    assert capsys.readouterr().err == (
        "rolemem: error: --flush follows a service's memory loop: give --url\n"
    )
