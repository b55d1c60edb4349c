"""Character recall on PostgreSQL: the same models (dispatch macros where the engines differ:
JSON types, lists of objects, raising) over copies of the config-derived tables, transpiled by
sqlglot; every answer equal to DuckDB's, explain rows and the sticky queue included."""

from __future__ import annotations

import dataclasses
import warnings

import pytest

from rolemem import CharacterMemory
from rolemem.character_memory import stored_config
from rolemem.character_memory.config import ConfigError, parse_designer_json
from rolemem.character_memory.library import CharacterLibrary
from rolemem.character_memory.sillytavern import from_lorebook
from rolemem.engines import PostgresEngine

from .conftest import fresh_database
from .test_sillytavern import LOGIC_BOOK, lorebook

TEXTS = [
    "今天画画时你好温柔",
    "我们去海边散步吧",
    "你还记得那次火锅吗",
    "晚上一起看星星",
    "祁煜，你的画展什么时候开始？",
    "",
]
CONTEXTS = [
    {"intimacy": 3, "exploration": 3, "scene": "studio"},
    {"intimacy": 9, "exploration": 9, "scene": ["gallery", "studio"]},
    {"intimacy": 9.5, "scene": None, "time": "night"},
    {},
    None,
]


@pytest.fixture(scope="module")
def libraries(postgres):
    return CharacterLibrary(), CharacterLibrary(engine=postgres)


def test_every_recall_of_a_conversation_is_equal_on_both_engines(libraries):
    on_duckdb, on_postgres = libraries
    shown = 0
    for character in sorted(on_duckdb.characters):
        sessions = [
            CharacterMemory(character_id=character, library=library).session("木木")
            for library in libraries
        ]
        for text in TEXTS:
            for context in CONTEXTS:
                for require_match in (True, False):
                    answers = [
                        session.recall(
                            text,
                            context,
                            require_match=require_match,
                            user_name="木木",
                            explain=True,
                        )
                        for session in sessions
                    ]
                    assert dataclasses.asdict(answers[1]) == dataclasses.asdict(answers[0]), (
                        character,
                        text,
                        context,
                    )
                    shown += bool(answers[0].attributes or answers[0].events)
        # the sticky queue moved the same way on both
        assert sessions[1]._queue == sessions[0]._queue
    assert shown > 20, "the conversation should recall something"


def test_a_locked_entry_says_why_on_postgres(libraries):
    _, on_postgres = libraries
    result = (
        CharacterMemory(character_id="qiyu", library=on_postgres)
        .session("ayuan")
        .recall("今天画画时你好温柔", {"intimacy": 0}, explain=True, dry_run=True)
    )
    reasons = [row["reason"] for row in result.explain if row["status"] == "locked"]
    assert reasons and all(reason.startswith("locked: ") for reason in reasons)
    assert all(set(row) == set(result.explain[0]) for row in result.explain)
    assert "request_id" not in result.explain[0]


def test_lorebook_recall_rules_are_equal_on_both_engines(postgres):
    """Selective logic, constant and sticky entries (a SillyTavern lorebook's) on both."""
    config = parse_designer_json(from_lorebook(lorebook("world_info"), "atelier").document)
    config.extend(parse_designer_json(from_lorebook(LOGIC_BOOK, "logic").document))
    with warnings.catch_warnings():  # lorebook contents are longer than the spec's advice
        warnings.simplefilter("ignore")
        libraries = [
            CharacterLibrary(config=config),
            CharacterLibrary(config=config, engine=postgres),
        ]
    texts = ["今天画画累了，想去海边喝茶", "画廊有展览吗", "画廊夜晚的展览", "我们去画廊吧", "你好"]
    for character in ("atelier", "logic"):
        sessions = [
            CharacterMemory(character_id=character, library=library).session("木木")
            for library in libraries
        ]
        for text in texts:
            answers = [
                session.recall(text, {"intimacy": 2, "exploration": 1}, explain=True)
                for session in sessions
            ]
            assert dataclasses.asdict(answers[1]) == dataclasses.asdict(answers[0]), text
        assert sessions[1]._queue == sessions[0]._queue


def test_a_database_without_config_tables_is_a_config_error_on_postgres(postgres_url):
    """The config read on a database `rolemem init-db` never filled: the ConfigError saying
    so (the service's 400), as on DuckDB, not psycopg's UndefinedTable (a 500)."""
    url = fresh_database(postgres_url, "no_config_tables")
    with PostgresEngine(url) as engine:
        for character_id in ("qiyu", None):
            with pytest.raises(ConfigError, match="no config table 'character_attributes'"):
                stored_config(engine, character_id)
