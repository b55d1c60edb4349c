"""Benchmark: a simulated game against `rolemem serve` on 127.0.0.1.

    .venv/bin/python bench/bench_service.py [--players 8] [--turns 10] [--clients 8]

The service runs in a process of its own (`rolemem serve`), as a game server calls it: the
clients' work is not on its interpreter. Every player plays each configured character (the
demo's two) in a save of its own; each turn is `POST /turn` then `POST /lines` (the player line
and the reply, with the memory loop observing in the background through the scripted
chat-completions server). Printed: turns per second, p50/p95/p99 of /turn, /lines and /query,
failed requests (must be 0), how many requests each recall statement answered (GET /status),
the store size after `maintain`, and the cores each side kept busy with its CPU time per turn
(Linux /proc; roughly comparable: the baseline's includes the scripted LLM server's thread,
the service's the /query requests). Where the baseline already fills the machine's cores (a
turn's two recalls run side by side; the loop extracts and embeds beside the turns), the
ratio's ceiling is the cores over the baseline's. Baseline, same run, on a copy of the same
store: the same turns one at a time in-process (Companion.turn, then Companion.record with the
loop observing in the background).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import httpx
from scratch import scratch_dir  # noqa: E402

from rolemem.character_memory import CharacterLibrary
from rolemem.memory_loop import MemoryLoop
from rolemem.memory_loop.llm import OpenAICompatibleLLM
from rolemem.service.core.child import free_port, wait_until_serving
from rolemem.testing.demo_data import load_demo
from rolemem.testing.scripted_llm import ScriptedChatServer
from rolemem.turn.companion import Companion

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


# turns each warm-up game plays before the timed games (untimed)
WARMUP_TURNS = 2


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[max(0, math.ceil(q * len(values)) - 1)]


def build(path: str, players: int, ownerless: bool = False) -> list[tuple[int, str, str]]:
    """The demo store plus one save per player x character, opened by its system line (owned
    by its player; `ownerless`: no owner, the workload of builds before saves had owners)."""
    load_demo(path)
    games = []
    with duckdb.connect(path) as con:
        con.execute("insert into role (id, name) values (2, '钦灵') on conflict do nothing")
        for player in range(players):
            for character, (role_id, name) in CHARACTERS.items():
                (save_id,) = con.execute(
                    "insert into save (name, user_id) values (?, ?) returning id",
                    [f"p{player}-{character}", None if ownerless else f"player{player}"],
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


def turn_body(game: tuple[int, str, str], turn: int) -> dict:
    save_id, user_id, character = game
    return {
        "save_id": save_id,
        "character_id": character,
        "role_id": CHARACTERS[character][0],
        "user_id": user_id,
        "message": MESSAGES[turn % len(MESSAGES)],
        "now": (NOW + timedelta(minutes=turn)).isoformat(),
        "context": {"intimacy": 3, "exploration": 3, "scene": "studio"},
    }


def lines_body(game: tuple[int, str, str], turn: int) -> dict:
    save_id, user_id, character = game
    role_id, name = CHARACTERS[character]
    return {
        "save_id": save_id,
        "lines": [
            {"attribute": "user", "content": MESSAGES[turn % len(MESSAGES)]},
            {"attribute": "assistant", "content": f"{name}的第{turn}句回复", "role_id": role_id},
        ],
        "observe": {
            "user_id": user_id,
            "agent_id": character,
            "role_id": role_id,
            "scene": "studio",
            "now": (NOW + timedelta(minutes=turn)).isoformat(),
        },
    }


def play_turns(
    client: httpx.Client,
    game: tuple[int, str, str],
    turns: int,
    timings: dict[str, list[float]],
    failures: list[str],
    lock: threading.Lock,
) -> None:
    """A game's turns in order through `client`: /turn, then /lines with the reply, each
    timed into `timings`; an answer other than 200 is a failure."""
    for turn in range(turns):
        for route, body in (("/turn", turn_body(game, turn)), ("/lines", lines_body(game, turn))):
            start = time.perf_counter()
            answer = client.post(route, json=body)
            with lock:
                timings[route].append((time.perf_counter() - start) * 1000)
                if answer.status_code != 200:
                    failures.append(f"{route} {answer.status_code} {answer.text[:200]}")


def in_process(
    path: str,
    games: list[tuple[int, str, str]],
    turns: int,
    llm_url: str,
    ownerless: bool = False,
    warmup: list[tuple[int, str, str]] | None = None,
) -> dict:
    """The same turns one at a time in-process: Companion.turn, then Companion.record (the two
    lines, the loop observing in the background), one thread; what the service is compared
    with."""
    con = duckdb.connect(path)
    loop = MemoryLoop(
        con, llm=OpenAICompatibleLLM(base_url=llm_url, model="scripted", max_retries=0)
    )
    library = CharacterLibrary(con)
    companions = {
        c: Companion(
            con, character_id=c, loop=loop, library=library, open_ownerless_saves=ownerless
        )
        for c in CHARACTERS
    }
    # the warm-up games' turns first, untimed (first statements compose SQL, cursors prepare)
    _play_in_process(companions, warmup or [], WARMUP_TURNS, [])
    timings: list[float] = []
    start, cpu = time.perf_counter(), time.process_time()
    _play_in_process(companions, games, turns, timings)
    wall = time.perf_counter() - start
    cores = (time.process_time() - cpu) / wall
    for companion in companions.values():
        companion.wait()
        companion.close()
    loop.close()
    con.close()
    return {"turns": len(timings), "wall": wall, "turn": timings, "cores": cores}


def _play_in_process(
    companions: dict[str, Companion],
    games: list[tuple[int, str, str]],
    turns: int,
    timings: list[float],
) -> None:
    for turn in range(turns):
        for game in games:
            body = turn_body(game, turn)
            begin = time.perf_counter()
            companion = companions[body["character_id"]]
            companion.turn(
                save_id=body["save_id"],
                user_id=body["user_id"],
                message=body["message"],
                role_id=body["role_id"],
                context=body["context"],
                now=datetime.fromisoformat(body["now"]),
            )
            timings.append((time.perf_counter() - begin) * 1000)
            companion.record(
                save_id=body["save_id"],
                user_id=body["user_id"],
                message=body["message"],
                reply=f"{CHARACTERS[body['character_id']][1]}的第{turn}句回复",
                role_id=body["role_id"],
                scene="studio",
                now=datetime.fromisoformat(body["now"]),
            )


def cpu_seconds(pid: int) -> float:
    """The CPU time process `pid` has used (user + system, every thread), from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def serving(
    path: str, llm_url: str, ownerless: bool
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """`rolemem serve` on `path` in a process of its own, as a game server calls it (the
    clients' work is not on its interpreter): its port and process, stopped on the way out.
    Its access log is off (unread, a full pipe would block it) and the environment's
    ROLEMEM_ settings are left out (a key or a rate would change the game)."""
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("ROLEMEM_")}
    server = subprocess.Popen(
        [sys.executable, "-m", "rolemem.cli", "serve", "--db", path, "--port", str(port)]
        + ["--llm-base-url", llm_url, "--llm-model", "scripted", "--no-access-log"]
        + (["--open-ownerless-saves"] if ownerless else []),
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until_serving(f"http://127.0.0.1:{port}", server)
        yield port, server
    finally:
        server.terminate()
        server.communicate(timeout=60)


def over_http(
    path: str,
    games: list[tuple[int, str, str]],
    turns: int,
    clients: int,
    llm_url: str,
    ownerless: bool = False,
    warmup: list[tuple[int, str, str]] | None = None,
) -> dict:
    with serving(path, llm_url, ownerless) as (port, server):
        timings: dict[str, list[float]] = {"/turn": [], "/lines": [], "/query": []}
        failures: list[str] = []
        lock = threading.Lock()

        def play(game: tuple[int, str, str]) -> None:
            _, user_id, character = game
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
                play_turns(client, game, turns, timings, failures, lock)
                start = time.perf_counter()
                answer = client.post(
                    "/query", json={"query": "火锅", "user_id": user_id, "agent_id": character}
                )
                with lock:
                    timings["/query"].append((time.perf_counter() - start) * 1000)
                    if answer.status_code != 200:
                        failures.append(f"/query {answer.status_code}")

        def warm(game: tuple[int, str, str]) -> None:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
                untimed: dict[str, list[float]] = {"/turn": [], "/lines": []}
                play_turns(client, game, WARMUP_TURNS, untimed, failures, lock)

        with ThreadPoolExecutor(max_workers=clients) as pool:
            list(pool.map(warm, warmup or []))
        start, cpu = time.perf_counter(), cpu_seconds(server.pid)
        with ThreadPoolExecutor(max_workers=clients) as pool:
            list(pool.map(play, games))
        wall = time.perf_counter() - start
        cores = (cpu_seconds(server.pid) - cpu) / wall
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
            status = client.get("/status").json()
    return {"wall": wall, "failures": failures, "status": status, "cores": cores, **timings}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--players", type=int, default=8)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument(
        "--warmup-players",
        type=int,
        default=0,
        help="players of their own whose games play first, untimed, on both sides (first "
        "statements compose SQL and prepare cursors): the timed turns are then steady state",
    )
    parser.add_argument(
        "--ownerless",
        action="store_true",
        help="saves without an owner (served with --open-ownerless-saves): the same workload "
        "as builds before saves had owners, for A/B runs against them",
    )
    args = parser.parse_args()
    folder = scratch_dir("rolemem-service-")
    path = str(folder / "game.duckdb")
    games = build(path, args.players + args.warmup_players, args.ownerless)
    # the warm-up players are the last ones built: the timed games are the same as without
    split = args.players * len(CHARACTERS)
    games, warmup = games[:split], games[split:]
    baseline_path = str(folder / "baseline.duckdb")
    shutil.copyfile(path, baseline_path)
    llm_server = ScriptedChatServer(responder=reply).start()
    base = in_process(baseline_path, games, args.turns, llm_server.base_url, args.ownerless, warmup)
    served = over_http(
        path, games, args.turns, args.clients, llm_server.base_url, args.ownerless, warmup
    )
    llm_server.stop()

    turns = len(served["/turn"])
    rate, base_rate = turns / served["wall"], base["turns"] / base["wall"]
    print(
        f"{args.players} players x {len(CHARACTERS)} characters x {args.turns} turns, "
        f"{args.clients} clients: {turns} turns in {served['wall']:.1f} s = {rate:.1f} turns/s; "
        f"failed requests: {len(served['failures'])}\n"
    )
    print("| route | requests | p50 | p95 | p99 | p95/p50 |")
    print("|---|---:|---:|---:|---:|---:|")
    for route in ("/turn", "/lines", "/query"):
        values = served[route]
        p50 = statistics.median(values)
        print(
            f"| {route} | {len(values)} | {p50:.1f} ms | {percentile(values, 0.95):.1f} ms | "
            f"{percentile(values, 0.99):.1f} ms | {percentile(values, 0.95) / p50:.2f} |"
        )
    for failure in served["failures"][:5]:
        print("failed:", failure)
    spread = percentile(served["/turn"], 0.95) / statistics.median(served["/turn"])
    print(
        f"\nbaseline, the same turns one at a time in-process (Companion.turn + record): "
        f"{base_rate:.1f} turns/s, turn p50 {statistics.median(base['turn']):.1f} ms\n"
        f"throughput over HTTP / baseline: {rate / base_rate:.2f}x (target ≥ 2x); "
        f"/turn p95/p50 {spread:.2f} (target ≤ 2)\n"
        f"cores busy: the service {served['cores']:.2f}, the baseline {base['cores']:.2f} of "
        f"{os.cpu_count()} (CPU per turn: {served['cores'] * served['wall'] / turns * 1000:.0f} "
        f"against {base['cores'] * base['wall'] / base['turns'] * 1000:.0f} ms)"
    )
    status = served["status"]
    for kind in ("dynamic_recall", "character_recall"):
        stats = status[kind]
        print(
            f"{kind}: {stats['requests']} requests in {stats['statements']} statements "
            f"({stats['requests'] / max(stats['statements'], 1):.2f} per statement, largest "
            f"{stats['largest_batch']})"
        )
    windows = status["context_windows"]
    print(
        f"context windows: {windows['reused']} reused from the last plan, "
        f"{windows['planned']} planned"
    )
    with duckdb.connect(path) as con:
        report = MemoryLoop(con).maintain(now=NOW + timedelta(days=1))
        con.execute("checkpoint")
    print(
        f"after maintain ({report.archived or 'nothing archived'}): store "
        f"{os.path.getsize(path) / 2**20:.1f} MiB"
    )


if __name__ == "__main__":
    main()
