"""The shared SQL parses as DuckDB and as PostgreSQL; `import rolemem` stays light."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import sqlglot
from sqlglot import exp

from rolemem.sql.imports import inline_imports
from rolemem.sql.project import compose, model_paths, model_refs, render_model

SOURCES = {f"app.{table}": f"app.{table}" for table in ("line", "save", "role")}


@pytest.mark.parametrize("model", sorted(model_paths()))
@pytest.mark.parametrize("dialect", ["duckdb", "postgres"])
def test_every_model_parses(model, dialect):
    tables = set()
    # every branch a caller can pick: both ways of judging unlock verdicts
    # (int_recall_entries_evaluated), secondary keywords planned or not
    # (int_recall_entries_matched), and what dynamic recall plans for its batch (fusion,
    # dense signals, time window: int_memory_event_candidates, int_memory_events_scored)
    branches = [
        *({"judge_verdicts_per_turn": per_turn} for per_turn in (False, True)),
        *({"recall_secondary_keywords": secondary} for secondary in (False, True)),
        {"recall_time_answers": False},
        *(
            {"recall_fusion": fusion, "recall_dense": dense, "recall_time_windows": window}
            for fusion in (None, "convex", "rrf")
            for dense in (True, False)
            for window in (True, False)
        ),
    ]
    for branch in branches:
        variables = {"context_emotion": True, **branch}
        tree = sqlglot.parse_one(
            render_model(model, SOURCES, variables, engine=dialect), read=dialect
        )
        assert isinstance(tree, exp.Query)
        tables |= {table.name for table in tree.find_all(exp.Table)}
    assert set(model_refs(model)) <= tables


def test_the_chain_model_is_recursive_and_segments_use_lag():
    walked = render_model("int_lines_walked_to_root", SOURCES, {}).lower()
    assert "with recursive" in walked
    grouped = render_model("int_lines_grouped_into_messages", SOURCES, {}).lower()
    assert "lag(speaker_side) over by_position" in grouped


def test_import_is_light_and_never_loads_dbt():
    code = (
        "import sys, rolemem; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dbt', 'sqlmodel', 'sqlglot')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_relation_read_once_is_not_materialised_for_a_comment_naming_it():
    # stg_app__official_event_terms's comment names stg_app__memory_event_terms, which only the
    # union model reads: materialising it copied every term row of the player on every recall
    sql = compose(
        "int_memory_event_terms_with_official",
        {},
        "select * from int_memory_event_terms_with_official, int_memory_event_terms_with_official",
    )
    modes = dict(re.findall(r"^(\w+) (as materialized|as) \($", sql, flags=re.MULTILINE))
    assert {name: mode for name, mode in modes.items() if "event_terms" in name} == {
        "stg_app__memory_event_terms": "as",
        "stg_app__official_event_terms": "as",
        "int_memory_event_terms_with_official": "as materialized",
    }


def test_a_models_import_ctes_are_read_in_place():
    # DuckDB binds every CTE scope on every call: `events as (select * from x)` is read as
    # `x as events`, chains of them resolve, and `select * from final` ends in final's select
    model = (
        "with queries as (select * from int_q), events as (select * from ev), "
        "renamed as (select * from events), "
        "final as (select q.a, events.b from queries as q join renamed as events on true "
        "where exists (select 1 from events)) select * from final"
    )
    assert inline_imports(model) == (
        "SELECT q.a, events.b FROM int_q AS q JOIN ev AS events ON TRUE "
        "WHERE EXISTS(SELECT 1 FROM ev AS events)"
    )
    assert inline_imports(
        "with a as (select 1 as x), final as (select x from a) select * from final"
    ) == ("WITH a AS (SELECT 1 AS x) SELECT x FROM a")


@pytest.mark.parametrize(
    "model",
    [
        # the name is defined again inside: which one a reader means depends on its scope
        "with events as (select * from ev) "
        "select * from (with events as (select 2 as x) select x from events)",
        # an earlier CTE reads an outer relation of the name
        "with a as (select * from events), events as (select * from ev) select a.x from a, events",
        # a recursive walk reads itself
        "with recursive walk as (select * from line) select * from walk",
        # a select of final that does more than read it
        "with final as (select x from a) select * from final where x > 0",
    ],
)
def test_import_ctes_stay_where_reading_them_in_place_could_change_the_rows(model):
    assert inline_imports(model) == model


def test_a_composed_statement_has_no_import_ctes_left():
    sql = compose("int_memory_event_candidates", {}, "select * from int_memory_event_candidates")
    imports = [
        cte.alias
        for cte in sqlglot.parse_one(sql, read="duckdb").find_all(exp.CTE)
        if cte.alias != "int_memory_event_candidates"
        and isinstance(cte.this, exp.Select)
        and len(cte.this.expressions) == 1
        and isinstance(cte.this.expressions[0], exp.Star)
        and not cte.this.args.get("where")
        and not cte.this.args.get("joins")
        and isinstance(cte.this.args["from_"].this, exp.Table)
    ]
    assert imports == []


def test_a_narrowed_request_select_keeps_only_the_columns_something_reads():
    from rolemem.sql.request_rows import request_rows_sql

    rows = request_rows_sql(
        "query_id", {"agent_id": "varchar", "query_text": "varchar"}, "duckdb", {"rrf_k": "double"}
    )
    select = "select query_id, agent_id from int_memory_queries"
    narrowed = compose((), {"int_memory_queries": rows}, select, narrowed=["int_memory_queries"])
    assert narrowed == (
        "with\nint_memory_queries as (\n    select\n"
        "        unnest(cast($query_id as integer[])) as query_id,\n"
        "        unnest(cast($agent_id as varchar[])) as agent_id\n\n)\n" + select
    )
    # a name in a string or a comment keeps its column; the key stays, named or not
    quoted = "select 'a--b' || agent_id as x from int_memory_queries -- query_text"
    kept = compose((), {"int_memory_queries": rows}, quoted, narrowed=["int_memory_queries"])
    assert "as agent_id" in kept and "as query_text" in kept and "rrf_k" not in kept
    keyless = compose(
        (),
        {"int_memory_queries": rows},
        "select 1 from int_memory_queries",
        narrowed=["int_memory_queries"],
    )
    assert "as query_id" in keyless and "as agent_id" not in keyless
    # nothing narrowed unless asked, nor on another engine, nor a select of another shape
    assert "rrf_k" in compose((), {"int_memory_queries": rows}, select)
    assert "rrf_k" in compose(
        (), {"int_memory_queries": rows}, select, engine="postgres", narrowed=["int_memory_queries"]
    )
    other = "select * from queries_table"
    assert other in compose(
        (), {"int_memory_queries": other}, select, narrowed=["int_memory_queries"]
    )
