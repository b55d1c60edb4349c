"""The fields a lone recall shows, held in memory on the embedded store (event_fields): the
time as the prompt reads it written out equal to macro format_memory_time, and what is held
checked against each event's revision, so a change in place shows on the next recall."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

import duckdb
import pytest

from rolemem import DynamicMemory, format_memory_time
from rolemem.dynamic_memory import event_fields
from rolemem.dynamic_memory.times import memory_time_text
from rolemem.sql.project import render_macro

from .test_recall_quality import AGENT, NOW, USER

# the macro's turns: the same day, 7 and 30 days back, 06:00, 12:00 and 18:00, a time ahead
EDGES = [
    (datetime(2024, 3, 10, 0, 0), datetime(2024, 3, 10, 23, 59, 59, 999999)),
    (datetime(2024, 3, 9, 23, 59, 59, 999999), datetime(2024, 3, 10, 0, 0)),
    (datetime(2024, 3, 3, 12, 0), datetime(2024, 3, 10, 12, 0)),
    (datetime(2024, 3, 3, 12, 0, 0, 1), datetime(2024, 3, 10, 12, 0)),
    (datetime(2024, 2, 9, 12, 0), datetime(2024, 3, 10, 12, 0)),
    (datetime(2024, 2, 9, 12, 0, 0, 1), datetime(2024, 3, 10, 12, 0)),
    (datetime(2024, 2, 20, 5, 59, 59), datetime(2024, 3, 10)),
    (datetime(2024, 2, 20, 6, 0), datetime(2024, 3, 10)),
    (datetime(2024, 2, 20, 11, 59, 59), datetime(2024, 3, 10)),
    (datetime(2024, 2, 20, 12, 0), datetime(2024, 3, 10)),
    (datetime(2024, 2, 20, 18, 0), datetime(2024, 3, 10)),
    (datetime(2024, 3, 12, 8, 0), datetime(2024, 3, 10)),
    (datetime(2025, 3, 12, 8, 0), datetime(2024, 3, 10)),
    (datetime(5, 1, 2, 3, 4), datetime(5, 1, 2, 9, 0)),
    (datetime(999, 12, 31, 23, 0), datetime(1000, 1, 2)),
    (datetime(9999, 12, 31, 23, 59), datetime(9999, 12, 31, 23, 59)),
]


def test_the_time_text_written_out_is_the_macros():
    rng = random.Random(1201)
    pairs = list(EDGES)
    for _ in range(2000):
        now = datetime(2024, 1, 1) + timedelta(seconds=rng.randrange(366 * 86400))
        back = timedelta(seconds=rng.choice([3600, 86400, 40 * 86400]) * rng.uniform(-1.5, 40))
        pairs.append((now - back, now))
    sql = f"""select {render_macro("format_memory_time", "pairs.ts", "pairs.now")}
    from (
        select unnest(cast($ts as timestamp[])) as ts, unnest(cast($now as timestamp[])) as now
    ) as pairs"""
    params = {"ts": [ts for ts, _ in pairs], "now": [now for _, now in pairs]}
    expected = [text for (text,) in duckdb.connect().execute(sql, params).fetchall()]
    assert [memory_time_text(ts, now) for ts, now in pairs] == expected
    assert memory_time_text(None, NOW) is None
    assert memory_time_text(datetime(2021, 2, 21, 9, 36), datetime(2021, 2, 21, 20)) == (
        format_memory_time(datetime(2021, 2, 21, 9, 36), datetime(2021, 2, 21, 20))
    )


@pytest.fixture
def store():
    con = duckdb.connect()
    memory = DynamicMemory(con, embedder=None, profile={"timeline_size": 1})
    memory.add_events(
        [
            {
                "user_id": USER,
                "agent_id": AGENT,
                "description": f"木木在海边捡贝壳 {number}",
                "place": "海边",
                "created_at": NOW - timedelta(days=number),
            }
            for number in range(1, 4)
        ]
        + [  # others, so the word is rare enough to be evidence
            {"user_id": USER, "agent_id": AGENT, "description": text, "created_at": NOW}
            for text in ("木木在读一本侦探小说", "下雨天木木忘了带伞", "木木的室友失恋了")
        ]
    )
    yield memory
    memory.close()


def test_a_change_in_place_shows_on_the_next_lone_recall(store, monkeypatch):
    """An event's place and insight changed in place (the same id) after a lone recall held
    its fields: the next recall shows the new ones, as the statement does, and reads only
    that event's fields again."""
    asked = {"user_id": USER, "agent_id": AGENT, "limit": 3, "update": False, "now": NOW}
    first = store.query("贝壳", **asked)
    changed = first.memory_events[0]["event_id"]
    assert first.memory_events[0]["place"] == "海边"
    read: list[list[int]] = []
    read_fields = event_fields.read_fields

    def counted(fetch_rows, ids):
        read.append(sorted(ids))
        return read_fields(fetch_rows, ids)

    monkeypatch.setattr(event_fields, "read_fields", counted)
    store.query("贝壳", **asked)
    assert read == []  # all held
    store.update_event(changed, place="画廊", deepinsight="木木喜欢安静")
    again = store.query("贝壳", **asked)
    assert read == [[changed]]
    shown = {event["event_id"]: event for event in again.memory_events}
    assert (shown[changed]["place"], shown[changed]["deepinsight"]) == ("画廊", "木木喜欢安静")
    store._recall._alone = False  # the statement
    assert store.query("贝壳", **asked).memory_events == again.memory_events


def test_the_time_text_follows_the_querys_now(store):
    """What is held has no time of its own: each recall reads its events' times against its
    own now."""
    asked = {"user_id": USER, "agent_id": AGENT, "limit": 1, "update": False}
    near = store.query("贝壳", **asked, now=NOW).memory_events[0]
    later = store.query("贝壳", **asked, now=NOW + timedelta(days=60)).memory_events[0]
    assert near["event_id"] == later["event_id"]
    created = NOW - timedelta(days=1)
    assert near["time_text"] == format_memory_time(created, NOW)
    assert later["time_text"] == format_memory_time(created, NOW + timedelta(days=60))
    assert near["time_text"] != later["time_text"]


def test_an_official_events_change_in_place_shows_too(store):
    """A designer's event (the official twin table) changed in place between lone recalls."""
    store.import_official(
        {
            "agent_id": AGENT,
            "events": [{"description": "祁煜在画廊画贝壳", "created_at": "2021-01-01T00:00:00"}],
        }
    )
    asked = {"user_id": USER, "agent_id": AGENT, "limit": 5, "update": False, "now": NOW}

    def official() -> dict:
        shown = store.query("画廊", **asked).memory_events
        [event] = [event for event in shown if event["scope"] == "official"]
        return event

    before = official()
    store.update_event(before["event_id"], place="画廊")
    after = official()
    assert (before["place"], after["place"]) == (None, "画廊")
    store._recall._alone = False  # the statement
    assert official() == after


def test_a_new_text_keeps_what_changed_in_place_while_it_was_embedded(store, monkeypatch):
    """An event's text edited (a new event) while another edit changes its place and a recall
    its counters, between the edit's first read and its transaction (the embedding): the new
    event takes the row as it is when replaced, not as it was read."""
    asked = {"user_id": USER, "agent_id": AGENT, "limit": 3, "update": False, "now": NOW}
    event = store.query("贝壳", **asked).memory_events[0]["event_id"]
    events = store._edits.events
    prepare = events.prepare_events

    def meanwhile(rows: Any, *args: Any) -> Any:
        store.update_event(event, place="画廊", is_pinned=True)
        return prepare(rows, *args)

    monkeypatch.setattr(events, "prepare_events", meanwhile)
    new = store.update_event(event, description="木木在海边捡贝壳 改")
    [row] = store.store.records(
        "select place, is_pinned, revision from memory_event where id = $id", {"id": new}
    )
    assert row == {"place": "画廊", "is_pinned": True, "revision": 0}
