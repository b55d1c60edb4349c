"""dbt on the data a game wrote: a whole lifecycle over HTTP (appends, a swipe, a reload, a
fork, a failed then recovered extraction, a player's edit and delete, forgetting, a purge,
maintenance, designer and SillyTavern imports), then the analysts' `dbt build --exclude
tag:demo+` with every data test passing: on DuckDB on the service's snapshot, on PostgreSQL on
the live database, where dbt and the service share the database in any order (serve, build,
serve again, build again)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.parse
from datetime import datetime
from pathlib import Path

import duckdb
import httpx
import psycopg
import pytest

from rolemem.memory_loop.llm import OpenAICompatibleLLM
from rolemem.service import create_app
from rolemem.service.core.settings import ServiceSettings
from rolemem.testing.scripted_llm import ScriptedChatServer, Status

from .conftest import REPO, _dbt, demo_database, demo_store, post, serving, wait_for_status

KEY = {"X-API-Key": "game"}
DESIGNER = {"X-API-Key": "designer"}
# a failed extraction's back-off: a second, so the service's own retry is seen
SETTINGS = ServiceSettings(api_key="game", designer_key="designer", extraction_retry_seconds=1)
OBSERVE = {"agent_id": "qiyu", "role_id": 1, "scene": "gallery", "user_name": "阿雅"}
EXTRACTED = json.dumps(
    {
        "events": [
            {"description": "阿雅和祁煜打了招呼", "keywords": ["打招呼"], "message": 1},
            {"description": "阿雅提议去海边", "keywords": ["海边"]},
        ],
        "entities": [],
    },
    ensure_ascii=False,
)
DESIGNER_DOC = {
    "character_id": "newcomer",
    "attributes": {
        "兴趣爱好": [
            {"关键词": ["画画", "绘画"], "内容": "喜欢在海边画画", "强度": 5, "queryParams": []}
        ]
    },
}


def append(client: httpx.Client, save_id: int, lines: list, now: str, scene: str) -> dict:
    return post(
        client,
        f"/saves/{save_id}/lines",
        {
            "user_id": "aya",
            "lines": lines,
            "now": now,
            "observe": {**OBSERVE, "scene": scene},
        },
    )


def talk(said: str, reply: str) -> list[dict]:
    return [
        {"attribute": "user", "content": said},
        {"attribute": "assistant", "content": reply, "role_id": 1},
    ]


def play(client: httpx.Client, app, llm: ScriptedChatServer) -> None:
    """The lifecycle (aya's saves end purged with her)."""
    save = post(client, "/saves", {"user_id": "aya", "name": "画室"})["save_id"]
    first = append(client, save, talk("你好", "你好呀"), "2024-05-01T20:00:00", "gallery")
    append(client, save, talk("在画什么", "海"), "2024-05-01T20:01:00", "gallery")
    # a swipe, then a reload of the first reply
    swiped = post(
        client, f"/saves/{save}/regenerate", {"user_id": "aya", "line": {"content": "山"}}
    )
    reloaded = client.put(
        f"/saves/{save}/tip",
        headers=KEY,
        json={"user_id": "aya", "line_id": swiped["replaced_line_id"]},
    )
    assert reloaded.status_code == 200, reloaded.text
    fork = post(client, "/saves", {"user_id": "aya", "from_line_id": first["line_ids"][1]})
    post(
        client,
        f"/saves/{fork['save_id']}/lines",
        {"user_id": "aya", "lines": [{"attribute": "user", "content": "去海边吧"}]},
    )
    # a scene change makes the turns due; the LLM fails (one attempt, one call), then the
    # service's retry after the back-off succeeds
    llm.push(Status(500))
    answer = append(client, save, talk("好看", "谢谢"), "2024-05-01T20:05:00", "beach")
    assert answer["extraction"] == "scheduled"
    status = wait_for_status(client, save, lambda s: s["failed_attempts"] == 1)
    assert status["failed_attempts"] == 1, status
    llm.push(EXTRACTED)
    answer = append(
        client,
        save,
        [{"attribute": "user", "content": "我们去海边吧"}],
        "2024-05-01T20:06:00",
        "beach",
    )
    status = wait_for_status(client, save, lambda s: s["last_batch_key"] is not None)
    assert status["last_batch_key"] is not None, status
    # maintenance the day aya played, with a threshold her two memories reach
    loop = app.state.store.loop
    kept = dict(loop.settings)
    loop.settings.update(cleanup_threshold=2, cleanup_share=0.5)
    report = loop.maintain(now=datetime(2024, 5, 1, 23))
    loop.settings.update(kept)
    assert report.archived == {"weakest_share": 1}, report
    # mumu edits one memory and deletes another, then forgets qiyu; aya is purged
    events = client.get(
        "/users/mumu/memories", headers=KEY, params={"kind": "event", "limit": 2}
    ).json()["items"]
    edited, deleted = (item["memory_id"] for item in events)
    answer = client.patch(
        f"/users/mumu/memories/event/{edited}", headers=KEY, json={"description": "改过的记忆"}
    )
    assert answer.status_code == 200, answer.text
    answer = client.delete(f"/users/mumu/memories/event/{deleted}", headers=KEY)
    assert answer.status_code == 200, answer.text
    post(client, "/users/mumu/forget", {"agent_id": "qiyu"})
    post(client, "/users/aya/forget", {"purge": True})
    post(client, "/config/import", DESIGNER_DOC, DESIGNER)
    lorebook = json.loads(
        (Path(__file__).resolve().parent / "fixtures/sillytavern/world_info.json").read_text(
            "utf-8"
        )
    )
    post(client, "/config/import/sillytavern/atelier", lorebook, DESIGNER)
    reasons = {
        row[0] for row in app.state.store.engine.run("select reason from memory_archive", {})
    }
    assert {"deleted", "edited", "forgotten"} <= reasons


def a_turn(client: httpx.Client) -> None:
    """A turn of mumu's demo save (aya's were purged)."""
    assert client.get("/health").json() == {"status": "ok"}
    turn = post(
        client,
        "/turn",
        {"save_id": 2, "character_id": "qiyu", "role_id": 1, "user_id": "mumu", "message": "出发"},
    )
    assert turn["messages"]


def test_dbt_builds_on_a_snapshot_of_a_played_duckdb_store(tmp_path):
    path = demo_store(str(tmp_path / "game.duckdb"))
    with ScriptedChatServer() as llm_server:
        llm = OpenAICompatibleLLM(base_url=llm_server.base_url, model="scripted", max_retries=0)
        app = create_app(
            path,
            llm=llm,
            embedder=None,
            snapshot_path=str(tmp_path / "snapshot.duckdb"),
            settings=SETTINGS,
        )
        with serving(app) as client:
            play(client, app, llm_server)
            answer = client.post("/snapshot", headers=KEY)
            assert answer.status_code == 200, answer.text
    _dbt(str(tmp_path / "snapshot.duckdb"), tmp_path / "dbt", "build", "--exclude", "tag:demo+")


def test_dbt_and_the_service_share_a_postgres_database_in_any_order(tmp_path, postgres_url):
    url = demo_database(postgres_url, "rolemem_live")
    host = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["host"][0]

    def build() -> None:
        _dbt(
            str(tmp_path / "unused.duckdb"),
            tmp_path / "dbt",
            "build",
            "--exclude",
            "tag:demo+",
            "--target",
            "postgres",
            env={"ROLEMEM_PG_HOST": host, "ROLEMEM_PG_DBNAME": "rolemem_live"},
        )

    with ScriptedChatServer() as llm_server:
        llm = OpenAICompatibleLLM(base_url=llm_server.base_url, model="scripted", max_retries=0)
        app = create_app(url, llm=llm, embedder=None, settings=SETTINGS)
        with serving(app) as client:
            play(client, app, llm_server)
            build()  # while the service runs
        # an analyst's view on one of the service's config copies
        with psycopg.connect(url, autocommit=True) as con:
            con.execute(
                "create view public.analyst_stopwords as select * from rolemem.recall_stopwords"
            )
        # the service starts again on the database dbt built on (its config copies replaced)
        again = create_app(url, llm=llm, embedder=None, settings=SETTINGS)
        with serving(again) as client:
            a_turn(client)
    build()
    with psycopg.connect(url, autocommit=True) as con:
        assert con.execute("select count(*) from public.analyst_stopwords").fetchone()[0] > 0


def test_every_reason_the_package_archives_with_is_in_the_seed_dbt_tests_against():
    import ast
    import csv

    from rolemem.dynamic_memory.archive import archive_reasons
    from rolemem.sql.project import project_dir

    with (project_dir("seeds") / "memory" / "memory_archive_reasons.csv").open() as file:
        assert archive_reasons() == tuple(row["reason"] for row in csv.DictReader(file))
    written = set()
    for path in (Path(__file__).resolve().parents[2] / "python" / "rolemem").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) == "archive"
                and len(node.args) > 2
                and isinstance(node.args[2], ast.Constant)
            ):
                written.add(node.args[2].value)
    assert written == {"consolidated", "deleted", "edited", "forgotten"}
    assert written <= set(archive_reasons())


def test_an_archive_reason_outside_the_seed_is_refused():
    from rolemem.dynamic_memory.archive import archive

    with pytest.raises(ValueError, match="'lost' is not in seed memory_archive_reasons"):
        archive(None, "event", "lost", [1], datetime(2024, 1, 1))


def test_dbt_on_the_file_a_service_owns_fails_with_one_line_naming_the_snapshot(tmp_path):
    path = demo_store(str(tmp_path / "game.duckdb"))
    with duckdb.connect(path):  # this process owns the file, as `rolemem serve` does
        done = subprocess.run(
            [
                str(Path(sys.executable).with_name("dbt")),
                "build",
                "--select",
                "stg_app__roles",
                "--profiles-dir",
                str(REPO),
                "--project-dir",
                str(REPO),
                "--target-path",
                str(tmp_path / "target"),
            ],
            env={**os.environ, "ROLEMEM_DB": path, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"},
            cwd=REPO,
            capture_output=True,
            text=True,
        )
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "Traceback" not in output, output
    said = [line for line in output.splitlines() if "rolemem snapshot" in line]
    assert len(said) == 1, output
    assert said[0].strip().startswith(f"{path} is open in another process ("), said
