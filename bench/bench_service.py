"""Benchmark: a simulated game against `rolemem serve` on 127.0.0.1.

    .venv/bin/python bench/bench_service.py [--players 8] [--turns 10] [--clients 8]

Every player plays each configured character (the demo's two) in a save of its own; each turn
is `POST /turn` then `POST /lines` (the player line and the reply, with the memory loop
observing in the background through the scripted chat-completions server). Printed: turns per
second, p50/p95/p99 of /turn, /lines and /query, failed requests (must be 0), the store size
after `maintain`. Baseline, same run: the three separate in-process calls a game would make
instead of /turn (build_memory_for_save + CharacterMemory recall + DynamicMemory.query).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import socket
import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import httpx
import uvicorn

from rolemem import CharacterMemory, DynamicMemory, build_memory_for_save
from rolemem.demo_data import load_demo
from rolemem.llm import OpenAICompatibleLLM
from rolemem.memory_loop import MemoryLoop
from rolemem.scripted_llm import ScriptedChatServer
from rolemem.service import create_app

NOW = datetime(2021, 2, 21, 20, 0)
CHARACTERS = {"qiyu": (1, "祁煜"), "qinling": (2, "钦灵")}
MESSAGES = [
    "今天画画时你好温柔",
    "我们去海边散步吧",
    "你还记得那次火锅吗",
    "最近有点累",
    "这幅画真漂亮",
    "晚上一起看星星",
    "我想听你讲讲画廊的故事",
    "明天见",
]


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[max(0, math.ceil(q * len(values)) - 1)]


def build(path: str, players: int) -> list[tuple[int, str, str]]:
    """The demo store plus one save per player x character, opened by its system line."""
    load_demo(path)
    games = []
    with duckdb.connect(path) as con:
        con.execute("insert into role (id, name) values (2, '钦灵') on conflict do nothing")
        for player in range(players):
            for character, (role_id, name) in CHARACTERS.items():
                (save_id,) = con.execute(
                    "insert into save (name) values (?) returning id", [f"p{player}-{character}"]
                ).fetchone()
                (line_id,) = con.execute(
                    "insert into line (content, attribute, role_id, save_id) "
                    "values (?, 'system', ?, ?) returning id",
                    [f"你是{name}，进行角色扮演", role_id, save_id],
                ).fetchone()
                con.execute("update save set last_message_id = ? where id = ?", [line_id, save_id])
                games.append((save_id, f"player{player}", character))
    return games


def reply(request: dict) -> str:
    return json.dumps(
        {
            "events": [
                {
                    "description": f"玩家聊到了{len(request['messages'][1]['content'])}件事",
                    "keywords": ["聊天"],
                }
            ],
            "entities": [],
        },
        ensure_ascii=False,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--players", type=int, default=8)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="rolemem-service-"))
    path = str(folder / "game.duckdb")
    games = build(path, args.players)
    llm_server = ScriptedChatServer(responder=reply).start()
    app = create_app(
        path, llm=OpenAICompatibleLLM(base_url=llm_server.base_url, model="scripted", max_retries=0)
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    timings: dict[str, list[float]] = {"/turn": [], "/lines": [], "/query": []}
    failures: list[str] = []
    lock = threading.Lock()

    def play(game: tuple[int, str, str]) -> None:
        save_id, user_id, character = game
        role_id, name = CHARACTERS[character]
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
            for turn in range(args.turns):
                message = MESSAGES[turn % len(MESSAGES)]
                now = (NOW + timedelta(minutes=turn)).isoformat()
                for route, body in (
                    (
                        "/turn",
                        {
                            "save_id": save_id,
                            "character_id": character,
                            "role_id": role_id,
                            "user_id": user_id,
                            "message": message,
                            "now": now,
                            "context": {"intimacy": 3, "exploration": 3, "scene": "studio"},
                        },
                    ),
                    (
                        "/lines",
                        {
                            "save_id": save_id,
                            "lines": [
                                {"attribute": "user", "content": message},
                                {
                                    "attribute": "assistant",
                                    "content": f"{name}的第{turn}句回复",
                                    "role_id": role_id,
                                },
                            ],
                            "observe": {
                                "user_id": user_id,
                                "agent_id": character,
                                "role_id": role_id,
                                "scene": "studio",
                                "now": now,
                            },
                        },
                    ),
                ):
                    start = time.perf_counter()
                    answer = client.post(route, json=body)
                    with lock:
                        timings[route].append((time.perf_counter() - start) * 1000)
                        if answer.status_code != 200:
                            failures.append(f"{route} {answer.status_code} {answer.text[:200]}")
            start = time.perf_counter()
            answer = client.post(
                "/query", json={"query": "火锅", "user_id": user_id, "agent_id": character}
            )
            with lock:
                timings["/query"].append((time.perf_counter() - start) * 1000)
                if answer.status_code != 200:
                    failures.append(f"/query {answer.status_code}")

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.clients) as pool:
        list(pool.map(play, games))
    wall = time.perf_counter() - start
    server.should_exit = True
    thread.join(60)
    llm_server.stop()

    turns = len(timings["/turn"])
    print(
        f"{args.players} players x {len(CHARACTERS)} characters x {args.turns} turns, "
        f"{args.clients} clients: {turns} turns in {wall:.1f} s = {turns / wall:.1f} turns/s; "
        f"failed requests: {len(failures)}\n"
    )
    print("| route | requests | p50 | p95 | p99 | target |")
    print("|---|---:|---:|---:|---:|---|")
    for route, target in (("/turn", "p50 ≤ 60 ms, p95 ≤ 150 ms"), ("/lines", ""), ("/query", "")):
        values = timings[route]
        print(
            f"| {route} | {len(values)} | {statistics.median(values):.1f} ms | "
            f"{percentile(values, 0.95):.1f} ms | {percentile(values, 0.99):.1f} ms | "
            f"{target} |"
        )
    for failure in failures[:5]:
        print("failed:", failure)

    # the same turn as three separate in-process calls, one client
    con = duckdb.connect(path)
    memory = DynamicMemory(con)
    characters = {c: CharacterMemory(con, character_id=c) for c in CHARACTERS}
    separate = []
    for save_id, user_id, character in games[:8]:
        role_id, _ = CHARACTERS[character]
        start = time.perf_counter()
        build_memory_for_save(con, save_id, role_id=role_id)
        characters[character].session(user_id).recall(
            "今天画画时你好温柔", {"intimacy": 3, "exploration": 3, "scene": "studio"}
        )
        memory.query(
            "今天画画时你好温柔",
            user_id=user_id,
            agent_id=character,
            now=NOW,
            save_id=save_id,
            update=False,
        )
        separate.append((time.perf_counter() - start) * 1000)
    report = MemoryLoop(con).maintain(now=NOW + timedelta(days=1))
    con.execute("checkpoint")
    con.close()
    print(
        f"\nthree separate in-process calls (one client): p50 {statistics.median(separate):.1f} ms "
        f"vs /turn p50 {statistics.median(timings['/turn']):.1f} ms at {args.clients} clients"
    )
    print(
        f"after maintain ({report.archived or 'nothing archived'}): store "
        f"{os.path.getsize(path) / 2**20:.1f} MiB"
    )


if __name__ == "__main__":
    main()
