"""One prompt per turn: the layers in order, filled once, with a trace; record appends and
extracts in the background."""

from __future__ import annotations

import json
from datetime import datetime

import duckdb
import pytest

from rolemem import Companion
from rolemem.dynamic_memory import MemoryInputError
from rolemem.memory_loop.llm import OpenAICompatibleLLM
from rolemem.testing.scripted_llm import ScriptedChatServer

from .conftest import demo_store

NOW = datetime(2021, 2, 21, 12, 0)
CONTEXT = {"intimacy": 2, "exploration": 3, "scene": "studio"}


@pytest.fixture
def con(tmp_path):
    path = str(tmp_path / "companion.duckdb")
    demo_store(path)
    connection = duckdb.connect(path)
    yield connection
    connection.close()


def turn(companion: Companion, message: str = "今天画画时你好温柔"):
    return companion.turn(
        save_id=2,
        user_id="mumu",
        message=message,
        role_id=1,
        context=CONTEXT,
        now=NOW,
        user_name="木木",
        char_name="钦灵",
    )


def test_a_turn_is_the_filled_system_prompt_memory_history_and_the_message(con):
    companion = Companion(con, character_id="qiyu", embedder=None)
    result = turn(companion)
    roles = [m["role"] for m in result.messages]
    assert roles == ["system", "system", *["user", "assistant"] * 3, "user"]
    # the save's own system line is the template; the character memory is added at its end,
    # each block under its header (a dialogue example never reads like an event)
    assert result.messages[0]["content"] == (
        "你叫钦灵，进行角色扮演\n【记忆单元】\n能力特征：艺术天赋、创作出独特的变色画作\n"
        "性格特征：温柔、内心温柔\n【记忆事件】\n"
        "身世：\n-数百年前，在人类世界建立了第一间画廊，开始收集美好的画作\n【角色参考语料】\n"
        "-被你发现我的小心思了呢，这幅画可是为你准备的\n"
        "-谢谢你的夸奖，不过比起画作，我更想听听你的想法\n"
        "-能得到你的认可真是太好了，我还有很多想和你分享的作品呢"
    )
    assert result.messages[1]["content"].startswith("前情提要：\n")
    # the context window: from the opening narration (nothing extracted yet) to the last reply
    assert result.messages[2]["content"].startswith("{旁白：圣诞节到了")
    assert result.messages[-2]["content"] == "【难为情】好啦..<はい、はい..>"
    assert result.messages[-1] == {"role": "user", "content": "今天画画时你好温柔"}
    assert result.prompt_tokens > 0
    companion.close()


def test_the_trace_says_why_for_every_layer(con):
    companion = Companion(con, character_id="qiyu", embedder=None)
    trace = turn(companion, "今天画画时你好温柔，还记得海边吗").trace
    layers = {row["layer"] for row in trace}
    assert layers >= {"character", "dynamic_event", "timeline", "history"}
    locked = next(row for row in trace if row["item"] == "对{{user}}格外温柔")
    assert (locked["status"], locked["why"]) == ("locked", "locked: intimacy gte 3 (context: 2)")
    shown = next(row for row in trace if row["item"] == "温柔")
    assert (shown["status"], shown["sticky_turns_left"]) == ("shown", 3)
    assert all(
        row["status"]
        in ("shown", "in the timeline", "no evidence", "over the limit", "below the threshold")
        for row in trace
        if row["layer"] == "dynamic_event"
    )
    history = next(row for row in trace if row["layer"] == "history")
    assert history["why"].startswith("save 2, current branch: the newest 3 turns (3 after")
    companion.close()


def test_a_template_with_placeholders_is_filled_once_in_place(con):
    template = "你是{{char}}。{{dynamic_memory}}记忆：{{character_memory_attributes}}"
    con.execute("update line set content = ? where id = 9", [template])
    companion = Companion(con, character_id="qiyu", embedder=None)
    result = turn(companion)
    assert result.messages[0]["content"].startswith("你是钦灵。前情提要：")
    assert "记忆：能力特征：艺术天赋" in result.messages[0]["content"]
    assert [m["role"] for m in result.messages].count("system") == 1  # memory placed inside
    companion.close()


def test_record_appends_the_turn_and_extracts_in_the_background(con):
    reply = json.dumps(
        {
            "events": [{"description": "木木夸钦灵画画时很温柔", "keywords": ["画画"]}],
            "entities": [],
        },
        ensure_ascii=False,
    )
    with ScriptedChatServer(responder=lambda request: reply) as server:
        llm = OpenAICompatibleLLM(base_url=server.base_url, model="scripted", max_retries=0)
        companion = Companion(con, character_id="qiyu", llm=llm, embedder=None)
        ids = []
        for n in range(17):  # 3 turns exist; the 20th makes the oldest 10 due
            ids.append(
                companion.record(
                    save_id=2,
                    user_id="mumu",
                    message=f"第{n}句",
                    reply=f"回复{n}",
                    role_id=1,
                    scene="studio",
                    now=NOW,
                )
            )
        reports = companion.wait()
        companion.close()
    assert [r.extracted_turns for r in reports].count(10) == 1
    assert con.execute("select last_message_id from save where id = 2").fetchone() == (ids[-1][1],)
    assert con.execute("select description from memory_event where save_id = 2").fetchall() == [
        ("木木夸钦灵画画时很温柔",)
    ]


def test_rolemem_explain_prints_the_trace_as_a_table(con, tmp_path, capsys):
    from rolemem.cli import main

    path = con.execute(
        "select path from duckdb_databases() where database_name = current_database()"
    ).fetchone()[0]
    con.close()
    assert (
        main(
            [
                "explain",
                "--db",
                path,
                "--character",
                "qiyu",
                "--save",
                "2",
                "--user",
                "mumu",
                "--role",
                "1",
                "--message",
                "今天画画时你好温柔",
                "--param",
                "intimacy=2",
                "--param",
                "exploration=3",
                "--param",
                "scene=studio",
                "--keyword-only",
                "--now",
                "2021-02-21T12:00",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["layer", "status", "item", "why"]
    assert any(
        line.startswith("character       locked") and "intimacy gte 3 (context: 2)" in line
        for line in lines
    )
    assert lines[-1].startswith("tokens: ")


def test_the_trace_counts_an_entrys_own_sticky_turns(con):
    """An entry with its own 停留轮数 (6) stays queued six turns; the trace counts them down
    from the recall's own rule (the mart's sticky_turns_left), not the queue's default (3)."""
    con.execute(
        "update character_attributes set sticky_turns = 6 "
        "where character_id = 'qiyu' and content = '温柔'"
    )
    companion = Companion(con, character_id="qiyu", embedder=None)
    left = []
    for message in ["今天画画时你好温柔", *["嗯"] * 6]:
        row = next(row for row in turn(companion, message).trace if row["item"] == "温柔")
        left.append((row["status"], row["sticky_turns_left"]))
    companion.close()
    assert left == [
        ("shown", 6),
        ("shown", 5),
        ("shown", 4),
        ("shown", 3),
        ("shown", 2),
        ("shown", 1),
        ("not relevant", None),
    ]


def test_the_prompt_alternates_and_ends_with_the_players_message(con):
    """A voice the game appended before the turn (narration) is background of the player's
    message, as the memory builder's rule makes it: never two user messages in a row."""
    from rolemem.memory_builder.saves import Saves

    Saves(con).append(
        2,
        [
            {
                "attribute": "assistant",
                "content": "门铃响了",
                "script_role_id": "9",
                "display_name": "旁白",
            }
        ],
        user_id="mumu",
    )
    companion = Companion(con, character_id="qiyu", embedder=None)
    messages = turn(companion, "你们认识吗？").messages
    companion.close()
    roles = [m["role"] for m in messages]
    first = roles.index("user")
    assert set(roles[:first]) == {"system"} and "system" not in roles[first:]
    assert all(a != b for a, b in zip(roles[first:], roles[first + 1 :], strict=False))
    assert messages[-1] == {"role": "user", "content": "{旁白：门铃响了}\n你们认识吗？"}


def test_names_come_from_the_save_and_the_role_in_every_block(con):
    """A designer entry written with placeholders is filled with the save's player and the
    role's name when the caller gives none: no {{…}} reaches the LLM, in any block."""
    from rolemem.memory_builder.saves import Saves

    con.execute(
        "update character_events set content = '{{char}}在咖啡馆打工时第一次遇见{{user}}' "
        "where character_id = 'qiyu' and ordinal = 1"
    )
    save = Saves(con).create_save(user_id="mumu", user_name="木木", from_line_id=22)
    assert save["user_name"] == "木木"
    companion = Companion(con, character_id="qiyu", embedder=None)
    result = companion.turn(
        save_id=save["save_id"],
        user_id="mumu",
        message="还记得利莫里亚吗",
        role_id=1,
        context={"intimacy": 5, "exploration": 5, "scene": "studio"},
        now=NOW,
        dry_run=True,
    )
    companion.close()
    text = json.dumps(result.messages, ensure_ascii=False)
    assert "钦灵在咖啡馆打工时第一次遇见木木" in text and "{{" not in text


def test_a_companion_open_to_ownerless_saves_records_on_them(con):
    """A game that keeps ownership itself opens the Companion with open_ownerless_saves: its
    record appends to a save without an owner, as its turn reads one; without it, refused."""
    from rolemem.errors import OwnerlessSaveError

    (save_id,) = con.execute("insert into save (name) values ('own') returning id").fetchone()
    line = {"save_id": save_id, "user_id": "mumu", "message": "你好", "reply": "嗯", "role_id": 1}
    closed = Companion(con, character_id="qiyu", embedder=None)
    with pytest.raises(OwnerlessSaveError):
        closed.record(**line, now=NOW)
    closed.close()
    opened = Companion(con, character_id="qiyu", embedder=None, open_ownerless_saves=True)
    first, second = opened.record(**line, now=NOW)
    opened.wait()
    opened.close()
    rows = con.execute(
        "select id, attribute, content from line where id in (?, ?) order by id", [first, second]
    ).fetchall()
    assert rows == [(first, "user", "你好"), (second, "assistant", "嗯")]


def test_a_regenerate_ends_on_the_answered_line_once_and_moves_no_queue(con):
    """The prompt for a new reply in place of the tip ends on the player line the tip
    answered, once; it counts no turn: the sticky countdown goes on from the turn that played
    the replaced reply."""
    con.execute(
        "update character_attributes set sticky_turns = 6 "
        "where character_id = 'qiyu' and content = '温柔'"
    )
    companion = Companion(con, character_id="qiyu", embedder=None)
    turn(companion, "今天画画时你好温柔")  # 温柔 queued for 6 turns
    said = "嗯"
    played = turn(companion, said)  # 5 left
    companion.record(save_id=2, user_id="mumu", role_id=1, message=said, reply="被你发现了")
    companion.wait()
    swipes = [
        companion.turn(
            save_id=2,
            user_id="mumu",
            role_id=1,
            context=CONTEXT,
            now=NOW,
            user_name="木木",
            char_name="钦灵",
            regenerate=True,
        )
        for _ in range(2)
    ]
    after = next(row for row in turn(companion, "好").trace if row["item"] == "温柔")
    with pytest.raises(MemoryInputError, match="give no message"):
        companion.turn(save_id=2, user_id="mumu", role_id=1, message=said, regenerate=True)
    companion.close()
    assert swipes[0].messages == swipes[1].messages
    assert swipes[0].messages[-1] == {"role": "user", "content": said}
    assert [m["content"] for m in swipes[0].messages].count(said) == 1
    assert swipes[0].messages[:-1] == played.messages[:-1]  # the same prompt as then
    assert (after["status"], after["sticky_turns_left"]) == ("shown", 4)
