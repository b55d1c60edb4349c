"""The one migrations module (rolemem.schema.migrations): a store made by an older rolemem gets
what a step adds, once, in order, when it is opened; a store opened again runs nothing; on
DuckDB and PostgreSQL, processes opening one store together run a step once."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator

import duckdb
import psycopg
import pytest

from rolemem.dynamic_memory import DynamicMemory
from rolemem.engines.postgres_setup import init_database, migrate_database
from rolemem.engines.sqlalchemy_engines import engine_for
from rolemem.schema.memory import MEMORY_TABLES
from rolemem.schema.migrations import STEPS, migrate
from rolemem.schema.store import create_all, create_memory_tables
from rolemem.text.postings import postings

from .conftest import fresh_database

NAMES = [step.name for step in STEPS]
# the steps of tables a store made by create_all or init-db holds (the seeds' tables come when
# memory first opens it)
MADE = [step.name for step in STEPS if "time_expressions" not in step.tables]
RECORDS = "select name, count(*) from rolemem_migration group by name order by name"


def _older_loop_state(con: duckdb.DuckDBPyConnection) -> None:
    """memory_loop_state as a store from before the back-off had it, the step not recorded
    (DuckDB drops no column an index depends on: the table is made again without it)."""
    con.execute("create table older as select * exclude (next_attempt_at) from memory_loop_state")
    con.execute("drop table memory_loop_state")
    con.execute("alter table older rename to memory_loop_state")
    con.execute("delete from rolemem_migration where name = 'model_columns'")


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> set[str]:
    return {row[0] for row in con.execute(f"describe {table}").fetchall()}


def _recorded(engine) -> set[str]:
    with engine.connect() as connection:
        return {
            name for (name,) in connection.exec_driver_sql("select name from rolemem_migration")
        }


def test_a_new_duckdb_store_records_every_step_once(tmp_path):
    path = str(tmp_path / "new.duckdb")
    DynamicMemory(path, embedder=None).close()
    with duckdb.connect(path) as con:
        assert con.execute(RECORDS).fetchall() == sorted((name, 1) for name in NAMES)
    engine = engine_for(path)
    assert migrate(engine) == []  # opened again: nothing runs
    engine.dispose()


def test_an_older_duckdb_store_gets_a_steps_column_back_once_on_open(tmp_path):
    path = str(tmp_path / "older.duckdb")
    DynamicMemory(path, embedder=None).close()
    with duckdb.connect(path) as con:
        _older_loop_state(con)
        assert "next_attempt_at" not in _columns(con, "memory_loop_state")
    DynamicMemory(path, embedder=None).close()
    with duckdb.connect(path) as con:
        assert "next_attempt_at" in _columns(con, "memory_loop_state")
        assert con.execute(RECORDS).fetchall() == sorted((name, 1) for name in NAMES)
    engine = engine_for(path)
    assert migrate(engine) == []
    engine.dispose()


def test_steps_run_in_order_and_wait_for_the_tables_they_change(tmp_path):
    """A store of the game's tables only: the steps up to the first that needs a memory table
    beside `line` are done (those of no existing table recorded without running); that one and
    the later ones wait, in order, for the memory tables. Every record gone: all run, in
    STEPS' order."""
    engine = engine_for(str(tmp_path / "game.duckdb"))
    create_all(engine)
    recorded = _recorded(engine)
    waiting = NAMES.index("extracted_lines_backfill")
    assert recorded == set(NAMES[:waiting])
    assert migrate(engine) == []  # still waiting, nothing run twice
    create_memory_tables(engine)
    recorded = _recorded(engine)
    assert recorded == set(NAMES)
    with engine.begin() as connection:
        connection.exec_driver_sql("delete from rolemem_migration")
    assert migrate(engine) == MADE
    assert migrate(engine) == []
    engine.dispose()


def test_a_store_seeded_before_gets_the_time_words_added_since_once(tmp_path):
    """Rows of the packaged seed time_expressions that a store seeded before lacks are added
    once; a row the store holds stays as it is, edited or not."""
    path = str(tmp_path / "seeded.duckdb")
    DynamicMemory(path, embedder=None).close()
    with duckdb.connect(path) as con:
        count = con.execute("select count(*) from time_expressions").fetchone()
        con.execute("delete from time_expressions where expression in ('June', '10月')")
        con.execute("update time_expressions set days = 2 where expression = '国庆'")
        con.execute("delete from rolemem_migration where name = 'time_expression_rows'")
    DynamicMemory(path, embedder=None).close()
    with duckdb.connect(path) as con:
        assert con.execute("select count(*) from time_expressions").fetchone() == count
        assert con.execute(
            "select unit, month_number, days from time_expressions "
            "where expression in ('June', '10月', '国庆') order by expression"
        ).fetchall() == [
            ("month_of_year", 10, None),  # 10月
            ("month_of_year", 6, None),  # June
            ("annual_date", 10, 2),  # 国庆, as edited
        ]
        assert con.execute(RECORDS).fetchall() == sorted((name, 1) for name in NAMES)


def test_a_game_database_read_by_the_memory_builder_gets_its_columns(tmp_path):
    """A game's own DuckDB file with the spec's save and line only (no role table): the
    history it is read through gets the columns rolemem reads, by the same steps."""
    from rolemem.memory_builder.history import refresh_history

    con = duckdb.connect(str(tmp_path / "game.duckdb"))
    con.execute("create table save (id bigint primary key, name varchar, last_message_id bigint)")
    con.execute(
        "create table line (id bigint primary key, content varchar, attribute varchar, "
        "role_id bigint, script_role_id varchar, display_name varchar, save_id bigint, "
        "parent_line_id bigint, original_emotion varchar, predicted_emotion varchar, "
        "tts_content varchar, action_content varchar, audio_file varchar)"
    )
    con.execute("insert into save values (1, 's', 1)")
    con.execute("insert into line (id, content, attribute, save_id) values (1, '你好', 'user', 1)")
    assert refresh_history(con) == 1
    assert {"user_id", "scene", "present_role_ids"} <= _columns(con, "line")
    assert {"user_id", "user_name", "forked_from_line_id"} <= _columns(con, "save")
    assert "role" not in {row[0] for row in con.execute("show tables").fetchall()}
    assert con.execute(
        "select count(*) from rolemem_migration where name = 'model_columns'"
    ).fetchone() == (1,)


@pytest.fixture
def older_postgres(postgres_url):
    """A PostgreSQL store made by `init-db`, then made older: memory_loop_state without the
    back-off's column, the step that adds it not recorded."""
    url = fresh_database(postgres_url, "rolemem_migrations")
    init_database(url)
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("alter table memory_loop_state drop column next_attempt_at")
        con.execute("delete from rolemem_migration where name = 'model_columns'")
    return url


def _postgres_state(url: str) -> tuple[list[tuple[str, int]], bool]:
    with psycopg.connect(url, autocommit=True) as con:
        records = con.execute(RECORDS).fetchall()
        column = con.execute(
            "select count(*) from information_schema.columns "
            "where table_name = 'memory_loop_state' and column_name = 'next_attempt_at'"
        ).fetchone()
    return records, column == (1,)


def test_an_older_postgres_store_gets_a_steps_column_back_once_on_init(older_postgres):
    assert _postgres_state(older_postgres) == (
        sorted((name, 1) for name in NAMES if name != "model_columns"),
        False,
    )
    init_database(older_postgres)
    assert _postgres_state(older_postgres) == (sorted((name, 1) for name in NAMES), True)
    assert migrate_database(older_postgres) == []  # opened again: nothing runs


def test_a_postgres_store_from_before_the_erasing_mark_gets_it_on_init(postgres_url):
    """save.erasing (a save being erased reads as gone): added by its own step to a store
    made before it, its saves kept."""
    url = fresh_database(postgres_url, "rolemem_migrations_erasing")
    init_database(url)
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("insert into save (id, user_id) values (7, 'mumu')")
        con.execute("alter table save drop column erasing")
        con.execute("delete from rolemem_migration where name = 'save_erasing'")
    assert migrate_database(url) == ["save_erasing"]
    with psycopg.connect(url, autocommit=True) as con:
        assert con.execute("select id, erasing from save").fetchall() == [(7, None)]


def test_processes_opening_an_older_postgres_store_together_run_a_step_once(older_postgres):
    """Four openers at once (each its own engine and connection, as processes have): the
    advisory lock lets one run the step; the others find it recorded."""
    ran: list[list[str]] = []
    start = threading.Barrier(4)

    def open_store() -> None:
        start.wait()
        ran.append(migrate_database(older_postgres))

    openers = [threading.Thread(target=open_store) for _ in range(4)]
    for opener in openers:
        opener.start()
    for opener in openers:
        opener.join()
    assert sorted(ran) == [[], [], [], ["model_columns"]]
    assert _postgres_state(older_postgres) == (sorted((name, 1) for name in NAMES), True)


def test_opening_a_postgres_store_migrates_it(older_postgres):
    """The service's open (DynamicMemory over the engine) applies what init-db would."""
    from rolemem.engines import PostgresEngine

    with PostgresEngine(older_postgres, max_size=2) as engine:
        DynamicMemory(engine=engine, embedder=None).close()
    assert _postgres_state(older_postgres) == (sorted((name, 1) for name in NAMES), True)


def test_init_db_on_a_games_rows_moves_the_sequences_past_their_ids(postgres_url):
    """A game that wrote its roles, saves and lines with ids of its own: after `init-db` the
    next keys the sequences hand out are past them (docs/decisions/server-ids.md)."""
    url = fresh_database(postgres_url, "rolemem_game_ids")
    init_database(url)
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("insert into role (id, name) values (7, '祁煜')")
        con.execute("insert into save (id, name, user_id) values (40, 's', 'mumu')")
        con.execute(
            "insert into line (id, content, attribute, role_id, save_id, user_id) "
            "values (900, '你好', 'user', 7, 40, 'mumu')"
        )
    init_database(url)
    with psycopg.connect(url, autocommit=True) as con:
        nexts = [
            con.execute(f"select nextval('{sequence}')").fetchone()[0]
            for sequence in ("role_id_seq", "save_id_seq", "line_id_seq")
        ]
    assert nexts == [8, 41, 901]
    init_database(url)  # never moved back, nor on again past a value handed out
    with psycopg.connect(url, autocommit=True) as con:
        assert con.execute("select nextval('line_id_seq')").fetchone() == (902,)


def test_every_step_runs_on_postgres_in_order(postgres_url):
    """Every record gone from a PostgreSQL store holding an event: every step runs, in STEPS'
    order, on PostgreSQL's SQL (the event's postings recomputed by today's words), once."""
    url = fresh_database(postgres_url, "rolemem_every_step")
    init_database(url)
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(
            "insert into memory_event (id, scope, agent_id, user_id, description, keywords, "
            "importance, feedback, strength, recall_count, token_count, created_at) values "
            "(1, 'user', 'qiyu', 'mumu', '木木在读侦探小说', '[\"Outdoor\"]', 0.5, 0.5, 1, 0, 99, "
            "now())"
        )
        con.execute("delete from rolemem_migration")
    assert migrate_database(url) == MADE
    assert migrate_database(url) == []
    with psycopg.connect(url, autocommit=True) as con:
        terms = con.execute(
            "select term, description_count, keyword_count, tag_count, user_id "
            "from memory_event_term order by term"
        ).fetchall()
        (tokens,) = con.execute("select token_count from memory_event").fetchone()
    assert ("侦探", 1, 0, 0, "mumu") in terms and ("outdoor", 0, 2, 1, "mumu") in terms
    assert tokens == sum(d + k for _, d, k, _, _ in terms)


def test_init_db_on_a_games_duckdb_rows_moves_the_sequences_past_their_ids(tmp_path):
    """The same on a DuckDB file (whose sequences cannot be set: drawn past the ids)."""
    from rolemem.cli import main

    path = str(tmp_path / "game.duckdb")
    assert main(["init-db", "--db", path]) == 0
    with duckdb.connect(path) as con:
        con.execute("insert into role (id, name) values (7, '祁煜')")
        con.execute("insert into save (id, name, user_id) values (40, 's', 'mumu')")
        con.execute(
            "insert into line (id, content, attribute, role_id, save_id, user_id) "
            "values (900, '你好', 'user', 7, 40, 'mumu')"
        )
    assert main(["init-db", "--db", path]) == 0
    assert main(["init-db", "--db", path]) == 0  # nor on again
    with duckdb.connect(path) as con:
        nexts = [
            con.execute(f"select nextval('{sequence}')").fetchone()[0]
            for sequence in ("role_id_seq", "save_id_seq", "line_id_seq")
        ]
    assert nexts == [8, 41, 901]


# a tag past keyword_length and more tags than max_keywords
_TAGS = json.dumps(["海" * 70, *(f"词{n}" for n in range(55))], ensure_ascii=False)
_EVENT = (
    "insert into {} (id, scope, agent_id, user_id, scene, place, description, keywords, "
    "importance, feedback, strength, recall_count, token_count, created_at) values ({}, '{}', "
    f"'qiyu', {{}}, '{'景' * 130}', '', '祁煜在海边作画', '{_TAGS}', 0.5, 0.5, 1, 0, 0, "
    "'2024-05-01 20:00:00')"
)
# memories as an older rolemem stored them (no limit on the Python API's writes, a line's
# scene kept whole), the step that fits them not recorded
_OLD_ROWS = [
    _EVENT.format("official_event", 901, "official", "null"),
    _EVENT.format("memory_event", 902, "user", "'mumu'"),
    "insert into official_entity (id, scope, agent_id, entity_name, entity_type, kind, keyword, "
    "description, strength, recall_count, created_at, updated_at) values (903, 'official', "
    f"'qiyu', '祁煜', '主体', '特殊实体属性', '{'职' * 70}', '是画家', 1, 0, "
    "'2024-05-01 20:00:00', '2024-05-01 20:00:00')",
    "insert into memory_fact (id, agent_id, user_id, subject, attribute, value, supersedes, "
    f"line_ids, created_at) values (904, 'qiyu', 'mumu', '{'阿' * 200}', '住址', '上海', "
    "'[]', '[]', '2024-05-01 20:00:00')",
    "delete from rolemem_migration where name = 'memory_limits'",
]


@pytest.fixture(params=["duckdb", "postgres"])
def old_rows(request, tmp_path) -> Iterator[DynamicMemory]:
    """A store holding memories past today's limits, written raw as an older rolemem wrote
    them; then opened."""
    if request.param == "duckdb":
        path = str(tmp_path / "old.duckdb")
        DynamicMemory(path, embedder=None).close()
        with duckdb.connect(path) as con:
            for statement in _OLD_ROWS:
                con.execute(statement)
        memory = DynamicMemory(path, embedder=None)
    else:
        from rolemem.engines import PostgresEngine

        url = fresh_database(request.getfixturevalue("postgres_url"), "rolemem_old_rows")
        init_database(url)
        with psycopg.connect(url, autocommit=True) as con:
            for statement in _OLD_ROWS:
                con.execute(statement)
        engine = PostgresEngine(url, max_size=2)
        memory = DynamicMemory(engine=engine, embedder=None)
    yield memory
    memory.close()
    if request.param == "postgres":
        engine.close()


def test_memories_stored_past_todays_limits_are_fitted_once_then_edit_and_round_trip(old_rows):
    """Opened, the store brings them within the limits once (texts cut, a blank place null, an
    event's first 50 tags kept): an event's text edits (the whole event is checked again),
    the official memories' export imports, and a fact changes (only its value is checked)."""
    memory = old_rows
    fitted = ["海" * 64, *(f"词{n}" for n in range(49))]
    events = memory.list_events(agent_id="qiyu", user_id="mumu")
    assert [(e["scene"], e["place"], e["keywords"]) for e in events] == [("景" * 128, None, fitted)]
    edited = memory.update_event(902, description="祁煜在海边画木木")
    [event] = memory.list_events(agent_id="qiyu", user_id="mumu")
    assert (event["id"], event["description"], event["keywords"]) == (
        edited,
        "祁煜在海边画木木",
        fitted,
    )
    # the fitted event's postings are its fitted text's and tags'
    terms = memory.store.run("select term from official_event_term where event_id = 901", {})
    assert sorted(term for (term,) in terms) == sorted(postings("祁煜在海边作画", fitted)["terms"])
    exported = memory.export_official("qiyu")
    assert [e["keyword"] for e in exported["entities"]] == ["职" * 64]
    assert [(e["scene"], e["place"], e["keywords"]) for e in exported["events"]] == [
        ("景" * 128, None, fitted)
    ]
    other = DynamicMemory(duckdb.connect(), embedder=None)
    assert other.import_official(json.loads(json.dumps(exported))) == (1, 1)
    assert other.export_official("qiyu") == exported
    changed = memory.change_fact(user_id="mumu", fact_id=904, value="北京")
    assert memory.store.run(
        "select subject, value from memory_fact where id = $id", {"id": changed}
    ) == [("阿" * 200, "北京")]
    records = memory.store.run(
        "select count(*) from rolemem_migration where name = 'memory_limits'", {}
    )
    assert records == [(1,)]


def test_tags_an_older_version_stored_in_another_shape_never_keep_a_store_closed(tmp_path):
    """A number among the tags is read as its text, one text as one tag, anything else as
    none: the step fits them and the store opens (a step that raised would keep it closed on
    every open)."""
    path = str(tmp_path / "tags.duckdb")
    DynamicMemory(path, embedder=None).close()
    odd = {905: '[2020, "海边"]', 906: '"海边"', 907: '{"a": 1}'}
    with duckdb.connect(path) as con:
        for event_id, tags in odd.items():
            con.execute(
                _EVENT.format("memory_event", event_id, "user", "'mumu'").replace(_TAGS, tags)
            )
        con.execute("delete from rolemem_migration where name = 'memory_limits'")
    with DynamicMemory(path, embedder=None) as memory:
        events = memory.list_events(agent_id="qiyu", user_id="mumu")
        assert {e["id"]: e["keywords"] for e in events} == {
            905: ["2020", "海边"],
            906: ["海边"],
            907: [],
        }


def test_a_games_own_sqlmodel_table_is_not_a_memory_table():
    """A game defining its SQLModel tables before rolemem's (the same metadata): its table is
    neither made, dropped nor checked as one of rolemem's."""
    script = (
        "from sqlmodel import Field, SQLModel\n"
        "class GamePlayer(SQLModel, table=True):\n"
        "    id: int | None = Field(default=None, primary_key=True)\n"
        "from rolemem.schema.memory import MEMORY_TABLES\n"
        "print(sorted(table.name for table in MEMORY_TABLES))\n"
    )
    found = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert "gameplayer" not in found
    assert found.strip() == str(sorted(table.name for table in MEMORY_TABLES))
