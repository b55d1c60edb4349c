"""A game's own PostgreSQL database: the game created `role`/`save`/`line` (the SQLModel schema)
and writes them; `build_memory_for_save` walks a save's chain there (the recursive CTE of
int_lines_chained_to_root, transpiled) and answers as DuckDB answers over the same rows."""

from __future__ import annotations

import duckdb
import psycopg
import pytest
import sqlalchemy as sa
from sqlmodel import SQLModel

from rolemem import ChainError, SaveNotFoundError, build_memory_for_save
from rolemem.memory_builder import history
from rolemem.schema import Line, Role, Save, create_all

from .conftest import plan_with_seq_scans_off
from .synthetic_dialogue import generate_dialogue

# beyond the generated saves 1-4: a fork, a regenerated reply, a cycle, a missing tip
EXTRA_SAVES = [
    (5, "fork of save 1", 10_002, 4),
    (6, "cycle", 10_011, None),
    (7, "missing tip", 99_999, None),
]
EXTRA_LINES = [
    # save 5 forks save 1 after its 4th line and plays on
    (10_001, 5, 4, "user", "换个话题吧", None, None, None),
    (10_002, 5, 10_001, "assistant", "好呀", 1, "开心", None),
    # a regenerated reply: a sibling of save 5's last line that no tip points at
    (10_003, 5, 10_001, "assistant", "不要", 1, None, "摇头"),
    # the cycle is closed after both lines exist (the game's foreign key checks each insert)
    (10_010, 6, None, "user", "绕圈", None, None, None),
    (10_011, 6, 10_010, "assistant", "圈", 1, None, None),
]
CLOSE_CYCLE = "update line set parent_line_id = 10011 where id = 10010"
LINE_COLUMNS = (
    "id",
    "save_id",
    "parent_line_id",
    "attribute",
    "content",
    "role_id",
    "original_emotion",
    "action_content",
)


@pytest.fixture(scope="module")
def game(tmp_path_factory, postgres_url):
    """The same rows in a DuckDB file and in the game's PostgreSQL tables."""
    path = str(tmp_path_factory.mktemp("game") / "game.duckdb")
    with duckdb.connect(path) as con:
        generate_dialogue(con, saves=4, lines_per_save=30, seed=11)
        con.execute("alter table save add column if not exists forked_from_line_id bigint")
        con.executemany(
            "insert into save (id, name, last_message_id, forked_from_line_id) values (?, ?, ?, ?)",
            EXTRA_SAVES,
        )
        con.executemany(
            f"insert into line ({', '.join(LINE_COLUMNS)}) values "
            f"({', '.join('?' * len(LINE_COLUMNS))})",
            EXTRA_LINES,
        )
        tables = {
            table: (
                columns := [
                    row[0]
                    for row in con.execute(
                        "select column_name from duckdb_columns() where table_name = ? "
                        "order by column_index",
                        [table],
                    ).fetchall()
                ],
                con.execute(f"select {', '.join(columns)} from {table} order by id").fetchall(),
            )
            for table in ("role", "save", "line")
        }
        con.execute(CLOSE_CYCLE)
    engine = sa.create_engine(postgres_url.replace("postgresql://", "postgresql+psycopg://"))
    tables_of_game = [Role.__table__, Save.__table__, Line.__table__]
    SQLModel.metadata.drop_all(engine, tables=tables_of_game)
    SQLModel.metadata.create_all(engine, tables=tables_of_game)
    engine.dispose()
    with psycopg.connect(postgres_url, autocommit=True) as con, con.cursor() as cur:
        for table, (columns, rows) in tables.items():
            model = {"role": Role, "save": Save, "line": Line}[table]
            known = [name for name in columns if name in model.__table__.columns]
            picks = [columns.index(name) for name in known]
            cur.executemany(
                f"insert into {table} ({', '.join(known)}) values "
                f"({', '.join(['%s'] * len(known))})",
                [[row[index] for index in picks] for row in rows],
            )
        cur.execute(CLOSE_CYCLE)
    return path


TARGETS = [
    {"role_id": 1},
    {"role_id": 2},
    {"display_name": "钦灵"},
    {"role_id": 1, "context_emotion": False},
]


@pytest.mark.parametrize("save_id", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_a_save_reads_the_same_on_the_games_postgresql(game, postgres, save_id, target):
    on_postgres = build_memory_for_save(postgres, save_id, **target)
    assert on_postgres == build_memory_for_save(game, save_id, **target)
    if "role_id" in target and save_id != 5:
        assert on_postgres, "each generated save has lines for both roles"


def test_a_fork_reads_its_parents_lines_up_to_the_fork(game, postgres):
    messages = build_memory_for_save(postgres, 5, role_id=1)
    # save 1's 4th line (another speaker's) joins the player's first line after the fork
    assert messages[-2:] == [
        {"role": "user", "content": "{白小喵：【好奇】台词4（动作4）}\n换个话题吧"},
        {"role": "assistant", "content": "【开心】好呀"},
    ]


@pytest.mark.parametrize(
    ("save_id", "error", "message"),
    [
        (6, ChainError, "cycle"),
        (7, ChainError, "99999 does not exist"),
        (99, SaveNotFoundError, "save 99 does not exist"),
    ],
)
def test_a_broken_save_is_the_same_error_on_both(game, postgres, save_id, error, message):
    with pytest.raises(error, match=message) as on_duckdb:
        build_memory_for_save(game, save_id, role_id=1)
    with pytest.raises(error) as on_postgres:
        build_memory_for_save(postgres, save_id, role_id=1)
    assert str(on_postgres.value) == str(on_duckdb.value)


def test_a_saves_lines_are_found_by_index_not_by_scanning_the_game(postgres_url):
    """What every turn reads of a game's `line` table: the walked saves' lines and the lines
    they point at, each found by an index (with sequential scans off, a condition no index
    serves still shows as one), so a turn's cost does not grow with every save's lines
    (3 s a call at a million lines before)."""
    plan = plan_with_seq_scans_off(
        postgres_url,
        "rolemem_line_index",
        create_all,  # what `rolemem init-db` does on the game's database: ix_line_save_id
        history.walked_sources("postgres")["source_line"],
        {"save_ids": [5], "lineage_ids": [1, 5]},
    )
    assert "Seq Scan" not in plan, plan
    assert plan.count("Index") >= 4, plan  # the saves' lines, their parents, the tips
