"""The served process's logs: one access line per request (method, route template, status,
duration, request id: the caller's X-Request-Id when usable, else a new one, answered in the
same header), errors with time, level and the request id that caused them, as text or JSON;
no player text and no path ids in them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from rolemem.service.core.child import free_port, wait_until_serving
from rolemem.testing.scripted_llm import ScriptedChatServer, Status

from .conftest import REPO, demo_store

KEY = {"X-API-Key": "game"}
SECRET = "我的秘密是喜欢火锅"  # player text: never in a log line
GENERATED = re.compile(r"[0-9a-f]{16}")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


@contextmanager
def served(path: str, *options: str) -> Iterator[tuple[str, list[str]]]:
    """`rolemem serve` on `path` in a process of its own, warm: its base URL, and its log
    lines (filled in once it has stopped)."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "rolemem.cli", "serve", "--db", path, "--port", str(port)]
        + ["--api-key", "game", "--keyword-only", *options],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    lines: list[str] = []
    try:
        wait_until_serving(f"http://127.0.0.1:{port}", server, timeout=60)
        yield f"http://127.0.0.1:{port}", lines
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
        lines.extend(err.decode().splitlines())


def _append(scene: str, text: str) -> dict:
    return {
        "user_id": "mumu",
        "lines": [{"attribute": "user", "content": text}],
        "observe": {"user_id": "mumu", "agent_id": "qiyu", "role_id": 1, "scene": scene},
    }


def test_json_logs_one_line_per_request_and_errors_with_the_request_id(tmp_path):
    path = demo_store(str(tmp_path / "logs.duckdb"))
    with ScriptedChatServer(responder=lambda request: Status(500)) as llm:
        options = ["--log-format", "json", "--llm-base-url", llm.base_url]
        options += ["--llm-model", "scripted", "--extraction-retries", "0"]
        with served(path, *options) as (base, lines), httpx.Client(base_url=base) as client:
            answers = [
                client.get("/health"),
                client.post(
                    "/query",
                    headers={**KEY, "X-Request-Id": "game-7f3a"},
                    json={"query": SECRET, "user_id": "mumu", "agent_id": "qiyu"},
                ),
                # not usable (a space): a new id instead
                client.get("/saves/2?user_id=mumu", headers={**KEY, "X-Request-Id": "a b"}),
                client.get("/saves/999?user_id=mumu", headers=KEY),
                client.post("/query", json={}),
                client.get("/users/mumu/nowhere", headers=KEY),
                client.post(
                    "/saves/2/lines",
                    headers={**KEY, "X-Request-Id": "append-1"},
                    json=_append("gallery", SECRET),
                ),
                # the scene changes: an extraction is due, and the LLM fails it
                client.post(
                    "/saves/2/lines",
                    headers={**KEY, "X-Request-Id": "append-2"},
                    json=_append("beach", SECRET),
                ),
            ]
            assert answers[-1].json()["extraction"] == "scheduled"
            deadline = time.monotonic() + 30
            while True:
                status = client.get(
                    "/saves/2/memory_status?user_id=mumu&role_id=1",
                    headers={**KEY, "X-Request-Id": "poll"},
                ).json()
                if status["failed_attempts"] and status["extraction"] == "idle":
                    break
                assert time.monotonic() < deadline, status
                time.sleep(0.1)
    assert SECRET not in "\n".join(lines) and "火锅" not in "\n".join(lines)
    records = [json.loads(line) for line in lines]
    for record in records:
        assert TIME.fullmatch(record.pop("time")), record
    assert records[0]["logger"] == "rolemem.cli.serve"
    ids = [answer.headers["X-Request-Id"] for answer in answers]
    assert ids[1] == "game-7f3a" and ids[6:] == ["append-1", "append-2"]
    assert all(GENERATED.fullmatch(ids[index]) for index in (0, 2, 3, 4, 5)), ids
    assert len(set(ids)) == len(ids)
    access = [
        record
        for record in records[1:]
        if record["logger"] == "rolemem.service.core.access"
        and record["route"] not in ("/ready", "/saves/{save_id}/memory_status")
    ]
    for record in access:
        assert record.pop("duration_ms") >= 0, record
    expected = [
        ("GET", "/health", 200),
        ("POST", "/query", 200),
        ("GET", "/saves/{save_id}", 200),
        ("GET", "/saves/{save_id}", 404),
        ("POST", "/query", 401),
        ("GET", "unmatched", 404),
        ("POST", "/saves/{save_id}/lines", 200),
        ("POST", "/saves/{save_id}/lines", 200),
    ]
    assert access == [
        {
            "level": "INFO",
            "logger": "rolemem.service.core.access",
            "message": "served",
            "request_id": request_id,
            "method": method,
            "route": route,
            "status": status,
            # the name of the request's key (--api-key's), never the key
            **({"key": "api-key"} if route != "/health" and status != 401 else {}),
        }
        for request_id, (method, route, status) in zip(ids, expected, strict=True)
    ]
    polls = [record for record in records if record.get("route", "").endswith("memory_status")]
    assert {record["request_id"] for record in polls} == {"poll"}
    problems = [record for record in records if record["level"] != "INFO"]
    failed = f"{llm.base_url}: HTTP 500 from the LLM"
    # the failed attempt (one LLM call): logged with the append that scheduled it
    assert problems == [
        {
            "level": "WARNING",
            "logger": "rolemem.service.core.extraction",
            "message": "extraction of save 2 (role_id=1) failed: ExtractionError: extraction "
            f"failed: {failed}",
            "request_id": "append-2",
        },
    ]


def test_text_logs_by_default_and_no_access_log_when_asked(tmp_path):
    path = demo_store(str(tmp_path / "text.duckdb"))
    with served(path) as (base, lines):
        answer = httpx.get(f"{base}/health", headers={"X-Request-Id": "probe-1"})
        assert answer.headers["X-Request-Id"] == "probe-1"
    pattern = (
        TIME.pattern + r" INFO rolemem\.service\.core\.access served method=GET route=/health "
        r"status=200 duration_ms=\d+(\.\d+)? request_id=probe-1"
    )
    assert len([line for line in lines if re.fullmatch(pattern, line)]) == 1, lines
    probes = " rolemem.service.core.access served method=GET route=/ready "
    assert all(probes in line for line in lines[1:-1])
    with served(path, "--no-access-log") as (base, lines):
        assert httpx.get(f"{base}/health").headers["X-Request-Id"]
    assert [line.split(" ")[1:3] for line in lines] == [["INFO", "rolemem.cli.serve"]]
