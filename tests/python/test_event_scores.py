"""The candidates scored and selected in Python (rolemem.dynamic_memory.event_scores) answer as
the models do (int_memory_events_scored, int_memory_events_selected, memory_query_events,
memory_recall_candidates): the same events, scores, logs, every candidate's components,
status and reason, for both fusions, with and without vectors, with thresholds and roulette
draws, over events recalled before (their use counts and last recall times)."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

import duckdb
import pytest

from rolemem import DynamicMemory
from rolemem.dynamic_memory import MemoryInputError, event_scores, recall
from rolemem.sql.project import render_macro

from .test_embedders import CharacterEmbedder
from .test_recall_follows_every_write import VOCABULARY, same

NOW = datetime(2026, 5, 1, 12, 30)
original = event_scores.scored
USER, AGENT = "mumu", "qiyu"


def _question(rng: random.Random) -> tuple[str, dict]:
    # some ask when (seed memory_time_question_words); two players and agents share a batch
    asks = rng.choice(["", "", "什么时候"])
    return asks + " ".join(rng.sample(VOCABULARY, rng.randint(1, 3))), {
        "user_id": rng.choice([USER, USER, "other"]),
        "agent_id": rng.choice([AGENT, AGENT, "qinling"]),
        "now": NOW + timedelta(hours=rng.randint(-48, 24 * 40)),
        "limit": rng.randint(1, 6),
        "score_threshold": rng.choice([None, None, 0.2, 0.45]),
        "roulette_seed": rng.choice([None, None, 7, -3, 2**31 - 1, -(2**31)]),
        "explain": True,
        "update": False,
    }


@pytest.mark.parametrize(
    ("fusion", "vectors", "most"),
    [
        ("convex", False, recall.MOST_SCORED),
        ("rrf", False, recall.MOST_SCORED),
        ("convex", True, recall.MOST_SCORED),
        ("rrf", True, recall.MOST_SCORED),
        # a batch with more signal rows than Python scores faster: the statement scores them
        ("convex", True, 0),
    ],
)
def test_the_candidates_scored_in_python_are_the_models(fusion, vectors, most, monkeypatch):
    monkeypatch.setattr(recall, "MOST_SCORED", most)
    scored = []
    monkeypatch.setattr(event_scores, "scored", lambda *args: scored.append(1) or original(*args))
    rng = random.Random(f"{fusion}{vectors}")
    con = duckdb.connect()
    embedder = CharacterEmbedder() if vectors else None
    profile = {"fusion": fusion}
    with (
        DynamicMemory(con, embedder=embedder) as writer,
        DynamicMemory(con, embedder=embedder, profile=profile, max_batch=16) as fast,
        DynamicMemory(con, embedder=embedder, profile=profile, max_batch=16) as model,
    ):
        model._recall._fast = None  # every model planned
        writer.add_events(
            [
                {
                    "user_id": rng.choice([USER, USER, "other"]),
                    "agent_id": rng.choice([AGENT, AGENT, "qinling"]),
                    "description": "木木和祁煜" + "，".join(rng.sample(VOCABULARY, 3)),
                    "keywords": rng.sample(VOCABULARY, rng.randint(0, 2)),
                    "importance": rng.random(),
                    # a few after the questions' clocks: no evidence of recency
                    "created_at": NOW - timedelta(days=rng.randint(-3, 200), minutes=rng.random()),
                }
                for _ in range(90)
            ]
        )
        # recalls before: use counts and last recall times that differ
        for _ in range(12):
            text, kwargs = _question(rng)
            writer.query(text, **{**kwargs, "update": True, "explain": False})
        asked = [_question(rng) for _ in range(48)]
        with ThreadPoolExecutor(16) as pool:
            answers = [
                [
                    future.result()
                    for future in [pool.submit(reader.query, t, **kw) for t, kw in asked]
                ]
                for reader in (fast, model)
            ]
        # each question asked alone: answered from its scope, without the statement
        alone = [fast.query(text, **kwargs) for text, kwargs in asked]
        # the same questions scored by the statement on the same reader: equal to the bit
        monkeypatch.setattr(recall, "MOST_SCORED", 0)
        with ThreadPoolExecutor(16) as pool:
            by_statement = [
                future.result() for future in [pool.submit(fast.query, t, **kw) for t, kw in asked]
            ]
    for mine, lone, theirs in zip(answers[0], alone, by_statement, strict=True):
        for name in ("memory_events", "timeline", "prompt_text", "candidates"):
            same(getattr(mine, name), getattr(theirs, name), name, exact=True)
            same(getattr(lone, name), getattr(theirs, name), f"alone: {name}", exact=True)
    assert bool(scored) == bool(most)  # scored in Python, or by the models past the most
    shown = 0
    for (text, _), mine, theirs in zip(asked, *answers, strict=True):
        for name in ("memory_events", "timeline", "prompt_text", "candidates"):
            same(getattr(mine, name), getattr(theirs, name), f"{text}: {name}")
        shown += len(mine.memory_events)
    assert shown > 0
    statuses = {c["status"] for answer in answers[0] for c in answer.candidates}
    assert {"shown", "over the limit", "in the timeline"} <= statuses
    candidates = [c for answer in answers[0] for c in answer.candidates]
    assert any(c["recent_use_score"] > 0 for c in candidates)  # recalled before


def test_the_macros_written_out():
    """The cross-database macros the answer rows read, as DuckDB computes them."""
    con = duckdb.connect()
    rounded_sql = render_macro("round_to", "cast($v as double)", 4)
    printed_sql = render_macro("format_decimal", "cast($v as double)", 4)
    # scores are fractions: the ties printf and round meet, and random ones
    rng = random.Random(4)
    values = [0.5, 1.00005, -2.34565, 0.123456789, 12.678951, 2.5e-5, -0.00005, 0.00015]
    values += [-0.0, -0.00004, 0.0]
    values += [rng.uniform(-2, 2) for _ in range(300)]
    for value in values:
        [(rounded, printed)] = con.execute(
            f"select {rounded_sql}, {printed_sql}",
            {"v": value},
        ).fetchall()
        assert repr(event_scores.round_to(value, 4)) == repr(rounded), value
        assert event_scores.format_decimal(value, 4) == printed, value
    for event_id, seed in [(1, 7), (2**40 + 3, -3), (9, 2**31 - 1), (5, -(2**31)), (0, 0)]:
        [(hashed,)] = con.execute(
            "select " + render_macro("roulette_hash", "$e::bigint", "$s::integer"),
            {"e": event_id, "s": seed},
        ).fetchall()
        assert event_scores.roulette_hash(event_id, seed) == hashed
    for start, finish in [
        (datetime(2026, 1, 1, 0, 0, 0, 999999), datetime(2026, 1, 1, 0, 0, 1)),
        (datetime(1969, 12, 31, 23, 59, 59, 500000), datetime(1970, 1, 1)),
        (datetime(2026, 5, 1), datetime(2025, 5, 1, 0, 0, 0, 1)),
    ]:
        [(seconds,)] = con.execute(
            "select " + render_macro("seconds_between", "$a::timestamp", "$b::timestamp"),
            {"a": start, "b": finish},
        ).fetchall()
        assert event_scores.seconds_between(start, finish) == seconds


@pytest.mark.parametrize(
    ("profile", "message"),
    [
        ({"recency_half_life_days": 0}, "recency_half_life_days must be more than 0"),
        ({"recent_use_hours": 0}, "recent_use_hours must be more than 0"),
        ({"bm25_weight": 0, "keyword_weight": 0}, "cannot both be 0"),
    ],
)
def test_a_profile_a_score_would_divide_by_zero_by_is_refused(profile, message):
    with pytest.raises(MemoryInputError, match=message):
        DynamicMemory(duckdb.connect(), embedder=None, profile=profile)
    DynamicMemory(duckdb.connect(), embedder=None, profile={"bm25_weight": 0}).close()
