"""Benchmark (issue 32 item 7): /turn at 8 clients on a Citus cluster against one PostgreSQL,
the same game, the same store, the same machine, one `rolemem serve --keyword-only` process
each, the runs alternated (PostgreSQL, Citus, PostgreSQL, …): a busy neighbour slows both alike.

    .venv/bin/python bench/bench_citus.py [--players 8] [--turns 5] [--clients 8] [--rounds 2]

The game is bench/bench_service.py's (every player plays both demo characters, each turn POST
/turn then POST /lines with the memory loop observing, the scripted LLM extracting), its saves
owned by their players (Citus refuses ownerless ones). The cluster is a coordinator and two
workers on 127.0.0.1 (tests/python/citus_cluster.py, the vendored source built once); the single
PostgreSQL is the same build's server without Citus. Each store is checked afterwards as
bench/bench_service_postgres.py checks it. Target: Citus ≥ 0.7x the single PostgreSQL.

Also printed, per run: the CPU each turn (its /turn and /lines) cost the `serve` process and
the database nodes (each node's server processes, ended ones included; from /proc): on a
machine shared with other work, CPU per turn moves less with the neighbours than turns per
second does.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_service import build, reply  # noqa: E402
from bench_service_postgres import check, play, serving, table  # noqa: E402
from scratch import scratch_dir  # noqa: E402

from rolemem.engines import PostgresEngine  # noqa: E402
from rolemem.engines.postgres_setup import init_database  # noqa: E402
from rolemem.testing.scripted_llm import ScriptedChatServer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' Citus cluster
from tests.python.citus_cluster import CitusCluster, build_citus  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def plain_database(server: CitusCluster, name: str) -> str:
    """Database `name` created afresh on `server`'s coordinator without the citus extension:
    a plain PostgreSQL of the same build (its URL)."""
    with psycopg.connect(server.url, autocommit=True) as con:
        con.execute(f'drop database if exists "{name}" with (force)')
        con.execute(f'create database "{name}"')
    return server.coordinator.url(name)


def _stat(pid: int) -> list[str]:
    """/proc/<pid>/stat after the command name: state, ppid, … (utime is [11], stime [12],
    cutime [13], cstime [14]); empty when the process has ended."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return []


def cpu_seconds(server: CitusCluster) -> tuple[float, float]:
    """CPU seconds used so far by this process's `serve` children and by the nodes of `server`
    (each postmaster, its ended children and its live ones). Linux: /proc."""
    postmasters = {
        int((node.data / "postmaster.pid").read_text().split()[0]) for node in server.nodes
    }
    service = nodes = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        fields = _stat(int(entry.name))
        if not fields:
            continue
        if int(entry.name) in postmasters:
            nodes += sum(map(int, fields[11:15]))
        elif int(fields[1]) in postmasters:
            nodes += sum(map(int, fields[11:13]))
        elif int(fields[1]) == os.getpid():
            service += sum(map(int, fields[11:13]))
    tick = os.sysconf("SC_CLK_TCK")
    return service / tick, nodes / tick


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--players", type=int, default=8)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    folder = scratch_dir("rolemem-citus-bench-")
    template = str(folder / "template.duckdb")
    games = build(template, args.players)  # saves owned by their players
    rows: list[tuple[str, dict]] = []
    # per run: CPU ms per turn of the serve process and of the nodes
    cpu: dict[str, list[tuple[float, float]]] = {}
    install = build_citus(REPO)
    with CitusCluster(install) as cluster, CitusCluster(install, workers=0) as single:
        with ScriptedChatServer(responder=reply) as llm:
            for round_number in range(args.rounds):
                for name, server, citus in (
                    ("PostgreSQL, 1 node", single, False),
                    ("Citus, coordinator + 2 workers", cluster, True),
                ):
                    database = f"bench{round_number}"
                    cpu.setdefault(name, [])
                    if citus:
                        url = server.create_database(database)
                    else:
                        url = plain_database(server, database)
                    init_database(url, store=template)
                    with serving(url, llm.base_url, False) as base:
                        before = cpu_seconds(server)  # the service has started
                        played = play([base], games, args.turns, args.clients)
                        after = cpu_seconds(server)
                    turns = len(played["/turn"])
                    cpu[name].append(
                        (
                            (after[0] - before[0]) * 1000 / turns,
                            (after[1] - before[1]) * 1000 / turns,
                        )
                    )
                    with PostgresEngine(url) as engine:
                        played["problems"] = check(engine, games, args.turns)
                    rows.append((name, played))
    turns = args.players * 2 * args.turns
    print(
        f"{args.players} players x 2 characters x {args.turns} turns = {turns} turns, "
        f"{args.clients} clients, keyword only, one serve process each, each store checked\n"
    )
    rates = table(rows)
    single_rate, citus_rate = (statistics.median(rates[name]) for name in rates)
    print(
        f"\nthroughput, Citus / one PostgreSQL: {citus_rate / single_rate:.2f}x "
        f"(medians of {args.rounds} alternated rounds; target ≥ 0.7x)"
    )
    print("\nCPU ms per turn (serve process + database nodes), by run:")
    for name, runs in cpu.items():
        print(f"- {name}: " + "; ".join(f"{svc:.0f} + {db:.0f}" for svc, db in runs))
    single_cpu, citus_cpu = (statistics.median(sum(run) for run in runs) for runs in cpu.values())
    print(f"CPU per turn, one PostgreSQL / Citus: {single_cpu / citus_cpu:.2f}x (medians)")


if __name__ == "__main__":
    main()
