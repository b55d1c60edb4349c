"""A batch's scene is the scene its lines were played in, over HTTP: the scene an append
observes is stored with its lines, and a scene change cuts the batch there, so the batch of
the old scene holds exactly the turns played in it, however late it is extracted (here: after
three appends in the new scene). Runs on the embedded DuckDB file and on PostgreSQL."""

from __future__ import annotations

import functools
import json
import threading
import time
from typing import Any

import httpx
import pytest

from rolemem.service.core.settings import ServiceSettings

from . import conftest
from .conftest import new_save, scripted_game, sent_turns

PLAYER = "sena"
OBSERVE = {"agent_id": "qiyu", "role_id": 1, "user_name": "瀬名"}
settled = functools.partial(conftest.settled, player=PLAYER, timeout=60)
# the extraction worker waits here on its first LLM call: what is queued behind it is
# extracted later, after the appends that follow
GATE = threading.Event()


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def game(request, tmp_path_factory):
    GATE.clear()
    calls: list[int] = []

    def extracted(request: dict[str, Any]) -> str:
        calls.append(1)
        if len(calls) == 1:
            GATE.wait(timeout=60)
        text = json.dumps(request["messages"], ensure_ascii=False)
        turns = [n for n in range(1, 40) if f"玩家第{n}句" in text]
        events = [{"description": f"第{turns}轮的事", "keywords": ["事"]}] if turns else []
        return json.dumps({"events": events, "entities": []}, ensure_ascii=False)

    with scripted_game(
        request,
        tmp_path_factory,
        "rolemem_scenes",
        settings=ServiceSettings(extraction_threads=1),
        responder=extracted,
    ) as (client, _, llm_server):
        yield client, llm_server
    GATE.set()


def append(client: httpx.Client, save: int, player: str, reply: str, scene: str) -> None:
    lines = [
        {"attribute": "user", "content": player},
        {"attribute": "assistant", "content": reply, "role_id": 1},
    ]
    conftest.append(client, save, lines, {**OBSERVE, "scene": scene}, player=PLAYER)


def play(client: httpx.Client, save: int, turns: range, scene: str) -> None:
    for n in turns:
        append(client, save, f"玩家第{n}句", f"钦灵第{n}句", scene)


def events(client: httpx.Client) -> list[tuple[str, str | None]]:
    page = client.get(f"/users/{PLAYER}/memories", params={"kind": "event", "limit": 100})
    assert page.status_code == 200, page.text
    return sorted((item["description"], item["scene"]) for item in page.json()["items"])


def test_a_scene_change_batch_holds_exactly_the_turns_played_before_it(game):
    client, llm = game
    # another save's scene change holds the one extraction worker (its LLM call waits)
    other = new_save(client, PLAYER, "瀬名")
    append(client, other, "别处的话", "别处的回答", "street")
    append(client, other, "别处的第二句", "别处的第二个回答", "station")
    deadline = time.monotonic() + 30
    while not llm.requests:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    # three turns in the gallery, then three in the studio, each its own append: the
    # gallery's batch is due from the fourth on, but is only extracted after the sixth
    save = new_save(client, PLAYER, "瀬名")
    play(client, save, range(1, 4), "gallery")
    play(client, save, range(4, 7), "studio")
    GATE.set()
    settled(client, llm, [other, save], 2)
    assert [sent_turns(request) for request in llm.requests] == [[], [1, 2, 3]]
    assert events(client) == [("第[1, 2, 3]轮的事", "gallery")]
    # the studio's turns stay pending (3 of the 20 a window waits for) until the next change
    play(client, save, range(7, 8), "beach")
    settled(client, llm, [save], 3)
    assert sent_turns(llm.requests[2]) == [4, 5, 6]
    assert events(client) == [("第[1, 2, 3]轮的事", "gallery"), ("第[4, 5, 6]轮的事", "studio")]


@pytest.mark.parametrize("engine", ["duckdb", "postgres"])
def test_a_store_from_before_line_scenes_gains_them(request, tmp_path, engine):
    """A store (or a game's database) whose `line` has no scene, and on DuckDB a history table
    built without it: the column is added (DuckDB: when the service opens the file;
    PostgreSQL: by `rolemem init-db`), the history rebuilt, and the appends that follow are
    stored with their scenes."""
    from rolemem.service import create_app

    from .conftest import demo_store, fresh_database, serving

    if engine == "duckdb":
        import duckdb

        store = demo_store(str(tmp_path / "old.duckdb"))
        with duckdb.connect(store) as con:
            con.execute("alter table line drop column scene")
            con.execute("alter table int_lines_chained_to_root drop column scene")
            # a store from before the column has not recorded the step that adds it
            con.execute("delete from rolemem_migration where name = 'model_columns'")
    else:
        import psycopg

        from rolemem.cli import main

        store = fresh_database(request.getfixturevalue("postgres_url"), "rolemem_old_scenes")
        assert main(["init-db", "--db", store, "--demo"]) == 0
        with psycopg.connect(store, autocommit=True) as con:
            con.execute("alter table line drop column scene")
            con.execute("delete from rolemem_migration where name = 'model_columns'")
        # a shared database is upgraded once, by `rolemem init-db` (not by every process)
        assert main(["init-db", "--db", store]) == 0
    with serving(create_app(store, embedder=None, settings=ServiceSettings())) as client:
        branch = client.get("/saves/1/lines", params={"user_id": "mumu"})
        assert branch.status_code == 200, branch.text
        assert [line["line_id"] for line in branch.json()["lines"]] == list(range(1, 9))
        save = client.post("/saves", json={"user_id": PLAYER}).json()["save_id"]
        append(client, save, "玩家第1句", "钦灵第1句", "gallery")
    read = f"select content, scene from line where save_id = {int(save)} order by id"
    if engine == "duckdb":
        with duckdb.connect(store, read_only=True) as con:
            rows = con.execute(read).fetchall()
            chain = con.execute(
                "select count(*) from duckdb_columns() "
                "where table_name = 'int_lines_chained_to_root' and column_name = 'scene'"
            ).fetchone()
        assert chain == (1,)
    else:
        with psycopg.connect(store) as con:
            rows = con.execute(read).fetchall()
    assert rows == [("玩家第1句", "gallery"), ("钦灵第1句", "gallery")]
