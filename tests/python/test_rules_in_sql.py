"""Each memory rule lives once, in the models and macros: Python reads it as a column.

Every test here pins one rule in its SQL home and shows the Python path reading it from there
(not restating it): the target key, the name placeholders and the prompt template's fill, the
config rules, the dynamic event's status and reason, and the dense recall's numpy fast path
against the SQL dense models.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

import rolemem
from rolemem.engines import PostgresEngine
from rolemem.memory_loop import MemoryLoop
from rolemem.sql.project import render_macro

from .conftest import demo_store, error_of

PACKAGE = Path(rolemem.__file__).parent


def python_sources() -> dict[Path, str]:
    return {path: path.read_text(encoding="utf-8") for path in PACKAGE.rglob("*.py")}


# -- the target key -----------------------------------------------------------------------------


def test_the_target_key_is_the_macro_memory_target_key():
    key = render_macro("memory_target_key", "cast($role as bigint)", "cast($script as varchar)")
    con = duckdb.connect()
    for role, script, expected in ((7, None, "role_id=7"), (None, "npc", "script_role_id=npc")):
        row = con.execute(f"select {key}", {"role": role, "script": script}).fetchone()
        assert row == (expected,)
    assert con.execute(f"select {key}", {"role": None, "script": None}).fetchone() == (None,)


def test_no_python_builds_a_target_key():
    built = re.compile(r"""f["'](script_)?role_id=\{|["'](script_)?role_id=["']\s*(\+|%)""")
    assert [path.name for path, text in python_sources().items() if built.search(text)] == []


def test_the_loop_reads_the_models_target_key(tmp_path):
    """The observation's key (the plan's column) is the key memory_messages is built under."""
    path = demo_store(str(tmp_path / "store.duckdb"))
    with MemoryLoop(path, embedder=None) as loop:
        due = loop.due(save_id=2, user_id="mumu", agent_id="qiyu", role_id=1)
        window = loop.context_window(save_id=2, role_id=1, user_id="mumu")
    assert due["target_key"] == "role_id=1"
    assert window["lines"]  # the window of the same key (its batches and extracted lines)
    con = duckdb.connect(path, read_only=True)
    keys = con.execute("select distinct target_key from memory_messages where save_id = 2")
    assert ("role_id=1",) in keys.fetchall()
    con.close()


# -- the trace's status and reason --------------------------------------------------------------


def test_the_trace_reads_status_and_reason_from_the_recall_marts(tmp_path):
    """A dynamic event's status and reason are the columns of memory_recall_candidates, a
    character entry's reason the column of character_memory_recall: no rule in the turn."""
    from rolemem import Companion

    path = demo_store(str(tmp_path / "store.duckdb"))
    with Companion(path, character_id="qiyu", embedder=None) as companion:
        result = companion.turn(
            save_id=2,
            user_id="mumu",
            message="今天画画时你好温柔，还记得海边吗",
            role_id=1,
            context={"intimacy": 2, "exploration": 3, "scene": "studio"},
            now=datetime(2021, 2, 21, 12, 0),
            dry_run=True,
        )
        query = companion.memory.query(
            "今天画画时你好温柔，还记得海边吗",
            user_id="mumu",
            agent_id="qiyu",
            now=datetime(2021, 2, 21, 12, 0),
            save_id=2,
            explain=True,
            update=False,
        )
    events = [row for row in result.trace if row["layer"] == "dynamic_event"]
    assert events
    by_id = {c["event_id"]: c for c in query.candidates}
    for row in events:
        candidate = by_id[row["event_id"]]
        assert (row["status"], row["why"]["reason"]) == (candidate["status"], candidate["reason"])
    statuses = {row["status"] for row in events}
    assert "shown" in statuses and statuses - {"shown"}
    shown = next(row for row in events if row["status"] == "shown")
    assert re.fullmatch(r"selected #\d+ \(score \d+\.\d{4}\)", shown["why"]["reason"])
    locked = next(row for row in result.trace if row["item"] == "对{{user}}格外温柔")
    assert locked["why"] == "locked: intimacy gte 3 (context: 2)"
    companion_text = (PACKAGE / "turn" / "companion.py").read_text(encoding="utf-8")
    assert "below the threshold" not in companion_text and "match_kind" not in companion_text


# -- the config rules -------------------------------------------------------------------------


def entry_with(**rules: object) -> dict:
    entry = {"关键词": ["一", "二", "三"], "内容": "这是一条足够长的属性内容啊", "强度": 3}
    return {"character_id": "x", "attributes": {"性格特征": [{**entry, **rules}]}}


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        (
            {"次要关键词逻辑": "or_else"},
            "attributes.性格特征[0]: 次要关键词逻辑 (secondary_logic): must be one of "
            "AND_ANY, NOT_ALL, NOT_ANY, AND_ALL, got 'OR_ELSE'",
        ),
        (
            {"停留轮数": -1},
            "attributes.性格特征[0]: 停留轮数 (sticky_turns): must be a whole number of turns, "
            "0 or more, got -1",
        ),
    ],
)
def test_the_config_rules_are_the_models_rows(rules, message):
    """The model int_character_config_problems judges a recall rule's value; Python only
    reports its rows (the library, the validation before seeds are written, the import)."""
    from rolemem.character_memory import CharacterMemory, validate_config
    from rolemem.character_memory.config import ConfigError, parse_designer_json

    with pytest.raises(ConfigError) as raised:
        CharacterMemory.from_designer_json(entry_with(**rules))
    assert str(raised.value) == f"invalid character config:\n<designer config>: {message}"
    with pytest.raises(ConfigError, match=re.escape(message)):
        validate_config(parse_designer_json(entry_with(**rules)))
    # the values the model accepts load (any letter case and spacing of a logic)
    CharacterMemory.from_designer_json(entry_with(次要关键词逻辑=" not_any ", 停留轮数=0))


def test_no_python_restates_a_config_rule():
    config = (PACKAGE / "character_memory" / "config.py").read_text(encoding="utf-8")
    assert "AND_ALL" not in config and "< 0" not in config


def test_the_service_answers_the_models_config_rows_as_a_400(tmp_path):
    from fastapi.testclient import TestClient

    from rolemem.service import create_app

    path = demo_store(str(tmp_path / "store.duckdb"))
    with TestClient(create_app(path, llm=None, embedder=None)) as client:
        answer = client.post("/config/import", json=entry_with(停留轮数=-2))
    assert answer.status_code == 400
    assert error_of(answer) == {
        "type": "ConfigError",
        "message": "invalid character config:\n<designer config>: attributes.性格特征[0]: "
        "停留轮数 (sticky_turns): must be a whole number of turns, 0 or more, got -2",
    }


# -- dense recall: numpy against the SQL dense models -----------------------------------------


def sql_dense(store, query: list[float], candidates: int) -> tuple[list[dict], dict]:
    """The SQL dense models (int_memory_query_cosines -> int_memory_query_dense_candidates and
    int_memory_query_cosine_stats) over the store, for one bound query of mumu with qiyu."""
    from rolemem.dynamic_memory.sql import STAT_NAMES
    from rolemem.sql.project import compose

    queries = """
        select
            1 as query_id,
            cast('qiyu' as varchar) as agent_id,
            cast('mumu' as varchar) as user_id,
            cast($query as float[]) as query_embedding,
            cast($candidates as integer) as dense_candidates"""
    rows = store.records(
        compose(
            ("int_memory_query_dense_candidates", "int_memory_query_cosine_stats"),
            {"int_memory_queries": queries},
            "select * from int_memory_query_dense_candidates "
            "order by greatest(cosine, context_cosine, long_context_cosine) desc, event_id",
            existing=(
                "memory_event",
                "memory_event_embedding",
                "official_event",
                "official_event_embedding",
            ),
            engine=store.name,
        ),
        {"query": query, "candidates": candidates},
    )
    [stats] = store.records(
        compose(
            "int_memory_query_cosine_stats",
            {"int_memory_queries": queries},
            f"select {', '.join(STAT_NAMES)} from int_memory_query_cosine_stats",
            existing=(
                "memory_event",
                "memory_event_embedding",
                "official_event",
                "official_event_embedding",
            ),
            engine=store.name,
        ),
        {"query": query, "candidates": candidates},
    )
    return rows, stats


@pytest.fixture(params=["duckdb", "postgres"])
def dense_store(request, tmp_path_factory):
    from .conftest import demo_store_on

    return demo_store_on(request, tmp_path_factory, "rules_dense")


def test_dense_batch_equals_the_sql_dense_models(dense_store):
    """numpy (vector_cache.dense_batch, the per-turn fast path) finds the same candidates in
    the same order, with the same cosines and statistics, as the SQL dense models."""
    import numpy as np

    from rolemem import DynamicMemory
    from rolemem.dynamic_memory.reachable import read_reachable
    from rolemem.dynamic_memory.sql import STAT_NAMES
    from rolemem.dynamic_memory.vector_cache import COSINE_NAMES, EventVectorCache, dense_batch

    with DynamicMemory(dense_store, embedder=None) as memory:
        store = memory.store
        stored = store.run(
            "select embedding from memory_event_embedding order by event_id limit 3", {}
        )
        assert len(stored) == 3
        rng = np.random.default_rng(7)
        vectors = [
            rng.normal(size=384).tolist(),  # nowhere near any event
            list(stored[0][0]),  # exactly an event's own vector
            (np.asarray(stored[1][0]) + 0.05 * rng.normal(size=384)).tolist(),
        ]
        # PLAYER_EVENTS and the cache's vector read write out the models' union of the
        # players' and the designers' memories (per-turn reads): the designers' are reached too
        official = {
            row[0] for row in store.run("select event_id from official_event_embedding", {})
        }
        assert official
        cache = EventVectorCache(384)
        # a batch of several players reads their owners, and each query takes its own events
        [alone] = read_reachable(store.columns, [("qiyu", "mumu")], vectors=True)
        mine, nobody = read_reachable(
            store.columns, [("qiyu", "mumu"), ("qiyu", "nobody")], vectors=True
        )
        assert [array.tolist() for array in mine.with_vectors() or ()] == [
            array.tolist() for array in alone.with_vectors() or ()
        ]
        assert set(nobody.ids.tolist()) == official  # the designers' events alone
        for vector in vectors:
            for candidates in (1, 4, 1000):
                rows, stats = sql_dense(store, vector, candidates)
                query = {"agent_id": "qiyu", "user_id": "mumu", "query_embedding": vector}
                dense, numbers = dense_batch(cache, store.columns, [query], candidates)
                # the recall's one read of the reachable events (with BM25's lengths) gives
                # the vector cache the same events as its own read
                [reachable] = read_reachable(store.columns, [("qiyu", "mumu")], vectors=True)
                shared = dense_batch(
                    cache, store.columns, [query], candidates, [reachable.with_vectors()]
                )
                assert shared[1] == numbers
                assert {name: values.tolist() for name, values in shared[0].items()} == {
                    name: values.tolist() for name, values in dense.items()
                }
                assert rows, "the demo player reaches events with vectors"
                if candidates == 1000:  # every reachable event: the designers' one among them
                    assert official <= {row["event_id"] for row in rows}
                assert dense["event_id"].tolist() == [row["event_id"] for row in rows]
                for name in COSINE_NAMES:
                    assert np.allclose(
                        dense[name], [row[name] for row in rows], atol=1e-6, rtol=0
                    ), name
                assert numbers["cosine_count"] == [stats["cosine_count"]]
                for name in STAT_NAMES[1:]:  # sums of up to cosine_count cosines
                    tolerance = 1e-6 * stats["cosine_count"]
                    assert abs(numbers[name][0] - stats[name]) <= tolerance, name


def test_the_turns_descriptions_read_is_the_models_union(dense_store):
    """The turn's trace reads its recalled events' descriptions from the tables, written out
    (a per-turn read); it returns what int_memory_events_with_official holds for them, the
    designers' and the player's."""
    from rolemem import DynamicMemory
    from rolemem.dynamic_memory.sql import with_official
    from rolemem.sql.project import write_sql

    with DynamicMemory(dense_store, embedder=None) as memory:
        store = memory.store
        official = [row[0] for row in store.run("select id from official_event", {})]
        own = [row[0] for row in store.run("select id from memory_event", {})]
        assert official and own
        params = {"ids": [*official, *own, 99_999_999], "user_id": "mumu"}
        reference = with_official(
            "int_memory_events_with_official",
            "select event_id as id, description, save_id "
            "from int_memory_events_with_official "
            "where event_id in (select unnest(cast($ids as bigint[])))",
            engine=store.name,
        )
        read = store.run(write_sql("recalled_event_descriptions", engine=store.name), params)
        narrowed = sorted(tuple(row[:3]) for row in read)
        assert narrowed == sorted(store.run(reference, params))
        assert [row[0] for row in narrowed] == sorted([*official, *own])
        # each player event's source lines as memory_event_line holds them, none for the
        # designers'
        sources: dict[int, list[int]] = {}
        for event_id, line_id in store.run(
            "select event_id, line_id from memory_event_line order by line_id", {}
        ):
            sources.setdefault(event_id, []).append(line_id)
        assert {row[0]: row[3] and list(row[3]) for row in read} == {
            event_id: sources.get(event_id) for event_id in [*official, *own]
        }


# -- the name placeholders and the prompt template ----------------------------------------------

BLOCKS = (
    "{{character_memory_attributes}}",
    "{{character_memory_event}}",
    "{{character_dialogue_style}}",
)


def reference_prompt(template: str, blocks: tuple[str, str, str], names: dict, dynamic: str):
    """The fill as the turn did it in Python before it moved to SQL (the parity oracle):
    labels when no block is placed, empty blocks take their header, one pass, names, then the
    dynamic memory; ends stripped, blank lines dropped."""
    if not any(key in template for key in BLOCKS):
        labels = ("【记忆单元】", "【记忆事件】", "【角色参考语料】")
        sections = (f"{a}\n{b}" for a, b in zip(labels, BLOCKS, strict=True))
        template = "\n".join([template, *sections])
    values = dict(zip(BLOCKS, blocks, strict=True)) | {"{{dynamic_memory}}": dynamic} | names
    for key, value in values.items():
        if not value.strip():
            headed = rf"(?m)^[ \t]*(?:#[^\n]*|[^\n]*[】：:])[ \t]*\n[ \t]*{re.escape(key)}[ \t]*$"
            template = re.sub(headed, "", template)
    pattern = re.compile("|".join(re.escape(key) for key in values))
    text = pattern.sub(lambda match: values[match.group(0)], template).strip()
    return "\n".join(line for line in text.split("\n") if line.strip())


TEMPLATES = [
    "你叫{{char}}，进行角色扮演",
    "",
    "你是{{char}}。{{dynamic_memory}}记忆：{{character_memory_attributes}}",
    "【角色设定】\n{{character_memory_attributes}}\n【经历】\n{{character_memory_event}}\n"
    "<style>\n{{character_dialogue_style}}\n</style>",
    "# 记忆\n  {{dynamic_memory}}  \n## 事件：\n{{character_memory_event}}\n\n\n{{user}}在等你",
    "  {{character_dialogue_style}}\n{{user}}与{{char}}：\n{{dynamic_memory}}\n",
]


def recalled_prompts(db=None) -> list[tuple]:
    from rolemem import CharacterMemory

    session = CharacterMemory(db, character_id="qiyu").session("prompt")
    answers = []
    for template in TEMPLATES:
        for text in ("今天画画时你好温柔", "嗯"):  # blocks, and hardly any
            result = session.recall(
                text,
                {"intimacy": 2, "scene": "studio"},
                user_name="木木",
                char_name="{{user}}祁煜",  # a name is never substituted again
                template=template,
                dry_run=True,
            )
            answers.append((template, result))
    return answers


def test_the_recall_statement_fills_the_template_as_the_turn_did():
    for template, result in recalled_prompts():
        blocks = (result.attributes, result.events, result.dialogue_style)
        names = {"{{user}}": "木木", "{{char}}": "{{user}}祁煜"}
        assert result.system_prompt == reference_prompt(template, blocks, names, "")
        expected = reference_prompt(template, blocks, names, "前情提要：\n昨天:去了海边")
        if result.prompt_around_dynamic is None:
            assert "{{dynamic_memory}}" not in template
            assert expected == result.system_prompt
        else:
            before, after = result.prompt_around_dynamic
            assert before + "前情提要：\n昨天:去了海边" + after == expected


def test_postgresql_fills_the_template_as_duckdb(postgres_url):
    from .conftest import demo_database

    url = demo_database(postgres_url, "rules_prompts")

    def answers(db):
        return [
            (r.system_prompt, r.prompt_around_dynamic, r.attributes)
            for _, r in recalled_prompts(db)
        ]

    assert answers(url) == answers(None)


# values blank to both engines alike: ASCII blanks and the full-width space, whatever
# PostgreSQL's collation makes of \\s
BLANKS = [" ", "\t", "\v", "\u3000", " \u3000\v", "内容", "\u3000内容\v", "v", "t"]


def filled_and_tidied(run, engine: str) -> list[tuple[str, str, str | None]]:
    """Macros fill_prompt_template (a header above a value), tidy_prompt_lines (a value
    between blank lines) and blank_as_null over each of BLANKS, rendered for `engine` and run
    by `run(sql, params)` there."""
    answers = []
    for value in BLANKS:
        [(filled, tidied, kept)] = run(
            "select "
            + render_macro(
                "fill_prompt_template",
                "cast($template as varchar)",
                (("'{{x}}'", "cast($value as varchar)"),),
                engine=engine,
            )
            + ", "
            + render_macro("tidy_prompt_lines", "cast($text as varchar)", engine=engine)
            + ", "
            + render_macro("blank_as_null", "cast($value as varchar)", engine=engine),
            {"template": "【经历】\n{{x}}\n尾", "value": value, "text": f"{value}\n\n尾{value}"},
        )
        answers.append((filled, tidied, kept))
    return answers


def test_blank_is_the_same_to_both_engines(postgres_url):
    """A value of only full-width spaces or a vertical tab is blank on both engines: its header
    goes (fill_prompt_template), a prompt's ends lose it (tidy_prompt_lines), it is no value
    (blank_as_null)."""
    from .conftest import fresh_database

    duck = duckdb.connect()
    expected = filled_and_tidied(lambda sql, params: duck.execute(sql, params).fetchall(), "duckdb")
    assert expected == [("\n尾", "尾", None)] * 5 + [
        ("【经历】\n内容\n尾", "内容\n尾内容", "内容"),
        ("【经历】\n\u3000内容\v\n尾", "内容\v\n尾\u3000内容", "\u3000内容\v"),
        ("【经历】\nv\n尾", "v\n尾v", "v"),  # letters, not the escapes' characters
        ("【经历】\nt\n尾", "t\n尾t", "t"),
    ]
    with PostgresEngine(fresh_database(postgres_url, "rules_blank")) as engine:
        assert filled_and_tidied(engine.run, "postgres") == expected


def test_no_python_substitutes_a_placeholder():
    """The `{{…}}` fills are SQL (macros fill_prompt_template, fill_name_placeholders): no
    Python module replaces one but their written-out copies, each held equal to its macros by
    a parity test: text.names (fill_name_placeholders, read by dynamic_memory.prompt_texts,
    turn.token_counts and character_memory.recall_rows: test_prompt_texts_in_python,
    test_token_counts_in_python, test_character_recall_in_python),
    and character_memory.prompt_fill, which replaces the placeholders it is given
    (test_prompt_fill_in_python)."""
    substitution = re.compile(r"""(\.replace\(|\.sub\(|re\.sub\()[^)\n]*\{\{""")
    found = [p.name for p, text in python_sources().items() if substitution.search(text)]
    assert found == ["names.py"]
    assert "{{" not in (PACKAGE / "turn" / "companion.py").read_text(encoding="utf-8")
