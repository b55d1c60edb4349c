"""What of a game's lifecycle runs on Citus today (issue 32 item 2's worklist): a 3-node cluster
(tests/python/citus_cluster.py), `rolemem init-db --demo` on it, the service on the coordinator
(keyword-only: no embedder), then a game over HTTP — saves, appends, a turn, a swipe, a reload,
a fork, a player's memories, a purge. Every request's status is printed, and every statement
the database refused (its SQL's first lines and the error), once each.

    .venv/bin/python bench/citus_lifecycle.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg
import uvicorn

from rolemem.cli import main as rolemem
from rolemem.service import create_app
from rolemem.service.core.child import free_port
from rolemem.service.core.settings import ServiceSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' Citus cluster
from tests.python.citus_cluster import CitusCluster, build_citus  # noqa: E402

KEY = {"X-API-Key": "game"}
DESIGNER = {"X-API-Key": "designer"}
REFUSED: dict[str, dict[str, Any]] = {}


def _record_refusals() -> None:
    """Every statement psycopg sends that the database refuses, keyed by its text."""
    execute = psycopg.Cursor.execute

    def recording(self: Any, query: Any, params: Any = None, **options: Any) -> Any:
        try:
            return execute(self, query, params, **options)
        except psycopg.Error as exc:
            text = query if isinstance(query, str) else str(query)
            entry = REFUSED.setdefault(
                text, {"error": f"{type(exc).__name__}: {exc}".splitlines()[0], "count": 0}
            )
            entry["count"] += 1
            raise

    psycopg.Cursor.execute = recording  # type: ignore[method-assign]


def _play(client: httpx.Client) -> list[tuple[str, int, str]]:
    done: list[tuple[str, int, str]] = []

    def call(method: str, route: str, headers: dict[str, str] = KEY, **kwargs: Any) -> Any:
        answer = client.request(method, route, headers=headers, **kwargs)
        done.append((f"{method} {route}", answer.status_code, answer.text[:300]))
        return answer.json() if answer.headers.get("content-type", "").startswith("app") else {}

    role = call("POST", "/roles", json={"name": "祁煜", "character_id": "qiyu"})
    role_id = role.get("role_id", 1)
    save = call("POST", "/saves", json={"user_id": "mumu", "name": "第一章"})
    save_id = save.get("save_id", 3)
    lines = [
        {"attribute": "user", "content": "你好"},
        {"attribute": "assistant", "content": "你好呀", "role_id": role_id},
        {"attribute": "user", "content": "在画什么"},
        {"attribute": "assistant", "content": "海", "role_id": role_id},
    ]
    appended = call("POST", f"/saves/{save_id}/lines", json={"user_id": "mumu", "lines": lines})
    line_ids = appended.get("line_ids", [0, 0, 0, 0])
    call("GET", f"/saves/{save_id}", params={"user_id": "mumu"})
    call("GET", f"/saves/{save_id}/lines", params={"user_id": "mumu"})
    turn = {"save_id": save_id, "user_id": "mumu", "role_id": role_id, "message": "你喜欢海吗"}
    call("POST", "/turn", json=turn)
    call("POST", "/turn", json={**turn, "save_id": 2, "role_id": 1})  # the demo's example 2
    call(
        "POST", f"/saves/{save_id}/regenerate", json={"user_id": "mumu", "line": {"content": "山"}}
    )
    # the demo's save 2 (rows init-db copied), where this save's own lines may be missing
    first = line_ids[1] or 3
    call("PUT", f"/saves/{save_id}/tip", json={"user_id": "mumu", "line_id": line_ids[-1] or 4})
    fork = call("POST", "/saves", json={"user_id": "mumu", "from_line_id": first})
    fork_id = fork.get("save_id", 1)
    call(
        "POST",
        f"/saves/{fork_id}/lines",
        json={"user_id": "mumu", "lines": [{"attribute": "user", "content": "去海边吧"}]},
    )
    call("GET", f"/saves/{fork_id}/lines", params={"user_id": "mumu"})
    status = {"user_id": "mumu", "agent_id": "qiyu"}
    call("GET", f"/saves/{save_id}/memory_status", params=status)
    call("GET", "/users/mumu/saves")
    call("GET", "/users/mumu/memories", params={"kind": "event", "limit": 2})
    call("GET", "/users/mumu/memories", params={"q": "星座"})
    call("GET", "/users/mumu/timeline", params={"agent_id": "qiyu"})
    call("POST", "/recall", json={"character_id": "qiyu", "user_id": "mumu", "text": "海边"})
    call("GET", "/official/qiyu", headers=DESIGNER)
    call("POST", "/users/mumu/forget", json={"agent_id": "qiyu"})
    call("GET", "/users/mumu/export")
    call("POST", "/users/mumu/forget", json={"purge": True})
    return done


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", help="write the requests and refusals here")
    args = parser.parse_args()
    install = build_citus(Path(__file__).resolve().parents[1])
    with CitusCluster(install, workers=2) as cluster:
        url = cluster.create_database("rolemem_lifecycle")
        assert rolemem(["init-db", "--db", url, "--demo"]) == 0
        _record_refusals()
        settings = ServiceSettings(api_key="game", designer_key="designer")
        app = create_app(url, embedder=None, settings=settings)
        port = free_port()
        server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical")
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
                requests = _play(client)
        finally:
            server.should_exit = True
            thread.join(30)
    for route, status, body in requests:
        print(f"{status} {route}" + ("" if status < 500 else f"  {body[:120]}"))
    print(f"\n{len(REFUSED)} statements refused:")
    for text, entry in REFUSED.items():
        head = " ".join(text.split())[:300]
        print(f"- x{entry['count']} {entry['error']}\n    {head}")
    if args.json:
        Path(args.json).write_text(
            json.dumps({"requests": requests, "refused": REFUSED}, ensure_ascii=False, indent=1)
        )


if __name__ == "__main__":
    main()
