"""docs/integrating-a-game.md, run as printed: its `rolemem` commands, then `rolemem serve` as a
process (the scripted chat-completions server standing in for the LLM), then every `curl` and
`rolemem` line in order against it; where the page prints a whole answer, the answer is
exactly that. Every block of the page is marked as run here (test_docs.py checks it)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rolemem.service.core.child import free_port, wait_until_serving
from rolemem.testing.scripted_llm import ScriptedChatServer

from .conftest import REPO
from .docs_blocks import blocks_of

PAGE = "docs/integrating-a-game.md"

EVENT = json.dumps(
    {
        "events": [{"description": "木木夸祁煜画画时很温柔", "keywords": ["画画"], "message": 1}],
        "entities": [],
    },
    ensure_ascii=False,
)


def walkthrough() -> list[tuple[str, str | None]]:
    """(command, the answer the page prints after it, if any) in order."""
    steps: list[tuple[str, str | None]] = []
    for block in blocks_of(REPO / PAGE):
        if block.kind != "shell":
            continue
        assert block.marker == "run by tests/python/test_docs_game.py", str(block)
        for line in block.text.replace("\\\n", " ").splitlines():
            line = line.strip()
            if line.startswith("# ") and steps:  # the answer, on one or more lines
                steps[-1] = (steps[-1][0], (steps[-1][1] or "") + line[2:])
            elif line and not line.startswith("#"):
                steps.append((line, None))
    return steps


def test_the_walkthrough_covers_the_lifecycle():
    commands = " ".join(command for command, _ in walkthrough())
    for route in (
        "/roles",
        "/saves",
        "/turn",
        "/regenerate",
        "/tip",
        "memory_status",
        "/users/mumu/memories",
        "/forget",
        "/export",
        "/official/events",
        "/config/import",
        "rolemem snapshot --url",
    ):
        assert route in commands, route


@pytest.fixture
def work(tmp_path) -> Path:
    (tmp_path / "python").symlink_to(REPO / "python")
    return tmp_path


def test_the_walkthrough_runs_as_printed(work):
    port = free_port()
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "KEY": "game-secret",
        "DKEY": "designer-secret",
    }
    steps = walkthrough()
    server = None
    with ScriptedChatServer(responder=lambda request: EVENT) as llm:
        try:
            for command, printed in steps:
                if command.startswith("export "):
                    for name, value in (item.split("=", 1) for item in shlex.split(command)[1:]):
                        env[name] = value.replace("8000", str(port))
                    continue
                if command.startswith("rolemem serve"):
                    argv = shlex.split(
                        os.path.expandvars(
                            command.replace('"$KEY"', "game-secret").replace(
                                '"$DKEY"', "designer-secret"
                            )
                        )
                    )
                    argv[argv.index("--llm-base-url") + 1] = llm.base_url
                    server = subprocess.Popen(
                        [
                            sys.executable,
                            "-m",
                            "rolemem.cli",
                            *argv[1:],
                            "--port",
                            str(port),
                            "--keyword-only",
                            "--no-access-log",  # stderr is read at the end only
                        ],
                        cwd=work,
                        env=env,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                    )
                    wait_until_serving(f"http://127.0.0.1:{port}", server, timeout=60)
                    continue
                if command.startswith("rolemem "):
                    run = subprocess.run(
                        ["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True
                    )
                    assert run.returncode == 0, (command, run.stderr)
                    continue
                answer = _curl(command, work, env)
                if printed and "…" not in printed:
                    assert json.loads(answer) == json.loads(printed), (command, answer)
        finally:
            if server is not None:
                server.terminate()
                _, err = server.communicate(timeout=30)
                assert b"Traceback" not in err


def _curl(command: str, work: Path, env: dict[str, str]) -> str:
    """The command's answer; a memory route that 404s is retried while the extraction the
    walkthrough scheduled finishes in the background."""
    deadline = time.monotonic() + 20
    while True:
        run = subprocess.run(
            ["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True
        )
        if run.returncode == 0:
            return run.stdout
        if "memor" not in command or time.monotonic() > deadline:
            raise AssertionError(f"{command}: exit {run.returncode} {run.stderr}")
        time.sleep(0.2)
