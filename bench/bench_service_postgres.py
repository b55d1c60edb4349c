"""Benchmark: /turn at 8 clients, two `rolemem serve` processes on one PostgreSQL database against
one `rolemem serve` process on the embedded DuckDB file (issue 19's target: ≥ 2x the throughput,
0 failed requests, 0 lost or duplicated lines or batches).

    .venv/bin/python bench/bench_service_postgres.py [--players 8] [--turns 10] [--clients 8]

The same game as bench/bench_service.py (every player plays both demo characters, each turn is
POST /turn then POST /lines with the memory loop observing, the scripted LLM extracting), on
the same store: built as a DuckDB file, copied to a PostgreSQL 18 this script starts
(`rolemem init-db --copy-from`). Every service is a process of its own (`rolemem serve`,
`--keyword-only` unless --embedder: then each process embeds with the bundled e5), the clients
spread over the PostgreSQL processes. Afterwards each store is
checked: every save's branch holds its appended lines once each, in order, and no two
extraction batches of a save x character share a line. The runs alternate (DuckDB, PostgreSQL,
DuckDB, …): a busy neighbour slows both alike.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_service import build, percentile, play_turns, reply  # noqa: E402
from scratch import scratch_dir  # noqa: E402

from rolemem.engines import PostgresEngine, reading  # noqa: E402
from rolemem.engines.postgres_setup import init_database  # noqa: E402
from rolemem.service.core.child import free_port, wait_until_serving  # noqa: E402
from rolemem.testing.scripted_llm import ScriptedChatServer  # noqa: E402

KEY = {"X-API-Key": "bench"}


@contextmanager
def serving(db: str, llm_url: str, embedder: bool) -> Iterator[str]:
    """`rolemem serve` on `db` in a process of its own; its base URL."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "rolemem.cli", "serve", "--db", db, "--port", str(port)]
        + ([] if embedder else ["--keyword-only"])
        + ["--llm-base-url", llm_url, "--llm-model", "scripted"]
        # its stderr is read only if it fails to start: a full pipe would block the service
        + ["--no-access-log"],
        env={**os.environ, "ROLEMEM_API_KEY": "bench"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base, process)
        yield base
    finally:
        process.terminate()
        process.communicate(timeout=60)


def play(bases: list[str], games: list, turns: int, clients: int) -> dict:
    """Each game's turns in order, the games over `clients` threads, a client's requests to
    one service (round robin over `bases`)."""
    timings: dict[str, list[float]] = {"/turn": [], "/lines": []}
    failures: list[str] = []
    lock = threading.Lock()

    def player(index: int, game: tuple) -> None:
        with httpx.Client(base_url=bases[index % len(bases)], timeout=120, headers=KEY) as client:
            play_turns(client, game, turns, timings, failures, lock)

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=clients) as pool:
        list(pool.map(player, range(len(games)), games))
    return {"wall": time.perf_counter() - start, "failures": failures, **timings}


_CHECK_SQL = """
select
    (select count(*) from line where save_id = $save_id) as stored,
    (select count(*) from line where save_id = $save_id and parent_line_id is null) as roots,
    (select count(*) from memory_extraction_batch as one
     join memory_extraction_batch as other
        -- the save's player too: on Citus a join by the player stays on its shard
        on one.user_id = other.user_id and one.save_id = other.save_id
        and one.target_key = other.target_key
        and one.batch_key < other.batch_key
        and one.first_line_id <= other.last_line_id and other.first_line_id <= one.last_line_id
     where one.save_id = $save_id) as overlapping_batches
"""


def check(db: object, games: list, turns: int) -> list[str]:
    """Problems of a played store: a save whose lines are not the system line and two per
    turn, a second root (a line forked off by a lost tip), overlapping batches."""
    problems = []
    with reading(db) as cur:
        for save_id, _, _ in games:
            stored, roots, overlapping = cur.execute(_CHECK_SQL, {"save_id": save_id}).fetchone()
            if (stored, roots, overlapping) != (1 + 2 * turns, 1, 0):
                problems.append(f"save {save_id}: {stored} lines, {roots} roots, {overlapping}")
    return problems


def table(rows: list[tuple[str, dict]]) -> dict[str, list[float]]:
    """The runs as a Markdown table (a failed request's first three answers after it); each
    run's turns/s by name."""
    print("| run | turns/s | /turn p50 | /turn p95 | /lines p50 | failed | store problems |")
    print("|---|---:|---:|---:|---:|---:|---|")
    rates: dict[str, list[float]] = {}
    for name, played in rows:
        rate = len(played["/turn"]) / played["wall"]
        rates.setdefault(name, []).append(rate)
        turns, lines = played["/turn"] or [float("nan")], played["/lines"] or [float("nan")]
        print(
            f"| {name} | {rate:.2f} | {statistics.median(turns):.0f} ms | "
            f"{percentile(turns, 0.95):.0f} ms | {statistics.median(lines):.0f} ms | "
            f"{len(played['failures'])} | {'; '.join(played['problems']) or 'none'} |"
        )
        for failure in played["failures"][:3]:
            print("failed:", failure)
    return rates


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--players", type=int, default=8)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--embedder", action="store_true", help="recall by meaning too (e5)")
    args = parser.parse_args()
    folder = scratch_dir("rolemem-pgservice-")
    template = str(folder / "template.duckdb")
    games = build(template, args.players)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver

        server = pgserver.get_server(str(folder / "pg"), cleanup_mode="stop")
    rows: list[tuple[str, dict]] = []
    try:
        with ScriptedChatServer(responder=reply) as llm:
            for round_number in range(args.rounds):
                path = str(folder / f"duck{round_number}.duckdb")
                shutil.copyfile(template, path)
                with serving(path, llm.base_url, args.embedder) as base:
                    played = play([base], games, args.turns, args.clients)
                played["problems"] = check(path, games, args.turns)
                rows.append(("DuckDB, 1 process", played))
                url = server.get_uri()
                database = f"bench{round_number}"
                with PostgresEngine(url) as admin:
                    admin.run(f"drop database if exists {database}", {})
                    admin.run(f"create database {database}", {})
                url = url.replace("/postgres?", f"/{database}?")
                init_database(url, store=template)
                with ExitStack() as stack:
                    bases = [
                        stack.enter_context(serving(url, llm.base_url, args.embedder))
                        for _ in range(2)
                    ]
                    played = play(bases, games, args.turns, args.clients)
                with PostgresEngine(url) as engine:
                    played["problems"] = check(engine, games, args.turns)
                rows.append(("PostgreSQL, 2 processes", played))
    finally:
        server.cleanup()
    turns = args.players * 2 * args.turns
    print(
        f"{args.players} players x 2 characters x {args.turns} turns = {turns} turns, "
        f"{args.clients} clients, {'e5 embedder' if args.embedder else 'keyword only'}, "
        "each store checked after its run\n"
    )
    rates = table(rows)
    duck, pg = (statistics.median(rates[name]) for name in rates)
    print(
        f"\nthroughput, PostgreSQL 2 processes / DuckDB 1 process: {pg / duck:.2f}x "
        f"(medians of {args.rounds} alternated rounds; target ≥ 2x)"
    )


if __name__ == "__main__":
    main()
