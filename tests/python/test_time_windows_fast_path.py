"""The windows the recall fast path computes before its statement (time_windows.TimeWindows)
against the model they stand in for (int_memory_query_time_windows over the shipped seed
time_expressions), text for text: window, expressions and none alike."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import duckdb
import pytest

from rolemem import DynamicMemory
from rolemem.dynamic_memory.time_windows import TimeWindows
from rolemem.engines import PostgresEngine
from rolemem.sql.project import compose
from rolemem.sql.request_rows import request_rows_sql
from rolemem.sql.seeds import load_seed, shipped_rows

from .conftest import fresh_database
from .test_recall_quality import NOW

# the recall tests' texts, and what reaches the rule's edges: overlapping and disjoint windows
# (equal lengths too), a year word beside a written year, amounts, impossible days, digits
# next to Chinese and English month names, several lines (a last reply before the input)
TEXTS = [
    "昨晚",
    "今晚",
    "大前天",
    "上周",
    "上个月",
    "三月",
    "二月",
    "十一月",
    "去年三月",
    "前年圣诞",
    "国庆",
    "随便聊聊",
    "What did we do in June?",
    "what happened last week",
    "Where were you in March last year?",
    "on Christmas Eve",
    "What happened in 2019?",
    "What did you paint in July 2019?",
    "on October 13, 2019",
    "on 1 February, 2021",
    "the weekend before 4th October",
    "2019年10月13日我们见过面",
    "去年12月",
    "March 2020 was cold",
    "I owe you 1500 dollars",
    "去年圣诞花了2000块",
    "2000 years ago",
    "2月25日",
    "2月20日",
    "一月和三月",
    "昨天和今天",
    "上周和上个月",
    "今年去年",
    "2月30日",
    "2月0日",
    "February 29",
    "29 February 2020",
    "the 31st of April",
    "1999年和2019年",
    "$2019 and ¥2020",
    "你昨天说的话\n我记得2019",
    "2019\n",
    "12月31日跨年",
    "情人节那天",
    "劳动节假期",
    "今天早上",
    "上上周",
]


def expressions() -> list[str]:
    return [row["expression"] for row in shipped_rows("time_expressions")]


def random_texts(count: int, seed: int = 7) -> list[str]:
    """Texts of one or two seed expressions, with a day number or a year written beside
    them or not."""
    rng = random.Random(seed)
    words = expressions()
    extras = ["", " 13", "13日", "4th ", " 2019", "2023年", " 31", "号", " of ", "2000块"]
    texts = []
    for _ in range(count):
        parts = [rng.choice(extras) + rng.choice(words) + rng.choice(extras)]
        if rng.random() < 0.4:
            parts.append(rng.choice(words) + rng.choice(extras))
        texts.append(rng.choice(["", "我们", "what about "]) + " ".join(parts))
    return texts


NOWS = [
    NOW,
    datetime(2024, 2, 29, 12),  # a leap day
    datetime(2023, 12, 31, 23, 59),
    datetime(2023, 1, 1, 0, 0),
    datetime(2025, 10, 13, 9, 30),
]


def model_windows(
    pairs: list[tuple[str, datetime]], con: duckdb.DuckDBPyConnection | None = None
) -> list[tuple | None]:
    """The model's window per (text, now), all in one statement (over `con`'s seed, else the
    shipped one)."""
    queries = """
        select
            unnest(range(1, len(cast($texts as varchar[])) + 1)) as query_id,
            unnest(cast($texts as varchar[])) as query_text,
            unnest(cast($nows as timestamp[])) as now"""
    sql = compose(
        "int_memory_query_time_windows",
        {"int_memory_queries": queries},
        "select query_id, window_start, window_end, time_expressions"
        " from int_memory_query_time_windows",
        existing=("time_expressions",),
    )
    if con is None:
        con = duckdb.connect()
        load_seed(con, "time_expressions")
    rows = con.execute(sql, {"texts": [t for t, _ in pairs], "nows": [n for _, n in pairs]})
    found = {row[0]: row[1:] for row in rows.fetchall()}
    return [found.get(query_id) for query_id in range(1, len(pairs) + 1)]


@pytest.fixture(scope="module")
def windows() -> TimeWindows:
    con = duckdb.connect()
    load_seed(con, "time_expressions")
    return TimeWindows.read(con)


def test_the_windows_are_the_models(windows):
    rng = random.Random(11)
    pairs = [(text, now) for text in TEXTS for now in NOWS]
    pairs += [
        (text, datetime(2020, 1, 1) + timedelta(minutes=rng.randrange(60 * 24 * 365 * 6)))
        for text in random_texts(600)
    ]
    expected = model_windows(pairs)
    assert sum(window is not None for window in expected) > 500
    assert [windows.window(text, now) for text, now in pairs] == expected


def test_the_batch_rows_bind_each_querys_window(windows):
    inputs = [
        {"query_text": "随便聊聊", "now": NOW},
        {"query_text": "昨晚谢谢你", "now": NOW},
        {"query_text": "2019年", "now": NOW},
    ]
    assert windows.rows(inputs) == {
        "windows_query_id": [2, 3],
        "windows_window_start": [datetime(2021, 2, 20, 18), datetime(2019, 1, 1)],
        "windows_window_end": [datetime(2021, 2, 21, 6), datetime(2020, 1, 1)],
        "windows_time_expressions": [["昨晚"], ["2019"]],
    }


def test_a_seed_row_naming_no_window_is_the_models_row_of_nulls():
    """A relative row without its step, a month without its number: the model's window is
    null (the query still names a time), and so is this; beside a real one, the real one."""
    con = duckdb.connect()
    load_seed(con, "time_expressions")
    con.execute(
        "insert into time_expressions (expression, unit, step, month_number) values"
        " ('某天', 'day', null, null), ('某月', 'month_of_year', null, null)"
    )
    pairs = [(text, NOW) for text in ("某天", "某月13日", "某天和昨天", "某月 2019", "随便")]
    expected = model_windows(pairs, con)
    assert expected[0] == (None, None, ["某天"])
    assert [TimeWindows.read(con).window(text, now) for text, now in pairs] == expected


def test_a_clock_out_of_pythons_calendar_is_left_to_the_model(windows):
    """Game clocks at the calendar's ends: the statement computes the window (the batch binds
    none), and the recall answers as it did before the windows were computed here."""
    for now in (datetime(9999, 12, 31, 20), datetime(1, 6, 1)):
        assert windows.rows([{"query_text": "今晚 last year", "now": now}]) is None
    memory = DynamicMemory(duckdb.connect(), embedder=None)
    for text, now in (("今晚吃什么", datetime(9999, 12, 31, 20)), ("last year", datetime(1, 6, 1))):
        answer = memory.query(text, user_id="u", agent_id="a", now=now, explain=True)
        assert answer.memory_events == []


def test_postgresql_names_the_windows_this_does(postgres_url, windows):
    """The model on PostgreSQL (its own regular expressions, its own calendar arithmetic)
    answers as this does, a day written after a space of any kind included (its \\s would
    take a vertical tab and U+3000: the model spells space out)."""
    texts = [*TEXTS, "October\u300013", "October\v13", "13\u3000October", "October\t13"]
    pairs = [(text, now) for text in texts for now in NOWS[:3]]
    sql = compose(
        "int_memory_query_time_windows",
        {
            "int_memory_queries": request_rows_sql(
                "query_id", {"query_text": "varchar", "now": "timestamp"}, "postgres"
            )
        },
        "select query_id, window_start, window_end, time_expressions"
        " from int_memory_query_time_windows",
        existing=("time_expressions",),
        engine="postgres",
    )
    seeds = duckdb.connect()
    load_seed(seeds, "time_expressions")
    with PostgresEngine(fresh_database(postgres_url, "time_windows")) as engine:
        engine.replace_tables(seeds, ["time_expressions"])
        rows = engine.run(
            sql,
            {
                "query_id": list(range(1, len(pairs) + 1)),
                "query_text": [text for text, _ in pairs],
                "now": [now for _, now in pairs],
            },
        )
    found = {row[0]: (row[1], row[2], list(row[3])) for row in rows}
    assert [found.get(i) for i in range(1, len(pairs) + 1)] == [
        windows.window(text, now) for text, now in pairs
    ]
