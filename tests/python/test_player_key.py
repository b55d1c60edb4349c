"""The player (`user_id`) on every player table (issue 32: the shard key on Citus): rolemem's
writes fill it, and `rolemem init-db` upgrades a store written before the column, on DuckDB
and PostgreSQL alike."""

from __future__ import annotations

import duckdb
import psycopg
import pytest

from rolemem.cli import main
from rolemem.memory_builder.history import refresh_history
from rolemem.memory_builder.saves import Saves

from .conftest import demo_store, demo_store_on, fresh_database

# the tables as a store written before lines and event vectors carried their player
_OLD_TABLES = """
create table role (id bigint primary key, name varchar not null);
create table save (
    id bigint primary key, name varchar, last_message_id bigint, user_id varchar
);
create table line (
    id bigint primary key, content varchar not null, attribute varchar not null,
    role_id bigint, save_id bigint not null, parent_line_id bigint
);
create table memory_event (
    id bigint primary key, scope varchar not null, agent_id varchar not null,
    user_id varchar, description varchar not null, keywords varchar,
    created_at timestamp not null
);
create table memory_event_embedding (event_id bigint primary key, embedding real[2]);
insert into save values (1, 'mumu''s', 2, 'mumu'), (2, 'ownerless', 3, null);
insert into line values
    (1, 'hi', 'user', null, 1, null),
    (2, 'hello', 'assistant', null, 1, 1),
    (3, 'hey', 'user', null, 2, null);
insert into memory_event values
    (1, 'user', 'qiyu', 'mumu', 'met mumu', '[]', '2026-01-01 10:00:00'),
    (2, 'official', 'qiyu', null, 'was born', '[]', '2026-01-01 10:00:00');
insert into memory_event_embedding values (1, [1.0, 0.0]), (2, [0.0, 1.0]);
"""
_LINES = "select id, user_id from line order by id"
# the official event's moved to its own table by the same init-db (schema.memory)
_VECTORS = (
    "select event_id, user_id from memory_event_embedding union all "
    "select event_id, user_id from official_event_embedding order by event_id"
)


def _old_store(engine: str, tmp_path, postgres_url: str | None) -> str:
    if engine == "duckdb":
        path = str(tmp_path / "old.duckdb")
        with duckdb.connect(path) as con:
            con.execute(_OLD_TABLES)
        return path
    assert postgres_url is not None
    url = fresh_database(postgres_url, "rolemem_old_shape")
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(_OLD_TABLES.replace("[1.0, 0.0]", "'{1,0}'").replace("[0.0, 1.0]", "'{0,1}'"))
    return url


def _rows(db: str, sql: str) -> list[tuple[object, ...]]:
    if db.startswith("postgresql://"):
        with psycopg.connect(db) as con:
            return [tuple(row) for row in con.execute(sql).fetchall()]
    with duckdb.connect(db, read_only=True) as con:
        return con.execute(sql).fetchall()


@pytest.mark.parametrize("engine", ["duckdb", "postgres"])
def test_init_db_gives_an_old_stores_lines_and_vectors_their_player(engine, tmp_path, request):
    url = request.getfixturevalue("postgres_url") if engine == "postgres" else None
    db = _old_store(engine, tmp_path, url)
    assert main(["init-db", "--db", db]) == 0
    # from the save / the event; an ownerless save's lines and an official event's stay null
    assert _rows(db, _LINES) == [(1, "mumu"), (2, "mumu"), (3, None)]
    assert _rows(db, _VECTORS) == [(1, "mumu"), (2, None)]
    assert main(["init-db", "--db", db]) == 0  # again: nothing changes
    assert _rows(db, _LINES) == [(1, "mumu"), (2, "mumu"), (3, None)]


@pytest.fixture(params=["duckdb", "postgres"])
def demo(request, tmp_path_factory):
    return demo_store_on(request, tmp_path_factory, "rolemem_player_key")


def test_appends_and_swipes_store_the_saves_player_and_vectors_their_events(demo):
    with Saves(demo) as book:
        save = book.create_save(user_id="mumu")["save_id"]
        appended = book.append(
            save,
            [{"attribute": "user", "content": "你好"}, {"attribute": "assistant", "content": "嗯"}],
            user_id="mumu",
        )["line_ids"]
        swiped = book.regenerate(save, {"content": "好呀"}, user_id="mumu")["line_ids"]
    ids = ", ".join(str(i) for i in appended + swiped)
    assert _rows(demo, f"select user_id from line where id in ({ids})") == [("mumu",)] * 3
    # every line of the demo (written by its loader) has its save's player
    assert _rows(
        demo,
        "select count(*) from line inner join save on save.id = line.save_id "
        "where line.user_id is distinct from save.user_id",
    ) == [(0,)]
    # every vector has its event's player (official events' none), also once copied to
    # PostgreSQL by `init-db --demo`
    assert _rows(
        demo,
        "select count(*), count(vectors.user_id) from memory_event_embedding as vectors "
        "inner join memory_event as events on events.id = vectors.event_id "
        "where vectors.user_id is not distinct from events.user_id",
    ) == _rows(demo, "select count(*), count(user_id) from memory_event")


def test_a_line_the_game_wrote_without_its_player_gets_it_when_the_history_refreshes(tmp_path):
    db = demo_store(str(tmp_path / "game_lines.duckdb"))
    with Saves(db) as book:
        save = book.create_save(user_id="mumu")["save_id"]
        (first,) = book.append(save, [{"attribute": "user", "content": "你好"}], user_id="mumu")[
            "line_ids"
        ]
    refresh_history(db, [save])
    with duckdb.connect(db) as con:  # the game appends a reply itself, without user_id
        (game_line,) = con.execute(
            "insert into line (content, attribute, save_id, parent_line_id) "
            "values ('嗯', 'assistant', $save, $parent) returning id",
            {"save": save, "parent": first},
        ).fetchone()
        con.execute(
            "update save set last_message_id = $tip where id = $save",
            {"tip": game_line, "save": save},
        )
    assert refresh_history(db, [save]) == 1  # the save gained a line at its end
    assert _rows(db, f"select user_id from line where id = {game_line}") == [("mumu",)]
    with duckdb.connect(db) as con:  # a reply written beside it (a branch): a rebuild
        (sibling,) = con.execute(
            "insert into line (content, attribute, save_id, parent_line_id) "
            "values ('好', 'assistant', $save, $parent) returning id",
            {"save": save, "parent": first},
        ).fetchone()
        con.execute(
            "update save set last_message_id = $tip where id = $save",
            {"tip": sibling, "save": save},
        )
    assert refresh_history(db, [save]) == 1
    assert _rows(db, f"select user_id from line where id = {sibling}") == [("mumu",)]


def test_an_append_on_postgresql_gives_the_games_own_lines_their_player(postgres_url):
    url = fresh_database(postgres_url, "rolemem_game_lines")
    assert main(["init-db", "--db", url]) == 0
    with Saves(url) as book:
        save = book.create_save(user_id="mumu")["save_id"]
        (first,) = book.append(save, [{"attribute": "user", "content": "你好"}], user_id="mumu")[
            "line_ids"
        ]
        with psycopg.connect(url, autocommit=True) as con:  # the game writes a reply itself
            (game_line,) = con.execute(
                "insert into line (content, attribute, save_id, parent_line_id) "
                "values ('嗯', 'assistant', %(save)s, %(parent)s) returning id",
                {"save": save, "parent": first},
            ).fetchone()
            con.execute(
                "update save set last_message_id = %(tip)s where id = %(save)s",
                {"tip": game_line, "save": save},
            )
        assert _rows(url, f"select user_id from line where id = {game_line}") == [(None,)]
        book.append(save, [{"attribute": "user", "content": "再见"}], user_id="mumu")
    assert _rows(url, f"select count(*), count(user_id) from line where save_id = {save}") == [
        (3, 3)
    ]
