"""Benchmark: keyword recall's cost as one player's history grows (400, 4,000, 40,000 events).

    .venv/bin/python bench/bench_recall_scale.py [--sizes 400,4000,40000] [--rounds 3]

One player x agent on an embedded DuckDB store. The events go in through the real write path
(`DynamicMemory.add_events`, batches of --batch events, embedder off: keyword, BM25 and time
only, so no vectors are stored or scanned). The store grows forward in time, one event every 45
minutes; at each size its file is copied, so each size is its own store holding the first N
events of the same history. Recall is `DynamicMemory.query` with the turn's arguments
(explain, update, the names), each size at its own "now" (an hour after its last event), over
~30 fixed Chinese queries; the sizes alternate query by query, so a busy neighbour slows them
alike. Baseline: the smallest size, measured in the same run. The vocabulary is small (a
query word is in about a tenth of the events), so the candidates a query scores grow with the
history as fast as it does: a pessimistic case for the read.
"""

from __future__ import annotations

import argparse
import math
import random
import shutil
import statistics
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plan_size import captured_queries, operators_of  # noqa: E402
from scratch import scratch_dir  # noqa: E402

from rolemem import DynamicMemory

USER, AGENT, USER_NAME, AGENT_NAME = "mumu", "qiyu", "木木", "祁煜"
START = datetime(2023, 1, 1, 9, 0)
STEP = timedelta(minutes=45)

PLACES = ["海边", "图书馆", "咖啡馆", "公园", "画廊", "宿舍", "游乐园", "天台", "便利店", "车站"]
ACTIVITIES = [
    ("散步", "散步"),
    ("吃火锅", "火锅"),
    ("看电影", "电影"),
    ("画画", "画画"),
    ("听演唱会", "演唱会"),
    ("捡贝壳", "贝壳"),
    ("复习考试", "考试"),
    ("做蛋糕", "蛋糕"),
    ("看星空", "星空"),
    ("喂猫咪", "猫咪"),
]
TOPICS = [
    "室友失恋",
    "生日礼物",
    "圣诞节的红色装饰",
    "加班到深夜",
    "夏天的旅行计划",
    "冬天的第一场雪",
    "喜欢的颜色",
    "小时候养的小狗",
    "新买的玫瑰",
    "星座运势",
    "毕业以后的打算",
    "下雨天的心情",
]
FEELINGS = ["两个人都很开心", "木木有点难过", "祁煜安慰了她", "气氛有些尴尬", "约好下次再来"]

# what a player says in a turn: most name something the history holds, a few name a time the
# seed's expressions know (their plan adds the time window), two share no word with it
QUERIES = [
    "室友失恋了，我们陪她吃了一晚上火锅",
    "你还记得那次圣诞节的红色装饰吗",
    "下雨天想去图书馆",
    "我们再去海边散步吧",
    "生日那天的蛋糕真好吃",
    "上次在画廊你画的那幅画还在吗",
    "好想再去看一次星空",
    "今天加班到深夜，好累",
    "你送我的玫瑰开了",
    "夏天我们去旅行好不好",
    "下雪了，想起去年冬天",
    "咖啡馆那只猫咪还在吗",
    "我最喜欢的颜色是什么来着",
    "演唱会的票抢到了！",
    "考试终于结束了",
    "你还记得我小时候养的小狗吗",
    "毕业以后你想做什么",
    "天台上的风好大",
    "便利店的关东煮又涨价了",
    "我们在车站等了好久",
    "昨天在公园散步的时候你说了什么",
    "上周一起看的电影叫什么",
    "上个月的生日礼物你喜欢吗",
    "今晚想吃火锅",
    "你觉得我是什么星座",
    "游乐园的摩天轮好高",
    "捡的贝壳放在哪里了",
    "那天你安慰我的话我一直记得",
    "今天天气真好",
    "你在想什么呢",
]


def events(count: int, seed: int = 7) -> list[dict[str, Any]]:
    """The player's history, oldest first: the same seed gives the same events, so the first N
    of a longer history are a shorter one."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        place, (activity, thing) = rng.choice(PLACES), rng.choice(ACTIVITIES)
        topic, feeling = rng.choice(TOPICS), rng.choice(FEELINGS)
        out.append(
            {
                "user_id": USER,
                "agent_id": AGENT,
                "description": f"木木和祁煜在{place}{activity}，聊到了{topic}，{feeling}",
                "keywords": [place, thing, topic],
                "place": place,
                "importance": round(rng.random(), 2),
                "created_at": START + STEP * i,
            }
        )
    return out


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[max(0, math.ceil(q * len(values)) - 1)]


def query(memory: DynamicMemory, text: str, now: datetime, update: bool = True) -> Any:
    # a turn's call (rolemem.turn.companion) with the prompt text too (a turn leaves that to
    # its budget: prompt_text=False): explain for the trace's candidates, update counting the
    # recall, the names resolved
    return memory.query(
        text,
        user_id=USER,
        agent_id=AGENT,
        now=now,
        explain=True,
        update=update,
        user_name=USER_NAME,
        agent_name=AGENT_NAME,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="400,4000,40000", help="events per size, ascending")
    parser.add_argument("--rounds", type=int, default=3, help="passes over the queries")
    parser.add_argument("--batch", type=int, default=400, help="events per add_events call")
    args = parser.parse_args()
    sizes = sorted({int(size) for size in args.sizes.split(",")})
    folder = scratch_dir("rolemem-scale-")
    history = events(sizes[-1])

    # one growing store, copied at each size (ingest paid once, for the largest)
    growing = folder / "growing.duckdb"
    paths: dict[int, Path] = {}
    print("| events | ingest of the step | events/s of the step |")
    print("|---:|---:|---:|")
    done = 0
    for size in sizes:
        memory = DynamicMemory(str(growing), embedder=None)
        start = time.perf_counter()
        for first in range(done, size, args.batch):
            memory.add_events(history[first : min(first + args.batch, size)])
        seconds = time.perf_counter() - start
        memory.close()
        print(f"| {size:,} | {seconds:.1f} s | {(size - done) / seconds:,.0f} |")
        done = size
        paths[size] = folder / f"store-{size}.duckdb"
        shutil.copyfile(growing, paths[size])
    growing.unlink()

    memories = {size: DynamicMemory(str(paths[size]), embedder=None) for size in sizes}
    nows = {size: START + STEP * (size - 1) + timedelta(hours=1) for size in sizes}
    for size, memory in memories.items():  # warm-up: jieba, composed SQL, DuckDB's caches
        for text in QUERIES:
            query(memory, text, nows[size], update=False)

    totals: dict[int, list[float]] = {size: [] for size in sizes}
    sql: dict[int, list[float]] = {size: [] for size in sizes}
    update: dict[int, list[float]] = {size: [] for size in sizes}
    candidates: dict[int, list[int]] = {size: [] for size in sizes}
    recalled: dict[int, int] = dict.fromkeys(sizes, 0)
    for _ in range(args.rounds):
        for text in QUERIES:
            for size, memory in memories.items():
                start = time.perf_counter()
                response = query(memory, text, nows[size])
                totals[size].append((time.perf_counter() - start) * 1000)
                sql[size].append(response.additional_info["timings_ms"]["sql"])
                update[size].append(response.additional_info["timings_ms"]["update"])
                candidates[size].append(len(response.candidates))
                recalled[size] += bool(response.memory_events)

    print(f"\n{len(QUERIES)} queries x {args.rounds} rounds per size, keyword only (no embedder)\n")
    print(
        "| events | p50 | p95 | SQL p50 | update p50 | candidates p50 | operators | "
        "queries recalling | p50 ratio | events ratio | p50 ratio to the previous size |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    base = sizes[0]
    b50 = statistics.median(totals[base])
    sublinear = True
    previous = base
    for size in sizes:
        p50 = statistics.median(totals[size])
        # each step, not only the whole span: p50 grows by less than the events do (which
        # implies it against the smallest size too)
        step = p50 / statistics.median(totals[previous])
        if size != previous:
            sublinear = sublinear and step < size / previous
        with captured_queries() as seen:
            query(memories[size], QUERIES[0], nows[size], update=False)
        print(
            f"| {size:,} | {p50:.1f} ms | {percentile(totals[size], 0.95):.1f} ms | "
            f"{statistics.median(sql[size]):.1f} ms | {statistics.median(update[size]):.1f} ms | "
            f"{statistics.median(candidates[size]):,.0f} | {operators_of(seen)} | "
            f"{recalled[size]}/{len(totals[size])} | "
            f"{p50 / b50:.2f}x | {size / base:,.0f}x | "
            + (f"{step:.2f}x of {size / previous:,.0f}x |" if size != previous else "- |")
        )
        previous = size
    print(f"\ngrows sublinearly: {'yes' if sublinear else 'no'}")
    for memory in memories.values():
        memory.close()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
