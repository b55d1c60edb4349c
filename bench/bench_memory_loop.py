"""Benchmark: the memory loop's bookkeeping per turn, and cleanup of a 20,000-memory store.

    .venv/bin/python bench/bench_memory_loop.py [--players 200] [--turns 300]

Each player has one save; each turn appends the player's line and the reply, then calls
`MemoryLoop.observe` with the scripted chat-completions server on 127.0.0.1 as the LLM (two
events and one entity per batch). The LLM's own time (HTTP round trip included) is measured
inside the client and taken out. Baseline, same run: the spec's approach, the save's history
loaded with SQLModel (`get_chat_history`) and the pending turns counted in Python. Cleanup: one
player active today with 20,000 memories, default settings (archive the weakest 20%).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import time
from collections.abc import Sequence
from datetime import datetime, timedelta

import duckdb
import sqlalchemy as sa
from duckdb_engine import ConnectionWrapper
from scratch import scratch_dir  # noqa: E402
from seed_baseline import get_chat_history
from sqlmodel import Session

from rolemem import DynamicMemory
from rolemem.memory_loop import MemoryLoop
from rolemem.memory_loop.llm import OpenAICompatibleLLM
from rolemem.testing.scripted_llm import ScriptedChatServer

NOW = datetime(2026, 11, 22, 20, 0)


class TimedLLM:
    """The real client, with the time spent waiting for the LLM added up."""

    def __init__(self, llm: OpenAICompatibleLLM) -> None:
        self.llm, self.model, self.seconds = llm, llm.model, 0.0

    def complete(self, messages: Sequence[dict[str, str]]) -> str:
        start = time.perf_counter()
        try:
            return self.llm.complete(messages)
        finally:
            self.seconds += time.perf_counter() - start


_replies = iter(range(1, 10**9))


def scripted_reply(request: dict) -> str:
    n = next(_replies)  # every batch tells something new
    return json.dumps(
        {
            "events": [
                {
                    "description": f"第{n}段对话里木木聊了画画",
                    "keywords": ["画画"],
                    "importance": 0.6,
                },
                {"description": f"第{n}段对话里祁煜提到了海边", "keywords": ["海边"]},
            ],
            "entities": [
                {
                    "entity_name": "木木",
                    "entity_type": "客体",
                    "kind": "用户属性",
                    "keyword": "兴趣",
                    "description": f"木木喜欢画画{n % 7}",
                }
            ],
        },
        ensure_ascii=False,
    )


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[max(0, math.ceil(q * len(values)) - 1)]


def baseline_pending(session: Session, save_id: int, watermark: int | None) -> int:
    """The spec's loader + a Python loop: turns on the chain after the last extracted line."""
    history = get_chat_history(session, save_id)
    start = 0
    if watermark is not None:
        start = next((i + 1 for i, line in enumerate(history) if line.id == watermark), 0)
    turns, previous = 0, None
    for line in history[start:]:
        if line.attribute == "user" and previous != "user":
            turns += 1
        previous = line.attribute
    return turns


def run_turns(
    con: duckdb.DuckDBPyConnection,
    loop: MemoryLoop,
    llm: TimedLLM,
    players: int,
    turns: int,
    baseline_players: int,
) -> dict[str, list[float]]:
    con.execute("insert into role (id, name) values (1, '祁煜')")
    con.execute(
        "insert into save (id, name) select i, 'p' || i from range(1, $n + 1) t(i)", {"n": players}
    )
    tips: dict[int, int | None] = {p: None for p in range(1, players + 1)}
    next_id = 1
    timings: dict[str, list[float]] = {"observe": [], "observe_extracting": [], "baseline": []}
    baseline_engine = sa.create_engine("duckdb://", creator=lambda: ConnectionWrapper(con.cursor()))
    watermarks: dict[int, int | None] = {}
    for turn in range(turns):
        for player in range(1, players + 1):
            user_line, reply_line = next_id, next_id + 1
            next_id += 2
            # one statement per line: DuckDB checks the parent key against committed rows
            for line_id, attribute, role, text, parent in (
                (user_line, "user", None, f"第{turn}句：我们去画画吧", tips[player]),
                (reply_line, "assistant", 1, f"好呀，第{turn}次", user_line),
            ):
                con.execute(
                    """insert into line (id, content, attribute, role_id, save_id,
                    parent_line_id) values ($id, $text, $attribute, $role, $save, $parent)""",
                    {
                        "id": line_id,
                        "text": text,
                        "attribute": attribute,
                        "role": role,
                        "save": player,
                        "parent": parent,
                    },
                )
            con.execute(
                "update save set last_message_id = $r where id = $save",
                {"r": reply_line, "save": player},
            )
            tips[player] = reply_line
            llm.seconds = 0.0
            start = time.perf_counter()
            report = loop.observe(
                save_id=player,
                user_id=f"p{player}",
                agent_id="qiyu",
                role_id=1,
                scene="gallery",
                now=NOW,
                user_name="木木",
                agent_name="祁煜",
            )
            elapsed = (time.perf_counter() - start - llm.seconds) * 1000
            timings["observe_extracting" if report.batch_keys else "observe"].append(elapsed)
            if report.batch_keys:
                watermarks[player] = report.watermark_line_id
            if player <= baseline_players:
                start = time.perf_counter()
                with Session(baseline_engine) as session:
                    pending = baseline_pending(session, player, watermarks.get(player))
                timings["baseline"].append((time.perf_counter() - start) * 1000)
                assert pending == report.pending_turns, (pending, report)
        if (turn + 1) % 50 == 0:
            print(
                f"  turn {turn + 1}/{turns}: {len(timings['observe_extracting'])} "
                "extractions so far",
                flush=True,
            )
    baseline_engine.dispose()
    return timings


def build_heavy_player(con: duckdb.DuckDBPyConnection, memories: int) -> None:
    """One player active today with `memories` memories: 80% events, 20% entities."""
    events, entities = memories * 4 // 5, memories - memories * 4 // 5
    con.execute(
        """insert into memory_event (scope, agent_id, user_id, description, keywords,
            importance, feedback, strength, recall_count, token_count, created_at, updated_at)
        select 'user', 'qiyu', 'heavy', '重度玩家的第' || i || '件事', '["事"]', 0.5, 0.5,
            1 + (hash(i) % 50), 0, 3, $now - to_minutes(cast(i as bigint)),
            $now - to_minutes(cast(i as bigint))
        from range($n) t(i)""",
        {"n": events, "now": NOW},
    )
    con.execute(
        """insert into memory_event_term (event_id, agent_id, scope, user_id, term,
            description_count, keyword_count, tag_count)
        select id, agent_id, scope, user_id, '事', 1, 1, 1
        from memory_event where user_id = 'heavy'"""
    )
    con.execute(
        """insert into memory_entity (scope, agent_id, user_id, entity_name, entity_type, kind,
            keyword, description, strength, recall_count, created_at, updated_at)
        select 'user', 'qiyu', 'heavy', '木木', '客体', '用户属性', '属性' || i,
            '木木的第' || i || '个属性', 1 + (hash(i) % 50), 0,
            $now - to_minutes(cast(i as bigint)), $now - to_minutes(cast(i as bigint))
        from range($n) t(i)""",
        {"n": entities, "now": NOW},
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--players", type=int, default=200)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument(
        "--baseline-players",
        type=int,
        default=20,
        help="players whose every turn is also run through the baseline",
    )
    parser.add_argument("--cleanup-memories", type=int, default=20_000)
    args = parser.parse_args()
    path = str(scratch_dir("rolemem-loop-") / "loop.duckdb")
    con = duckdb.connect(path)
    DynamicMemory(con).close()
    with ScriptedChatServer(responder=scripted_reply) as server:
        llm = TimedLLM(
            OpenAICompatibleLLM(base_url=server.base_url, model="scripted", max_retries=0)
        )
        loop = MemoryLoop(con, llm=llm)
        print(
            f"{args.players} players x {args.turns} turns through observe "
            f"(scripted LLM on {server.base_url})",
            flush=True,
        )
        start = time.perf_counter()
        timings = run_turns(con, loop, llm, args.players, args.turns, args.baseline_players)
        wall = time.perf_counter() - start
    con.execute("checkpoint")
    size_after_turns = os.path.getsize(path)
    counts = con.execute(
        """select (select count(*) from line), (select count(*) from memory_event),
        (select count(*) from memory_entity), (select count(*) from memory_extraction_batch)"""
    ).fetchone()
    assert counts is not None
    all_turns = timings["observe"] + timings["observe_extracting"]
    print(
        f"\nran {len(all_turns):,} observations in {wall:.0f} s; store: {counts[0]:,} lines, "
        f"{counts[1]:,} events, {counts[2]:,} entities, {counts[3]:,} batches, "
        f"{size_after_turns / 2**20:.1f} MiB\n"
    )
    print("| per turn (LLM time excluded) | count | p50 | p95 | p95/p50 | baseline p50 | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    base = statistics.median(timings["baseline"]) if timings["baseline"] else float("nan")
    for name, values in (
        ("observe, all turns", all_turns),
        ("observe, no extraction due", timings["observe"]),
        ("observe, extracting (bookkeeping + commit)", timings["observe_extracting"]),
    ):
        p50, p95 = statistics.median(values), percentile(values, 0.95)
        print(
            f"| {name} | {len(values):,} | {p50:.1f} ms | {p95:.1f} ms | {p95 / p50:.2f} | "
            f"{base:.1f} ms | {base / p50:.2f}x |"
        )
    print(
        "\nbaseline = the spec's get_chat_history (SQLModel) + counting pending turns in "
        f"Python, {len(timings['baseline']):,} turns of the first {args.baseline_players} "
        "players (counts checked equal to observe's)\n"
    )

    build_heavy_player(con, args.cleanup_memories)
    con.execute("checkpoint")
    # default settings but the threshold (20,000 unless --cleanup-memories says otherwise)
    loop = MemoryLoop(con, llm=None, settings={"cleanup_threshold": args.cleanup_memories})
    start = time.perf_counter()
    report = loop.maintain(now=NOW + timedelta(minutes=1))
    cleanup = time.perf_counter() - start
    con.execute("checkpoint")
    live = con.execute(
        "select (select count(*) from memory_event where user_id = 'heavy') + "
        "(select count(*) from memory_entity where user_id = 'heavy')"
    ).fetchone()
    archived = con.execute("select count(*) from memory_archive").fetchone()
    assert live is not None and archived is not None
    print("| cleanup | memories before | archived | live after | time | store size after |")
    print("|---|---:|---:|---:|---:|---:|")
    print(
        f"| one player, weakest 20% | {args.cleanup_memories:,} | {archived[0]:,} | "
        f"{live[0]:,} | {cleanup * 1000:.0f} ms | {os.path.getsize(path) / 2**20:.1f} MiB |"
    )
    assert report.archived.get("weakest_share") == args.cleanup_memories // 5, report
    con.close()


if __name__ == "__main__":
    main()
