"""Two `rolemem serve` processes on one PostgreSQL database (several hosts, or --workers): a
game spreads its requests over both. Appends to the same save from both processes at once lose
and duplicate no line (the save's row is locked while its tip moves), a retried request sent
to both stores once, each batch of turns is extracted once whichever process claims it, and a
config imported through one is what the other recalls."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import httpx
import pytest

from rolemem.cli import main
from rolemem.engines import PostgresEngine
from rolemem.service.core.child import free_port, wait_until_serving
from rolemem.testing.scripted_llm import ScriptedChatServer

from .conftest import REPO, demo_database

KEY = {"X-API-Key": "game"}
TURNS_PER_CLIENT = 6
CLIENTS = 4


@contextmanager
def service(url: str, llm_url: str, *extra: str) -> Iterator[str]:
    """`rolemem serve` in a process of its own; its base URL."""
    port = free_port()
    env = {**os.environ, "ROLEMEM_API_KEY": "game"}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rolemem.cli",
            "serve",
            "--db",
            url,
            "--port",
            str(port),
            "--keyword-only",
            "--no-access-log",  # its stderr is read at the end: a full pipe would block it
            "--llm-base-url",
            llm_url,
            "--llm-model",
            "scripted",
            *extra,
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base, process, timeout=90)
        yield base
    finally:
        process.terminate()
        _, err = process.communicate(timeout=60)
        assert b"Traceback" not in err, err.decode()[-2000:]


def extracted(request: dict) -> str:
    """One event per batch, naming the batch's first message (so each batch is told apart)."""
    first = request["messages"][1]["content"].splitlines()[0]
    return json.dumps(
        {"events": [{"description": f"记得{first[-12:]}", "keywords": ["回忆"]}], "entities": []},
        ensure_ascii=False,
    )


@pytest.fixture(scope="module")
def database(postgres_url):
    url = demo_database(postgres_url, "rolemem_processes")
    with ScriptedChatServer(responder=extracted) as llm:
        yield url, llm


@pytest.fixture(scope="module")
def processes(database):
    url, llm = database
    with service(url, llm.base_url) as first, service(url, llm.base_url) as second:
        yield url, llm, (first, second)


def test_appends_from_two_processes_lose_and_duplicate_nothing(processes):
    url, llm, bases = processes
    with httpx.Client(timeout=60, headers=KEY) as client:
        save = client.post(f"{bases[0]}/saves", json={"user_id": "ayuan"}).json()["save_id"]
    observe = {"user_id": "ayuan", "agent_id": "qiyu", "role_id": 1, "scene": "gallery"}

    def play(number: int) -> list[int]:
        base = bases[number % 2]  # half the clients on each process
        ids = []
        with httpx.Client(base_url=base, timeout=60, headers=KEY) as client:
            for turn in range(TURNS_PER_CLIENT):
                answer = client.post(
                    f"/saves/{save}/lines",
                    json={
                        "user_id": "ayuan",
                        "lines": [
                            {"attribute": "user", "content": f"玩家{number}的第{turn}句"},
                            {
                                "attribute": "assistant",
                                "content": f"回复{number}的第{turn}句",
                                "role_id": 1,
                            },
                        ],
                        "observe": observe,
                    },
                )
                assert answer.status_code == 200, answer.text
                ids += answer.json()["line_ids"]
        return ids

    with ThreadPoolExecutor(CLIENTS) as pool:
        written = [line for ids in pool.map(play, range(CLIENTS)) for line in ids]
    assert len(written) == len(set(written)) == 2 * CLIENTS * TURNS_PER_CLIENT
    with httpx.Client(timeout=60, headers=KEY) as client:
        page = client.get(
            f"{bases[1]}/saves/{save}/lines", params={"user_id": "ayuan", "limit": 1000}
        ).json()
        # every append's lines are on the branch, in one piece: nothing forked off by a race
        branch = [line["line_id"] for line in page["lines"]]
        assert sorted(branch) == sorted(written)
        contents = [line["content"] for line in page["lines"]]
        for user_line, reply in zip(contents[::2], contents[1::2], strict=True):
            assert reply == user_line.replace("玩家", "回复")
        # extraction: the batches due were each claimed by one process, never twice
        deadline = time.monotonic() + 60
        while True:
            status = client.get(
                f"{bases[0]}/saves/{save}/memory_status",
                params={"user_id": "ayuan", "agent_id": "qiyu", "role_id": 1},
            ).json()
            # twenty pending turns make a batch of ten due: fewer left, none is due any more
            if status["pending_turns"] < 20 and status["last_batch_key"] is not None:
                break
            assert time.monotonic() < deadline, status
            time.sleep(0.3)
    with PostgresEngine(url) as engine:
        batches = engine.run(
            "select first_line_id, last_line_id from memory_extraction_batch "
            "where save_id = $save order by first_line_id",
            {"save": save},
        )
        events = engine.run(
            "select count(*), count(distinct batch_key) from memory_event where save_id = $save",
            {"save": save},
        )
    assert batches, "twenty turns make a batch due"
    for (_, last), (first, _) in zip(batches, batches[1:], strict=False):
        assert last < first  # no two batches share a line
    assert events == [(len(batches), len(batches))]  # one extraction's event per batch


def test_a_retry_sent_to_both_processes_is_stored_once(processes):
    _, _, bases = processes
    with httpx.Client(timeout=60, headers=KEY) as client:
        save = client.post(f"{bases[0]}/saves", json={"user_id": "bo"}).json()["save_id"]
    body = {"user_id": "bo", "lines": [{"attribute": "user", "content": "只说一次"}]}
    start = threading.Barrier(2)

    def send(base: str) -> dict:
        with httpx.Client(timeout=60) as client:
            start.wait()
            answer = client.post(
                f"{base}/saves/{save}/lines",
                headers={**KEY, "Idempotency-Key": "retry-1"},
                json=body,
            )
            assert answer.status_code == 200, answer.text
            return dict(answer.json())

    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(send, bases))
    assert answers[0]["line_ids"] == answers[1]["line_ids"]
    with httpx.Client(timeout=60, headers=KEY) as client:
        lines = client.get(f"{bases[1]}/saves/{save}/lines", params={"user_id": "bo"}).json()
    assert [line["content"] for line in lines["lines"]] == ["只说一次"]


def test_config_imported_through_one_process_is_recalled_by_the_other(processes):
    _, _, bases = processes
    recall = {"character_id": "qiyu", "user_id": "cc", "text": "灯塔", "dry_run": True}
    with httpx.Client(timeout=60, headers=KEY) as client:
        before = client.post(f"{bases[1]}/recall", json=recall).json()
        assert before["character_memory_attributes"] == ""
        config = client.get(f"{bases[0]}/config/qiyu").json()
        config["attributes"]["新设定"] = [
            {"关键词": ["灯塔"], "内容": "祁煜常去海边的灯塔写生", "强度": 5}
        ]
        imported = client.post(f"{bases[0]}/config/import", json=config)
        assert imported.status_code == 200, imported.text
        deadline = time.monotonic() + 10  # the other process looks at most once a second
        while True:
            after = client.post(f"{bases[1]}/recall", json=recall).json()
            if after["character_memory_attributes"]:
                break
            assert time.monotonic() < deadline
            time.sleep(0.3)
    assert after["character_memory_attributes"] == "新设定：祁煜常去海边的灯塔写生"


def test_workers_serve_one_port_and_duckdb_refuses_them(database, tmp_path, capsys):
    url, llm = database
    with service(url, llm.base_url, "--workers", "2") as base:
        with httpx.Client(timeout=60, headers=KEY) as client:
            answers = [client.get(f"{base}/saves/1?user_id=mumu").status_code for _ in range(6)]
    assert answers == [200] * 6
    path = str(tmp_path / "one.duckdb")
    assert main(["init-db", "--db", path]) == 0
    assert main(["serve", "--db", path, "--workers", "2"]) == 2
    assert "--workers above 1 needs a PostgreSQL database" in capsys.readouterr().err


def test_the_cli_imports_and_exports_config_on_the_database(database, capsys):
    url, _ = database
    document = REPO / "python" / "rolemem" / "data" / "characters" / "qinling.json"
    assert main(["config", "import", str(document), "--db", url]) == 0
    assert "wrote" in capsys.readouterr().out
    assert main(["config", "export", "--character", "qinling", "--db", url]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported == json.loads(document.read_text(encoding="utf-8"))
