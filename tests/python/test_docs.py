"""Every Python and shell block of README.md and docs/ runs as printed (docs_blocks.py says
which blocks and how they are marked otherwise), and every import path the docs show resolves.

A page's Python blocks run in order in one fresh process (one namespace per page); its shell
blocks run in order with bash, the venv first on PATH. Both run in a temporary directory
holding the demo store as `rolemem.duckdb` (`ROLEMEM_DB` names it; on PostgreSQL pages a
fresh database that `rolemem init-db --demo` filled) and `python/` as in the checkout, with
the scripted chat-completions server as the LLM (`ROLEMEM_LLM_BASE_URL`)."""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rolemem.testing.scripted_llm import ScriptedChatServer

from .conftest import REPO, demo_database, demo_store
from .docs_blocks import Block, all_blocks, blocks_of, pages

# pages whose examples run on PostgreSQL (ROLEMEM_DB is a postgresql:// URL there)
ON_POSTGRES = {"docs/postgresql.md"}
# the blocks shown and not run stay few: each needs its reason
MOST_NOT_RUN = 8

RUNNER = """
import json, sys
namespace = {"__name__": "__main__"}
for block in json.load(open(sys.argv[1], encoding="utf-8")):
    # padded so a traceback names the page's own line numbers
    code = compile("\\n" * block["line"] + block["text"], block["page"], "exec")
    exec(code, namespace)
"""


def _pages_with(kind: str) -> list[str]:
    return [
        str(page.relative_to(REPO))
        for page in pages()
        if any(block.kind == kind and block.runs_here for block in blocks_of(page))
    ]


def test_the_docs_hold_code_and_the_tests_run_it():
    blocks = all_blocks()
    runnable = [block for block in blocks if block.kind]
    assert sum(block.runs_here for block in runnable) >= 20
    assert sum(bool(block.marker and block.marker.startswith("run by")) for block in runnable) >= 8
    assert {block.kind for block in runnable if block.runs_here} == {"python", "shell"}
    not_run = [block for block in runnable if block.marker and block.marker.startswith("not")]
    assert len(not_run) <= MOST_NOT_RUN, [str(block) for block in not_run]
    for block in not_run:
        assert len(block.marker) > len("not run: ") + 10, f"{block}: say why it is not run"
    for block in runnable:
        if block.marker and block.marker.startswith("run by"):
            test = REPO / block.marker.removeprefix("run by ").strip()
            assert test.is_file(), f"{block}: {block.marker}"
            assert block.page in test.read_text(encoding="utf-8"), f"{test} reads {block.page}"


# development history: a stop or an issue by number, a commit id (hex with a letter and a digit)
HISTORY = re.compile(
    r"\bstops? \d+\b|\bissues? \d+\b|\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"
)


def test_the_readme_is_short_and_history_stays_in_decisions():
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) < 200
    for page in pages():
        if "decisions" in page.relative_to(REPO).parts:
            continue
        found = HISTORY.findall(page.read_text(encoding="utf-8"))
        assert found == [], f"{page.relative_to(REPO)}: {found} belongs in docs/decisions/"
    decisions = (REPO / "docs" / "decisions" / "benchmark-history.md").read_text(encoding="utf-8")
    assert HISTORY.search(decisions)  # the pattern finds what it is for


def test_the_shell_blocks_show_every_cli_command():
    shown = {
        line.split()[1]
        for block in all_blocks()
        if block.kind == "shell"
        for line in block.text.replace("\\\n", " ").splitlines()
        if line.startswith("rolemem ")
    }
    assert shown >= {
        "init-db",
        "memory",
        "recall",
        "config",
        "query",
        "observe",
        "timeline",
        "maintain",
        "explain",
        "snapshot",
        "serve",
        "import-chat",
    }


@pytest.fixture
def llm():
    with ScriptedChatServer() as server:
        yield server


def _work(page: str, tmp_path: Path, llm: ScriptedChatServer, request) -> dict[str, str]:
    """The page's working directory (tmp_path) and environment."""
    (tmp_path / "python").symlink_to(REPO / "python")
    db = demo_store(str(tmp_path / "rolemem.duckdb"))
    if page in ON_POSTGRES:
        name = "docs_" + re.sub(r"\W", "_", Path(page).stem)
        db = demo_database(request.getfixturevalue("postgres_url"), name)
    return {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "ROLEMEM_DB": db,
        "ROLEMEM_LLM_BASE_URL": llm.base_url,
        "ROLEMEM_LLM_MODEL": "scripted",
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }


def _runnable(page: str, kind: str) -> list[Block]:
    return [b for b in blocks_of(REPO / page) if b.kind == kind and b.runs_here]


@pytest.mark.parametrize("page", _pages_with("python"))
def test_the_python_blocks_of_a_page_run(page, tmp_path, llm, request):
    env = _work(page, tmp_path, llm, request)
    blocks = [
        {"page": block.page, "line": block.line, "text": block.text}
        for block in _runnable(page, "python")
    ]
    (tmp_path / "blocks.json").write_text(json.dumps(blocks), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(tmp_path / "blocks.json")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]


@pytest.mark.parametrize("page", _pages_with("shell"))
def test_the_shell_blocks_of_a_page_run(page, tmp_path, llm, request):
    env = _work(page, tmp_path, llm, request)
    for block in _runnable(page, "shell"):
        # a block that fails before its own `kill` leaves no server behind holding the pipe
        # (the test would wait on it forever)
        stop_jobs = "trap 'kill $(jobs -p) 2> /dev/null || true' EXIT\n"
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", stop_jobs + block.text],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, (str(block), done.stderr[-4000:])
        assert "Traceback" not in done.stderr, (str(block), done.stderr[-4000:])


# a dotted name that starts with rolemem. in any page; file names excepted
DOTTED = re.compile(r"(?<![\w/.-])rolemem(?:\.[A-Za-z_]\w*)+")
FROM_IMPORT = re.compile(r"^\s*from (rolemem(?:\.\w+)*) import \(?([\w, ]+)\)?", re.M)
FILE_NAMES = {"rolemem.duckdb"}


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        try:
            for name in parts[cut:]:
                target = getattr(target, name)
        except AttributeError:
            return False
        return True
    return False


def test_every_import_path_the_docs_show_resolves():
    shown: set[str] = set()
    for page in pages():
        text = page.read_text(encoding="utf-8")
        shown |= {name for name in DOTTED.findall(text) if name not in FILE_NAMES}
        for module, names in FROM_IMPORT.findall(text):
            shown |= {f"{module}.{name.strip()}" for name in names.split(",") if name.strip()}
    assert len(shown) >= 20
    assert sorted(name for name in shown if not _resolves(name)) == []


def test_the_service_page_lists_every_serve_option():
    """docs/service.md's option table is the settings model's (flags, variables, defaults)."""
    from rolemem.service.core.settings import options_table

    assert options_table() in (REPO / "docs" / "service.md").read_text(encoding="utf-8")
