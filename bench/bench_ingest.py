"""Benchmark: how fast `DynamicMemory.add_events` takes events in, embedding excluded.

    .venv/bin/python bench/bench_ingest.py [--datasets ../shared/datasets] [--rounds 5]
        [--against OTHER_CHECKOUT/python]

Workloads, each into fresh in-memory DuckDB stores (bench_recall_quality's, made before the
clock starts): LoCoMo-zh's 788 turns, one add_events call per conversation (its protocol: one
player each), embedder off, then with vectors from an embedder that costs nothing (one
constant vector: the context texts' statement and the vectors' writes are timed, a model
not); 4,000 events of one player (bench_recall_scale's history), embedder off, in one call and
in calls of 400 (its ingest). What `prepare_events` takes (checks, postings, context texts) is
timed apart, on the same events again. Every round runs each code tree in a fresh process of
its own, warmed up first (jieba, rendered SQL); with --against, the other tree's `rolemem` is
measured in the same rounds, alternating which goes first, so a busy neighbour slows both
alike. Medians over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

HERE = Path(__file__).resolve()
WORKLOADS = (
    "locomo-zh 788, per conversation",
    "locomo-zh 788, with vectors",
    "4,000 in one call",
    "4,000 in calls of 400",
)
# the workload whose store has an embedder
WITH_VECTORS = WORKLOADS[1]


class FreeEmbedder:
    """One constant vector for any text: what storing vectors costs, without a model."""

    dim = 384
    vector = [0.05] * dim

    def embed_query(self, text: str) -> list[float]:
        return self.vector

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.vector] * len(texts)


def workloads(datasets: Path) -> dict[str, list[list[dict[str, Any]]]]:
    """Each workload's add_events calls (a call's events), in order."""
    from bench_recall_quality import AGENT, conversation_events
    from bench_recall_scale import events

    samples = json.loads((datasets / "medium_locomo_zh.json").read_text(encoding="utf-8"))
    locomo = [
        [
            {
                "user_id": sample["sample_id"],
                "agent_id": AGENT,
                "description": e["description"],
                "created_at": e["created_at"],
            }
            for e in conversation_events(sample)
        ]
        for sample in samples
    ]
    history = events(4000)
    return dict(
        zip(
            WORKLOADS,
            (locomo, locomo, [history], [history[i : i + 400] for i in range(0, 4000, 400)]),
            strict=True,
        )
    )


def worker(datasets: Path) -> None:
    """One tree's timings (seconds per workload, and its prepare_events share) as JSON."""
    import duckdb

    from rolemem import DynamicMemory

    calls = workloads(datasets)
    out: dict[str, Any] = {}
    for name, batches in calls.items():
        embedder = FreeEmbedder() if name == WITH_VECTORS else None
        warm = DynamicMemory(duckdb.connect(), embedder=embedder)
        warm.add_events(batches[0][:20])  # jieba, rendered SQL, DuckDB's caches
        # one store per conversation (LoCoMo), else one store: made before the clock starts
        fresh = {
            user: DynamicMemory(duckdb.connect(), embedder=embedder)
            for user in {batch[0]["user_id"] for batch in batches}
        }
        start = time.perf_counter()
        for batch in batches:
            fresh[batch[0]["user_id"]].add_events(batch)
        total = time.perf_counter() - start
        start = time.perf_counter()
        for batch in batches:  # the same events again: prepared alike
            fresh[batch[0]["user_id"]].prepare_events(batch)
        out[name] = {
            "events": sum(map(len, batches)),
            "seconds": total,
            "prepare": time.perf_counter() - start,
        }
    print(json.dumps(out))


def measured(python_dir: str, datasets: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": python_dir}
    command = [sys.executable, str(HERE), "--worker", "--datasets", str(datasets)]
    done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--datasets", default=str(HERE.parents[2] / "shared" / "datasets"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--against", help="another checkout's python/ folder, measured beside")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    datasets = Path(args.datasets)
    if args.worker:
        worker(datasets)
        return
    if not (datasets / "medium_locomo_zh.json").exists():
        sys.exit(f"bench_ingest: put medium_locomo_zh.json in {datasets} or pass --datasets")
    trees = {"this tree": str(HERE.parents[1] / "python")}
    if args.against:
        trees["--against"] = args.against
    runs: dict[str, list[dict[str, Any]]] = {tree: [] for tree in trees}
    for round_number in range(args.rounds):
        order = list(trees) if round_number % 2 == 0 else list(reversed(trees))
        for tree in order:
            runs[tree].append(measured(trees[tree], datasets))
    print(f"{args.rounds} rounds, medians, in-memory DuckDB\n")
    print("| workload | code | events | add_events | events/s | prepare_events alone |")
    print("|---|---|---:|---:|---:|---:|")
    for name in WORKLOADS:
        for tree, results in runs.items():
            seconds = statistics.median(r[name]["seconds"] for r in results)
            prepare = statistics.median(r[name]["prepare"] for r in results)
            events = results[0][name]["events"]
            print(
                f"| {name} | {tree} | {events:,} | {seconds:.2f} s | "
                f"{events / seconds:,.0f} | {prepare:.2f} s |"
            )


if __name__ == "__main__":
    main()
