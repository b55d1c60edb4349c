"""The recall fast path against the models it stands in for: the query words (recall_words,
macro expand_recall_words) and the BM25 rows (postings_cache, model int_memory_query_lexical)
that a recall statement binds on the embedded store, row for row, also after memories are
added and deleted (the postings held are checked on every read)."""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta
from typing import Any

import duckdb
import pytest

from rolemem import DynamicMemory
from rolemem.dynamic_memory import event_fields
from rolemem.dynamic_memory.player_memories import forget
from rolemem.dynamic_memory.postings_cache import EventPostingsCache
from rolemem.dynamic_memory.reachable import REACHABLE, read_reachable
from rolemem.dynamic_memory.sql import NO_REFERENCES, batched, query_sql, recall_sources
from rolemem.sql.project import compose
from rolemem.text.recall_words import RecallWords
from rolemem.text.tokens import search_keywords, search_terms

from .test_recall_quality import AGENT, NOW, USER, event_rows

# the quality set's questions, and words that reach the edges: stopwords, names in another
# case, association words (the seed's 画画, 海边 …), a one-character word, English inflections
TEXTS = [
    "你还记得我的猫叫什么吗",
    "上次那本侦探小说的凶手是谁",
    "我们一起吃过火锅吗",
    "在海边捡的贝壳是什么颜色",
    "昨天晚上加班的时候",
    "我考驾照紧张得要命",
    "画廊的展览是什么主题",
    "圣诞节我们做了什么",
    "我的生日蛋糕什么味道",
    "下雨天你来接我",
    "木木 祁煜 我的 了 猫",
    "画画 海边 画画 猫 伞",
    "圣诞节的生日礼物",
    "大海 海洋 温柔 漂亮 作业 室友 失恋",
    "What did Caroline research about adoption agencies?",
]


def inputs(memory: DynamicMemory, text: str, **settings: Any) -> dict[str, Any]:
    """One query's statement inputs as a recall binds them (sql.QUERY_FIELDS and settings)."""
    return {
        **memory.settings,
        **settings,
        "save_id": None,
        "memory_scope": "player",
        "lineage_save_ids": None,
        "agent_id": AGENT,
        "user_id": USER,
        "user_name": "木木",
        "agent_name": "祁煜",
        "query_text": text,
        "tokens": search_terms(search_keywords(text, top_k=10), names=("木木", "祁煜")),
        "query_embedding": None,
        **NO_REFERENCES,
        "now": NOW,
        "result_limit": 5,
        "score_threshold": None,
        "roulette_seed": None,
    }


def model_rows(memory: DynamicMemory, model: str, columns: str, query: dict[str, Any]) -> list:
    """`model`'s rows for one bound query, as the recall statement composes it."""
    sql = compose(
        model,
        {"int_memory_queries": query_sql(), **recall_sources("duckdb")},
        f"select {columns} from {model} order by all",
        existing=("association_words", "recall_stopwords"),
    )
    params = batched([query])
    used = {name: value for name, value in params.items() if f"${name}" in sql}
    return memory.store.run(sql, used)


def fast_lexical(
    memory: DynamicMemory, cache: EventPostingsCache, words: RecallWords, query: dict[str, Any]
) -> list[tuple[int, float | None, float]]:
    fetch = memory.store.columns
    [lengths] = read_reachable(fetch, [(AGENT, USER)])
    return sorted(zip(*cache.lexical(fetch, query, words.words(query), lengths), strict=True))


def assert_same_lexical(got: list, expected: list) -> None:
    assert [row[0] for row in got] == [row[0] for row in expected]
    for (_, bm25, tier), (_, model_bm25, model_tier) in zip(got, expected, strict=True):
        assert math.isclose(bm25, model_bm25, rel_tol=1e-12, abs_tol=1e-12)
        assert tier == model_tier


@pytest.fixture(scope="module")
def memory():
    memory = DynamicMemory(duckdb.connect(), embedder=None)
    memory.add_events(event_rows())
    memory.add_events(
        [
            {
                "user_id": USER,
                "agent_id": AGENT,
                "description": "Caroline researched adoption agencies and painted a sunset",
                "created_at": datetime(2021, 1, 5),
                "keywords": ["adoption", "painting"],
            },
            {
                "user_id": USER,
                "agent_id": AGENT,
                "description": "木木的伞落在画室，画作被雨打湿了",
                "created_at": datetime(2021, 1, 7),
                "keywords": ["伞", "画画"],
            },
            {
                "user_id": "other",
                "agent_id": AGENT,
                "description": "另一个玩家的猫叫团子",
                "created_at": datetime(2021, 1, 6),
                "keywords": ["猫"],
            },
        ]
    )
    yield memory
    memory.close()


def test_the_reachable_events_read_are_the_models_union(memory):
    """REACHABLE writes out int_memory_events_with_official narrowed to the batch's players
    and agents (the designers' events included)."""
    memory.import_official(
        {"agent_id": AGENT, "events": [{"description": "官方的事", "created_at": "2020-01-01"}]}
    )
    params = {"agent_id": [AGENT], "user_id": [USER, "other"]}
    columns = "agent_id, scope, user_id, event_id, token_count"
    expected = memory.store.run(
        compose(
            "int_memory_events_with_official",
            {
                name: sql
                for name, sql in recall_sources("duckdb").items()
                if name in ("source_memory_event", "source_official_event")
            },
            f"select {columns} from int_memory_events_with_official order by all",
        ),
        params,
    )
    assert {row[1] for row in expected} == {"user", "official"}
    assert memory.store.run(f"select {columns} from ({REACHABLE}) order by all", params) == expected
    # a batch of one player reads no owners; of several, each query takes its own
    fetch = memory.store.columns
    [alone] = read_reachable(fetch, [(AGENT, USER)])
    mine, other = read_reachable(fetch, [(AGENT, USER), (AGENT, "other")])
    for got, user in ((alone, USER), (mine, USER), (other, "other")):
        rows = sorted(
            (row[3], row[4]) for row in expected if row[1] == "official" or row[2] == user
        )
        assert got.ids.tolist() == [event for event, _ in rows]
        assert [None if math.isnan(n) else n for n in got.lengths.tolist()] == [n for _, n in rows]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"expand_strategy": 1},
        {"expand_strategy": 0, "max_expanded_words": 1},
        {"max_expanded_words": 0},
        {"filter_levels": [9, 8]},
    ],
    ids=["default", "pooled", "one", "none", "filtered"],
)
def test_the_words_are_the_macros(memory, text, settings):
    query = inputs(memory, text, **settings)
    with memory.store.reading() as cur:
        words = RecallWords.read(cur)
    expected = model_rows(
        memory, "int_memory_query_words", "word, word_source, level, word_order", query
    )
    assert sorted(words.words(query)) == sorted(expected)


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("settings", [{}, {"expand_strategy": 1, "expanded_word_weight": 0.3}])
def test_the_bm25_rows_are_the_models(memory, text, settings):
    query = inputs(memory, text, **settings)
    with memory.store.reading() as cur:
        words = RecallWords.read(cur)
    expected = model_rows(
        memory, "int_memory_query_lexical", "event_id, bm25_raw, word_tier", query
    )
    assert_same_lexical(fast_lexical(memory, EventPostingsCache(), words, query), expected)


def test_the_postings_held_follow_adds_and_deletes():
    """The cache warmed before a write answers as the models after it: a new event is loaded,
    a deleted one no longer counts (its document frequency and the corpus change)."""
    with DynamicMemory(duckdb.connect(), embedder=None) as memory:
        ids = memory.add_events(event_rows())
        with memory.store.reading() as cur:
            words = RecallWords.read(cur)
        cache = EventPostingsCache()
        query = inputs(memory, "我们一起吃过火锅吗 猫")

        def check() -> list:
            expected = model_rows(
                memory, "int_memory_query_lexical", "event_id, bm25_raw, word_tier", query
            )
            got = fast_lexical(memory, cache, words, query)
            assert_same_lexical(got, expected)
            return got

        before = check()
        [added] = memory.add_events(
            [
                {
                    "user_id": USER,
                    "agent_id": AGENT,
                    "description": "木木又和祁煜吃了一次火锅",
                    "created_at": datetime(2021, 2, 1),
                    "keywords": ["火锅"],
                }
            ]
        )
        after_add = check()
        assert added in {row[0] for row in after_add}
        assert added not in {row[0] for row in before}
        memory.delete_event(ids[2])  # the first 火锅 memory
        after_delete = check()
        assert ids[2] not in {row[0] for row in after_delete}
        # one 火锅 event left: a rarer word than before weighs more
        assert (
            dict((r[0], r[1]) for r in after_delete)[added]
            > dict((r[0], r[1]) for r in after_add)[added]
        )


# -- property: random writes, one cache held across them, 200 random queries ----------------

VOCABULARY = (
    "火锅 海边 贝壳 画画 画廊 猫 团子 生日 蛋糕 圣诞节 礼物 下雨 地铁站 驾照 侦探 小说 "
    "加班 灯 室友 失恋 大海 温柔 作业 伞 paint painting researched adoption agencies"
).split()


def random_event(rng: random.Random, user: str) -> dict[str, Any]:
    return {
        "user_id": user,
        "agent_id": AGENT,
        "description": "木木" + "，".join(rng.sample(VOCABULARY, rng.randint(2, 6))),
        "created_at": datetime(2021, 1, 1) + timedelta(hours=rng.randint(0, 2000)),
        "keywords": rng.sample(VOCABULARY, rng.randint(0, 2)),
    }


def test_the_fast_path_stays_the_models_through_random_writes():
    """Adds, description and importance edits, deletes, a player's memories forgotten
    (archived, as maintenance archives them), designers' events imported: after each, the BM25
    rows of random queries from one cache held throughout equal the model's."""
    rng = random.Random(45)
    with DynamicMemory(duckdb.connect(), embedder=None) as memory:
        with memory.store.reading() as cur:
            words = RecallWords.read(cur)
        cache = EventPostingsCache()
        live: list[int] = []
        checked, done = 0, set()
        for step in range(20):
            action = rng.choice(
                ["add", "add", "edit", "importance", "delete", "forget", "official"]
            )
            done.add(action)
            if action == "add" or not live:
                live += memory.add_events(
                    [random_event(rng, USER) for _ in range(rng.randint(1, 8))]
                )
            elif action == "edit":  # a new description is a new event
                old = live.pop(rng.randrange(len(live)))
                text = "木木" + "，".join(rng.sample(VOCABULARY, 3))
                live.append(memory.update_event(old, description=text))
            elif action == "importance":  # the same event, its postings unchanged
                memory.update_event(rng.choice(live), importance=rng.random())
            elif action == "delete":
                memory.delete_event(live.pop(rng.randrange(len(live))))
            elif action == "forget":  # another player's memories archived
                memory.add_events([random_event(rng, "other") for _ in range(3)])
                forget(memory.con, "other", agent_id=AGENT)
            else:
                memory.import_official(
                    {
                        "agent_id": AGENT,
                        "events": [
                            {
                                "description": "，".join(rng.sample(VOCABULARY, 3)),
                                "created_at": "2020-12-01T00:00:00",
                            }
                            for _ in range(2)
                        ],
                    }
                )
            for _ in range(10):
                text = " ".join(rng.sample(VOCABULARY, rng.randint(1, 4)))
                query = inputs(memory, text, expand_strategy=step % 2)
                expected_words = model_rows(
                    memory, "int_memory_query_words", "word, word_source, level, word_order", query
                )
                assert sorted(words.words(query)) == sorted(expected_words)
                expected = model_rows(
                    memory, "int_memory_query_lexical", "event_id, bm25_raw, word_tier", query
                )
                assert_same_lexical(fast_lexical(memory, cache, words, query), expected)
                checked += 1
        assert checked == 200
        assert done == {"add", "edit", "importance", "delete", "forget", "official"}


@pytest.mark.parametrize("change", ["delete", "edit"])
def test_a_memory_changed_between_a_lone_recalls_reads_is_answered_as_the_statement_does(
    change, monkeypatch
):
    """A lone recall reads its scope, then its descriptions, then the fields of what it shows,
    each in its own snapshot: a shown event deleted (or edited: a new id) in between sends the
    query to the statement, which reads one snapshot: the answer still holds `limit` events
    (after a delete the statement's after it: only its word statistics were read before), and
    its candidates say which were shown."""
    con = duckdb.connect()
    writer = DynamicMemory(con, embedder=None)
    reader = DynamicMemory(con, embedder=None, profile={"timeline_size": 2})
    owner = {"user_id": USER, "agent_id": AGENT}
    writer.add_events(  # the overview timeline: the newest (fillers, the race's second id)
        [
            {**owner, "description": f"猫 咖啡 {i}", "created_at": NOW - timedelta(days=9 + i)}
            for i in range(1, 8)
        ]
        + [
            {**owner, "description": f"书 {i}", "created_at": NOW - timedelta(days=i)}
            for i in range(1, 5)
        ]
    )
    read_fields = event_fields.read_fields
    gone: list[int] = []

    def racing(fetch_rows: Any, ids: list[int]) -> Any:
        gone.append(ids[0])
        if change == "delete":
            writer.delete_event(ids[0])
        else:
            writer.update_event(ids[0], description="猫 咖啡 改")
        return read_fields(fetch_rows, ids)

    asked = {**owner, "limit": 3, "explain": True, "update": False, "now": NOW}
    with monkeypatch.context() as patched:
        patched.setattr(event_fields, "read_fields", racing)
        raced = reader.query("猫 咖啡", **asked)
    reader._recall._alone = False  # the statement, after the change
    after = reader.query("猫 咖啡", **asked)
    shown = [event["event_id"] for event in raced.memory_events]
    assert len(shown) == 3 and gone[0] not in shown
    assert [c["event_id"] for c in raced.candidates if c["status"] == "shown"] == shown
    assert raced.timeline == after.timeline
    if change == "delete":  # an edit's new id has no signal rows before it: none to show yet
        assert shown == [event["event_id"] for event in after.memory_events]
