"""Benchmark: `kill -9` under load (issue 17: 0 acknowledged appends lost, 0 duplicated).

    .venv/bin/python bench/bench_service_crash.py [--saves 16] [--appends 40] [--kills 6]

`rolemem serve` runs as a process; one client per save appends lines with an
`Idempotency-Key` per append and retries, with the same key, whatever fails (a refused
connection, a reset, a 5xx) until it is answered. Meanwhile the service is killed with
SIGKILL every couple of seconds and started again. Then the store is read: every answered
append's line is there (none lost), and every append's text is there once (none duplicated,
however often it was retried). Also printed: how long the service took to reopen.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import threading
import time

import duckdb
import httpx
from scratch import scratch_dir  # noqa: E402

from rolemem.service.core.child import free_port, wait_until_serving
from rolemem.testing.demo_data import load_demo


class Service:
    def __init__(self, path: str, port: int) -> None:
        self.path, self.port = path, port
        self.process: subprocess.Popen[bytes] | None = None
        self.reopen: list[float] = []

    def start(self) -> None:
        started = time.perf_counter()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "rolemem.cli",
                "serve",
                "--db",
                self.path,
                "--port",
                str(self.port),
                "--keyword-only",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until_serving(f"http://127.0.0.1:{self.port}", self.process)
        self.reopen.append(time.perf_counter() - started)

    def kill(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--saves", type=int, default=16)
    parser.add_argument("--appends", type=int, default=40)
    parser.add_argument("--kills", type=int, default=6)
    args = parser.parse_args()
    path = str(scratch_dir("rolemem-crash-") / "crash.duckdb")
    load_demo(path)
    with duckdb.connect(path) as con:
        saves = [
            con.execute(
                "insert into save (name, user_id) values (?, ?) returning id", [f"s{n}", f"p{n}"]
            ).fetchone()[0]
            for n in range(args.saves)
        ]
    service = Service(path, free_port())
    service.start()
    acknowledged: dict[str, int] = {}
    attempts = [0]
    lock = threading.Lock()
    done = threading.Event()

    def client(save_id: int) -> None:
        user = f"p{saves.index(save_id)}"
        with httpx.Client(base_url=f"http://127.0.0.1:{service.port}", timeout=10) as http:
            for n in range(args.appends):
                text = f"{save_id}:{n}"
                while True:
                    with lock:
                        attempts[0] += 1
                    try:
                        answer = http.post(
                            f"/saves/{save_id}/lines",
                            headers={"Idempotency-Key": text},
                            json={
                                "user_id": user,
                                "lines": [{"attribute": "user", "content": text}],
                            },
                        )
                    except httpx.TransportError:
                        time.sleep(0.05)
                        continue
                    if answer.status_code == 200:
                        with lock:
                            acknowledged[text] = answer.json()["line_ids"][0]
                        break
                    time.sleep(0.05)  # 5xx while the service restarts: retry, same key

    def killer() -> None:
        for _ in range(args.kills):
            if done.wait(2.0):
                return
            service.kill()
            service.start()

    threads = [threading.Thread(target=client, args=(save,)) for save in saves]
    chaos = threading.Thread(target=killer)
    started = time.perf_counter()
    for thread in [*threads, chaos]:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    chaos.join()
    wall = time.perf_counter() - started
    service.kill()
    with duckdb.connect(path, read_only=True) as con:
        stored = dict(
            con.execute(
                "select content, count(*) from line where content like '%:%' group by content"
            ).fetchall()
        )
        ids = {row[0] for row in con.execute("select id from line").fetchall()}
    lost = [text for text, line_id in acknowledged.items() if line_id not in ids]
    duplicated = [text for text, count in stored.items() if count > 1]
    kills = len(service.reopen) - 1
    print(
        f"{args.saves} clients x {args.appends} appends in {wall:.1f} s; {attempts[0]} requests "
        f"(retries included); {kills} kill -9\n"
    )
    print("| appends answered | stored | lost | duplicated | reopen p50 | reopen max |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {len(acknowledged)} | {len(stored)} | {len(lost)} | {len(duplicated)} | "
        f"{statistics.median(service.reopen[1:] or service.reopen):.2f} s | "
        f"{max(service.reopen):.2f} s |"
    )


if __name__ == "__main__":
    main()
