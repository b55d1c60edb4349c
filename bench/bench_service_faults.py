"""Benchmark: /turn and /lines latency while the LLM behind extraction is healthy, failing,
talking nonsense, hanging or unreachable (issue 17: p95 with it hanging ≤ 1.5× healthy).

    .venv/bin/python bench/bench_service_faults.py [--saves 8] [--turns 12] [--clients 4]

Each mode gets a fresh copy of the same store and the same played turns: `POST /turn`, then
`POST /saves/{id}/lines` with the player line and the reply and `observe`, the scene changing
every third turn so extraction batches keep coming due. The LLM is the scripted
chat-completions server on 127.0.0.1 in that mode (unreachable: a closed port), with a 3 s
timeout per call. Baseline: the healthy mode, measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import duckdb
import httpx
import uvicorn
from scratch import scratch_dir  # noqa: E402

from rolemem.memory_loop.llm import OpenAICompatibleLLM
from rolemem.service import create_app
from rolemem.service.core.child import free_port
from rolemem.testing.demo_data import load_demo
from rolemem.testing.scripted_llm import Delay, ScriptedChatServer, Status

MESSAGES = ["今天画画时你好温柔", "我们去海边散步吧", "你还记得那次火锅吗", "最近有点累"]
SCENES = ["studio", "gallery", "beach"]
GOOD = json.dumps(
    {"events": [{"description": "玩家和祁煜聊了一会儿天", "keywords": ["聊天"]}], "entities": []},
    ensure_ascii=False,
)
MODES: dict[str, Any] = {
    "healthy": lambda request: GOOD,
    "failing (HTTP 500)": lambda request: Status(500),
    "garbage replies": lambda request: "这不是 JSON",
    "hanging": lambda request: Delay(600),
}


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[max(0, math.ceil(q * len(values)) - 1)]


def build(path: str, saves: int) -> list[int]:
    load_demo(path)
    ids = []
    with duckdb.connect(path) as con:
        for index in range(saves):
            (save_id,) = con.execute(
                "insert into save (name, user_id) values (?, ?) returning id",
                [f"s{index}", f"player{index}"],
            ).fetchone()
            ids.append(save_id)
    return ids


def play(path: str, saves: list[int], base_url: str, args: argparse.Namespace) -> dict:
    llm = OpenAICompatibleLLM(base_url=base_url, model="bench", timeout=3, max_retries=0)
    app = create_app(path, llm=llm, embedder=None)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    timings: dict[str, list[float]] = {"/turn": [], "/lines": []}
    failures: list[str] = []
    lock = threading.Lock()

    def one_save(save_id: int) -> None:
        user = f"player{saves.index(save_id)}"
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            for turn in range(args.turns):
                message = MESSAGES[turn % len(MESSAGES)]
                calls = [
                    (
                        "/turn",
                        "/turn",
                        {
                            "save_id": save_id,
                            "character_id": "qiyu",
                            "role_id": 1,
                            "user_id": user,
                            "message": message,
                            "context": {"intimacy": 3, "exploration": 3},
                        },
                    ),
                    (
                        "/lines",
                        f"/saves/{save_id}/lines",
                        {
                            "user_id": user,
                            "lines": [
                                {"attribute": "user", "content": message},
                                {"attribute": "assistant", "content": "嗯", "role_id": 1},
                            ],
                            "observe": {
                                "agent_id": "qiyu",
                                "role_id": 1,
                                "scene": SCENES[(turn // 3) % len(SCENES)],
                            },
                        },
                    ),
                ]
                for name, route, body in calls:
                    started = time.perf_counter()
                    answer = client.post(route, json=body)
                    with lock:
                        timings[name].append((time.perf_counter() - started) * 1000)
                        if answer.status_code != 200:
                            failures.append(f"{route} {answer.status_code}")

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.clients) as pool:
        list(pool.map(one_save, saves))
    wall = time.perf_counter() - started
    server.should_exit = True
    thread.join(30)
    return {"timings": timings, "failures": failures, "wall": wall}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--saves", type=int, default=8)
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args()
    folder = scratch_dir("rolemem-faults-")
    template = str(folder / "template.duckdb")
    saves = build(template, args.saves)
    results = {}
    for mode in [*MODES, "unreachable"]:
        path = str(folder / f"{len(results)}.duckdb")
        shutil.copyfile(template, path)
        if mode == "unreachable":
            results[mode] = play(path, saves, f"http://127.0.0.1:{free_port()}/v1", args)
            continue
        with ScriptedChatServer(responder=MODES[mode]) as llm:
            results[mode] = play(path, saves, llm.base_url, args)
    healthy = results["healthy"]["timings"]
    print(
        f"{args.saves} saves x {args.turns} turns, {args.clients} clients per mode; "
        "LLM timeout 3 s per call\n"
    )
    print(
        "| LLM | /turn p50 | /turn p95 | p95 vs healthy | /lines p50 | /lines p95 | "
        "p95 vs healthy | failed requests | target |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for mode, result in results.items():
        turn, lines = result["timings"]["/turn"], result["timings"]["/lines"]
        print(
            f"| {mode} | {statistics.median(turn):.1f} ms | {percentile(turn, 0.95):.1f} ms | "
            f"{percentile(turn, 0.95) / percentile(healthy['/turn'], 0.95):.2f}x | "
            f"{statistics.median(lines):.1f} ms | {percentile(lines, 0.95):.1f} ms | "
            f"{percentile(lines, 0.95) / percentile(healthy['/lines'], 0.95):.2f}x | "
            f"{len(result['failures'])} | "
            f"{'/turn p95 ≤ 1.5x healthy' if mode == 'hanging' else ''} |"
        )


if __name__ == "__main__":
    main()
