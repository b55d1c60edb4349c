"""Recall's write-time structures (the postings held for BM25, the vectors held for the dense
signals) stay exact through every write path: a store played at random (turns extracted by
the loop, forks and returns along the line tree, events added, edited, re-weighted, given a
place and insight in place and deleted by hand, designers' imports, maintenance's cleanup)
answers 200 random queries alike from a reader holding its caches throughout and from one
whose statement plans every model (words, BM25, time windows, prompt text) and reads the
vectors afresh each time."""

from __future__ import annotations

import math
import random
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import duckdb
import pytest

from rolemem import DynamicMemory
from rolemem.dynamic_memory.vector_cache import EventVectorCache
from rolemem.memory_loop import MemoryLoop
from rolemem.memory_loop.llm import OpenAICompatibleLLM
from rolemem.testing.scripted_llm import ScriptedChatServer

from .test_embedders import CharacterEmbedder
from .test_memory_loop import AGENT, NOW, USER, Dialogue, reply

VOCABULARY = [
    "海边", "画画", "猫", "火锅", "贝壳", "画廊", "下雨", "伞", "生日", "蛋糕", "星星",
    "作业", "室友", "侦探", "小说", "雨", "月亮", "咖啡", "昨天", "上周", "去年",
]  # fmt: skip
ACTIONS = [
    "turns", "turns", "fork", "save", "back", "add", "edit", "place", "importance", "delete",
    "official", "maintain",
]  # fmt: skip


def sentence(rng: random.Random) -> str:
    return "木木和祁煜" + "，".join(rng.sample(VOCABULARY, rng.randint(2, 4)))


def same(got: Any, expected: Any, where: str, exact: bool = False) -> None:
    """Equal, floats within float32's precision (the vectors are float32: a cache's cosines
    and a fresh read's are summed in other orders, as test_rules_in_sql's dense test allows);
    `exact`: to the bit, each value of the same type (a float's repr, -0.0 included)."""
    if exact:
        assert type(got) is type(expected), where
    if isinstance(expected, float) and isinstance(got, float):
        if exact:
            assert repr(got) == repr(expected), where
        else:
            assert math.isclose(got, expected, rel_tol=1e-6, abs_tol=1e-6), where
    elif isinstance(expected, dict):
        assert isinstance(got, dict) and got.keys() == expected.keys(), where
        for key in expected:
            same(got[key], expected[key], f"{where}.{key}", exact)
    elif isinstance(expected, list | tuple):
        assert isinstance(got, list | tuple) and len(got) == len(expected), where
        for number, (mine, theirs) in enumerate(zip(got, expected, strict=True)):
            same(mine, theirs, f"{where}[{number}]", exact)
    else:
        assert got == expected, where


def query(rng: random.Random, saves: list[int]) -> tuple[str, dict[str, Any]]:
    """A random question, asked as a turn asks it but with every candidate explained."""
    return " ".join(rng.sample(VOCABULARY, rng.randint(1, 3))), {
        "user_id": USER,
        "agent_id": AGENT,
        "save_id": rng.choice([None, *saves]),
        "memory_scope": rng.choice(["player", "save"]),
        "now": NOW + timedelta(days=rng.randint(0, 30)),
        "user_name": "木木",
        "agent_name": "祁煜",
        "limit": rng.randint(1, 8),
        "explain": True,
        "update": False,
    }


@pytest.fixture
def played():
    """The store (one connection), its loop with a scripted LLM, and the two readers."""
    con = duckdb.connect()
    embedder = CharacterEmbedder()
    with ScriptedChatServer() as server:
        llm = OpenAICompatibleLLM(base_url=server.base_url, model="scripted", max_retries=0)
        memory = DynamicMemory(con, embedder=embedder)
        loop = MemoryLoop(
            con,
            llm=llm,
            memory=memory,
            settings={"cleanup_threshold": 10, "cleanup_interval_days": 0},
        )
        # a batch of twenty queries in one statement each
        fast = DynamicMemory(con, embedder=embedder, max_batch=20)
        model = DynamicMemory(con, embedder=embedder, max_batch=20)
        # every model planned: words, BM25, windows and the prompt text in the statement
        model._recall._fast = None
        yield con, server, loop, fast, model
        for reader in (fast, model, memory):
            reader.close()


def test_caches_held_through_random_writes_answer_as_the_models(played):
    con, server, loop, fast, model = played
    rng = random.Random(1130)
    dialogues = {1: Dialogue(con, save_id=1)}
    dialogues[1].say("system", "你是祁煜", role_id=1)
    tips: list[tuple[int, int]] = []  # (save, line) places a save was at, to return to
    turn, live, done, checked = 0, [], set(), 0
    signals: set[str] = set()  # the signals the candidates compared carried
    # every action at least once, after a first extraction and hand-added events
    schedule = [
        "turns",
        "add",
        "turns",
        *rng.sample(ACTIONS, len(ACTIONS)),
        *rng.choices(ACTIONS, k=6),
    ]
    for step, action in enumerate(schedule):
        done.add(action)
        if action == "turns":  # ten turns on a save's tip, extracted by the loop
            save = rng.choice(sorted(dialogues))
            for _ in range(10):
                turn += 1
                dialogues[save].turn(turn)
            tips.append((save, dialogues[save].tip))
            server.push(reply(sentence(rng), sentence(rng)))
            loop.observe(
                save_id=save, user_id=USER, agent_id=AGENT, role_id=1, scene="gallery", now=NOW,
                user_name="木木", agent_name="祁煜", flush=True,
            )  # fmt: skip
        elif action == "fork":  # a save played on from a line it passed: a new branch
            save, line = rng.choice(tips)
            turn += 1
            dialogues[save].turn(turn, parent=line)
        elif action == "save":  # a new save of the same player
            dialogues[max(dialogues) + 1] = Dialogue(con, save_id=max(dialogues) + 1)
        elif action == "back":  # a save moved back to a place it was at
            save, line = rng.choice(tips)
            dialogues[save].move(line)
        elif action == "add":
            live += loop.memory.add_events(
                [
                    {
                        "user_id": USER,
                        "agent_id": AGENT,
                        "description": sentence(rng),
                        "created_at": NOW - timedelta(days=rng.randint(0, 400)),
                        "keywords": rng.sample(VOCABULARY, rng.randint(0, 2)),
                    }
                    for _ in range(rng.randint(2, 4))
                ]
            )
        elif action == "edit":  # a new description is a new event
            old = live.pop(rng.randrange(len(live)))
            live.append(loop.memory.update_event(old, description=sentence(rng)))
        elif action == "place":  # shown fields changed in place: the same id
            event = rng.choice(live)
            loop.memory.update_event(event, place=rng.choice(VOCABULARY), deepinsight=sentence(rng))
        elif action == "importance":
            loop.memory.update_event(rng.choice(live), importance=rng.random())
        elif action == "delete":
            loop.memory.delete_event(live.pop(rng.randrange(len(live))))
        elif action == "official":
            loop.memory.import_official(
                {
                    "agent_id": AGENT,
                    "events": [
                        {"description": sentence(rng), "created_at": "2024-03-01T00:00:00"}
                        for _ in range(2)
                    ],
                }
            )
        elif action == "maintain":  # cleanup archives the weakest of a store past its share
            loop.maintain(now=NOW + timedelta(days=rng.randint(0, 90)))
        if step % 2 == 0:
            continue
        # twenty queries after every second write: each reader answers them in one statement
        asked = [query(rng, sorted(dialogues)) for _ in range(20)]
        model._recall._cache = EventVectorCache(CharacterEmbedder.dim)  # read afresh
        with ThreadPoolExecutor(len(asked)) as pool:
            waiting = [
                [pool.submit(reader.query, text, **kwargs) for text, kwargs in asked]
                for reader in (fast, model)
            ]
            answers = [[future.result() for future in futures] for futures in waiting]
        # and five asked alone: answered from their scope, without the statement
        alone = {number: fast.query(*asked[number][:1], **asked[number][1]) for number in range(5)}
        for number, answer in alone.items():
            theirs, text = answers[1][number], asked[number][0]
            for name in ("memory_events", "memory_entities", "timeline", "prompt_text"):
                same(getattr(answer, name), getattr(theirs, name), f"alone {text}: {name}")
            same(answer.candidates, theirs.candidates, f"alone {text}: candidates")
        for (text, _), mine, theirs in zip(asked, *answers, strict=True):
            for name in ("memory_events", "memory_entities", "timeline", "prompt_text"):
                same(getattr(mine, name), getattr(theirs, name), f"{text}: {name}")
            same(mine.candidates, theirs.candidates, f"{text}: candidates")
            signals |= {
                name
                for candidate in mine.candidates
                for name in ("bm25_raw", "cosine", "time_score", "is_selected", "is_in_timeline")
                if candidate[name]
            }
            checked += 1
    assert checked == 200
    assert signals == {"bm25_raw", "cosine", "time_score", "is_selected", "is_in_timeline"}
    assert done == set(ACTIONS)
    [(extracted, archived)] = con.execute(
        "select (select count(*) from memory_event where save_id is not null), "
        "(select count(*) from memory_archive where memory_type = 'event')"
    ).fetchall()
    assert extracted > 0 and archived > 0  # the loop extracted, and cleanup archived some
