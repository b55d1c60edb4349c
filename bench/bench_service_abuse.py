"""Benchmark: /health latency while clients with a valid key send 1 MiB JSON bodies
(issue 33 item 9: /health p95 under 100 ms while slow and stalled clients run).

    .venv/bin/python bench/bench_service_abuse.py [--clients 40] [--probes 200]
        [--baseline DIR] [--source DIR]

`rolemem serve` (keyword only, one process, a key; a fresh one for each kind of body) runs
as a process of its own; the posters run in another (`--clients` threads, each posting one
body after the other on a kept-alive connection, as fast as the service answers), and
/health is probed from this one, one request after the other, each on a new connection.
Bodies (each about 1 MiB, all answered with a 4xx):

- numbers: a JSON array of 200,000 floats (the most values per byte: the parse's worst case);
- objects: an append of 100,000 empty lines (the most objects; refused for its length);
- text: an append of 200 lines of 1,710 characters each, to a save that does not exist (a
  body that passes validation).

`--baseline DIR`: a checkout's `python/` folder (e.g. `git worktree add /tmp/base main`, then
`/tmp/base/python`) served first, so the table shows the same run's before and after;
`--source DIR`: the same for the after (default: this checkout).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from scratch import scratch_dir  # noqa: E402

from rolemem.service.core.child import free_port
from rolemem.testing.demo_data import load_demo

KEY = "bench-key"
LINE = "今天画画时你好温柔" * 190  # 1,710 characters, 5 KB of UTF-8


def bodies() -> dict[str, tuple[str, bytes]]:
    """The kinds of body: (path, body)."""
    numbers = b"[" + b"1.5," * 200_000 + b"1.5]"
    objects = json.dumps({"user_id": "mumu", "lines": [{}] * 100_000}).encode()
    lines = [{"attribute": "assistant", "role_id": 1, "content": LINE}] * 200
    text = json.dumps({"user_id": "mumu", "lines": lines}, ensure_ascii=False).encode()
    return {
        "numbers": ("/saves", numbers),
        "objects": ("/saves/1/lines", objects),
        "text": ("/saves/999999/lines", text),
    }


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[max(0, math.ceil(q * len(values)) - 1)]


def _answer(sock: socket.socket) -> int:
    """The status of the one answer on `sock` (read whole, by its Content-Length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed without an answer")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed in the middle of the answer")
        body += chunk
    return int(head.split()[1])


def post_forever(port: int, path: str, body: bytes, clients: int, counts: dict) -> None:
    """The posters' process: `clients` threads posting `body` until killed."""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: bench\r\nX-API-Key: {KEY}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    statuses: Counter[int] = Counter()
    lock = threading.Lock()

    def post() -> None:
        sock = None
        while True:
            try:
                if sock is None:
                    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
                sock.sendall(head + body)
                status = _answer(sock)
            except OSError:
                status = 0  # closed: open another
                if sock is not None:
                    sock.close()
                sock = None
            with lock:
                statuses[status] += 1
                counts.update({str(k): v for k, v in statuses.items()})

    for _ in range(clients):
        threading.Thread(target=post, daemon=True).start()
    threading.Event().wait()


def probe(port: int, count: int, most: float = 600.0) -> list[float]:
    """`count` GET /health, one after the other, each on a new connection (fewer if they
    take more than `most` seconds, at least 20): seconds each."""
    seconds: list[float] = []
    until = time.monotonic() + most
    for _ in range(count):
        if len(seconds) >= 20 and time.monotonic() > until:
            break
        started = time.perf_counter()
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: bench\r\n\r\n")
            assert _answer(sock) == 200
        seconds.append(time.perf_counter() - started)
        time.sleep(0.01)
    return seconds


def serve(db: str, port: int, source: str | None) -> subprocess.Popen:
    env = dict(os.environ)
    if source is not None:  # ahead of the editable install (which comes after sys.path)
        env["PYTHONPATH"] = source
    command = [sys.executable, "-m", "rolemem.cli", "serve", "--db", db, "--port", str(port)]
    command += ["--api-key", KEY, "--keyword-only", "--no-access-log"]
    process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if probe(port, 1):
                return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("the service did not start")


def measure(db: str, source: str | None, args: argparse.Namespace) -> dict[str, dict]:
    """/health alone, then under each kind of body, each kind on a service of its own (the
    bodies the last kind's clients left queued are not the next one's)."""
    results: dict[str, dict] = {}
    for kind, (path, body) in [("alone", ("", b"")), *bodies().items()]:
        port = free_port()
        server = serve(db, port, source)
        try:
            if kind == "alone":
                results[kind] = {"seconds": probe(port, args.probes), "posted": {}}
                continue
            with multiprocessing.Manager() as manager:
                counts = manager.dict()
                posters = multiprocessing.Process(
                    target=post_forever, args=(port, path, body, args.clients, counts)
                )
                posters.start()
                time.sleep(args.warm)  # every client has a body in flight
                started = time.monotonic()
                before = dict(counts)
                loaded = probe(port, args.probes, args.seconds)
                elapsed = time.monotonic() - started
                after = dict(counts)
                os.kill(posters.pid, signal.SIGKILL)
                posters.join()
            posted = {k: after.get(k, 0) - before.get(k, 0) for k in after}
            results[kind] = {"seconds": loaded, "posted": posted, "elapsed": elapsed}
        finally:
            server.kill()  # under load it may take long to stop: nothing of it is kept
            server.wait(30)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=40)
    parser.add_argument("--probes", type=int, default=200)
    parser.add_argument("--warm", type=float, default=3.0)
    parser.add_argument("--seconds", type=float, default=60.0, help="most probing per kind")
    parser.add_argument("--baseline", help="a checkout's python/ folder, served first")
    parser.add_argument("--source", help="the python/ folder served after (default: this one)")
    args = parser.parse_args()
    folder = scratch_dir("rolemem-bench-abuse-")
    db = str(folder / "abuse.duckdb")
    load_demo(db)
    runs = {}
    if args.baseline:
        runs["before"] = measure(db, str(Path(args.baseline).resolve()), args)
    source = None if args.source is None else str(Path(args.source).resolve())
    runs["after"] = measure(db, source, args)
    print(
        f"\n/health latency (ms; up to {args.probes} probes, each on a new connection) while "
        f"{args.clients} clients with a key post 1 MiB bodies\n"
    )
    names = list(runs)
    head = "| bodies | " + " | ".join(f"{n} p50 | {n} p95 | {n} max | {n} posts/s" for n in names)
    if len(names) == 2:
        head += " | p95 after/before"
    print(head + " |")
    print("|---" + "|---:" * (4 * len(names) + (len(names) == 2)) + "|")
    for kind in runs[names[-1]]:
        cells = []
        p95s = []
        for name in names:
            result = runs[name][kind]
            ms = [s * 1000 for s in result["seconds"]]
            p95s.append(percentile(ms, 0.95))
            rate = (
                sum(result["posted"].values()) / result["elapsed"] if result.get("elapsed") else 0
            )
            cells += [
                f"{percentile(ms, 0.5):.1f}",
                f"{p95s[-1]:.1f}",
                f"{max(ms):.1f}",
                f"{rate:.1f}" if kind != "alone" else "-",
            ]
        if len(names) == 2:
            cells.append(f"{p95s[1] / p95s[0]:.2f}x")
        print(f"| {kind} | " + " | ".join(cells) + " |")
    for name in names:
        for kind, result in runs[name].items():
            if result["posted"]:
                print(f"{name} {kind}: statuses {dict(sorted(result['posted'].items()))}")


if __name__ == "__main__":
    main()
