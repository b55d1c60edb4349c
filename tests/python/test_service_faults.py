"""The service under faults (issue 17): an LLM that hangs or fails never holds up a request,
SIGTERM drains and exits with a request in flight, a file another process holds is one clear
line from every command."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time

import httpx

from rolemem.cli import main
from rolemem.memory_loop.llm import OpenAICompatibleLLM
from rolemem.service import create_app
from rolemem.service.core.child import free_port, wait_until_serving
from rolemem.testing.scripted_llm import Delay, ScriptedChatServer

from .conftest import REPO, demo_store, serving

TURN = {"save_id": 2, "character_id": "qiyu", "role_id": 1, "user_id": "mumu", "message": "你好"}


def test_a_hanging_llm_holds_up_no_request(tmp_path):
    path = str(tmp_path / "hang.duckdb")
    demo_store(path)
    hanging = ScriptedChatServer(responder=lambda request: Delay(60)).start()
    llm = OpenAICompatibleLLM(base_url=hanging.base_url, model="hang", timeout=30, max_retries=0)
    app = create_app(path, llm=llm, embedder=None)
    try:
        with serving(app) as client:
            observe = {"user_id": "mumu", "agent_id": "qiyu", "role_id": 1}
            for scene in ("gallery", "beach"):  # the scene change makes a batch due
                answer = client.post(
                    "/saves/2/lines",
                    json={
                        "lines": [{"attribute": "user", "content": f"去{scene}"}],
                        "observe": {**observe, "scene": scene},
                    },
                )
                assert answer.status_code == 200
            assert answer.json()["extraction"] == "scheduled"
            deadline = time.monotonic() + 10
            while not hanging.requests and time.monotonic() < deadline:
                time.sleep(0.05)
            assert len(hanging.requests) == 1  # the extraction is with the LLM, hanging
            started = time.monotonic()
            for _ in range(5):
                assert client.post("/turn", json=TURN).status_code == 200
                appended = client.post(
                    "/saves/2/lines",
                    json={
                        "lines": [{"attribute": "user", "content": "还在吗"}],
                        "observe": {**observe, "scene": "beach"},
                    },
                )
                assert appended.json()["extraction"] == "scheduled"  # already queued: one job
            assert time.monotonic() - started < 20
            status = client.get(
                "/saves/2/memory_status",
                params={"user_id": "mumu", "agent_id": "qiyu", "role_id": 1},
            ).json()
            assert status["extraction"] == "queued"
            assert len(hanging.requests) == 1
    finally:
        hanging.stop()


def test_sigterm_drains_and_exits_with_a_request_in_flight(tmp_path):
    path = str(tmp_path / "term.duckdb")
    demo_store(path)
    port = free_port()
    command = [sys.executable, "-m", "rolemem.cli", "serve", "--db", path, "--port", str(port)]
    server = subprocess.Popen(
        [*command, "--keyword-only", "--shutdown-grace", "5"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    wait_until_serving(base, server, timeout=60)
    answers: list[int] = []

    def slow_append() -> None:  # its body is still arriving when the signal comes
        def body():
            yield b'{"save_id": 2, "user_id": "mumu", "lines": ['
            for _ in range(20):
                time.sleep(0.1)
                yield b" "
            yield b'{"attribute": "user", "content": "x"}]}'

        answer = httpx.post(
            f"{base}/lines",
            content=body(),
            headers={"content-type": "application/json"},
            timeout=30,
        )
        answers.append(answer.status_code)

    in_flight = threading.Thread(target=slow_append)
    in_flight.start()
    time.sleep(0.5)
    server.send_signal(signal.SIGTERM)
    started = time.monotonic()
    server.wait(15)
    assert time.monotonic() - started < 10
    in_flight.join(10)
    assert answers == [200]  # drained: answered before the service stopped
    # uvicorn stops cleanly, then lets the signal end the process as it would have
    assert server.returncode in (0, -signal.SIGTERM)
    # the warning that a service without a key is open, the start-up line, then the access
    # lines: no error, no traceback
    printed = server.stderr.read().decode().splitlines()
    assert printed[0].startswith("rolemem: WARNING: no key: every route is OPEN")
    logged = [line.split(" ")[1:3] for line in printed[1:]]
    assert logged[0] == ["INFO", "rolemem.cli.serve"]
    assert set(map(tuple, logged[1:])) == {("INFO", "rolemem.service.core.access")}


def test_every_command_says_in_one_line_that_another_process_holds_the_file(tmp_path, capsys):
    path = str(tmp_path / "held.duckdb")
    demo_store(path)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; con = duckdb.connect(sys.argv[1]); "
            "print('held', flush=True); time.sleep(60)",
            path,
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout.readline() == b"held\n"
        commands = [
            ["init-db", "--db", path],
            ["init-db", "--demo", "--db", path],
            ["memory", "--db", path, "--save", "2", "--role", "1"],
            ["recall", "--db", path, "--character", "qiyu", "--text", "你好"],
            ["query", "--db", path, "--user", "mumu", "--agent", "qiyu", "--keyword-only", "x"],
            ["timeline", "--db", path, "--user", "mumu", "--agent", "qiyu"],
            ["maintain", "--db", path, "--no-llm"],
            ["config", "load", "--db", path],
            ["config", "export", "--db", path, "--character", "qiyu"],
            ["official", "export", "--db", path, "--agent", "qiyu"],
            ["snapshot", "--db", path, "--out", str(tmp_path / "copy.duckdb")],
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
                "你好",
                "--keyword-only",
            ],
        ]
        for command in commands:
            assert main(command) == 2, command
            err = capsys.readouterr().err
            assert err.count("\n") == 1, (command, err)
            assert err.startswith(f"rolemem: error: {path} is in use by another process"), (
                command,
                err,
            )
    finally:
        holder.kill()
        holder.wait()
