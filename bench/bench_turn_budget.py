"""Benchmark: the per-turn prompt budget (rolemem.turn.budget) and the turn around it.

    .venv/bin/python bench/bench_turn_budget.py [--calls 200] [--turns 30] [--store demo.duckdb]

Printed, per case: the operators of each statement `budget.cut` runs (EXPLAIN; none when
the count with nothing cut answers, in Python), the median
ms of `budget.cut`, and the median ms of `Companion.turn` (dry run) on the demo store with and
without a max_prompt_tokens that cuts. Run it with another checkout's `python/` on PYTHONPATH
to compare revisions in the same run (scripts alternate them).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plan_size import captured_queries, operator_count  # noqa: E402

from rolemem.sql.project import used  # noqa: E402
from rolemem.turn.companion import Companion  # noqa: E402

try:
    from rolemem.turn import budget
except ImportError:  # a revision before the prompt budget: the turn's timings only
    budget = None  # type: ignore[assignment]

NAMES = {"user_name": "木木", "agent_name": "祁煜", "is_dynamic_inline": False}
TURN: dict[str, Any] = {
    "save_id": 2,
    "user_id": "mumu",
    "role_id": 1,
    "message": "今天画画时你好温柔",
    "context": {"intimacy": 2, "exploration": 3, "scene": "studio"},
    "user_name": "木木",
    "char_name": "钦灵",
    "dry_run": True,
}


def pieces(history: int, events: int) -> list[dict[str, Any]]:
    """A turn's pieces: the template, the message, `history` messages, `events` events."""
    return [
        {"layer": "system", "item_index": 0, "content": "你叫祁煜，是一位画家。" * 20},
        {"layer": "message", "item_index": 0, "content": "今天画画时你好温柔"},
        *(
            {
                "layer": "history",
                "item_index": i,
                "item_rank": history - i,
                "content": "你来了，今天想画什么？ok",
            }
            for i in range(history)
        ),
        *(
            {
                "layer": "dynamic_event",
                "item_index": i,
                "item_rank": i + 1,
                "content": "{{char}}和{{user}}在海边画了海。",
                "time_text": "2021-01-05",
                "place": "海边",
                "day_text": f"2021-01-05 10:00:{i:02d}",
            }
            for i in range(events)
        ),
    ]


def operators(case: list[dict[str, Any]], limit: int | None) -> list[int]:
    """The operators of each statement `budget.cut` runs (none: counted in Python)."""
    with captured_queries() as seen:
        budget.cut(case, max_prompt_tokens=limit, template_alone=None, **NAMES)  # type: ignore[arg-type]
    return [operator_count(cur, sql, used(sql, params)) for sql, params, cur in seen]


def cut_ms(case: list[dict[str, Any]], limit: int | None, calls: int) -> float:
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        budget.cut(case, max_prompt_tokens=limit, template_alone=None, **NAMES)  # type: ignore[arg-type]
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def turn_ms(store: str, turns: int, limit: int | None) -> float:
    companion = Companion(store, character_id="qiyu", embedder=None)
    bound = {} if limit is None else {"max_prompt_tokens": limit}
    try:
        for _ in range(3):  # compose and prepare first
            companion.turn(**TURN, **bound)
        times = []
        for _ in range(turns):
            started = time.perf_counter()
            companion.turn(**TURN, **bound)
            times.append((time.perf_counter() - started) * 1000)
        return statistics.median(times)
    finally:
        companion.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--store", help="a demo store to copy (else load_demo builds one)")
    parser.add_argument("--json", action="store_true", help="one JSON line, for scripts")
    args = parser.parse_args()
    cases = {
        "10 history, 8 events": (pieces(10, 8), None),
        "10 history, 8 events, cut": (pieces(10, 8), 200),
        "40 history, 20 events": (pieces(40, 20), None),
    }
    result: dict[str, Any] = {}
    for name, (case, limit) in cases.items() if budget is not None else ():
        cut_ms(case, limit, 5)  # warm
        result[name] = {
            "operators": operators(case, limit),
            "cut ms": cut_ms(case, limit, args.calls),
        }
    with tempfile.TemporaryDirectory() as folder:
        store = str(Path(folder) / "demo.duckdb")
        if args.store:
            shutil.copyfile(args.store, store)
        else:
            from rolemem.testing.demo_data import load_demo

            load_demo(store)
        result["turn ms"] = turn_ms(store, args.turns, None)
        result["turn ms, cut"] = turn_ms(store, args.turns, 300) if budget is not None else None
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return
    print("| case | operators | budget.cut ms |\n|---|---|---|")
    for name in cases if budget is not None else ():
        print(
            f"| {name} | {' + '.join(map(str, result[name]['operators']))} "
            f"| {result[name]['cut ms']:.2f} |"
        )
    print(
        f"\nCompanion.turn (dry run) median: {result['turn ms']:.1f} ms; "
        f"with max_prompt_tokens=300: {result['turn ms, cut']} ms"
    )


if __name__ == "__main__":
    main()
