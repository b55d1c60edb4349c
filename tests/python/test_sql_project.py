"""The shared SQL parses as DuckDB and as PostgreSQL; `import rolemem` stays light."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import sqlglot
from sqlglot import exp

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
        *(
            {"recall_fusion": fusion, "recall_dense": dense, "recall_time_windows": window}
            for fusion in (None, "convex", "rrf")
            for dense in (True, False)
            for window in (True, False)
        ),
    ]
    for branch in branches:
        variables = {"context_emotion": True, **branch}
        tree = sqlglot.parse_one(render_model(model, SOURCES, variables), read=dialect)
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
