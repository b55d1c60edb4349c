"""macros/ by purpose, as dbt-utils keeps them, and the SQL they render linted per engine.

sqlfluff alone reads a dispatched macro as `null` (tests/sqlfluff/adapter.py), so a macro's own
SQL is linted here after rolemem renders it: DuckDB's text as the Python path runs it on DuckDB,
and PostgreSQL's as the engine sends it (rendered with the postgres dispatch, then transpiled).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from sqlfluff.core import FluffConfig, Linter

from rolemem.engines.postgres import transpile
from rolemem.sql.project import ENGINES, project_dir, render_macro, write_sql

from .conftest import REPO

MACROS = REPO / "macros"
FOLDERS = ("cross_db", "rules", "setup", "writes")
_DEFINED = re.compile(r"\{%-?\s*macro\s+(\w+)\s*\(")
_IMPLEMENTATION = re.compile(r"^(duckdb|postgres|citus|default)__(\w+)$")

# Arguments a macro that takes some is rendered with: names rolemem passes (tables, columns)
# and, for expression macros, columns of the one-row relation `sample` they are selected from.
_VECTORS = ("embedding", "context_embedding")
WRITE_ARGUMENTS: dict[str, tuple[object, ...]] = {
    "append_columns": ("recall_stopwords", ("word", "reason")),
    "archive_memories": ("memory_event", (("id", None), ("created_at", "varchar"))),
    "archive_facts": ((("id", None), ("created_at", "varchar")),),
    "backfill_event_lines": ("events",),
    "create_table_from_query": ("memory_messages", "select save.id as save_id from save"),
    "create_verdict_cache": ("verdicts",),
    "draw_ids": ("memory_event_id_seq",),
    "drop_table_if_exists": ("memory_messages",),
    "delete_all_rows": ("recall_stopwords",),
    "delete_character_rows": ("character_events",),
    "lock_unpinned_memories": ("memory_event",),
    "move_sequence_past_keys": ("memory_event_id_seq", (("memory_event", "id"),)),
    "delete_memories": ("memory_event_term", "event_id"),
    "delete_player_agent_rows": ("memory_archive",),
    "delete_player_rows": ("memory_loop_state",),
    "delete_resumed_messages": ("resumed_targets",),
    "delete_save_rows": ("memory_event_term",),
    "evict_cached_verdicts": ("int_recall_context_verdicts",),
    "fill_event_vectors": (_VECTORS,),
    "fill_missing_owners": ("line", "save_id", "save", True),
    "insert_config_rows": ("character_events", (("character_id", "varchar"), ("cond", "json"))),
    "insert_event_vectors": (_VECTORS,),
    "insert_memory_events": ("memory_event",),
    "insert_from_query": ("memory_messages", "select save.id as save_id from save"),
    "insert_line": (("content", "attribute"),),
    "log_recalls": ((("event_id", "bigint"), ("score", "double")),),
    "record_batched_recalls": ("memory_event",),
    "record_recalls": ("memory_entity",),
    "replace_temp_table": ("walked", "select save.id as save_id from save"),
    "update_memory_fields": ("memory_event", ("strength", "is_pinned")),
}
# macros of the other folders that render SQL on their own: an expression (selected from
# `sample`), a join (after `from sample`) or a whole query
EXPRESSIONS: dict[str, tuple[object, ...]] = {
    "arg_max": ("sample.a", "sample.b"),
    "player_filter": ("sample.a",),
    "arg_min": ("sample.a", "sample.b"),
    "blank_as_null": ("sample.a",),
    "calendar_day_start": ("sample", "sample.now", "sample.year", "1"),
    "cosine_similarity": ("sample.a", "sample.b"),
    "empty_list_of_objects": (),
    "fill_name_placeholders": ("sample.a", "sample.b", "sample.c"),
    "format_decimal": ("sample.a", 4),
    "format_memory_time": ("sample.a", "sample.now"),
    "format_timestamp": ("sample.a", "%Y-%m-%d %H:%M"),
    "last_non_null": ("sample.a", "sample.b", "sample.c"),
    "in_few_rows": ("sample.a", "select other.id from other"),
    "json_array_elements": ("sample.a",),
    "json_elements": ("sample.a",),
    "json_field": ("sample.a", "name"),
    "json_field_text": ("sample.a", "name"),
    "json_scalar_number": ("sample.a",),
    "json_scalar_text": ("sample.a",),
    "json_text": ("sample.a",),
    "json_text_list": ("sample.a",),
    "json_type_is": ("sample.a", "number"),
    "json_type_name": ("sample.a",),
    "list_has": ("sample.a", "sample.b"),
    "group_covers": ("sample.a", "sample.b", "sample.c"),
    "lists_overlap": ("sample.a", "sample.b"),
    "is_witnessed": ("sample", "sample", "sample"),
    "says_presence": ("sample",),
    "list_prepend": ("sample.a", "sample.b"),
    "list_of_objects": ((("name", "sample.a"), ("kind", "sample.b")), "sample.c"),
    "list_of_rows": ("sample", "sample.a"),
    "list_text": ("sample.a",),
    "memory_length": (),
    "keyword_length": (),
    "max_keywords": (),
    "name_length": (),
    "percentile": ("sample.a", 0.5),
    "rolemem_raise": ("sample.a",),
    "round_to": ("sample.a", 2),
    "roulette_hash": ("sample.a", "sample.b"),
    "row_as_json": ("sample", (("a", None), ("b", "varchar"))),
    "seconds_between": ("sample.a", "sample.b"),
    "regexp_group": ("sample.a", "'([0-9]+)'"),
    "series_values": ("1", "sample.a"),
    "memory_target_key": ("sample.a", "sample.b"),
    "memory_placeholder": ("user",),
    "label_memory_blocks": ("sample.a",),
    "fill_prompt_template": ("sample.a", (("sample.b", "sample.c"),)),
    "tidy_prompt_lines": ("sample.a",),
    "prompt_marks_removed": ("sample.a",),
    "prompt_token_count": ("sample.a",),
    "memory_event_line": ("sample.a", "sample.b", "sample.c"),
    "memory_entity_line": ("sample.a", "sample.b", "sample.c"),
    "memory_entity_kind_order": ("sample.a",),
    "dynamic_memory_text": ("sample.a", "sample.b", "sample.c"),
    "is_history_stale": ("sample", "sample"),
}
# macros that render select columns of their own names
COLUMNS: dict[str, tuple[object, ...]] = {
    "time_expression_window": ("sample", "sample.now", "sample.year"),
    "inherited_presence": ("sample.a", "sample.b", "sample.c", "sample.d"),
    "memory_event_fields": ("sample", "sample"),
}
JOINS: dict[str, tuple[object, ...]] = {
    "anti_join": ("other", "other.id = sample.id"),
    "semi_join": ("other", "other.id = sample.id"),
}
QUERIES: dict[str, tuple[object, ...]] = {
    "evaluate_conditions": ("conditions", "condition_values", "contexts", "context_values"),
    "expand_recall_words": ("requests", "recall_stopwords", "association_words"),
    "find_chain_problems": ("steps",),
    "resolve_facts": ("facts", "query_id"),
    "newest_events_per_query": (
        "queries",
        "events",
        "memory_event",
        "query_chains",
        "hidden_batches",
    ),
    "walk_parent_chain": ("lines", "saves", "fork_points"),
    "read_recall_queue": (),
    "recall_queue_items": (),
    "read_unlock_matrix": (),
    "character_recall_answer": (True, True),
    "lone_query_scope": ("select * from memory_event", False),
    "last_observed_target": (),
    "memory_status_row": (),
    "seen_idempotency_key": (),
    "kept_webhook_deliveries": (),
    "merged_entity_saves": (),
    "store_table_names": (),
    "count_memories": (),
    "staged_memory_rows": ("memory_event", "official_event"),
    "union_official": ("memory_event", "official_event"),
    "prompt_from_lines": ("lines",),
    "recalled_event_descriptions": (),
    "save_tip_target": (),
    "save_forks": (),
    "save_lineage": (),
    "walked_save_lines": (),
    "stale_saves": (),
    "stored_history_tip": (),
    "are_saves_stale_or_forked": (),
    "appended_lines_walked": ("walk", True),
    "appended_chain_rows": (True,),
    "resumed_message_targets": (),
    "context_window_version": (),
    "loop_back_off": (),
    "loop_target_rows": ("memory_extracted_line", "user_id"),
    "bound_prompt_pieces": (),
    "bound_prompt_turn": (),
    "listed_fact_attributes": (),
    "bound_loop_observations": ({"save_id": "bigint", "role_id": "bigint"},),
    "save_branch_page": (),
    "save_speakers": (),
    "resumed_chain_lines": (),
    "stored_chain_lines": (("role_id", "content"),),
    "given_lines": (
        (
            ("positions", "line_position", "bigint"),
            ("ids", "line_id", "bigint"),
            ("present_role_lists", "given_present_role_ids", "varchar"),
            ("present_script_role_lists", "given_present_script_role_ids", "varchar"),
        ),
        True,
    ),
    "character_entry_counts": (),
    "character_entry_keys": (),
    "known_role_ids": (),
    "loaded_recall_entries": (),
    "stored_target_messages": (),
    "spanned_messages": (),
    "save_messages_or_problem": (),
    "bound_role_witness": (),
    "player_saves_page": (),
    "erased_saves_owners": (),
    "every_fork_point": (),
    "lineage_fork_points": (),
    "walked_saves": (),
    "saves_owner": (),
    "no_roles": (),
    "stored_save_chains": (),
    "saves_player_facts": (),
    "save_new_lines": (),
    "store_columns_found": (),
    "player_save_chains": (),
    "heard_player_facts": (),
    "owned_save_row": (),
    "forked_line_save": (),
    "player_line_count": (),
    "save_tree_line": (),
    "save_history_size": (),
    "save_line_position": (),
    "bound_memory_target": ("$save_user_name",),
    "player_memories_page": (),
    "player_source_saves": (),
    "player_has_facts": (),
    "player_fact": (),
    "event_descriptions_by_id": (),
    "event_postings_by_id": (),
    "archive_page": (),
    "stored_and_new_events": (
        "select event_id, agent_id, scope, user_id, created_at, description from memory_event",
    ),
    "owner_memories": ("memory_event",),
    "event_source_lines": (),
    "event_vectors_by_id": (
        ("context_embedding",),
        "context_embedding is not null",
    ),
    "reachable_events": (
        "select id, agent_id, scope, user_id, token_count, created_at from memory_event",
        True,
        "memory_event_embedding",
        "vectors.context_embedding is not null",
    ),
    "time_question_words": (),
    "time_words": (),
    "stored_embedding_type": (),
    "facts_on_chain": (),
    "character_knowledge_rows": (),
    "consolidable_entity_rows": (),
    "timeline_rows": (),
    "memory_in_scope": ("memory_event",),
    "recall_batch_holdings": (),
    "events_missing_context_vectors": (),
    "memory_event_fields_by_id": (),
}
# what renders no SQL of its own: a dbt hook (run_query at compile time), a clause, lists a
# caller splices, and PostgreSQL's function (DuckDB has error(); sqlfluff reads no plpgsql)
NOT_LINTED = {
    # DuckDB's `* replace`, run on a DuckDB store only (copied into PostgreSQL)
    "owners_filled",
    # the select compose appends to the recall's models, its per-query lists joined as
    # subqueries (ST05) and its aliases and references as the f-strings it came from wrote
    # them (AL05, AL09, RF01, RF03: to tidy); run by the recall tests on every engine
    "recall_answer",
    # PostgreSQL's index DDL (include, collations), run by the PostgreSQL tests
    "postgres_indexes",
    "require_app_tables",
    "row_lock",
    "player_key",
    "query_param_operators",
    "scored_event_columns",
    "is_event_in_scope",
    # joins whose columns only the caller's is_event_in_scope reads (linted in its models)
    "event_scope_joins",
    # linted where it is used, inside merge_memory_entity and reinforce_memory_event
    "strength_increment",
    "create_rolemem_raise",
    # dbt only: asks the database whether it is a Citus coordinator, renders no SQL
    "is_citus_build",
    # a character class spliced into its callers' patterns (linted in them)
    "blank_characters",
}


def _macro_files() -> dict[str, Path]:
    return {path.stem: path for path in sorted(MACROS.rglob("*.sql"))}


def _defined() -> dict[str, Path]:
    return {
        name: path
        for path in sorted(MACROS.rglob("*.sql"))
        for name in _DEFINED.findall(path.read_text(encoding="utf-8"))
    }


def _public() -> dict[str, Path]:
    return {name: path for name, path in _defined().items() if not _IMPLEMENTATION.match(name)}


def test_macros_live_in_folders_by_purpose():
    assert {path.name for path in MACROS.iterdir() if path.is_dir()} == set(FOLDERS)
    assert not list(MACROS.glob("*.sql")), "every macro belongs to a folder"
    for folder in FOLDERS:
        assert list((MACROS / folder).glob("*.sql")), folder


def test_one_public_macro_per_file_named_after_it():
    files: dict[Path, list[str]] = {}
    for name, path in _public().items():
        files.setdefault(path, []).append(name)
    assert {path: names for path, names in files.items() if names != [path.stem]} == {}
    assert set(files) == set(_macro_files().values())


def test_every_dispatch_has_a_default():
    defined = _defined()
    dispatched = {match[2] for name in defined if (match := _IMPLEMENTATION.match(name))}
    assert dispatched
    assert sorted(name for name in dispatched if f"default__{name}" not in defined) == []


def test_every_macro_is_documented():
    documented = {
        entry["name"]
        for path in MACROS.rglob("*.yml")
        for entry in yaml.safe_load(path.read_text(encoding="utf-8"))["macros"]
    }
    public = set(_public())
    assert sorted(public - documented) == []
    assert sorted(documented - public) == []


def test_no_macro_shadows_one_of_dbt():
    """A project macro of a dbt macro's name replaces it in every materialization (a
    `create_table_as` of ours broke `dbt run`)."""
    import dbt.include.duckdb
    import dbt.include.global_project
    import dbt.include.postgres

    folders = [
        Path(folder)
        for package in (dbt.include.global_project, dbt.include.duckdb, dbt.include.postgres)
        for folder in package.__path__
    ]
    theirs = {
        _IMPLEMENTATION.sub(r"\2", name)
        for folder in folders
        for path in folder.rglob("*.sql")
        for name in _DEFINED.findall(path.read_text(encoding="utf-8"))
    }
    assert sorted(set(_public()) & theirs) == []


def test_the_renderer_reads_every_folder():
    assert project_dir("macros") == MACROS
    for name in ("json_text", "fill_name_placeholders", "create_rolemem_raise", "insert_role"):
        assert render_macro(name, *EXPRESSIONS.get(name, ()), engine="postgres")


def test_every_rendered_macro_is_listed_here():
    """A new macro is linted (or said not to be) by being named above."""
    listed = {*WRITE_ARGUMENTS, *EXPRESSIONS, *COLUMNS, *JOINS, *QUERIES, *NOT_LINTED}
    writes = {name for name, path in _public().items() if path.parent.name == "writes"}
    assert sorted(set(_public()) - listed - writes) == []


def _config(engine: str) -> FluffConfig:
    """The repo's .sqlfluff for plain SQL (no templating: the text is rendered). sqlglot
    writes the PostgreSQL text on one line in upper case, subqueries where it moves them:
    layout, capitalisation and structure.subquery are its there, not ours."""
    # Citus is PostgreSQL's dialect (its macros are PostgreSQL's where it has none of its own)
    overrides = {"dialect": "duckdb" if engine == "duckdb" else "postgres", "templater": "raw"}
    if engine != "duckdb":
        excluded = FluffConfig.from_path(str(REPO)).get("exclude_rules")
        overrides["exclude_rules"] = f"{excluded},layout,capitalisation,structure.subquery"
    return FluffConfig.from_path(str(REPO), overrides=overrides)


_LINTERS = {engine: Linter(config=_config(engine)) for engine in ENGINES}
# a bound parameter is a value, linted as 0 (a null would read as `= null`): DuckDB's
# `$name`/`$1`, psycopg's `%(name)s` (the PostgreSQL engine's text, a literal % doubled)
_PARAMETER = {
    "duckdb": re.compile(r"\$\w+"),
    "postgres": re.compile(r"%\(\w+\)s"),
    "citus": re.compile(r"%\(\w+\)s"),
}


def _problems(sql: str, engine: str) -> list[str]:
    text = sql if engine == "duckdb" else transpile(sql)
    text = _PARAMETER[engine].sub("0", text)
    if engine != "duckdb":
        text = text.replace("%%", "%")
    result = _LINTERS[engine].lint_string(text.strip() + "\n")
    return [f"{v.rule_code()} line {v.line_no}: {v.desc()}" for v in result.violations]


# statements only ever run on a DuckDB connection: the write-time history's tables, the
# character library's private database, the verdict cache, the tests' synthetic dialogue
DUCKDB_ONLY = {
    "stored_embedding_type",
    # the embedded store's lone recall
    "lone_query_scope",
    "appended_chain_rows",
    # the seeds of the loop's private DuckDB connection
    "listed_fact_attributes",
    # a turn's prompt budget, on rolemem's private in-memory DuckDB whatever the store
    "bound_prompt_pieces",
    "bound_prompt_turn",
    "create_table_from_query",
    "create_verdict_cache",
    "delete_all_rows",
    "delete_resolved_facts",
    "drop_table_if_exists",
    "delete_resumed_messages",
    "evict_cached_verdicts",
    "extend_history_tip",
    "insert_from_query",
    "insert_synthetic_lines",
    "insert_synthetic_roles",
    "insert_synthetic_saves",
    "replace_temp_table",
    "resumed_message_targets",
}


def _writes() -> list[tuple[str, str]]:
    names = sorted(name for name, path in _public().items() if path.parent.name == "writes")
    return [
        (name, engine)
        for name in names
        for engine in ENGINES
        if engine == "duckdb" or name not in DUCKDB_ONLY
    ]


@pytest.mark.parametrize(("name", "engine"), _writes())
def test_write_statement_lints(name, engine):
    sql = write_sql(name, *WRITE_ARGUMENTS.get(name, ()), engine=engine)
    assert _problems(sql, engine) == [], sql


def _in_context(name: str, engine: str) -> str:
    if name in QUERIES:
        return render_macro(name, *QUERIES[name], engine=engine)
    if name in JOINS:
        join = render_macro(name, *JOINS[name], engine=engine)
        return f"select sample.id\nfrom sample\n{join}"
    if name in COLUMNS:
        return f"select\n{render_macro(name, *COLUMNS[name], engine=engine)}\nfrom sample"
    expression = render_macro(name, *EXPRESSIONS[name], engine=engine)
    return f"select {expression} as linted\nfrom sample"


@pytest.mark.parametrize(
    ("name", "engine"),
    [
        (name, engine)
        for name in sorted({*EXPRESSIONS, *COLUMNS, *JOINS, *QUERIES})
        for engine in ENGINES
        if engine == "duckdb" or name not in DUCKDB_ONLY
    ],
)
def test_rendered_macro_lints(name, engine):
    """A macro the models call, rendered alone: layout is the caller's (where it is placed
    sets its indent), every other rule applies."""
    sql = _in_context(name, engine)
    problems = [p for p in _problems(sql, engine) if not p.startswith(("LT", "RF04"))]
    assert problems == [], sql
