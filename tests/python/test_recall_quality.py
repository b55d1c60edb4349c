"""A small Chinese role-play quality set: the memory a player means, by meaning, time and words,
with the bundled e5 embedder on (the default); and no filler when nothing fits."""

from __future__ import annotations

from datetime import datetime, timedelta

import duckdb
import pytest

from rolemem import DynamicMemory
from rolemem.dynamic_memory import time_window
from rolemem.text.tokens import simple_lower

NOW = datetime(2021, 2, 21, 12, 0)  # a Sunday
USER, AGENT = "mumu", "qiyu"
EVENTS = [
    # (key, description, when, keywords)
    ("cat", "木木说她养了一只橘猫，叫团子，每天回家都要抱它", NOW - timedelta(days=60), []),
    ("novel", "木木在读一本侦探小说，凶手到最后一章才揭晓", NOW - timedelta(days=45), []),
    ("hotpot", "木木的室友失恋了，木木陪她吃了一晚上火锅", NOW - timedelta(days=90), ["火锅"]),
    ("beach", "木木和祁煜在海边捡贝壳，她捡到一枚粉色的", NOW - timedelta(days=9), []),
    ("last_night", "木木加班到很晚，祁煜给她留了一盏灯", datetime(2021, 2, 20, 22, 30), []),
    ("exam", "木木下周要考驾照科目二，有点紧张", NOW - timedelta(days=30), []),
    ("gallery", "祁煜带木木参观了画廊的新展，展出的都是深海主题", NOW - timedelta(days=120), []),
    ("christmas", "圣诞夜木木和祁煜一起装饰了圣诞树", datetime(2020, 12, 24, 20, 0), []),
    ("birthday", "木木的生日蛋糕是草莓味的，祁煜亲手做的", NOW - timedelta(days=200), ["生日"]),
    ("rain", "下雨天木木忘了带伞，祁煜去地铁站接她", NOW - timedelta(days=75), []),
]


def event_rows() -> list[dict[str, object]]:
    """EVENTS as DynamicMemory.add_events takes them."""
    return [
        {"user_id": USER, "agent_id": AGENT, "description": d, "created_at": when, "keywords": kw}
        for _, d, when, kw in EVENTS
    ]


@pytest.fixture(scope="module")
def store():
    memory = DynamicMemory(duckdb.connect(), profile={"timeline_size": 0})
    ids = memory.add_events(event_rows())
    return memory, {event_id: key for event_id, (key, *_rest) in zip(ids, EVENTS, strict=True)}


def top(store, text: str, limit: int = 3) -> list[str]:
    memory, keys = store
    response = memory.query(
        text,
        user_id=USER,
        agent_id=AGENT,
        now=NOW,
        limit=limit,
        update=False,
        user_name="木木",
        agent_name="祁煜",
    )
    return [keys[event["event_id"]] for event in response.memory_events]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("团子最近还好吗，你家猫咪胖了没", "cat"),  # 猫咪 / 橘猫: no shared word
        ("那本推理小说你看完了吗", "novel"),  # 推理小说 / 侦探小说
        ("我又想吃火锅了", "hotpot"),  # a tag
        ("上周去海边的事你还记得吗", "beach"),  # meaning + last week
        ("昨晚谢谢你等我", "last_night"),  # the time it names
        ("去年圣诞我们做了什么", "christmas"),
        ("想再去看看深海的画", "gallery"),
    ],
)
def test_the_memory_the_player_means_comes_first(store, text, expected):
    assert top(store, text)[0] == expected


def test_nothing_fits_nothing_is_returned(store):
    assert top(store, "量子计算机的原理是什么") == []


def test_a_one_character_word_never_matches_inside_a_description(store):
    memory, keys = store
    response = memory.query("吃", user_id=USER, agent_id=AGENT, now=NOW, update=False, explain=True)
    assert all(c["bm25_raw"] == 0 for c in response.candidates)


@pytest.mark.parametrize(
    ("text", "window"),
    [
        ("昨晚", (datetime(2021, 2, 20, 18), datetime(2021, 2, 21, 6))),
        ("今晚", (datetime(2021, 2, 21, 18), datetime(2021, 2, 22, 6))),
        ("大前天", (datetime(2021, 2, 18), datetime(2021, 2, 19))),
        ("上周", (datetime(2021, 2, 8), datetime(2021, 2, 15))),  # Monday to Monday
        ("上个月", (datetime(2021, 1, 1), datetime(2021, 2, 1))),
        ("三月", (datetime(2020, 3, 1), datetime(2020, 4, 1))),  # the latest March
        ("二月", (datetime(2021, 2, 1), datetime(2021, 3, 1))),  # this one
        ("十一月", (datetime(2020, 11, 1), datetime(2020, 12, 1))),  # not 一月
        ("去年三月", (datetime(2020, 3, 1), datetime(2020, 4, 1))),
        ("前年圣诞", (datetime(2019, 12, 25), datetime(2019, 12, 26))),
        ("国庆", (datetime(2020, 10, 1), datetime(2020, 10, 8))),
        ("随便聊聊", None),
        # English time words: month names as written (capitalised), relative ones lower-case
        ("What did we do in June?", (datetime(2020, 6, 1), datetime(2020, 7, 1))),
        ("what happened last week", (datetime(2021, 2, 8), datetime(2021, 2, 15))),
        ("Where were you in March last year?", (datetime(2020, 3, 1), datetime(2020, 4, 1))),
        ("on Christmas Eve", (datetime(2020, 12, 24), datetime(2020, 12, 25))),
        ("what a day", None),
        # dates written out: a year in digits names it and fixes a month's; a day number
        # beside a month narrows it to that day
        ("What happened in 2019?", (datetime(2019, 1, 1), datetime(2020, 1, 1))),
        ("What did you paint in July 2019?", (datetime(2019, 7, 1), datetime(2019, 8, 1))),
        ("on October 13, 2019", (datetime(2019, 10, 13), datetime(2019, 10, 14))),
        ("on 1 February, 2021", (datetime(2021, 2, 1), datetime(2021, 2, 2))),
        ("the weekend before 4th October", (datetime(2020, 10, 4), datetime(2020, 10, 5))),
        ("2019年10月13日我们见过面", (datetime(2019, 10, 13), datetime(2019, 10, 14))),
        ("10月", (datetime(2020, 10, 1), datetime(2020, 11, 1))),
        ("去年12月", (datetime(2020, 12, 1), datetime(2021, 1, 1))),  # not 2月
        ("March 2020 was cold", (datetime(2020, 3, 1), datetime(2020, 4, 1))),  # 20 no day
        ("I owe you 1500 dollars", None),
        ("去年圣诞花了2000块", (datetime(2020, 12, 25), datetime(2020, 12, 26))),  # an amount
        (
            "2000 years ago",
            (datetime(2000, 1, 1), datetime(2001, 1, 1)),
        ),  # one that reads as a year
        ("2月25日", (datetime(2020, 2, 25), datetime(2020, 2, 26))),  # not this year's, to come
        ("2月20日", (datetime(2021, 2, 20), datetime(2021, 2, 21))),
    ],
)
def test_time_words_name_windows_relative_to_now(text, window):
    assert time_window(text, NOW) == window


def test_time_window_boundaries_follow_the_clock():
    just_after_midnight = datetime(2021, 2, 21, 0, 30)
    assert time_window("昨晚", just_after_midnight) == (
        datetime(2021, 2, 20, 18),
        datetime(2021, 2, 21, 6),
    )
    on_christmas = datetime(2020, 12, 25, 9, 0)
    assert time_window("圣诞", on_christmas)[0] == datetime(2020, 12, 25)
    before_christmas = datetime(2020, 12, 24, 9, 0)
    assert time_window("圣诞", before_christmas)[0] == datetime(2019, 12, 25)


@pytest.mark.parametrize("fusion", ["convex", "rrf"])
@pytest.mark.parametrize("vectors", [True, False])
def test_the_statement_planned_for_a_batch_answers_as_the_general_one(store, fusion, vectors):
    """Recall plans only what its batch needs (the profile's fusion, the dense signals when a
    query has a vector, the time window when a text names one); the models unspecialised
    decide each part per query. Both give the same answer, every scored candidate included."""
    memory, _ = store
    planned = DynamicMemory(
        memory.con,
        embedder=memory.embedder if vectors else None,
        profile={"timeline_size": 0, "fusion": fusion},
    )
    general = DynamicMemory(
        memory.con,
        embedder=memory.embedder if vectors else None,
        profile={"timeline_size": 0, "fusion": fusion},
    )
    general._recall._plan_variables = lambda *_: {}  # type: ignore[method-assign]
    texts = (
        "昨晚谢谢你等我",
        "去年圣诞我们做了什么",
        "我又想吃火锅了",
        "团子最近还好吗",
        "2020年发生了什么",
        "我们什么时候装饰的圣诞树",  # asks when: 圣诞 names a time
    )
    for text in texts:
        answers = [
            m.query(text, user_id=USER, agent_id=AGENT, now=NOW, update=False, explain=True)
            for m in (planned, general)
        ]
        assert answers[0].candidates, text
        assert [a.memory_events for a in answers] == [answers[0].memory_events] * 2, text
        assert [a.candidates for a in answers] == [answers[0].candidates] * 2, text
        assert answers[0].prompt_text == answers[1].prompt_text


@pytest.mark.parametrize("fusion", ["convex", "rrf"])
def test_a_question_asking_when_is_answered_by_the_memory_that_says_when(fusion):
    """A query asking when (seed memory_time_question_words) ranks an event that names a time
    (seed time_expressions) above one that only shares its words (the convex fusion; in rrf
    the signal has no weight); other queries, and a profile with time_answer_weight 0, rank
    by the words as before. A lowercase time word counts in any case (Yesterday), a
    capitalised one only as written (May the month, not may)."""
    events = [
        ("lost", "木木弄丢了钥匙"),
        ("last_month", "上个月木木在公司楼下弄丢了钥匙，找了一整晚"),
        ("en_lost", "Mumu lost her umbrella"),
        ("en_yesterday", "Yesterday Mumu lost her umbrella on the crowded metro"),
        ("en_may", "Mumu may have lost her umbrella on the crowded metro"),
    ]

    def ranked(text: str, **profile: float) -> list[str]:
        memory = DynamicMemory(
            duckdb.connect(),
            embedder=None,
            profile={"timeline_size": 0, "fusion": fusion, **profile},
        )
        ids = memory.add_events(
            [
                {"user_id": USER, "agent_id": AGENT, "description": d, "created_at": NOW}
                for _, d in events
            ]
        )
        keys = dict(zip(ids, (key for key, _ in events), strict=True))
        response = memory.query(
            text, user_id=USER, agent_id=AGENT, now=NOW, update=False, explain=True
        )
        scores = {keys[c["event_id"]]: c["time_answer_score"] for c in response.candidates}
        return [keys[event["event_id"]] for event in response.memory_events], scores

    when = fusion == "convex"
    order, scores = ranked("木木什么时候弄丢了钥匙")
    assert order[:2] == (["last_month", "lost"] if when else ["lost", "last_month"])
    assert (scores["last_month"], scores["lost"]) == (1.0, 0.0)
    order, scores = ranked("木木弄丢了钥匙吗")
    assert order[:2] == ["lost", "last_month"]
    assert set(scores.values()) == {None}
    assert ranked("木木什么时候弄丢了钥匙", time_answer_weight=0)[0][:2] == ["lost", "last_month"]
    order, scores = ranked("When did Mumu lose her umbrella?")
    assert order[:2] == (["en_yesterday", "en_lost"] if when else ["en_lost", "en_yesterday"])
    assert (scores["en_yesterday"], scores["en_may"], scores["en_lost"]) == (1.0, 0.0, 0.0)
    assert ranked("Did Mumu lose her umbrella?")[0][:2] == ["en_lost", "en_yesterday"]


def test_the_plan_lowercases_a_text_as_the_engine_does():
    """Whether a batch asks when is decided before the statement: its texts lowercased a
    character at a time, as DuckDB's lower() does, over every character of the first two
    Unicode planes (Python's str.lower maps İ to two characters)."""
    chars = [chr(code) for code in range(0x20, 0x30000) if not 0xD800 <= code <= 0xDFFF]
    rows = duckdb.connect().execute("select lower(unnest($c))", {"c": chars}).fetchall()
    assert [simple_lower(char) for char in chars] == [row[0] for row in rows]
    assert simple_lower("WHİCH YEAR") == "which year"


def planned_and_general(con: duckdb.DuckDBPyConnection) -> tuple[DynamicMemory, DynamicMemory]:
    """Two memories over `con`: one planning only what its batch needs, one planning every
    part (the models unspecialised, each part decided per query)."""
    planned = DynamicMemory(con, embedder=None, profile={"timeline_size": 0})
    general = DynamicMemory(con, embedder=None, profile={"timeline_size": 0})
    general._recall._plan_variables = lambda *_: {}  # type: ignore[method-assign]
    return planned, general


def entities_planned(
    memories: tuple[DynamicMemory, DynamicMemory], text: str
) -> tuple[bool, list[str]]:
    """Whether `text`'s batch plans the entities, and the keywords recalled; the planned
    statement's answer held equal to the general one's, entities and prompt text included."""
    answers = [
        m.query(text, user_id=USER, agent_id=AGENT, now=NOW, update=False, explain=True)
        for m in memories
    ]
    assert answers[0].memory_entities == answers[1].memory_entities
    assert answers[0].memory_events == answers[1].memory_events
    assert answers[0].prompt_text == answers[1].prompt_text
    inputs = [
        {"query_text": text, "user_id": USER, "agent_id": AGENT, "save_id": None}
        | {"tokens": [], "query_embedding": None}
    ]
    return (
        memories[0]._recall._plan_variables(inputs, [None], False, False)["recall_entities"],
        [e["keyword"] for e in answers[0].memory_entities],
    )


def test_the_entities_are_planned_only_for_a_batch_with_an_entity_or_a_fact():
    """Recall plans the entities' models only when a player or agent of its batch has an
    entity (a designer's official one included) or a fact (the 用户属性 tier); at each step the
    planned statement answers as the general one."""
    memories = planned_and_general(duckdb.connect())
    memories[0].add_events(event_rows())
    assert entities_planned(memories, "团子最近还好吗") == (False, [])

    def add_cat(agent_id: str, **owner: str | None) -> None:
        fields = {"entity_name": "团子", "entity_type": "具体实体", "kind": "特殊实体属性"}
        memories[0].add_entity(
            agent_id=agent_id, keyword="团子", description="橘猫", **fields, **owner
        )

    add_cat("another", user_id=USER)
    assert entities_planned(memories, "团子最近还好吗") == (False, [])  # another character's
    add_cat(AGENT, user_id=None, scope="official")
    assert entities_planned(memories, "团子最近还好吗") == (True, ["团子"])
    # a fact alone is the 用户属性 tier
    facts_only = planned_and_general(duckdb.connect())
    facts_only[0].add_fact(
        user_id=USER, agent_id=AGENT, subject="木木", attribute="职业", value="画师"
    )
    assert entities_planned(facts_only, "木木的职业") == (True, ["职业"])
