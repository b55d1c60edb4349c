"""The memory loop against a real chat-completions server on 127.0.0.1 (scripted replies)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from rolemem import DynamicMemory
from rolemem.errors import RolememError, SaveNotFoundError
from rolemem.memory_loop import MemoryLoop, archived
from rolemem.memory_loop.extraction_reply import ExtractionError
from rolemem.memory_loop.llm import OpenAICompatibleLLM
from rolemem.testing.scripted_llm import Delay, ScriptedChatServer, Status

NOW = datetime(2024, 5, 1, 20, 0)
USER, AGENT = "mumu", "qiyu"


def reply(*descriptions: str, entities: list[dict] | None = None, **fields) -> str:
    return json.dumps(
        {
            "events": [{"description": d, "keywords": [d[:2]], **fields} for d in descriptions],
            "entities": entities or [],
        },
        ensure_ascii=False,
    )


class Dialogue:
    """A save built line by line: `say` appends on the current tip (or on `parent`)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, save_id: int = 1) -> None:
        self.con, self.save_id, self.tip = con, save_id, None
        con.execute(
            "insert into role (id, name) select 1, '祁煜' where not exists "
            "(select 1 from role where id = 1)"
        )
        con.execute("insert into save (id, name, user_id) values (?, 'save', ?)", [save_id, USER])

    def say(
        self,
        attribute: str,
        content: str,
        role_id: int | None = None,
        name: str | None = None,
        parent: int | None = None,
    ) -> int:
        [(line_id,)] = self.con.execute(
            """insert into line (content, attribute, role_id, display_name, save_id,
            parent_line_id) values (?, ?, ?, ?, ?, ?) returning id""",
            [
                content,
                attribute,
                role_id,
                name,
                self.save_id,
                self.tip if parent is None else parent,
            ],
        ).fetchall()
        self.move(line_id)
        return line_id

    def turn(self, n: int, parent: int | None = None) -> int:
        self.say("user", f"玩家第{n}句", parent=parent)
        return self.say("assistant", f"祁煜第{n}句", role_id=1, name="祁煜")

    def move(self, line_id: int) -> None:
        self.tip = line_id
        self.con.execute(
            "update save set last_message_id = ? where id = ?", [line_id, self.save_id]
        )


@pytest.fixture
def server():
    with ScriptedChatServer() as running:
        yield running


@pytest.fixture
def con():
    connection = duckdb.connect()
    DynamicMemory(connection, profile={}).close()  # the application and memory tables
    return connection


def make_loop(con, server, **settings) -> MemoryLoop:
    llm = OpenAICompatibleLLM(base_url=server.base_url, model="scripted", timeout=2, max_retries=0)
    return MemoryLoop(con, llm=llm, settings=settings)


def observe(loop: MemoryLoop, scene: str | None = "gallery", save_id: int = 1):
    return loop.observe(
        save_id=save_id,
        user_id=USER,
        agent_id=AGENT,
        role_id=1,
        scene=scene,
        now=NOW,
        user_name="木木",
        agent_name="祁煜",
    )


def events(con) -> list[tuple]:
    return con.execute(
        "select description, save_id, first_line_id, last_line_id, scene "
        "from memory_event order by id"
    ).fetchall()


def batches(con) -> list[tuple]:
    return con.execute(
        "select batch_key, turn_count, reason, scene, event_count, entity_count "
        "from memory_extraction_batch order by extracted_at, batch_key"
    ).fetchall()


# --- the context window and extraction ---------------------------------------------------


def test_another_players_save_is_never_planned_or_extracted_for_a_player(con, server):
    dialogue = Dialogue(con, save_id=2)
    con.execute("update save set user_id = 'bob' where id = 2")
    for n in range(3):
        dialogue.turn(n)
    loop = make_loop(con, server)
    server.push(reply("不该有的记忆"))
    for call in (loop.due, loop.observe):
        with pytest.raises(SaveNotFoundError, match="no save with id 2"):
            call(save_id=2, user_id="alice", agent_id=AGENT, role_id=1, scene="beach")
    assert server.requests == [] and events(con) == []


def test_nineteen_pending_turns_wait_and_the_twentieth_sends_the_oldest_ten(con, server):
    dialogue = Dialogue(con)
    dialogue.say("system", "你是祁煜", role_id=1)
    for n in range(19):
        dialogue.turn(n)
    loop = make_loop(con, server)
    report = observe(loop)
    assert (report.extracted_turns, report.pending_turns, server.requests) == (0, 19, [])
    dialogue.turn(19)
    server.push(reply("木木说起画画", time="2024-04-30 18:30", importance=0.8, place="画廊"))
    report = observe(loop)
    # lines: 1 system, then turn n = lines 2n+2 (player) and 2n+3 (reply)
    assert report.batch_keys == ["1:role_id=1:2:21"]
    assert (report.extracted_turns, report.pending_turns, report.watermark_line_id) == (10, 10, 21)
    assert events(con) == [("木木说起画画", 1, 2, 21, "gallery")]
    assert con.execute("select created_at, importance from memory_event").fetchone() == (
        datetime(2024, 4, 30, 18, 30),
        pytest.approx(0.8),
    )
    assert batches(con) == [("1:role_id=1:2:21", 10, "window_full", "gallery", 1, 0)]
    # the LLM saw the ten turns from the character's point of view, and only them
    sent = server.requests[0]["messages"]
    assert sent[0]["role"] == "system" and "祁煜" in sent[0]["content"]
    assert sent[1]["content"].splitlines() == [
        line
        for n in range(10)
        for line in (f"[{2 * n + 1}] user: 玩家第{n}句", f"[{2 * n + 2}] assistant: 祁煜第{n}句")
    ]


def test_a_batch_from_before_lines_were_recorded_covers_its_chain_once_the_store_migrates(
    con, server
):
    dialogue = Dialogue(con)
    dialogue.say("system", "你是祁煜", role_id=1)
    for n in range(12):
        dialogue.turn(n)
    # a batch as rolemem wrote it before it recorded lines: the batch row alone
    con.execute(
        """insert into memory_extraction_batch (batch_key, save_id, target_key, user_id,
        agent_id, first_line_id, last_line_id, turn_count, reason, event_count, entity_count,
        extracted_at) values ('1:role_id=1:2:21', 1, 'role_id=1', ?, ?, 2, 21, 10,
        'window_full', 0, 0, ?)""",
        [USER, AGENT, NOW],
    )
    con.execute("delete from rolemem_migration where name = 'extracted_lines_backfill'")
    report = observe(make_loop(con, server))  # opening the store migrates it
    assert (report.watermark_line_id, report.pending_turns, server.requests) == (21, 2, [])
    # every line up to the root (the system line too), credited to that batch
    assert con.execute(
        "select min(line_id), max(line_id), count(*), any_value(batch_key), "
        "count(distinct batch_key) from memory_extracted_line"
    ).fetchone() == (1, 21, 21, "1:role_id=1:2:21", 1)
    assert con.execute(
        "select count(*) from rolemem_migration where name = 'extracted_lines_backfill'"
    ).fetchone() == (1,)


def test_events_from_before_memories_kept_lines_get_their_batchs_once_the_store_migrates(
    con, server
):
    dialogue = Dialogue(con)
    for n in range(12):
        dialogue.turn(n)
    server.responder = lambda request: reply("木木和祁煜第一次见面")
    loop = make_loop(con, server)
    observe(loop)
    report = observe(loop, scene="beach")  # a scene change: all 12 go
    loop.close()
    assert report.extracted_turns == 12
    # as rolemem wrote it before memories kept their lines: no event line, no batch end
    con.execute("delete from memory_event_line")
    con.execute("update memory_extracted_line set batch_last_line_id = null")
    con.execute("delete from rolemem_migration where name = 'event_lines_backfill'")
    make_loop(con, server).close()  # opening the store migrates it
    [(event_id, last_line_id)] = con.execute("select id, last_line_id from memory_event").fetchall()
    assert con.execute(
        "select event_id, min(line_id), max(line_id), count(*), any_value(last_line_id) "
        "from memory_event_line group by event_id"
    ).fetchall() == [(event_id, 1, 24, 24, last_line_id)]
    assert con.execute(
        "select distinct batch_last_line_id from memory_extracted_line"
    ).fetchall() == [(24,)]


def test_the_next_turns_window_is_the_observations_plan_while_nothing_it_read_moved(con, server):
    """/turn asks for the window the previous /lines observation just planned: it is reused
    (no plan statement) while the save's tip and batches are those the plan read, and is
    always what a loop without kept windows computes."""
    dialogue = Dialogue(con)
    for n in range(19):
        dialogue.turn(n)
    loop = make_loop(con, server)

    def window_now() -> dict:
        return loop.context_window(save_id=1, role_id=1)

    def fresh() -> dict:
        return MemoryLoop(con).context_window(save_id=1, role_id=1)

    def plans() -> int:
        return loop._plans.batches.stats()["statements"]

    observe(loop)
    before = plans()
    reused = window_now()
    assert plans() == before and reused == fresh()
    assert (reused["pending_turns"], reused["window_turns"], len(reused["lines"])) == (19, 19, 38)
    tip = dialogue.tip
    dialogue.turn(19)  # the game writes a turn: the tip moved
    assert window_now() == fresh() and plans() == before + 1
    assert window_now()["pending_turns"] == 20 and plans() == before + 1
    server.push(reply("前十轮"))
    assert observe(loop).extracted_turns == 10  # a batch the kept window's plan did not read
    after = window_now()
    assert after == fresh() and after["pending_turns"] == 10 and after["watermark_line_id"] == 20
    dialogue.move(tip)  # back to an older tip: the chain is shorter
    assert window_now() == fresh() and window_now()["pending_turns"] == 9
    assert loop.windows.hits == 3


def test_a_second_observation_writes_nothing_new(con, server):
    dialogue = Dialogue(con)
    for n in range(20):
        dialogue.turn(n)
    loop = make_loop(con, server)
    server.push(reply("第一批"))
    first = observe(loop)
    before = (events(con), batches(con), len(server.requests))
    again = observe(loop)
    assert first.extracted_turns == 10 and again.extracted_turns == 0
    assert (events(con), batches(con), len(server.requests)) == before


def test_a_scene_past_the_memory_limit_is_refused_or_cut_never_a_stuck_batch(con, server):
    """A scene longer than a memory holds (128 characters): the Python API refuses it; one a
    game wrote into its own lines is cut to the limit on the events, and the batch extracts."""
    from rolemem.memory_builder.contract import NAME_LENGTH
    from rolemem.memory_builder.saves import append

    dialogue = Dialogue(con)
    for n in range(20):
        dialogue.turn(n)
    with pytest.raises(RolememError, match="scene must be at most 128") as refused:
        append(con.cursor(), 1, [{"attribute": "user", "content": "嗨"}], USER, scene="场" * 129)
    assert refused.value.field == "scene"
    con.execute("update line set scene = ?", ["场" * 200])  # the game's own rows
    loop = make_loop(con, server)
    server.push(reply("在很长的场景里画画"))
    assert observe(loop, scene=None).extracted_turns == 10
    assert con.execute("select scene from memory_event").fetchall() == [("场" * NAME_LENGTH,)]
    # the batch's own record keeps the lines' scene as they hold it
    assert con.execute("select scene from memory_extraction_batch").fetchall() == [("场" * 200,)]


def test_a_scene_change_sends_every_pending_turn_in_the_old_scene(con, server):
    dialogue = Dialogue(con)
    for n in range(7):
        dialogue.turn(n)
    loop = make_loop(con, server)
    assert observe(loop, scene="gallery").extracted_turns == 0
    server.push(reply("画廊里的七轮对话"))
    report = observe(loop, scene="beach")
    assert report.scene_changed and report.extracted_turns == 7 and report.pending_turns == 0
    assert batches(con) == [("1:role_id=1:1:14", 7, "scene_change", "gallery", 1, 0)]
    assert events(con)[0][4] == "gallery"
    # the new scene is now the one seen: no second flush
    assert observe(loop, scene="beach").extracted_turns == 0


def test_consecutive_player_lines_are_one_turn(con, server):
    dialogue = Dialogue(con)
    for n in range(20):
        dialogue.say("user", f"玩家第{n}句")
        dialogue.say("user", "还有一句")  # a run of player lines opens one turn
        dialogue.say("assistant", f"祁煜第{n}句", role_id=1)
    loop = make_loop(con, server)
    server.push(reply("二十轮"))
    assert observe(loop).extracted_turns == 10
    assert batches(con)[0][0] == "1:role_id=1:1:30"


def test_other_speakers_reach_the_llm_as_background_not_as_the_characters_acts(con, server):
    dialogue = Dialogue(con)
    dialogue.say("user", "大家好")
    dialogue.say("assistant", "我是白小喵", role_id=None, name="白小喵")
    dialogue.say("assistant", "你好", role_id=1, name="祁煜")
    loop = make_loop(con, server)
    observe(loop, scene="a")
    server.push(reply("木木和白小喵见面"))
    observe(loop, scene="b")
    # the memory builder's own rendering: the player's line before another speaker is
    # background, named as the observation names the player
    assert server.requests[0]["messages"][1]["content"] == (
        "[1] user: {木木：大家好\n白小喵：我是白小喵}\n[2] assistant: 你好"
    )


def test_presence_said_once_deep_in_the_chain_keeps_the_absent_character_out(con, server):
    # 祁煜 (role 1) leaves in turn 1: only role 2 is present from then on (inherited), so he
    # witnesses only his own lines; the chain says so on that one line only, far behind the
    # second batch's lines, and the plan must still apply it (a chain that says no presence
    # is planned without it)
    dialogue = Dialogue(con)
    dialogue.turn(0)
    left = dialogue.say("user", "玩家第1句")
    con.execute("update line set present_role_ids = '[2]' where id = ?", [left])
    dialogue.say("assistant", "祁煜第1句", role_id=1, name="祁煜")
    for n in range(2, 20):
        dialogue.turn(n)
    loop = make_loop(con, server)
    server.push(reply("第一批"), reply("第二批"))
    assert observe(loop).extracted_turns == 10
    for n in range(20, 30):
        dialogue.turn(n)
    assert observe(loop).extracted_turns == 10
    first, second = (request["messages"][1]["content"] for request in server.requests)
    assert "玩家第0句" in first and "玩家第1句" not in first and "祁煜第1句" in first
    assert "玩家" not in second and all(f"祁煜第{n}句" in second for n in range(10, 20))


# --- failures lose nothing ----------------------------------------------------------------


@pytest.mark.parametrize(
    "script",
    [
        ["not json at all", '{"events": [{"keywords": []}]}', Status(500)],
        [Status(500), Status(500), Status(500)],
        [Delay(3), Delay(3), Delay(3)],
        ['{"events": [{"description": "x", "importance": 7}]}'] * 3,
        ['{"entities": [{"entity_name": "木木", "kind": "未知"}]}'] * 3,
    ],
    ids=[
        "broken-json-then-missing-field-then-500",
        "http-500",
        "timeout",
        "importance-out-of-range",
        "entity-missing-fields",
    ],
)
def test_a_failing_llm_raises_extraction_error_and_writes_nothing(con, server, script):
    dialogue = Dialogue(con)
    for n in range(20):
        dialogue.turn(n)
    loop = make_loop(con, server)
    server.push(*script)
    with pytest.raises(ExtractionError, match="extraction failed after 3 LLM calls"):
        observe(loop)
    assert (events(con), batches(con)) == ([], [])
    assert con.execute("select count(*) from memory_entity").fetchone() == (0,)
    # the next observation asks again and succeeds: nothing was lost
    server.push(reply("重试成功"))
    assert observe(loop).extracted_turns == 10
    assert [row[0] for row in events(con)] == ["重试成功"]


def test_an_invalid_reply_is_retried_with_the_problem_and_a_fenced_reply_is_accepted(con, server):
    dialogue = Dialogue(con)
    for n in range(20):
        dialogue.turn(n)
    loop = make_loop(con, server)
    good = reply(
        "修正后的回复",
        entities=[
            {
                "entity_name": "木木",
                "entity_type": "客体",
                "kind": "用户属性",
                "keyword": "兴趣",
                "description": "木木喜欢画画",
            }
        ],
    )
    server.push('{"events": [{"description": ""}]}', f"```json\n{good}\n```")
    report = observe(loop)
    assert report.extracted_turns == 10 and len(report.entity_ids) == 1
    correction = server.requests[1]["messages"][-1]["content"]
    assert "events.0.description" in correction
    assert con.execute(
        "select entity_name, kind, keyword, description, strength from memory_entity"
    ).fetchall() == [("木木", "用户属性", "兴趣", "木木喜欢画画", 1)]


def test_an_extracted_memory_past_the_memory_limits_is_sent_back_to_correct(con, server):
    """The store would refuse it (the memory contract), so the reply is invalid: the LLM is
    told which field, as for any malformed item, and its corrected reply is stored."""
    dialogue = Dialogue(con)
    for n in range(20):
        dialogue.turn(n)
    loop = make_loop(con, server)
    entity = {
        "entity_name": "木木",
        "entity_type": "客体",
        "kind": "用户属性",
        "keyword": "兴趣" * 33,
        "description": "木木喜欢画画",
    }
    server.push(
        reply("画" * 2001, entities=[entity]),
        reply("木木画画", entities=[{**entity, "keyword": "兴趣"}]),
    )
    assert observe(loop).extracted_turns == 10
    correction = server.requests[1]["messages"][-1]["content"]
    assert "events.0.description" in correction and "entities.0.keyword" in correction
    assert [row[0] for row in events(con)] == ["木木画画"]
    assert con.execute("select keyword from memory_entity").fetchall() == [("兴趣",)]


KILLED_CHILD = """
import sys
from datetime import datetime
from rolemem.memory_loop.llm import OpenAICompatibleLLM
from rolemem.memory_loop import MemoryLoop
llm = OpenAICompatibleLLM(base_url=sys.argv[2], model="scripted", timeout=60, max_retries=0)
loop = MemoryLoop(sys.argv[1], llm=llm)
print("observing", flush=True)
loop.observe(save_id=1, user_id="mumu", agent_id="qiyu", role_id=1, scene="gallery",
             now=datetime(2024, 5, 1, 20, 0))
"""


def test_a_process_killed_while_the_llm_answers_loses_nothing(tmp_path: Path, server):
    path = str(tmp_path / "loop.duckdb")
    with duckdb.connect(path) as con:
        DynamicMemory(con).close()
        dialogue = Dialogue(con)
        for n in range(20):
            dialogue.turn(n)
    server.push(Delay(30, reply("不会写入")))
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_CHILD, path, server.base_url],
        stdout=subprocess.PIPE,
        env={**os.environ},
    )
    assert child.stdout is not None and child.stdout.readline().strip() == b"observing"
    deadline = time.monotonic() + 30
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.requests, "the child never reached the LLM"
    child.send_signal(signal.SIGKILL)
    child.wait()
    with duckdb.connect(path) as con:
        assert (events(con), batches(con)) == ([], [])
        server.push(reply("重启后提炼"))
        loop = make_loop(con, server)
        assert observe(loop).extracted_turns == 10
        assert observe(loop).extracted_turns == 0
        assert [row[0] for row in events(con)] == ["重启后提炼"]
        assert len(batches(con)) == 1


# --- branches -----------------------------------------------------------------------------


def recalled(loop: MemoryLoop, text: str) -> list[str]:
    """Detail recall with no timeline (so no event is held back as already shown)."""
    size = loop.memory.settings["timeline_size"]
    loop.memory.settings["timeline_size"] = 0
    try:
        response = loop.memory.query(
            text,
            user_id=USER,
            agent_id=AGENT,
            save_id=1,
            now=NOW,
            score_threshold=0.0,
            update=False,
        )
    finally:
        loop.memory.settings["timeline_size"] = size
    return [event["description"] for event in response.memory_events]


def test_events_of_a_branch_the_player_left_are_hidden_and_come_back(con, server):
    dialogue = Dialogue(con)
    fork = dialogue.say("system", "你是祁煜", role_id=1)
    for n in range(20):
        dialogue.turn(n)
    branch_a_tip = dialogue.tip
    loop = make_loop(con, server, memory_scope="player")
    server.push(reply("在A分支一起去了海边"))
    observe(loop)
    assert recalled(loop, "海边") == ["在A分支一起去了海边"]
    assert [e["description"] for e in loop.timeline(user_id=USER, agent_id=AGENT, save_id=1)] == [
        "在A分支一起去了海边"
    ]
    # the player regenerates from the system line: branch B
    for n in range(20):
        dialogue.turn(100 + n, parent=fork if n == 0 else None)
    server.push(reply("在B分支一起去了画廊"))
    report = observe(loop)
    assert report.extracted_turns == 10  # B's turns are new: A's watermark is off the chain
    assert recalled(loop, "海边") == []
    assert [e["description"] for e in loop.timeline(user_id=USER, agent_id=AGENT, save_id=1)] == [
        "在B分支一起去了画廊"
    ]
    # back to A: its events return, and its batch is not extracted again
    dialogue.move(branch_a_tip)
    assert recalled(loop, "海边") == ["在A分支一起去了海边"]
    assert observe(loop).extracted_turns == 0
    assert len(batches(con)) == 2 and len(events(con)) == 2


def test_memory_scope_save_hides_other_saves_and_player_scope_shows_them(con, server):
    first = Dialogue(con, save_id=1)
    for n in range(20):
        first.turn(n)
    loop = make_loop(con, server)
    server.push(reply("存档一里去了海边"))
    observe(loop, save_id=1)
    Dialogue(con, save_id=2).turn(0)
    query = loop.memory.query
    player = query(
        "海边",
        user_id=USER,
        agent_id=AGENT,
        save_id=2,
        now=NOW,
        score_threshold=0,
        update=False,
        memory_scope="player",
    )
    saved = query(
        "海边",
        user_id=USER,
        agent_id=AGENT,
        save_id=2,
        now=NOW,
        score_threshold=0,
        update=False,
        memory_scope="save",
    )
    assert loop.memory.settings["timeline_size"] == 10
    assert [e["description"] for e in loop.timeline(user_id=USER, agent_id=AGENT, save_id=2)] == [
        "存档一里去了海边"
    ]
    # the only event sits in the timeline under player scope; with save scope it is out of reach
    assert player.memory_events == [] and saved.memory_events == []
    assert loop.memory.timeline(user_id=USER, agent_id=AGENT, save_id=2, memory_scope="save") == []


# --- strength, cleanup, consolidation ---------------------------------------------------------


def add_events(
    memory: DynamicMemory, user: str, strengths: list[int], created: datetime
) -> list[int]:
    ids = memory.add_events(
        [
            {
                "user_id": user,
                "agent_id": AGENT,
                "description": f"{user}的事{i}",
                "created_at": created.replace(minute=i),
            }
            for i in range(len(strengths))
        ]
    )
    cur = memory.con.cursor()
    cur.execute(
        "update memory_event set strength = s from (select unnest($ids) as id, "
        "unnest($s) as s) as given where memory_event.id = given.id",
        {"ids": ids, "s": strengths},
    )
    return ids


def test_cleanup_archives_the_weakest_share_of_an_active_player_oldest_first(con, server):
    loop = make_loop(con, server, cleanup_threshold=10, cleanup_share=0.2, cleanup_interval_days=7)
    # ten memories created today (the player is active today); strengths 1 1 1 2 ...
    ids = add_events(loop.memory, USER, [3, 1, 5, 1, 1, 9, 2, 4, 6, 7], NOW.replace(hour=9))
    loop.pin(event_id=ids[1])  # the oldest strength-1 memory is pinned: never archived
    report = loop.maintain(now=NOW)
    assert report.archived == {"weakest_share": 2} and report.players_cleaned == 1
    assert report.archived_ids == [("event", ids[3]), ("event", ids[4])]
    rows = archived(con, user_id=USER)
    assert [(r["memory_type"], r["memory_id"], r["reason"], r["strength"]) for r in rows] == [
        ("event", ids[3], "weakest_share", 1),
        ("event", ids[4], "weakest_share", 1),
    ]
    assert rows[0]["memory"]["description"] == f"{USER}的事3"
    live = [row[0] for row in con.execute("select id from memory_event order by id").fetchall()]
    assert live == [i for i in ids if i not in (ids[3], ids[4])]
    assert con.execute(
        "select count(*) from memory_event_term where event_id in (?, ?)", [ids[3], ids[4]]
    ).fetchone() == (0,)
    # at most every cleanup_interval_days: the same day again archives nothing
    assert loop.maintain(now=NOW).archived == {}
    assert con.execute(
        "select rule, memory_count, archived_count from memory_maintenance_run"
    ).fetchall() == [("weakest_share", 10, 2)]


def test_a_memory_pinned_while_cleanup_runs_is_not_archived(con, server, monkeypatch):
    """A pin that commits after cleanup read its candidates and before it archives them: the
    archive meets the pin as a conflicting write, and a writer that retries (the service's)
    reads the candidates again, without the pinned one."""
    from rolemem.memory_loop import maintenance
    from rolemem.retry import retry

    loop = make_loop(con, server, cleanup_threshold=10, cleanup_share=0.2, cleanup_interval_days=7)
    ids = add_events(loop.memory, USER, [3, 1, 5, 1, 1, 9, 2, 4, 6, 7], NOW.replace(hour=9))
    archive, pinned = maintenance.archive, []

    def pinning_first(cur, memory_type, reason, archived_ids, *args, **kwargs):
        if not pinned:  # the first attempt, between its read and its archive
            pinned.append(archived_ids[0])
            loop.pin(event_id=archived_ids[0])
        return archive(cur, memory_type, reason, archived_ids, *args, **kwargs)

    def retried(work):
        def once():
            with loop.memory.store.transaction() as cur:
                return work(cur)

        return retry(once, attempts=3, on=(duckdb.TransactionException,))

    monkeypatch.setattr(maintenance, "archive", pinning_first)
    report = loop.maintain(now=NOW, write=retried)
    assert pinned == [ids[1]]
    assert report.archived_ids == [("event", ids[3]), ("event", ids[4])]
    assert [r["memory_id"] for r in archived(con, user_id=USER)] == [ids[3], ids[4]]


def test_cleanup_is_deterministic_for_the_same_database_and_now(tmp_path, server):
    results = []
    for name in ("a", "b"):
        connection = duckdb.connect(str(tmp_path / f"{name}.duckdb"))
        loop = make_loop(connection, server, cleanup_threshold=5, cleanup_share=0.5)
        add_events(loop.memory, USER, [2, 2, 2, 2, 2, 2], NOW.replace(hour=8))
        report = loop.maintain(now=NOW)
        results.append([(r["memory_id"], r["reason"]) for r in archived(connection)])
        assert report.archived == {"weakest_share": 3}
        connection.close()
    assert results[0] == results[1]


def test_an_inactive_player_keeps_its_strongest_minimum_and_an_active_one_is_left_alone(
    con, server
):
    loop = make_loop(con, server, cleanup_threshold=100, inactive_days=30, inactive_min_keep=2)
    long_ago = datetime(2024, 3, 1, 12, 0)
    old = add_events(loop.memory, "sleeper", [5, 1, 4, 2, 3], long_ago)
    add_events(loop.memory, USER, [1, 1, 1], NOW.replace(hour=10))
    report = loop.maintain(now=NOW)
    assert report.archived == {"inactive_trim": 3}
    assert [(r["memory_id"], r["user_id"]) for r in archived(con)] == [
        (old[1], "sleeper"),
        (old[3], "sleeper"),
        (old[4], "sleeper"),
    ]


def test_consolidation_rewrites_merged_entities_and_archives_the_old_text(con, server):
    loop = make_loop(con, server)
    memory = loop.memory
    first = memory.add_entity(
        user_id=USER,
        agent_id=AGENT,
        entity_name="木木",
        entity_type="客体",
        kind="用户属性",
        keyword="兴趣",
        description="木木喜欢画画",
        updated_at=datetime(2024, 4, 1),
    )
    memory.add_entity(
        user_id=USER,
        agent_id=AGENT,
        entity_name="木木",
        entity_type="客体",
        kind="用户属性",
        keyword="兴趣",
        description="木木最近爱上了水彩画",
        updated_at=datetime(2024, 4, 20),
    )
    untouched = memory.add_entity(
        user_id=USER,
        agent_id=AGENT,
        entity_name="木木",
        entity_type="客体",
        kind="用户属性",
        keyword="生日",
        description="木木的生日在五月",
        updated_at=datetime(2024, 4, 2),
    )
    merged = {"entities": [{"id": first, "description": "木木喜欢画画，最近爱上水彩"}]}
    server.push(json.dumps(merged, ensure_ascii=False))
    steps = []
    report = loop.maintain(now=NOW, progress=lambda *step: steps.append(step))
    assert report.consolidated_entities == 1
    assert steps == [
        ("cleanup", 0, 1),
        ("cleanup", 1, 1),
        ("consolidation", 0, 1),
        ("consolidation", 1, 1),
    ]
    assert json.loads(server.requests[0]["messages"][1]["content"]) == [
        {
            "id": first,
            "entity_name": "木木",
            "kind": "用户属性",
            "keyword": "兴趣",
            "description": "木木喜欢画画；木木最近爱上了水彩画",
        }
    ]
    assert con.execute(
        "select id, description, merge_count, strength from memory_entity order by id"
    ).fetchall() == [
        (first, "木木喜欢画画，最近爱上水彩", 0, 31),
        (untouched, "木木的生日在五月", 0, 1),
    ]
    [row] = archived(con)
    assert (row["reason"], row["memory"]["description"]) == (
        "consolidated",
        "木木喜欢画画；木木最近爱上了水彩画",
    )
    assert loop.maintain(now=NOW).consolidated_entities == 0  # nothing merged since


def test_pin_names_what_is_wrong(con, server):
    loop = make_loop(con, server)
    with pytest.raises(Exception, match="exactly one of event_id or entity_id"):
        loop.pin()
    with pytest.raises(Exception, match="no memory_event with id 99"):
        loop.pin(event_id=99)


def test_the_cli_observes_prints_the_timeline_and_maintains(tmp_path, server, capsys, monkeypatch):
    from rolemem.cli import main

    path = str(tmp_path / "cli.duckdb")
    with duckdb.connect(path) as connection:
        DynamicMemory(connection).close()
        dialogue = Dialogue(connection)
        for n in range(20):
            dialogue.turn(n)
    monkeypatch.setenv("ROLEMEM_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("ROLEMEM_LLM_MODEL", "scripted")
    server.push(reply("命令行提炼"))
    assert (
        main(
            [
                "observe",
                "--db",
                path,
                "--save",
                "1",
                "--user",
                USER,
                "--agent",
                AGENT,
                "--role",
                "1",
                "--scene",
                "gallery",
                "--now",
                "2024-05-01T20:00",
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert (report["extracted_turns"], report["pending_turns"], report["batch_keys"]) == (
        10,
        10,
        ["1:role_id=1:1:20"],
    )
    assert main(["timeline", "--db", path, "--user", USER, "--agent", AGENT, "--save", "1"]) == 0
    assert [e["description"] for e in json.loads(capsys.readouterr().out)] == ["命令行提炼"]
    assert main(["maintain", "--db", path, "--no-llm", "--now", "2024-05-01T21:00"]) == 0
    assert json.loads(capsys.readouterr().out)["archived"] == {}
    assert (
        main(
            [
                "observe",
                "--db",
                path,
                "--save",
                "1",
                "--user",
                USER,
                "--agent",
                AGENT,
                "--now",
                "2024-05-01T20:00",
            ]
        )
        == 2
    )
    assert "exactly one of role_id or script_role_id" in capsys.readouterr().err
