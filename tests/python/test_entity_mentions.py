"""An entity is one row across saves; its mentions (each description fragment) keep the lines
they came from, and a save shows an entity by the mentions its chain may see (the events'
branch rule): a fork's fragment never reaches its parent, a reload hides the fragment of the
stretch it left and going back shows it again with no LLM call. Over HTTP, on the embedded
DuckDB file and on PostgreSQL."""

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

PLAYER = "lin"
OBSERVE = {"agent_id": "qiyu", "role_id": 1, "user_name": "琳"}
play = functools.partial(conftest.play, player=PLAYER, observe=OBSERVE)
settled = functools.partial(conftest.settled, player=PLAYER)
# what the batches starting at turn 1 (a save) and 10 (its fork) say of one entity (the same
# name, kind and keyword: one row); any other batch speaks of 雨伞
FRAGMENTS = {1: "画廊的贝壳是琳在海边捡的", 10: "画廊的贝壳被琳送给了钦灵"}


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def game(request, tmp_path_factory):
    kites = itertools.count(1)

    def answer(request: dict[str, Any]) -> str:
        system = request["messages"][0]["content"]
        if "记忆整理师" in system:  # consolidation: each entity's text, tidied
            listed = json.loads(request["messages"][1]["content"])
            tidied = [{"id": e["id"], "description": f"整理后：{e['description']}"} for e in listed]
            return json.dumps({"entities": tidied}, ensure_ascii=False)
        # an extraction: one fragment of an entity, from the batch's 7th message (the
        # player's line of its 4th turn; else the whole batch)
        first = sent_turns(request)[0]
        if first >= 30:  # a kite, from the whole batch (no message named), told anew each time
            kite = {
                "entity_name": "风筝",
                "entity_type": "具体实体",
                "kind": "与其它实体的关系",
                "keyword": "画廊",
                "description": f"风筝第{next(kites)}次",
            }
            return json.dumps({"events": [], "entities": [kite]}, ensure_ascii=False)
        name, fragment = (
            ("贝壳", FRAGMENTS[first]) if first in FRAGMENTS else ("雨伞", f"雨伞在第{first}轮出现")
        )
        entity = {
            "entity_name": name,
            "entity_type": "具体实体",
            "kind": "与其它实体的关系",
            "keyword": "画廊",
            "description": fragment,
            "message": 7,
        }
        return json.dumps({"events": [], "entities": [entity]}, ensure_ascii=False)

    with scripted_game(
        request,
        tmp_path_factory,
        "rolemem_mentions",
        settings=ServiceSettings(),
        responder=answer,
    ) as (client, _, llm_server):
        yield client, llm_server


def shown_entities(
    client: httpx.Client, save: int, player: str = PLAYER
) -> list[tuple[str, int | None, Any]]:
    """/turn's dry run on `save` asking about the gallery: its entity trace rows (text, save,
    lines)."""
    answer = client.post(
        "/turn",
        json={
            "save_id": save,
            "character_id": "qiyu",
            "role_id": 1,
            "user_id": player,
            "message": "画廊",
            "now": "2024-05-02T09:00:00",
            "context": {"亲密度": 50},
            "dry_run": True,
        },
    )
    assert answer.status_code == 200, answer.text
    return [
        (row["item"], row["save_id"], row["line_ids"])
        for row in answer.json()["trace"]
        if row["layer"] == "dynamic_entity"
    ]


def move_tip(client: httpx.Client, save: int, line_id: int, player: str = PLAYER) -> None:
    moved = client.put(f"/saves/{save}/tip", json={"user_id": player, "line_id": line_id})
    assert moved.status_code == 200, moved.text


def test_a_save_shows_the_fragments_of_its_own_branch(game):
    client, llm = game
    parent = client.post("/saves", json={"user_id": PLAYER}).json()["save_id"]
    lines = play(client, parent, range(1, 5), "gallery")
    lines += play(client, parent, range(5, 6), "beach")  # turns 1-4 sent
    settled(client, llm, parent, 1)
    # the fragment cites the 7th message: turn 4's player line
    assert shown_entities(client, parent) == [(FRAGMENTS[1], parent, [lines[6]])]
    # a fork from turn 2's reply: the fragment's line is not on its chain
    fork = client.post("/saves", json={"user_id": PLAYER, "from_line_id": lines[3]}).json()
    fork_id = fork["save_id"]
    assert shown_entities(client, fork_id) == []
    calls = len(llm.requests)
    fork_lines = play(client, fork_id, range(10, 14), "park")
    fork_lines += play(client, fork_id, range(14, 15), "cave")
    settled(client, llm, fork_id, calls + 1)
    assert sent_turns(llm.requests[-1]) == [10, 11, 12, 13]
    said = fork_lines[6]
    # one entity row, two fragments: each save shows its own branch's only
    assert shown_entities(client, fork_id) == [(FRAGMENTS[10], fork_id, [said])]
    assert shown_entities(client, parent) == [(FRAGMENTS[1], parent, [lines[6]])]
    # the parent reloaded before the fragment's line: hidden; back at its tip: shown again,
    # with no LLM call
    calls = len(llm.requests)
    move_tip(client, parent, lines[3])
    assert shown_entities(client, parent) == []
    move_tip(client, parent, lines[9])
    assert shown_entities(client, parent) == [(FRAGMENTS[1], parent, [lines[6]])]
    assert len(llm.requests) == calls
    # the memory page: the entity with every mention's lines, on its newest mention's save
    page = client.get(f"/users/{PLAYER}/memories", params={"kind": "entity"}).json()
    assert [
        (
            item["description"],
            item["save_id"],
            item["first_line_id"],
            item["last_line_id"],
            item["line_ids"],
            item["is_on_current_branch"],
        )
        for item in page["items"]
    ] == [
        (
            f"{FRAGMENTS[1]}；{FRAGMENTS[10]}",
            fork_id,
            lines[6],
            said,
            [lines[6], said],
            True,
        )
    ]
    # what the character knows of the player on each save: that save's fragment and lines
    for save, fragment, cited in ((parent, FRAGMENTS[1], lines[6]), (fork_id, FRAGMENTS[10], said)):
        known = client.get(
            f"/users/{PLAYER}/knowledge", params={"agent_id": "qiyu", "save_id": save}
        )
        assert known.status_code == 200, known.text
        assert [
            (item["subject"], item["content"], item["save_id"], item["line_ids"])
            for item in known.json()["entities"]
        ] == [("贝壳", fragment, save, [cited])]

    # consolidation merges only what lies on one chain: 贝壳's fragments are on two branches
    # (the demo player's merged entity is consolidated)
    maintained = client.post("/admin/maintenance")
    assert maintained.status_code == 200, maintained.text
    assert maintained.json()["consolidated_entities"] == 1
    [consolidation] = llm.requests[calls:]
    assert [e["entity_name"] for e in json.loads(consolidation["messages"][1]["content"])] == [
        "木木"
    ]
    calls = len(llm.requests)
    # 雨伞, told twice on the parent's chain (turn 5's batch, then turns 20-23's)
    lines += play(client, parent, range(20, 24), "park")  # turn 5 sent (the scene changed)
    settled(client, llm, parent, calls + 1)
    lines += play(client, parent, range(24, 25), "cave")  # turns 20-23 sent
    settled(client, llm, parent, calls + 2)
    assert [sent_turns(r) for r in llm.requests[calls:]] == [[5], [20, 21, 22, 23]]
    maintained = client.post("/admin/maintenance")
    assert maintained.status_code == 200, maintained.text
    assert maintained.json()["consolidated_entities"] == 1
    [consolidation] = llm.requests[calls + 2 :]
    assert [
        (e["entity_name"], e["description"])
        for e in json.loads(consolidation["messages"][1]["content"])
    ] == [("雨伞", "雨伞在第5轮出现；雨伞在第20轮出现")]
    # one mention citing both: the parent shows the rewrite with every line, the fork nothing
    umbrella = ("整理后：雨伞在第5轮出现；雨伞在第20轮出现", parent, [*lines[8:10], lines[16]])
    assert shown_entities(client, parent) == [umbrella, (FRAGMENTS[1], parent, [lines[6]])]
    assert shown_entities(client, fork_id) == [(FRAGMENTS[10], fork_id, [said])]
    # the player corrects 贝壳: their word, one mention without lines, on every save
    shell = next(
        item["memory_id"]
        for item in client.get(f"/users/{PLAYER}/memories", params={"kind": "entity"}).json()[
            "items"
        ]
        if item["entity_name"] == "贝壳"
    )
    edited = client.patch(
        f"/users/{PLAYER}/memories/entity/{shell}", json={"description": "贝壳是琳的"}
    )
    assert edited.status_code == 200, edited.text
    assert shown_entities(client, fork_id) == [("贝壳是琳的", None, None)]
    assert shown_entities(client, parent)[1:] == [("贝壳是琳的", None, None)]


def test_a_reload_into_a_mentions_lines_replays_them_and_going_back_costs_nothing(game):
    client, llm = game
    player = "yun"
    save = client.post("/saves", json={"user_id": player}).json()["save_id"]
    calls = len(llm.requests)
    lines = play(client, save, range(30, 34), "gallery", player=player)
    lines += play(client, save, range(34, 35), "beach", player=player)  # turns 30-33 sent
    settled(client, llm, save, calls + 1, player=player)
    # no message named: the mention cites the whole batch
    assert shown_entities(client, save, player) == [("风筝第1次", save, lines[0:8])]
    # reloaded at turn 31's reply: the mention is cut off, and its lines still on the chain
    # go to the LLM again as a replacement as soon as play goes on
    move_tip(client, save, lines[3], player)
    assert shown_entities(client, save, player) == []
    lines += play(client, save, range(35, 36), "park", player=player)
    settled(client, llm, save, calls + 2, player=player)
    assert sent_turns(llm.requests[-1]) == [30, 31]
    assert shown_entities(client, save, player) == [("风筝第2次", save, lines[0:4])]
    # back at the old tip: the original shows, the replacement not, with no LLM call
    move_tip(client, save, lines[9], player)
    assert shown_entities(client, save, player) == [("风筝第1次", save, lines[0:8])]
    assert len(llm.requests) == calls + 2


@pytest.mark.parametrize("engine", ["duckdb", "postgres"])
def test_entities_written_before_mentions_get_one_each_once_the_store_migrates(request, engine):
    import duckdb

    from rolemem import DynamicMemory
    from rolemem.engines.postgres_setup import init_database

    from .conftest import fresh_database

    if engine == "postgres":
        db: Any = fresh_database(request.getfixturevalue("postgres_url"), "rolemem_backfill")
        init_database(db)
    else:
        db = duckdb.connect()
    memory = DynamicMemory(db, profile={})
    entity = {
        "user_id": PLAYER,
        "agent_id": "qiyu",
        "entity_name": "贝壳",
        "entity_type": "具体实体",
        "kind": "记忆画面",
        "keyword": "贝壳",
    }
    shell = memory.add_entity(**entity, description="贝壳是粉色的")
    memory.add_entity(**entity, description="贝壳会唱歌")
    # as rolemem wrote it before entities kept mentions
    with memory.store.transaction() as cur:
        cur.execute("delete from memory_entity_mention", {})
        cur.execute("delete from rolemem_migration where name = 'entity_mentions_backfill'", {})
    memory.close()
    # opening a DuckDB store migrates it; a PostgreSQL database, init-db
    if engine == "postgres":
        init_database(db)
    memory = DynamicMemory(db, profile={})
    assert memory.store.records(
        "select entity_id, description, save_id, cast(line_ids as varchar) as line_ids "
        "from memory_entity_mention",
        {},
    ) == [
        {
            "entity_id": shell,
            "description": "贝壳是粉色的；贝壳会唱歌",
            "save_id": None,
            "line_ids": "[]",
        }
    ]
    memory.close()
