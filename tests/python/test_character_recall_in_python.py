"""Character recall answered in Python (character_memory.recall_rows, over entry_matches'
matches and the context's verdicts) against the models it stands in for: a library
answering in Python and one planning the models (int_recall_entries_evaluated … and marts
character_memory_blocks, character_memory_recall) play the same sessions turn by turn, and
every answer (blocks, filled template, explain rows, words) and every queue they keep are
equal. The configs are random: locked and constant entries, entries of every strength,
secondary keywords under each logic, sticky turns, dates, names to fill, kinds without
entries; so are the limits (0 too), the contexts and the texts."""

from __future__ import annotations

import random
import warnings

import pytest

from rolemem.character_memory import CharacterLibrary, CharacterMemory, recall_rows
from rolemem.character_memory.config import ConfigWarning, parse_designer_json

WORDS = ["酒", "画画", "海边", "猫", "日记", "夏天", "木木", "祁煜", "Wine", "写生", "雨", "画廊"]
CONDITIONS = [
    [{"field": "intimacy", "value": 3, "operator": "gte"}],
    [{"field": "scene", "value": "studio", "operator": "eq"}],
    [{"field": "exploration", "value": 2, "operator": "gte"}],
]
CONTEXTS = [
    {"intimacy": 3, "exploration": 3, "scene": "studio"},
    {"intimacy": 1, "scene": "beach"},
    {},
]
TEMPLATE = (
    "你是{{char}}。\n【设定】\n{{character_memory_attributes}}\n【经历】\n"
    "{{character_memory_event}}\n{{character_dialogue_style}}\n{{dynamic_memory}}\n和{{user}}聊天"
)


def _entry(rng: random.Random, kind: str, number: int) -> dict:
    entry: dict = {
        "关键词": rng.sample(WORDS, rng.randint(1, 2)),
        "内容": rng.choice(["{{user}}的", "{{char}}和", "", "在"])
        + f"{kind}第{number}条"
        + rng.choice(WORDS),
        "强度": rng.choice([1, 2, 3, 4, 5]),
    }
    if rng.random() < 0.3:
        entry["queryParams"] = rng.choice(CONDITIONS)
    if rng.random() < 0.15:
        entry["常驻"] = True
    if rng.random() < 0.3:
        entry["停留轮数"] = rng.choice([0, 1, 3])
    if rng.random() < 0.3:
        entry["次要关键词"] = rng.sample(WORDS, rng.randint(1, 2))
        entry["次要关键词逻辑"] = rng.choice(["AND_ANY", "NOT_ALL", "NOT_ANY", "AND_ALL"])
    if kind == "event":
        entry["日期"] = rng.choice(["", "三年前", "2020年夏"])
    return entry


def _config(seed: int) -> dict:
    """A character's config; a kind may have no entry (but one kind always has)."""
    rng = random.Random(seed)
    return {
        section: {
            f"{kind}{group}": [_entry(rng, kind, n) for n in range(rng.randint(1, 4))]
            for group in range(rng.randint(1, 3))
        }
        for section, kind in (
            ("attributes", "attribute"),
            ("events", "event"),
            ("dialogue_styles", "style"),
        )
        if section == "attributes" or rng.random() < 0.8
    }


def _limits(rng: random.Random) -> dict[str, int]:
    """Random limits, now and then 0."""
    return {
        "attributes_per_category": rng.randint(0, 3),
        "attributes_total": rng.randint(0, 6),
        "events_total": rng.randint(0, 3),
        "dialogue_styles_total": rng.randint(0, 2),
        "queue_turns": rng.randint(0, 4),
        "queue_attribute_categories": rng.randint(0, 3),
        "queue_items_per_category": rng.randint(1, 3),
        "queue_events": rng.randint(0, 3),
        "queue_dialogue_styles": rng.randint(1, 2),
    }


def _libraries(seed: int) -> tuple[CharacterLibrary, CharacterLibrary]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        config = parse_designer_json(_config(seed), character_id="c")
        python, model = CharacterLibrary(config=config), CharacterLibrary(config=config)
    model._matcher = None  # its statement plans every model, as dbt does
    return python, model


@pytest.mark.parametrize("seed", range(12))
def test_sessions_recall_alike_turn_by_turn(seed):
    rng = random.Random(seed)
    limits = _limits(rng)
    sessions = [
        CharacterMemory(character_id="c", library=library, limits=limits).session("u")
        for library in _libraries(seed)
    ]
    for turn in range(8):
        text = "".join(rng.choice(WORDS) for _ in range(rng.randint(0, 4)))
        kwargs = {
            "context": rng.choice(CONTEXTS),
            "require_match": rng.random() < 0.8,
            "user_name": rng.choice([None, "木木"]),
            "char_name": rng.choice([None, "祁煜"]),
            "template": rng.choice([None, TEMPLATE]),
            "explain": rng.random() < 0.8,
            "dry_run": rng.random() < 0.2,
        }
        python, model = (session.recall(text, **kwargs) for session in sessions)
        assert python == model, (seed, turn, text, kwargs)
        assert sessions[0]._state() == sessions[1]._state(), (seed, turn)


def test_what_the_sessions_compare_is_not_empty():
    """Over the sessions above, entries are shown, locked, carried over and outranked."""
    statuses: set[str] = set()
    carried = 0
    for seed in range(12):
        rng = random.Random(seed)
        session = CharacterMemory(
            character_id="c", library=_libraries(seed)[0], limits=_limits(rng)
        ).session("u")
        for _ in range(8):
            text = "".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
            explain = session.recall(text, rng.choice(CONTEXTS), explain=True).explain
            statuses.update(row["status"] for row in explain)
            carried += sum(row["is_carried_over"] and row["is_shown"] for row in explain)
    assert statuses == {"shown", "locked", "over the limit", "not relevant"}
    assert carried


def test_past_the_explain_limit_the_statement_answers(monkeypatch):
    python, _ = _libraries(0)
    memory = CharacterMemory(character_id="c", library=python)
    answered = python._answered
    calls: list[bool] = []
    monkeypatch.setattr(
        python, "_answered", lambda *a: calls.append(answered(*a) is not None) or answered(*a)
    )
    memory.session("u").recall("酒", explain=True, dry_run=True)
    monkeypatch.setattr(recall_rows, "EXPLAIN_LIMIT", 1)
    memory.session("u").recall("酒", explain=True, dry_run=True)
    memory.session("u").recall("酒", dry_run=True)
    assert calls == [True, False, True]


def test_a_queued_key_of_another_character_is_not_recalled():
    """A stored queue naming an entry of another character (its key taken since: keys
    continue after the config's others) recalls nothing of it, in either path: the session
    passes the models its own character's entries."""
    doc = {"attributes": {"爱好": [{"关键词": ["酒"], "内容": "A的酒", "强度": 3}]}}
    other = {"attributes": {"秘密": [{"关键词": ["秘密"], "内容": "B的秘密", "强度": 3}]}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        config = parse_designer_json(doc, character_id="a")
        config.extend(parse_designer_json(other, character_id="b"))
        python, model = CharacterLibrary(config=config), CharacterLibrary(config=config)
    model._matcher = None
    b_key = next(k for k in python._rows.by_key if python._rows.by_key[k].content == "B的秘密")
    answers = []
    for library in (python, model):
        session = CharacterMemory(character_id="a", library=library).session("u")
        session.turn, session._queue = (
            1,
            [{"entry_key": b_key, "recalled_turn": 1, "match_quality": 1}],
        )
        answers.append((session.recall("你好", explain=True), session._state()))
    assert answers[0] == answers[1]
    assert answers[0][0].attributes == ""
    assert b_key not in {row["entry_key"] for row in answers[0][0].explain}
    assert answers[0][1] == (2, [])  # and it leaves the queue


def test_a_queue_naming_an_entry_twice_shows_it_once():
    """A stored queue edited by hand to name an entry twice: the entry once, from its newest
    recall, in both paths."""
    doc = {"attributes": {"爱好": [{"关键词": ["酒"], "内容": "喜欢喝桂花酿", "强度": 3}]}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        config = parse_designer_json(doc, character_id="a")
        python, model = CharacterLibrary(config=config), CharacterLibrary(config=config)
    model._matcher = None
    answers = []
    for library in (python, model):
        session = CharacterMemory(character_id="a", library=library).session("u")
        session.turn = 1
        session._queue = [
            {"entry_key": "attribute:1", "recalled_turn": turn, "match_quality": 1}
            for turn in (0, 1)
        ]
        answers.append((session.recall("你好", explain=True), session._state()))
    assert answers[0] == answers[1]
    assert answers[0][0].attributes == "爱好：喜欢喝桂花酿"
    # kept once, from its newest recall (a re-recall refreshes an entry)
    assert answers[0][1] == (
        2,
        [{"entry_key": "attribute:1", "recalled_turn": 1, "match_quality": 1}],
    )
