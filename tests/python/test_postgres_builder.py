"""The memory builder's models on PostgreSQL: the same model files, rendered with the postgres
dispatch macros and transpiled by sqlglot, give DuckDB's messages exactly."""

from __future__ import annotations

import random

import pytest

from rolemem import LineError, build_memory
from rolemem.testing.demo_data import spec_examples

from .test_rules import HOSTILE
from .test_spec_examples import EXAMPLE_1_RESULT, EXAMPLE_2_RESULT

NAMES = ["莱姆", "钦灵", "祁煜", None, "", "  "]
EMOTIONS = ["开心", "难过", None, "", "{惊}"]


def random_lines(rng: random.Random, count: int) -> list[dict]:
    """Lines as a game writes them: every attribute, speakers by id, script id or name, blank
    and absent optional fields, hostile text."""
    texts = ["你好", "嗯", "今天画画时你好温柔", *HOSTILE]
    lines = []
    for line_id in range(1, count + 1):
        attribute = rng.choice(["system", "user", "user", "assistant", "assistant", "assistant"])
        line = {"id": line_id, "attribute": attribute, "content": rng.choice(texts)}
        if attribute != "user" or rng.random() < 0.3:
            line["role_id"] = rng.choice([1, 2, 3, None])
            line["script_role_id"] = rng.choice(["1", "npc", None])
            line["display_name"] = rng.choice(NAMES)
        for field in ("original_emotion", "tts_content", "action_content"):
            if rng.random() < 0.4:
                line[field] = rng.choice(EMOTIONS if field == "original_emotion" else texts)
        lines.append(line)
    return lines


TARGETS = [
    {"role_id": 1},
    {"role_id": 2},
    {"script_role_id": "npc"},
    {"display_name": "钦灵"},
    {"role_id": 1, "context_emotion": False},
    {},
]


@pytest.mark.parametrize("name", ["example_1", "example_2"])
@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_spec_examples_equal_on_both_engines(postgres, name, target):
    lines = spec_examples()[name]
    assert build_memory(lines, engine=postgres, **target) == build_memory(lines, **target)


def test_random_histories_equal_on_both_engines(postgres):
    rng = random.Random(20261124)
    compared = 0
    for _ in range(60):
        lines = random_lines(rng, rng.randint(0, 24))
        for target in TARGETS:
            assert build_memory(lines, engine=postgres, **target) == build_memory(
                lines, **target
            ), (lines, target)
            compared += 1
    assert compared == 360


def test_the_spec_examples_on_postgres_as_printed(postgres, example_1, example_2):
    assert build_memory(example_1, display_name="钦灵", engine=postgres) == EXAMPLE_1_RESULT
    assert (
        build_memory(example_2, role_id=1, context_emotion=False, engine=postgres)
        == EXAMPLE_2_RESULT
    )


def test_an_unknown_attribute_is_the_same_line_error_on_postgres(postgres):
    lines = [{"id": 7, "attribute": "narrator", "content": "旁白"}]
    with pytest.raises(LineError) as on_duckdb:
        build_memory(lines)
    with pytest.raises(LineError) as on_postgres:
        build_memory(lines, engine=postgres)
    assert (
        str(on_postgres.value)
        == str(on_duckdb.value)
        == ("line 7 has unknown attribute 'narrator' (expected system, user or assistant)")
    )


def test_values_are_bound_never_spliced(postgres):
    text = "'); drop function rolemem_raise(text); -- %s %(x)s $1"
    lines = [{"id": 1, "attribute": "user", "content": text}]
    assert build_memory(lines, engine=postgres) == [{"role": "user", "content": text}]
    with pytest.raises(LineError, match="line 2 has unknown attribute 'bad'"):
        build_memory([{"id": 2, "attribute": "bad", "content": "x"}], engine=postgres)


def test_transpile_inlines_table_aliases_and_keeps_percent_literal():
    from rolemem.engines.postgres import transpile

    assert transpile(
        "with a as (select * from t), b as (select * from t where x like '%y'), "
        "c as materialized (select * from t) select * from a, b, c where a.k = $key"
    ) == (
        "WITH a AS NOT MATERIALIZED (SELECT * FROM t), "
        "b AS (SELECT * FROM t WHERE x LIKE '%%y'), "
        "c AS MATERIALIZED (SELECT * FROM t) SELECT * FROM a, b, c WHERE a.k = %(key)s"
    )


def test_transpile_for_citus_materializes_every_cte_of_a_read_only():
    from rolemem.engines.postgres import transpile

    # a read: its import CTEs read in place (a is t, the nested `select * from c` is c's
    # select), then every CTE left, nested ones too (Citus then ships no inlined copy of them)
    assert transpile(
        "with a as (select * from t), b as not materialized (select * from a where a.x = 1) "
        "select * from b, (with c as (select 1 as k) select * from c) as d, "
        "(with e as (select 2 as k) select k from e where k > 0) as f",
        materialize=True,
    ) == (
        "WITH b AS MATERIALIZED (SELECT * FROM t AS a WHERE a.x = 1) "
        "SELECT * FROM b, (SELECT 1 AS k) AS d, "
        "(WITH e AS MATERIALIZED (SELECT 2 AS k) SELECT k FROM e WHERE k > 0) AS f"
    )
    # a write, and a read with a writing CTE, keep theirs (Citus routes them as they are)
    for sql in (
        "with a as (select 1 as k) update t set x = 1 from a where t.k = a.k",
        "with a as (update t set x = 1 returning k), b as (select 2 as k) select * from a, b",
    ):
        assert transpile(sql, materialize=True) == transpile(sql)
        assert "MATERIALIZED" not in transpile(sql)


def test_transpile_reads_a_membership_filter_as_any():
    from rolemem.engines.postgres import transpile

    # a conjunct of WHERE or ON, or of an OR's branch there: `= ANY`, which an index serves;
    # anywhere else the CASE that keeps list_contains's false for a null-free miss (NOT of a
    # null would keep no row)
    assert transpile(
        "select list_contains($l, x) as has from t join u on u.k = t.k "
        "and list_contains($l, u.y) where (list_contains($l, t.z) and t.w = 1) "
        "and (t.s = 'a' or (t.s = 'b' and list_contains($l, t.u))) "
        "and not list_contains($l, t.v)"
    ) == (
        "SELECT CASE WHEN x IS NULL THEN NULL ELSE COALESCE(x = ANY(%(l)s), FALSE) END AS has "
        "FROM t JOIN u ON u.k = t.k AND u.y = ANY(%(l)s) "
        "WHERE (t.z = ANY(%(l)s) AND t.w = 1) "
        "AND (t.s = 'a' OR (t.s = 'b' AND t.u = ANY(%(l)s))) AND NOT CASE WHEN t.v IS NULL "
        "THEN NULL ELSE COALESCE(t.v = ANY(%(l)s), FALSE) END"
    )
