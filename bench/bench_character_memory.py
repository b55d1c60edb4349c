"""Benchmark: character-memory recall latency at 100 / 10,000 / 100,000 entries.

    .venv/bin/python bench/bench_character_memory.py

Prints p50/p95 of `session.recall()` (tokenising included) after warm-up, against a plain
Python loop over the same entries (bench/character_baseline.py), and jieba/rjieba's first-load
cost in a fresh process.
"""

from __future__ import annotations

import random
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from character_baseline import recall as baseline_recall  # noqa: E402
from plan_size import captured_queries, operators_of  # noqa: E402

from rolemem.character_memory import CharacterMemory  # noqa: E402
from rolemem.character_memory.config import KINDS, CharacterConfig, ConfigWarning  # noqa: E402
from rolemem.text.tokens import tokenize  # noqa: E402

VOCABULARY = [
    "画画",
    "绘画",
    "画作",
    "艺术",
    "创作",
    "温柔",
    "体贴",
    "大海",
    "海洋",
    "画廊",
    "收藏",
    "音乐",
    "咖啡",
    "猫咪",
    "旅行",
    "星空",
    "玫瑰",
    "雨天",
    "书店",
    "火锅",
    "生日",
    "礼物",
    "圣诞节",
    "作业",
    "考试",
    "朋友",
    "秘密",
    "梦想",
    "回忆",
    "保护",
]
VOCABULARY += [f"词语{i}" for i in range(2000)]
INPUTS = [
    "今天画画时你好温柔",
    "我们去海边看星空吧",
    "你喜欢什么样的音乐",
    "生日礼物准备好了吗",
    "下雨天适合去书店",
    "这幅画作真漂亮",
]


def synthetic_config(n: int, seed: int = 5) -> tuple[CharacterConfig, list[dict]]:
    rng = random.Random(seed)
    config = CharacterConfig()
    plain = []
    kinds = list(KINDS.values())
    for i in range(n):
        table, group_column, kind = kinds[0] if i % 10 < 6 else kinds[1] if i % 10 < 9 else kinds[2]
        keywords = rng.sample(VOCABULARY[:30] if rng.random() < 0.05 else VOCABULARY, 4)
        content = "".join(rng.sample(VOCABULARY, 3)) + f"第{i}条"
        conditions = [{"field": "intimacy", "value": rng.randint(1, 3), "operator": "gte"}]
        if rng.random() < 0.3:
            conditions.append({"field": "scene", "value": ["studio", "gallery"], "operator": "in"})
        group = f"类别{i % 17}"
        row = {
            "ordinal": len(config.tables[table]) + 1,
            "character_id": "bench",
            group_column: group,
            "keywords": keywords,
            "content": content,
            "strength": rng.randint(1, 5),
            "query_params": conditions,
        }
        if table == "character_events":
            row["event_date"] = "很久以前" if i % 2 else ""
        config.tables[table].append(row)
        config.locations[(kind, row["ordinal"])] = f"bench #{i}"
        plain.append(
            {
                "kind": kind,
                "group": group,
                "ordinal": row["ordinal"],
                **{k: row[k] for k in ("keywords", "content", "strength", "query_params")},
            }
        )
    return config, plain


def percentiles(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples), samples[max(0, int(len(samples) * 0.95) - 1)]


def first_load_ms(module: str) -> float:
    code = (
        f"import time; t = time.perf_counter(); import {module} as m; "
        f"m.{'cut' if module == 'rjieba' else 'lcut'}('今天画画时你好温柔'); "
        "print((time.perf_counter() - t) * 1000)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    print(
        f"first load + first cut, fresh process: rjieba {first_load_ms('rjieba'):.0f} ms, "
        f"jieba {first_load_ms('jieba'):.0f} ms\n"
    )
    print(
        "| entries | build (s) | recall p50 | recall p95 | p95/p50 | operators | baseline p50 "
        "| ratio | target |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    context = {"intimacy": 2, "exploration": 3, "scene": "studio", "time": "day"}
    for n in (100, 10_000, 100_000):
        config, plain = synthetic_config(n)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConfigWarning)
            memory = CharacterMemory(config=config, character_id="bench")
        build = time.perf_counter() - start
        session = memory.session("bench")
        for text in INPUTS:  # warm-up
            session.recall(text, context)
        runs = 60 if n < 100_000 else 20
        ours = []
        base = []
        for i in range(runs):
            text = INPUTS[i % len(INPUTS)]
            start = time.perf_counter()
            result = session.recall(text, context)
            ours.append((time.perf_counter() - start) * 1000)
            words = [w["word"] for w in result.words if w["word_source"] == "token"]
            expanded = [w["word"] for w in result.words if w["word_source"] == "expanded"]
            start = time.perf_counter()
            baseline_recall(plain, tokenize(text), expanded, context)
            base.append((time.perf_counter() - start) * 1000)
            assert words is not None
        p50, p95 = percentiles(ours)
        b50, _ = percentiles(base)
        with captured_queries() as seen:
            session.recall(INPUTS[0], context)
        operators = operators_of(seen)
        target = "≥ 0.6x the loop and ≤ 150 operators" if n == 10_000 else ""
        print(
            f"| {n:,} | {build:.2f} | {p50:.1f} ms | {p95:.1f} ms | {p95 / p50:.2f} | "
            f"{operators} | {b50:.1f} ms | {b50 / p50:.2f}x | {target} |"
        )


if __name__ == "__main__":
    main()
