"""Dynamic (per-player) memory: stores, hybrid recall, prompt text, time, scoring."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from typing import Any

import duckdb
import pytest

from rolemem import DynamicMemory, format_memory_time
from rolemem.dynamic_memory import MemoryInputError
from rolemem.text.embedders import EmbeddingError
from rolemem.text.tokens import search_terms

NOW = datetime(2021, 2, 21, 12, 0)
AGENT, USER = "qiyu", "mumu"


@pytest.fixture
def memory() -> DynamicMemory:
    return DynamicMemory(duckdb.connect(), profile={"timeline_size": 0})


@pytest.fixture
def keyword_memory() -> DynamicMemory:
    """Words and time only (no embedder): what these tests show needs no vectors."""
    return DynamicMemory(duckdb.connect(), embedder=None, profile={"timeline_size": 0})


def event(memory: DynamicMemory, description: str, days_ago: float, keywords=(), **extra) -> int:
    fields = {
        "user_id": USER,
        "agent_id": AGENT,
        "description": description,
        "created_at": NOW - timedelta(days=days_ago),
        "keywords": list(keywords),
        **extra,
    }
    return memory.add_event(**fields)


def entity(
    memory: DynamicMemory,
    kind: str,
    keyword: str,
    description: str,
    days_ago: float,
    name: str = "木木",
    entity_type: str = "客体",
    **extra,
) -> int:
    return memory.add_entity(
        user_id=USER,
        agent_id=AGENT,
        entity_name=name,
        entity_type=entity_type,
        kind=kind,
        keyword=keyword,
        description=description,
        updated_at=NOW - timedelta(days=days_ago),
        **extra,
    )


def query(memory: DynamicMemory, text: str, **kwargs):
    kwargs.setdefault("score_threshold", 0.0)
    kwargs.setdefault("update", False)
    return memory.query(text, user_id=USER, agent_id=AGENT, now=NOW, **kwargs)


# --- entities ---------------------------------------------------------------------------


def test_entity_tiers_follow_the_v23_order_newest_first(memory):
    picture = entity(memory, "记忆画面", "火锅", "雪夜里围着火锅", 1)
    other = entity(
        memory,
        "与其它实体的关系",
        "火锅",
        "火锅店老板认识木木",
        2,
        name="老板",
        entity_type="具体实体",
    )
    special = entity(
        memory, "特殊实体属性", "火锅", "是四川口味的", 1, name="火锅", entity_type="具体实体"
    )
    old_attribute = entity(memory, "用户属性", "饮食", "木木爱吃火锅", 30)
    new_attribute = entity(memory, "用户属性", "口味", "木木能吃辣，常去吃火锅", 3)
    relation = entity(
        memory,
        "与主体和客体的关系",
        "火锅",
        "祁煜陪木木吃过火锅",
        9,
        name="祁煜",
        entity_type="主体",
    )
    result = query(memory, "火锅")
    assert [e["entity_id"] for e in result.memory_entities] == [
        relation,
        new_attribute,
        old_attribute,
        special,
        other,
        picture,
    ]
    assert result.memory_entities[3]["description"] == "火锅是四川口味的"
    assert all(e["matched_keywords"] == ["火锅"] for e in result.memory_entities)


def test_one_character_words_never_match_inside_descriptions(memory):
    entity(memory, "用户属性", "宠物", "木木养了一只猫", 1)
    exact = entity(memory, "用户属性", "猫", "木木喜欢动物", 1)
    assert [e["entity_id"] for e in query(memory, "猫").memory_entities] == [exact]


def test_names_are_stopwords(memory):
    entity(memory, "用户属性", "名字", "木木的名字是外婆取的", 1)
    result = query(memory, "木木和祁煜", user_name="木木", agent_name="祁煜")
    assert result.additional_info["给联想的基词"] == []
    assert result.memory_entities == []


def test_re_adding_an_attribute_merges_text_and_reinforces(memory):
    first = entity(memory, "用户属性", "兴趣", "木木对星座感兴趣", 3)
    again = entity(memory, "用户属性", "兴趣", "木木对蓝玫瑰感兴趣", 1)
    same = entity(memory, "用户属性", "兴趣", "木木对星座感兴趣", 0)
    assert first == again == same
    [row] = memory.list_entities(agent_id=AGENT, user_id=USER)
    assert row["description"] == "木木对星座感兴趣；木木对蓝玫瑰感兴趣"
    # 1, then +3 (2 days since the last update), then +3 (exactly 1 day: not "under a day")
    assert row["strength"] == 7
    assert row["updated_at"] == NOW


def test_a_merge_never_grows_a_description_past_the_limit(memory):
    """The oldest parts are dropped whole, the newest text kept (macro merge_memory_entity);
    a new description that leaves no room replaces the old."""
    parts = [f"{index}" + "星" * 599 for index in range(4)]
    for days_ago, part in zip((4, 3, 2, 1), parts, strict=True):
        entity(memory, "用户属性", "兴趣", part, days_ago)
    [row] = memory.list_entities(agent_id=AGENT, user_id=USER)
    assert row["description"] == "；".join(parts[1:])  # 1,802 characters; all four: 2,403
    entity(memory, "用户属性", "兴趣", "海" * 1999, 0)
    [row] = memory.list_entities(agent_id=AGENT, user_id=USER)
    assert row["description"] == "海" * 1999


# --- events -----------------------------------------------------------------------------


def test_keyword_and_bm25_recall_ranks_the_relevant_event_first(memory):
    hotpot = event(
        memory, "木木的室友失恋了，木木陪她吃了一晚上火锅", 300, ["室友", "失恋", "火锅"]
    )
    event(memory, "木木在图书馆借书", 200, ["图书馆"])
    event(memory, "木木和室友去看电影", 100, ["电影"])
    result = query(memory, "室友失恋了，我们陪她吃了一晚上火锅")
    assert result.memory_events[0]["event_id"] == hotpot
    assert result.memory_events[0]["keyword"] == ["室友", "失恋", "火锅"]
    assert [e["id"] for e in result.memory_events] == list(range(len(result.memory_events)))


def test_threshold_and_limit(memory):
    ids = [event(memory, f"第{i}次和木木吃火锅", i + 1, ["火锅"]) for i in range(6)]
    assert len(query(memory, "火锅").memory_events) == 5
    assert len(query(memory, "火锅", limit=2).memory_events) == 2
    assert query(memory, "火锅", score_threshold=0.99).memory_events == []
    scores = [e["score"] for e in query(memory, "火锅", limit=6).memory_events]
    assert scores == sorted(scores, reverse=True) and len(scores) == 6
    assert set(ids) == {e["event_id"] for e in query(memory, "火锅", limit=6).memory_events}


def test_events_in_the_overview_timeline_are_not_repeated(memory):
    old = event(memory, "很久以前吃过火锅", 50, ["火锅"])
    recent = event(memory, "昨天吃了火锅", 1, ["火锅"])
    memory.settings["timeline_size"] = 1
    result = query(memory, "火锅", explain=True)
    assert [e["event_id"] for e in result.memory_events] == [old]
    assert query(memory, "火锅").candidates == []
    flags = {c["event_id"]: c["is_in_timeline"] for c in result.candidates}
    assert flags == {old: False, recent: True}


def test_official_and_user_scopes(memory):
    official = memory.add_event(
        user_id=None,
        agent_id=AGENT,
        scope="official",
        description="祁煜在画廊创作深海主题的画",
        created_at=NOW,
        keywords=["画廊"],
    )
    mine = event(memory, "木木第一次走进画廊", 5, ["画廊"])
    memory.add_event(
        user_id="someone-else",
        agent_id=AGENT,
        description="别人也去了画廊",
        created_at=NOW,
        keywords=["画廊"],
    )
    memory.add_event(
        user_id=USER,
        agent_id="other-agent",
        description="在另一个画廊",
        created_at=NOW,
        keywords=["画廊"],
    )
    scopes = {e["event_id"]: e["scope"] for e in query(memory, "画廊").memory_events}
    assert scopes == {official: "official", mine: "user"}


def test_roulette_is_reproducible_and_respects_the_threshold(memory):
    for i in range(12):
        event(memory, f"和木木在海边第{i}次散步", i, ["海边", "散步"], importance=i / 12)
    draw = [e["event_id"] for e in query(memory, "海边散步", roulette_seed=7).memory_events]
    assert draw == [e["event_id"] for e in query(memory, "海边散步", roulette_seed=7).memory_events]
    draws = {
        tuple(e["event_id"] for e in query(memory, "海边散步", roulette_seed=seed).memory_events)
        for seed in range(8)
    }
    assert len(draws) > 1
    top = [e["event_id"] for e in query(memory, "海边散步").memory_events]
    assert len(draw) == len(top) == 5


def test_a_recall_counts_and_strengthens_in_one_go(memory):
    hit = event(memory, "木木喜欢吃火锅", 3, ["火锅"])
    miss = event(memory, "木木在图书馆", 3, ["图书馆"])
    attribute = entity(memory, "用户属性", "饮食", "木木爱吃火锅", 1)
    memory.query("火锅", user_id=USER, agent_id=AGENT, now=NOW, score_threshold=0.0)
    events = {e["id"]: e for e in memory.list_events(agent_id=AGENT, user_id=USER)}
    assert (events[hit]["recall_count"], events[hit]["strength"]) == (1, 16)
    assert events[hit]["last_recalled_at"] == NOW
    assert (events[miss]["recall_count"], events[miss]["strength"]) == (0, 1)
    [row] = memory.list_entities(agent_id=AGENT, user_id=USER)
    assert (row["id"], row["recall_count"], row["strength"]) == (attribute, 1, 16)
    query(memory, "火锅")  # update=False: only looks
    assert memory.list_events(agent_id=AGENT, user_id=USER)[0]["recall_count"] == 1


def test_log_keeps_every_scored_candidate(memory):
    event(memory, "木木喜欢吃火锅", 3, ["火锅"])
    event(memory, "火锅店在下雨天排长队", 3, ["火锅", "下雨"])
    query(memory, "火锅", log=True, limit=1)
    rows = memory.con.execute(
        "select item_type, is_selected from memory_recall_log order by is_selected"
    ).fetchall()
    assert rows == [("event", False), ("event", True)]


def test_expansion_strategies_are_reported(memory):
    event(memory, "木木和朋友在宿舍聊天", 3, ["宿舍"])
    result = query(memory, "室友")
    assert result.additional_info["给联想的基词"] == ["室友"]
    assert result.additional_info["扩展后联想词"] == [{"宿舍": 7}, {"朋友": 6}]
    assert result.memory_events[0]["description"] == "木木和朋友在宿舍聊天"
    memory.settings["max_expanded_words"] = 1
    assert query(memory, "室友").additional_info["扩展后联想词"] == [{"宿舍": 7}]


def test_prompt_text_format(memory):
    entity(memory, "用户属性", "饮食", "木木爱吃火锅", 1)
    entity(
        memory,
        "与主体和客体的关系",
        "火锅",
        "祁煜陪木木吃过火锅",
        9,
        name="祁煜",
        entity_type="主体",
    )
    event(memory, "木木的室友失恋了，一起吃火锅", 40, ["火锅"], place="火锅店")
    event(memory, "昨晚又吃了火锅", 0.1, ["火锅"])
    text = query(memory, "火锅").prompt_text
    assert text == (
        "脑海中回想起的片段：\n"
        "木木爱吃火锅\n"
        "2021-02-12：祁煜陪木木吃过火锅\n"
        "脑海中回忆起的事件：\n"
        "2021-01-12火锅店:木木的室友失恋了，一起吃火锅\n"
        "2021-02-21 09:36:昨晚又吃了火锅"
    )
    assert (
        memory.prompt_text(
            "火锅", user_id=USER, agent_id=AGENT, now=NOW, score_threshold=0.0, update=False
        )
        == text
    )
    assert query(memory, "毫不相干的话").prompt_text == ""
    # a caller that renders the memory itself (a turn's budget) gets the same items, no text
    unrendered = query(memory, "火锅", prompt_text=False)
    assert unrendered.prompt_text == ""
    rendered = query(memory, "火锅")
    assert (unrendered.memory_events, unrendered.memory_entities) == (
        rendered.memory_events,
        rendered.memory_entities,
    )


@pytest.mark.parametrize(
    ("ts", "expected"),
    [
        (datetime(2021, 2, 21, 0, 0), "2021-02-21 00:00"),  # same calendar day
        (datetime(2021, 2, 21, 23, 59), "2021-02-21 23:59"),
        (datetime(2021, 2, 20, 23, 59), "2021-02-20 23点"),  # yesterday, under 7 days
        (datetime(2021, 2, 14, 12, 1), "2021-02-14 12点"),  # 6 days 23:59 ago
        (datetime(2021, 2, 14, 12, 0), "2021-02-14 下午"),  # exactly 7 days: coarser
        (datetime(2021, 2, 10, 6, 0), "2021-02-10 上午"),
        (datetime(2021, 2, 10, 11, 59), "2021-02-10 上午"),
        (datetime(2021, 2, 10, 12, 0), "2021-02-10 下午"),
        (datetime(2021, 2, 10, 17, 59), "2021-02-10 下午"),
        (datetime(2021, 2, 10, 18, 0), "2021-02-10 晚上"),
        (datetime(2021, 2, 10, 5, 59), "2021-02-10 晚上"),
        (datetime(2021, 1, 22, 12, 1), "2021-01-22 下午"),  # 29 days 23:59 ago
        (datetime(2021, 1, 22, 12, 0), "2021-01-22"),  # exactly 30 days
        (datetime(2018, 9, 30, 15, 30, 45), "2018-09-30"),
    ],
)
def test_time_granularity_at_every_boundary(ts, expected):
    assert format_memory_time(ts, NOW) == expected


# --- the Chinese recall-quality set -----------------------------------------------------

QUALITY_EVENTS = [
    ("木木的室友失恋了，木木陪她吃了一晚上火锅", ["室友", "失恋", "火锅"]),
    ("祁煜提议在圣诞装饰中加入红色元素，像壁炉里的火焰一样温暖", ["红色元素", "圣诞节", "装饰"]),
    ("木木在南京大学图书馆翻阅借阅指南", ["图书馆", "借阅指南"]),
    ("木木给室友准备了生日蛋糕", ["生日", "蛋糕", "室友"]),
    ("祁煜和木木去海边散步，捡到一枚蓝色贝壳", ["海边", "散步", "贝壳"]),
    ("木木加班到深夜，祁煜打电话提醒她休息", ["加班", "深夜", "休息"]),
]
QUALITY_QUERIES = [
    ("室友失恋了，我们陪她吃了一晚上火锅", 0),
    ("你还记得那次圣诞节的装饰吗", 1),
    ("我想去图书馆借书", 2),
    ("室友过生日要买什么蛋糕", 3),
    ("我们再去海边走走吧", 4),
    ("今天又要加班了", 5),
    ("红色", 1),
]


def test_recall_quality_set_top_result(memory):
    ids = [
        event(memory, text, 10 + i, keywords) for i, (text, keywords) in enumerate(QUALITY_EVENTS)
    ]
    for text, expected in QUALITY_QUERIES:
        top = query(memory, text, limit=1).memory_events
        assert top and top[0]["event_id"] == ids[expected], text


# --- bad input --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda m: m.add_entity(
                user_id=USER,
                agent_id=AGENT,
                entity_name="木木",
                entity_type="客体",
                kind="爱好",
                keyword="k",
                description="d",
            ),
            "kind must be one of",
        ),
        (
            lambda m: m.add_entity(
                user_id=USER,
                agent_id=AGENT,
                entity_name="木木",
                entity_type="路人",
                kind="用户属性",
                keyword="k",
                description="d",
            ),
            "entity_type must be one of",
        ),
        (
            lambda m: m.add_event(user_id=USER, agent_id=AGENT, description="  ", created_at=NOW),
            "description must be a non-empty string",
        ),
        (
            lambda m: m.add_event(user_id=None, agent_id=AGENT, description="x", created_at=NOW),
            "user_id must be a non-empty string",
        ),
        (
            lambda m: m.add_event(
                user_id=USER, agent_id=AGENT, description="x", created_at=NOW, scope="official"
            ),
            "official memories belong to the agent",
        ),
        (
            lambda m: m.add_event(
                user_id=USER, agent_id=AGENT, description="x", created_at="2021-01-01"
            ),
            "created_at must be a datetime",
        ),
        (
            lambda m: m.add_event(
                user_id=USER, agent_id=AGENT, description="x", created_at=NOW, importance=3
            ),
            "importance must be a number from 0 to 1",
        ),
        (lambda m: m.query("", user_id=USER, agent_id=AGENT), "text must be a non-empty"),
        (lambda m: m.query("火锅", user_id=USER, agent_id=AGENT, limit=0), "limit must be"),
        (
            lambda m: m.query("火锅", user_id=USER, agent_id=AGENT, score_threshold=2),
            "score_threshold must be a number from 0 to 1",
        ),
        (lambda m: m.update_event(1, user_id="x"), r"cannot edit \['user_id'\]"),
        (lambda m: m.update_entity(99, description="x"), "no memory_entity with id 99"),
    ],
)
def test_bad_input_is_named(memory, call, message):
    with pytest.raises(MemoryInputError, match=message):
        call(memory)


def test_a_failed_batch_writes_nothing(memory):
    good = {"user_id": USER, "agent_id": AGENT, "description": "好的", "created_at": NOW}
    with pytest.raises(MemoryInputError, match="event 1: description"):
        memory.add_events([good, {**good, "description": ""}])
    assert memory.list_events(agent_id=AGENT, user_id=USER) == []


class WrongSize:
    dim = 384

    def embed_query(self, text):
        return [0.1] * 10

    def embed_documents(self, texts):
        return [[0.1] * 384 for _ in texts]


def test_wrong_embedding_size_is_a_clear_error():
    memory = DynamicMemory(duckdb.connect(), embedder=WrongSize())
    with pytest.raises(
        EmbeddingError, match=r"embedder \(query\): vector 0 has 10 dimensions, expected 384"
    ):
        memory.query("火锅", user_id=USER, agent_id=AGENT)


def test_store_and_embedder_dimensions_must_agree():
    con = duckdb.connect()
    DynamicMemory(con)  # store created for 384-d vectors

    class Small(WrongSize):
        dim = 8

    with pytest.raises(EmbeddingError, match=r"FLOAT\[384\] but the embedder gives FLOAT\[8\]"):
        DynamicMemory(con, embedder=Small())


def official_entity(memory: DynamicMemory, description: str) -> int:
    """祁煜's pupils, an official entity (the same again merges)."""
    return memory.add_entity(
        user_id=None,
        agent_id=AGENT,
        scope="official",
        entity_name="祁煜",
        entity_type="主体",
        kind="特殊实体属性",
        keyword="瞳孔",
        description=description,
        updated_at=NOW,
    )


def test_official_export_import_round_trip(memory):
    """What the Python API writes, the import takes: an entity merged past the limit keeps
    within it (its older parts dropped), so its export imports too."""
    memory.add_event(
        user_id=None,
        agent_id=AGENT,
        scope="official",
        description="祁煜是海神",
        created_at=NOW,
        keywords=["海神"],
        place="深海",
    )
    for description in ("的瞳孔是蓝紫色的", "旧" * 1201, "新" * 1201):
        official_entity(memory, description)
    exported = memory.export_official(AGENT)
    assert [e["description"] for e in exported["entities"]] == ["新" * 1201]
    other = DynamicMemory(duckdb.connect())
    assert other.import_official(json.loads(json.dumps(exported))) == (1, 1)
    assert other.export_official(AGENT) == exported


def fact(memory: DynamicMemory, **given: Any) -> int:
    """A fact of the player's, its fields `given` or 木木's 住址."""
    return memory.add_fact(
        user_id=USER,
        agent_id=AGENT,
        **{"subject": "木木", "attribute": "住址", "value": "海边", **given},
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda m: event(m, "海" * 2001, 0),
            "event: description: String should have at most 2000 characters",
        ),
        (lambda m: event(m, "海", 0, ["海" * 65]), "event: keywords[0]: String should have"),
        (lambda m: event(m, "海", 0, place=""), "event: place must be a non-empty string"),
        (
            lambda m: entity(m, "用户属性", "兴" * 65, "木木喜欢海", 0),
            "keyword: String should have at most 64 characters",
        ),
        (
            lambda m: entity(m, "用户属性", "兴趣", "海" * 2001, 0),
            "description: String should have at most 2000 characters",
        ),
        (
            lambda m: m.update_entity(1, description="海" * 2001),
            "description: String should have at most 2000 characters",
        ),
        (
            lambda m: m.import_official(
                {
                    "agent_id": AGENT,
                    "events": [{"description": "海" * 2001, "created_at": "2020-01-01"}],
                }
            ),
            "events[0].description: String should have at most 2000 characters",
        ),
        (lambda m: fact(m, value="海" * 2001), "value: String should have at most 2000"),
        (lambda m: fact(m, subject=" "), "subject must be a non-empty string, got ' '"),
        (
            lambda m: fact(m, supersedes=["山" * 2001]),
            "supersedes[0]: String should have at most 2000 characters",
        ),
        (
            lambda m: m.change_fact(user_id=USER, fact_id=1, value="海" * 2001),
            "value: String should have at most 2000 characters",
        ),
    ],
)
def test_the_python_api_refuses_what_the_memory_contract_does(memory, call, message):
    """The service's limits (the memory contract), each complaint naming its field."""
    entity(memory, "用户属性", "兴趣", "木木喜欢海", 1)
    with pytest.raises(MemoryInputError, match=re.escape(message)) as refused:
        call(memory)
    assert isinstance(refused.value, ValueError)


def test_official_csv_round_trip(memory, tmp_path):
    memory.add_event(
        user_id=None,
        agent_id=AGENT,
        scope="official",
        description="祁煜是海神",
        created_at=NOW,
        keywords=["海神", "深海"],
        importance=0.9,
    )
    official_entity(memory, "的瞳孔是蓝紫色的")
    memory.export_official_csv(AGENT, tmp_path)
    other = DynamicMemory(duckdb.connect())
    assert other.import_official_csv(AGENT, tmp_path) == (1, 1)
    assert other.export_official(AGENT) == memory.export_official(AGENT)
    (tmp_path / "events.csv").write_text(
        "description,created_at,keywords\n海,2021-01-01T00:00:00,not-json\n", encoding="utf-8"
    )
    with pytest.raises(MemoryInputError, match="events.csv line 2: keywords is not a JSON list"):
        other.import_official_csv(AGENT, tmp_path)


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        (0, [{"宿舍": 7}, {"分手": 8}]),  # each token's strongest in turn, in token order
        (1, [{"分手": 8}, {"宿舍": 7}]),  # pooled and ranked by level
    ],
)
def test_dynamic_recall_uses_both_expansion_strategies(memory, strategy, expected):
    memory.settings.update(expand_strategy=strategy, max_expanded_words=2)
    result = query(memory, "室友失恋")
    assert result.additional_info["给联想的基词"] == ["室友", "失恋"]
    assert result.additional_info["扩展后联想词"] == expected


def test_a_store_with_older_seed_tables_keeps_newer_defaults():
    con = duckdb.connect()
    DynamicMemory(con)
    # a store seeded before `dense_candidates` existed, with one weight edited by a designer
    con.execute(
        "create or replace table memory_scoring_profile as "
        "select * exclude (dense_candidates) "
        "replace (cast(0.9 as double) as relevance_share) from memory_scoring_profile"
    )
    memory = DynamicMemory(con, profile={"timeline_size": 0})
    assert memory.settings["relevance_share"] == 0.9
    assert memory.settings["dense_candidates"] == 200
    memory.add_event(user_id=USER, agent_id=AGENT, description="火锅", created_at=NOW)
    assert memory.query(
        "火锅", user_id=USER, agent_id=AGENT, now=NOW, score_threshold=0.0, update=False
    ).memory_events


def test_an_event_dated_in_the_future_does_not_outrank_yesterdays(memory):
    future = event(memory, "木木和祁煜约好去看海", -3, ["看海"])  # three days after now
    yesterday = event(memory, "木木和祁煜聊起看海的事", 1, ["看海"])
    result = query(memory, "看海", explain=True)
    assert [e["event_id"] for e in result.memory_events] == [yesterday, future]


def test_latin_words_match_in_any_letter_case(keyword_memory):
    """Postings, query words, tags and the whole-query tier fold letter case; a name is no
    query word in any case."""
    memory = keyword_memory
    hiking = event(memory, "Hiking in the Mountains with Melanie", 3, ["Outdoor"])
    for text in ("hiking", "MOUNTAINS", "outdoor", "in the mountains"):
        result = memory.query(text, user_id=USER, agent_id=AGENT, now=NOW, update=False)
        assert [e["event_id"] for e in result.memory_events] == [hiking], text
    named = memory.query(
        "melanie hiking", user_id=USER, agent_id=AGENT, now=NOW, update=False, user_name="Melanie"
    )
    assert named.additional_info["给联想的基词"] == ["hike"]


def test_english_words_match_across_inflection_and_question_words_do_not_score(keyword_memory):
    """English words are stemmed on both sides (postings and query words: researching =
    research); question words and other English stopwords are no query words, so they score
    nothing; Chinese words are as jieba cuts them."""
    memory = keyword_memory
    research = event(memory, "Caroline: Researching adoption agencies, it's a big step", 3)
    event(memory, "Melanie: What a day! What did you think of it?", 3)
    result = memory.query(
        "What did Caroline research?", user_id=USER, agent_id=AGENT, now=NOW, update=False
    )
    assert result.additional_info["给联想的基词"] == ["carolin", "research"]
    assert [e["event_id"] for e in result.memory_events] == [research]
    # nor are they indexed: an event's length counts the words a query can match
    terms = memory.con.execute(
        "select term from memory_event_term where event_id = $id order by term", {"id": research}
    ).fetchall()
    assert [t for (t,) in terms] == ["adopt", "agenc", "big", "carolin", "research", "step"]
    assert search_terms(
        ["Researching", "researched", "侦探小说", "Melanie"], names=["melanie"]
    ) == ["research", "research", "侦探小说", "melanie"]


def test_postings_of_an_older_store_are_recomputed_once():
    """Postings written before search-mode, case-folded words are recomputed from the
    events' descriptions and tags when the store is opened, once."""
    con = duckdb.connect()
    memory = DynamicMemory(con, embedder=None, profile={"timeline_size": 0})
    event_id = event(memory, "木木在读侦探小说", 1, ["Outdoor"])
    postings = (
        "select term, description_count, keyword_count, tag_count from memory_event_term "
        "order by term"
    )
    expected = con.execute(postings).fetchall()
    assert ("侦探", 1, 0, 0) in expected and ("outdoor", 0, 2, 1) in expected
    # what an older store holds (precise-mode words, letter case kept), no migration recorded
    con.execute("delete from memory_event_term")
    con.execute(
        "insert into memory_event_term (event_id, term, description_count, keyword_count) "
        "values ($id, '侦探小说', 1, 0), ($id, 'Outdoor', 0, 2)",
        {"id": event_id},
    )
    con.execute("update memory_event set token_count = 99")
    con.execute("delete from rolemem_migration")
    DynamicMemory(con, embedder=None)
    assert con.execute(postings).fetchall() == expected
    assert con.execute("select token_count from memory_event").fetchone()[0] == sum(
        d + k for _, d, k, _ in expected
    )
    result = memory.query("侦探", user_id=USER, agent_id=AGENT, now=NOW, update=False)
    assert [e["event_id"] for e in result.memory_events] == [event_id]


def test_postings_carry_their_events_owner_and_an_older_stores_get_it_on_open():
    """A turn reads only its player's postings: each holds its event's agent, scope and
    player, written with the event; postings written before that get them when the store
    is opened. Another player's events with the same words change nothing."""
    con = duckdb.connect()
    memory = DynamicMemory(con, embedder=None, profile={"timeline_size": 0})
    mine = event(memory, "木木在读侦探小说", 1)
    event(memory, "另一个玩家也在读侦探小说", 1, user_id="other")
    official = event(memory, "祁煜喜欢侦探小说", 1, scope="official", user_id=None)
    # an official event's postings are in a table of their own (official_event_term)
    owners = (
        "select event_id, agent_id, scope, user_id, count(*) from ("
        "select * from memory_event_term union all by name select * from official_event_term) "
        "group by all order by event_id"
    )
    expected = [
        (mine, AGENT, "user", USER, 5),
        (mine + 1, AGENT, "user", "other", 8),
        (official, AGENT, "official", None, 5),
    ]
    assert con.execute(owners).fetchall() == expected
    # what an older store holds: no owners, the migration filling them not recorded
    con.execute("update memory_event_term set agent_id = null, scope = null, user_id = null")
    con.execute("delete from rolemem_migration where name = 'postings_owners'")
    DynamicMemory(con, embedder=None)
    assert con.execute(owners).fetchall() == expected
    result = memory.query("侦探", user_id=USER, agent_id=AGENT, now=NOW, update=False)
    assert sorted(e["event_id"] for e in result.memory_events) == [mine, official]


def test_chat_filler_is_no_evidence(keyword_memory):
    """记得, 上次, 那本… (seed recall_stopwords) never make a memory relevant on their own."""
    memory = keyword_memory
    novel = event(memory, "木木记得上次说过那本小说的结局", 3)
    filler = memory.query("你还记得上次那本吗", user_id=USER, agent_id=AGENT, now=NOW, update=False)
    assert filler.memory_events == []
    about_the_novel = memory.query(
        "还记得那本小说吗", user_id=USER, agent_id=AGENT, now=NOW, update=False
    )
    assert [e["event_id"] for e in about_the_novel.memory_events] == [novel]


def test_compounds_meet_on_a_shared_part_without_vectors(keyword_memory):
    """jieba's search mode: 推理小说 finds 侦探小说 through 小说 (keyword recall, no embedder)."""
    memory = keyword_memory
    novel = event(memory, "木木在读一本侦探小说", 3)
    event(memory, "木木去海边散步", 2)
    result = memory.query("推理小说", user_id=USER, agent_id=AGENT, now=NOW, update=False)
    assert [e["event_id"] for e in result.memory_events] == [novel]
    assert result.additional_info["分词"] == ["推理", "小说", "推理小说"]


def test_an_older_stores_official_memories_move_to_their_tables_once_on_open(tmp_path):
    """A store written before official memories had tables of their own (official rows in the
    player tables): opening it moves them, with their ids, postings and vectors, to the
    official tables, once (recorded in rolemem_migration); recall answers as before."""
    path = str(tmp_path / "older.duckdb")
    memory = DynamicMemory(path, embedder=None)
    mine = event(memory, "木木在读侦探小说", 1)
    official = event(memory, "祁煜喜欢侦探小说", 2, scope="official", user_id=None)
    before = memory.query("侦探", user_id=USER, agent_id=AGENT, now=NOW, update=False)
    memory.close()
    with duckdb.connect(path) as con:
        for table in ("memory_event", "memory_event_term", "memory_event_embedding"):
            twin = table.replace("memory_", "official_")
            con.execute(f"insert into {table} by name select * from {twin}")
            con.execute(f"delete from {twin}")
        con.execute("delete from rolemem_migration where name = 'official_tables'")
    with DynamicMemory(path, embedder=None) as reopened:
        after = reopened.query("侦探", user_id=USER, agent_id=AGENT, now=NOW, update=False)
        con = reopened.con
        assert con.execute("select id, scope from official_event").fetchall() == [
            (official, "official")
        ]
        assert con.execute("select id from memory_event").fetchall() == [(mine,)]
        assert con.execute("select count(*) from official_event_term").fetchall() == [(5,)]
        assert con.execute(
            "select count(*) from memory_event_term where scope = 'official'"
        ).fetchall() == [(0,)]
        assert con.execute(
            "select count(*) from rolemem_migration where name = 'official_tables'"
        ).fetchall() == [(1,)]
    assert after.memory_events == before.memory_events
    assert official in [e["event_id"] for e in after.memory_events]
