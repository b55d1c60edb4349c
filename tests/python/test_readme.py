"""Every `rolemem` command the README prints runs as printed (optional `[...]` parts left out),
against a demo database and, for the memory loop, the scripted chat-completions server. The
quick-start scripts are what CI runs; `rolemem serve` and the commands that call it run in
test_service.py; Python snippets are exercised by the other tests."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from rolemem.testing.scripted_llm import ScriptedChatServer

from .conftest import REPO


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.DOTALL):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            line = line.strip().removeprefix("$ ")
            # the server and what talks to it run in test_service.py, against a real server
            if (
                line.startswith("rolemem ")
                and not line.startswith("rolemem serve")
                and ("--url" not in line)
            ):
                line = re.sub(r"\s*#.*$", "", line)  # a trailing comment
                line = re.sub(r"\s*\[[^\]]*\]", "", line)  # optional parts
                commands.append(line)
    return commands


def test_the_readme_prints_the_commands_this_test_runs():
    commands = readme_commands()
    assert len(commands) >= 10
    assert {c.split()[1] for c in commands} >= {
        "init-db",
        "memory",
        "recall",
        "config",
        "query",
        "observe",
        "timeline",
        "maintain",
    }


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("readme")
    (work / "python").symlink_to(REPO / "python")  # paths as printed, relative to the checkout
    return work


@pytest.mark.parametrize("command", readme_commands())
def test_a_readme_command_runs_as_printed(workdir, command):
    env = {
        **os.environ,
        "ROLEMEM_DB": str(workdir / "rolemem.duckdb"),
        "ROLEMEM_LLM_MODEL": "scripted",
    }
    if not (workdir / "rolemem.duckdb").exists():
        subprocess.run(
            [sys.executable, "-m", "rolemem.cli", "init-db", "--demo"],
            env=env,
            cwd=workdir,
            check=True,
            capture_output=True,
        )
    argv = shlex.split(command.split(">")[0])
    with ScriptedChatServer() as server:
        env["ROLEMEM_LLM_BASE_URL"] = server.base_url
        result = subprocess.run(
            [sys.executable, "-m", "rolemem.cli", *argv[1:]],
            env=env,
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
