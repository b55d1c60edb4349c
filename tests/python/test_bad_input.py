"""Bad input at every public entry point: a rolemem error naming the field, nothing written."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import duckdb
import pytest

from rolemem import CharacterMemory, DynamicMemory, RolememError, build_memory
from rolemem.cli import main
from rolemem.memory_loop import MemoryLoop

from .conftest import demo_store

NOW = datetime(2021, 2, 21, 12, 0)
AWARE = datetime(2021, 2, 21, 12, 0, tzinfo=UTC)
SURROGATE = "火锅\ud800"
NUL = "火锅\x00夜"  # PostgreSQL's text cannot hold it: refused on every engine
EVENT = {"user_id": "mumu", "agent_id": "qiyu", "description": "木木爱吃火锅", "created_at": NOW}
ENTITY = {
    "user_id": "mumu",
    "agent_id": "qiyu",
    "entity_name": "木木",
    "entity_type": "客体",
    "kind": "用户属性",
    "keyword": "饮食",
    "description": "木木爱吃火锅",
}
OFFICIAL_EVENT = {"description": "官方", "created_at": "2020-01-01T10:00:00"}


@pytest.fixture(scope="module")
def demo_path(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("bad") / "demo.duckdb")
    demo_store(path)
    return path


@pytest.fixture
def store(demo_path, tmp_path):
    import shutil

    path = tmp_path / "store.duckdb"
    shutil.copy(demo_path, path)
    con = duckdb.connect(str(path))
    memory = DynamicMemory(con, embedder=None)
    yield memory
    con.close()


def counts(memory: DynamicMemory) -> tuple:
    return (
        memory.con.cursor()
        .execute(
            """select (select count(*) from memory_event), (select count(*) from memory_entity),
        (select count(*) from memory_event_term), (select sum(strength) from memory_event),
        (select count(*) from line)"""
        )
        .fetchone()
    )


def query(memory: DynamicMemory, **kwargs: Any) -> Any:
    return memory.query(
        **{
            "text": "火锅",
            "user_id": "mumu",
            "agent_id": "qiyu",
            "now": NOW,
            "update": False,
            **kwargs,
        }
    )


CASES: list[tuple[str, Callable[[DynamicMemory], Any], str]] = [
    ("lone surrogate", lambda m: m.add_event(**{**EVENT, "description": SURROGATE}), "description"),
    ("NUL character", lambda m: m.add_event(**{**EVENT, "description": NUL}), "description"),
    ("aware created_at", lambda m: m.add_event(**{**EVENT, "created_at": AWARE}), "created_at"),
    ("nan importance", lambda m: m.add_event(**{**EVENT, "importance": math.nan}), "importance"),
    ("importance 5", lambda m: m.add_event(**{**EVENT, "importance": 5}), "importance"),
    ("feedback -3", lambda m: m.add_event(**{**EVENT, "feedback": -3}), "feedback"),
    ("keywords as a string", lambda m: m.add_event(**{**EVENT, "keywords": "火锅"}), "keywords"),
    ("place as a list", lambda m: m.add_event(**{**EVENT, "place": ["a"]}), "place"),
    (
        "batch with one bad event",
        lambda m: m.add_events([EVENT, {**EVENT, "description": ""}]),
        "event 1: description",
    ),
    ("text id", lambda m: m.update_event("1", importance=0.2), "id"),
    ("id past 64 bits", lambda m: m.update_event(2**63, importance=0.2), "id"),
    ("update with no fields", lambda m: m.update_event(1), "nothing to change"),
    ("strength 2.7", lambda m: m.update_event(1, strength=2.7), "strength"),
    ("strength -100", lambda m: m.update_event(1, strength=-100), "strength"),
    ("empty entity description", lambda m: m.update_entity(1, description=None), "description"),
    ("empty entity name", lambda m: m.update_entity(1, entity_name=" "), "entity_name"),
    ("delete a missing event", lambda m: m.delete_event(999_999), "memory_event"),
    ("delete a missing entity", lambda m: m.delete_entity(999_999), "memory_entity"),
    ("import None", lambda m: m.import_official(None), "official memories"),
    (
        "import with a bad entity",
        lambda m: m.import_official(
            {
                "agent_id": "qiyu",
                "events": [{"description": "官方", "created_at": "2020-01-01"}],
                "entities": [
                    {
                        "entity_name": "x",
                        "kind": "未知",
                        "entity_type": "客体",
                        "keyword": "k",
                        "description": "d",
                        "updated_at": "2020-01-01",
                    }
                ],
            }
        ),
        "entities[0]",
    ),
    (
        "import with a bad time",
        lambda m: m.import_official(
            {"agent_id": "qiyu", "events": [{"description": "官方", "created_at": "soon"}]}
        ),
        "events[0].created_at",
    ),
    (
        "import with an unknown field (the service's contract)",
        lambda m: m.import_official(
            {"agent_id": "qiyu", "events": [{**OFFICIAL_EVENT, "scope": "user"}]}
        ),
        "events[0].scope",
    ),
    (
        "import with an event too long for the service",
        lambda m: m.import_official(
            {"agent_id": "qiyu", "events": [{**OFFICIAL_EVENT, "description": "海" * 2001}]}
        ),
        "events[0].description",
    ),
    (
        "event too long",
        lambda m: m.add_event(**{**EVENT, "description": "海" * 2001}),
        "description",
    ),
    ("keyword too long", lambda m: m.add_entity(**{**ENTITY, "keyword": "k" * 65}), "keyword"),
    ("limit 2**40", lambda m: query(m, limit=2**40), "limit"),
    ("limit 0", lambda m: query(m, limit=0), "limit"),
    ("surrogate query", lambda m: query(m, text=SURROGATE), "text"),
    ("NUL query", lambda m: query(m, text=NUL), "text"),
    ("aware now", lambda m: query(m, now=AWARE), "now"),
    ("nan threshold", lambda m: query(m, score_threshold=math.nan), "score_threshold"),
    ("huge roulette seed", lambda m: query(m, roulette_seed=2**40), "roulette_seed"),
    ("save id as text", lambda m: query(m, save_id="1"), "save_id"),
    ("unknown memory scope", lambda m: query(m, memory_scope="world"), "memory_scope"),
    (
        "nan profile weight",
        lambda m: DynamicMemory(m.con, embedder=None, profile={"bm25_weight": math.nan}),
        "bm25_weight",
    ),
    (
        "unknown fusion",
        lambda m: DynamicMemory(m.con, embedder=None, profile={"fusion": "x"}),
        "fusion",
    ),
    ("db of the wrong type", lambda m: DynamicMemory(5), "db"),  # type: ignore[arg-type]
    (
        "observe with two characters",
        lambda m: MemoryLoop(m.con).observe(
            save_id=1, user_id="mumu", agent_id="qiyu", role_id=1, script_role_id="1"
        ),
        "role_id or script_role_id",
    ),
    (
        "observe a text save id",
        lambda m: MemoryLoop(m.con).observe(
            save_id="1", user_id="mumu", agent_id="qiyu", role_id=1
        ),
        "save_id",
    ),
    (
        "observe a scene longer than an event's",
        lambda m: MemoryLoop(m.con).observe(
            save_id=1, user_id="mumu", agent_id="qiyu", role_id=1, scene="景" * 129
        ),
        "scene must be at most 128 characters",
    ),
    ("pin a text id", lambda m: MemoryLoop(m.con).pin(event_id="1"), "event_id"),
    (
        "line id past 64 bits",
        lambda m: build_memory([{"id": 2**63, "attribute": "user", "content": "x"}], role_id=1),
        "id",
    ),
    (
        "line with a surrogate",
        lambda m: build_memory([{"id": 1, "attribute": "user", "content": SURROGATE}], role_id=1),
        "content",
    ),
    (
        "line with a NUL character",
        lambda m: build_memory([{"id": 1, "attribute": "user", "content": NUL}], role_id=1),
        "content",
    ),
]


@pytest.mark.parametrize(("case", "call", "names"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_a_rolemem_error_naming_the_field_and_writes_nothing(store, case, call, names):
    before = counts(store)
    with pytest.raises(RolememError) as raised:
        call(store)
    assert names in str(raised.value)
    assert counts(store) == before


CHARACTER_CASES = [
    ("nan context", {"intimacy": math.nan}, "intimacy"),
    ("huge context", {"intimacy": 2**70}, "intimacy"),
    ("surrogate context", {"scene": SURROGATE}, "scene"),
    ("NUL context", {"scene": NUL}, "scene"),
    ("object context", {"scene": {"a": 1}}, "scene"),
]


@pytest.mark.parametrize(
    ("case", "context", "name"), CHARACTER_CASES, ids=[c[0] for c in CHARACTER_CASES]
)
def test_bad_character_context_names_the_field(case, context, name):
    session = CharacterMemory(character_id="qiyu").session("u")
    with pytest.raises(TypeError, match=name):
        session.recall("今天画画时你好温柔", context)


def test_the_cli_refuses_bad_numbers_in_one_line(demo_path, capsys):
    assert main(["memory", "--db", demo_path, "--save", "99999999999999999999", "--role", "1"]) == 2
    assert "save_id must fit in 64 bits" in capsys.readouterr().err
    assert main(["config", "export", "--character", "nobody"]) == 2
    assert "no config for character 'nobody'" in capsys.readouterr().err


def test_init_db_demo_runs_twice(tmp_path, capsys):
    path = str(tmp_path / "twice.duckdb")
    assert main(["init-db", "--db", path, "--demo"]) == 0
    assert main(["init-db", "--db", path, "--demo"]) == 0
    assert main(["memory", "--db", path, "--save", "2", "--role", "1"]) == 0


CONDITION_CASES = [
    ({"field": 5, "value": 1, "operator": "gte"}, "field must be a string, got ubigint"),
    ({"field": "scene", "value": None, "operator": "eq"}, "got null"),
    ({"field": "scene", "value": {"a": 1}, "operator": "eq"}, "got object"),
    ({"field": "scene", "value": [["a"]], "operator": "in"}, "value lists may hold"),
    ({"field": "scene", "value": ["a", None], "operator": "in"}, "value lists may hold"),
]


@pytest.mark.parametrize(
    ("condition", "message"), CONDITION_CASES, ids=[c[1] for c in CONDITION_CASES]
)
def test_conditions_that_could_never_unlock_are_config_errors(condition, message):
    import warnings

    from rolemem.character_memory.config import ConfigError

    doc = {
        "attributes": {
            "喜好": [
                {
                    "关键词": ["画画", "绘画", "画作"],
                    "内容": "喜欢画画",
                    "强度": 3,
                    "queryParams": [condition],
                }
            ]
        }
    }
    with warnings.catch_warnings(), pytest.raises(ConfigError) as raised:
        warnings.simplefilter("ignore")
        CharacterMemory.from_designer_json(doc, character_id="x")
    assert "attributes.喜好[0]: queryParams[0]: " in str(raised.value)
    assert message in str(raised.value)


def test_nan_and_deep_nesting_in_designer_files_are_config_errors(tmp_path):
    from rolemem.character_memory.config import ConfigError, parse_designer_json

    nan_file = tmp_path / "nan.json"
    nan_file.write_text('{"attributes": {"喜好": [{"强度": NaN}]}}', encoding="utf-8")
    with pytest.raises(ConfigError, match="NaN is not a number designers can use"):
        parse_designer_json(nan_file)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(ConfigError, match="nests too deeply"):
        parse_designer_json(deep)
    latin = tmp_path / "latin.json"
    latin.write_bytes('{"a": "é"}'.encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8"):
        parse_designer_json(latin)
