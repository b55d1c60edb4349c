"""`rolemem init-db --demo` on a real Citus cluster (issue 32 items 1 and 3): the player tables
distributed by user_id in one colocation group with keys leading with it, everything else a
reference table, the official (designer) memories included; a save made through rolemem gets a
small id (drawn on the coordinator); each player's rows sit on one shard group; a row without
a player is refused naming user_id; the demo prints the spec's example 2 and every player's
recall finds the official memories."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import duckdb
import psycopg
import pytest

from rolemem.cli import main
from rolemem.engines import PostgresEngine
from rolemem.errors import PlayerRequiredError
from rolemem.memory_builder.saves import Saves
from rolemem.schema.citus import PLAYER_TABLES, reference_tables
from rolemem.schema.memory import OFFICIAL_TABLES
from rolemem.service import create_app
from rolemem.service.core.settings import ServiceSettings

from .conftest import fresh_database, serving
from .test_postgres_demo import readme_example_2

DESIGNER = {"X-API-Key": "designer"}


@pytest.fixture(scope="module")
def citus_demo(citus_cluster: Any) -> str:
    url = citus_cluster.create_database("rolemem_citus_schema")
    assert main(["init-db", "--db", url, "--demo"]) == 0
    return str(url)


@pytest.fixture(scope="module")
def citus_game(citus_demo: str) -> Iterator[Any]:
    settings = ServiceSettings(api_key="game", designer_key="designer")
    with serving(create_app(citus_demo, embedder=None, settings=settings)) as client:
        yield client


def rows(url: str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as con:
        return [tuple(row) for row in con.execute(sql, params).fetchall()]


def test_player_tables_are_distributed_by_user_id_in_one_colocation_group(citus_demo):
    tables = rows(
        citus_demo,
        "select logicalrelid::regclass::text, partmethod, "
        "column_to_column_name(logicalrelid, partkey), colocationid from pg_dist_partition",
    )
    distributed = {name: (method, column) for name, method, column, _ in tables if method == "h"}
    assert distributed == {name: ("h", "user_id") for name in PLAYER_TABLES}
    assert len({group for _, method, _, group in tables if method == "h"}) == 1
    assert rows(
        citus_demo,
        "select table_name::text from citus_tables where table_name::text = 'save' "
        "and colocation_id = (select colocation_id from citus_tables "
        "where table_name = 'memory_event'::regclass)",
    ) == [("save",)]
    kinds = dict(rows(citus_demo, "select table_name::text, citus_table_type from citus_tables"))
    assert {name for name, kind in kinds.items() if kind == "reference"} == set(reference_tables())
    assert set(kinds) == set(PLAYER_TABLES) | set(reference_tables())


def test_player_keys_lead_with_user_id_and_foreign_keys_include_it(citus_demo):
    keys = dict(
        rows(
            citus_demo,
            "select conrelid::regclass::text, pg_get_constraintdef(oid) from pg_constraint "
            "where contype = 'p' and conrelid::regclass::text = any(%s)",
            (list(PLAYER_TABLES),),
        )
    )
    assert set(keys) == set(PLAYER_TABLES)
    assert all(key.startswith("PRIMARY KEY (user_id, ") for key in keys.values()), keys
    assert sorted(
        definition
        for (definition,) in rows(
            citus_demo,
            "select pg_get_constraintdef(oid) from pg_constraint "
            "where contype = 'f' and conrelid = 'line'::regclass",
        )
    ) == [
        "FOREIGN KEY (role_id) REFERENCES role(id)",
        "FOREIGN KEY (user_id, parent_line_id) REFERENCES line(user_id, id)",
        "FOREIGN KEY (user_id, save_id) REFERENCES save(user_id, id)",
    ]
    nullable = rows(
        citus_demo,
        "select table_name from information_schema.columns where column_name = 'user_id' "
        "and is_nullable = 'YES' and table_name = any(%s)",
        (list(PLAYER_TABLES),),
    )
    assert nullable == []


def test_init_db_again_changes_nothing(citus_demo):
    before = rows(citus_demo, "select * from pg_dist_partition order by logicalrelid")
    assert main(["init-db", "--db", citus_demo]) == 0
    assert rows(citus_demo, "select * from pg_dist_partition order by logicalrelid") == before
    assert rows(citus_demo, "select id, user_id from save order by id") == [
        (1, "mumu"),
        (2, "mumu"),
        (3, "mumu"),
    ]


def test_a_save_made_through_rolemem_gets_a_small_id(citus_demo):
    with Saves(citus_demo) as book:
        made = book.create_save(user_id="nana", name="第一章")
    assert made["save_id"] == 4
    assert rows(citus_demo, "select id, user_id from save where user_id = 'nana'") == [(4, "nana")]


def test_each_players_rows_sit_on_one_shard_group(citus_demo):
    with Saves(citus_demo) as book:
        book.create_save(user_id="lulu")
    shards = {
        shard: (low, group)
        for shard, low, group in rows(
            citus_demo,
            "select shards.shardid, shards.shardminvalue, placements.groupid "
            "from pg_dist_shard as shards inner join pg_dist_placement as placements "
            "on placements.shardid = shards.shardid",
        )
    }
    # every player's rows of every player table: (table, hash range, node group) per player
    where: dict[str, set[tuple[str, str, int]]] = {}
    for table in PLAYER_TABLES:
        for player, shard in rows(
            citus_demo,
            f"select distinct user_id, get_shard_id_for_distribution_column('{table}', user_id) "
            f"from {table}",
        ):
            where.setdefault(player, set()).add((table, *shards[shard]))
    assert {"mumu", "lulu"} <= set(where)
    # mumu's saves, lines, events, terms, vectors and entities: one hash range on one node
    assert {"save", "line", "memory_event", "memory_event_term", "memory_entity"} <= {
        table for table, _, _ in where["mumu"]
    }
    for player, placed in where.items():
        assert len({(low, group) for _, low, group in placed}) == 1, (player, placed)


def test_the_demos_official_memories_are_reference_tables(citus_demo):
    """The demo's official memories (an event, its 16 postings and its vectors: the 18 rows
    Citus could not store in the player tables) are in tables of their own, copied to every
    node; none is left in a player table."""
    kinds = dict(rows(citus_demo, "select table_name::text, citus_table_type from citus_tables"))
    assert {table: kinds[table] for table in OFFICIAL_TABLES.values()} == dict.fromkeys(
        OFFICIAL_TABLES.values(), "reference"
    )
    counted = {
        table: rows(citus_demo, f"select count(*) from {table}")[0][0]
        for table in ("official_event", "official_event_term", "official_event_embedding")
    }
    assert counted == {
        "official_event": 1,
        "official_event_term": 16,
        "official_event_embedding": 1,
    }
    assert rows(citus_demo, "select count(*) from memory_event where scope = 'official'") == [(0,)]
    # the same ids as the demo on DuckDB and one PostgreSQL: the official event is the first
    assert rows(citus_demo, "select id from official_event") == [(1,)]
    assert rows(citus_demo, "select min(id) from memory_event") == [(2,)]


def test_the_demo_on_citus_prints_the_specs_example_2(citus_demo, capsys):
    capsys.readouterr()
    assert main(["memory", "--db", citus_demo, "--save", "2", "--role", "1"]) == 0
    printed = capsys.readouterr().out
    assert json.loads(printed[printed.index("[") :]) == readme_example_2()


def test_a_players_recall_finds_the_official_memories_on_citus(citus_game):
    """Every player's recall reads the agent's official events (a reference table) with the
    player's own (one shard): the demo's gallery event, in its scope, for mumu and a player
    of no memories alike."""
    found = {}
    for player in ("mumu", "newcomer"):
        answer = citus_game.post(
            "/query",
            headers={"X-API-Key": "game"},
            json={
                "query": "画廊",
                "user_id": player,
                "agent_id": "qiyu",
                "now": "2021-02-21T12:00:00",
                "dry_run": True,
            },
        )
        assert answer.status_code == 200, answer.text
        found[player] = [
            (event["event_id"], event["scope"]) for event in answer.json()["memory_events"]
        ]
    assert (1, "official") in found["mumu"]
    assert found["newcomer"] == [(1, "official")]


def test_a_designers_event_over_http_is_stored_and_recalled_on_citus(citus_game, citus_demo):
    """An official event written over HTTP on Citus: a small id from the shared sequence
    (never a player's), in the reference table, recalled by a player."""
    answer = citus_game.post(
        "/official/events",
        headers=DESIGNER,
        json={
            "agent_id": "qiyu",
            "description": "祁煜的灯塔在海边",
            "keywords": ["灯塔"],
            "created_at": "2020-01-01T10:00:00",
        },
    )
    assert answer.status_code == 200, answer.text
    event_id = answer.json()["event_id"]
    assert event_id == 16  # after the demo's 15 events, the players' and the official one
    assert rows(citus_demo, "select count(*) from memory_event where id = %s", (event_id,)) == [
        (0,)
    ]
    assert rows(citus_demo, "select scope from official_event where id = %s", (event_id,)) == [
        ("official",)
    ]
    recalled = citus_game.post(
        "/query",
        headers={"X-API-Key": "game"},
        json={"query": "灯塔", "user_id": "kiki", "agent_id": "qiyu", "dry_run": True},
    )
    assert [e["event_id"] for e in recalled.json()["memory_events"]] == [event_id]
    deleted = citus_game.delete(f"/official/events/{event_id}", headers=DESIGNER)
    assert deleted.status_code == 200, deleted.text
    assert rows(
        citus_demo, "select reason from official_archive where memory_id = %s", (event_id,)
    ) == [("deleted",)]


def test_a_row_without_a_player_is_refused_naming_user_id(citus_demo):
    """A save without a player (a game writing its own rows): PlayerRequiredError on user_id."""
    with PostgresEngine(citus_demo, max_size=1) as engine:
        with pytest.raises(PlayerRequiredError) as raised, engine.transaction() as cur:
            cur.execute("insert into save (name) values ('the game''s own')", {})
    assert raised.value.field == "user_id"
    assert "Citus" in str(raised.value)


def test_a_save_over_http_gets_a_small_id(citus_game):
    answer = citus_game.post(
        "/saves", headers={"X-API-Key": "game"}, json={"user_id": "kiki", "name": "第一章"}
    )
    assert answer.status_code == 201, answer.text
    assert answer.json()["save_id"] < 100


def test_a_store_with_ownerless_saves_is_not_copied_to_citus(citus_cluster, tmp_path):
    url = citus_cluster.create_database("rolemem_citus_ownerless")
    store = str(tmp_path / "ownerless.duckdb")
    assert main(["init-db", "--db", store]) == 0
    with duckdb.connect(store) as con:
        con.execute("insert into save (name) values ('the game''s own')")
    assert main(["init-db", "--db", url, "--copy-from", store]) == 2
    # all or nothing: the tables are there, empty
    assert rows(url, "select count(*) from save") == [(0,)]


def test_lines_written_without_their_player_are_copied_with_the_saves(citus_cluster, tmp_path):
    """A store whose game wrote its lines without user_id: on Citus each line takes its save's
    player (none is left out as ownerless)."""
    url = citus_cluster.create_database("rolemem_citus_line_owners")
    store = str(tmp_path / "lines.duckdb")
    assert main(["init-db", "--db", store]) == 0
    with duckdb.connect(store) as con:
        con.execute("insert into save (id, name, user_id) values (7, 'a', 'mumu')")
        con.execute(
            "insert into line (id, save_id, attribute, content) values (70, 7, 'user', '你好')"
        )
        con.execute("update save set last_message_id = 70 where id = 7")
    assert main(["init-db", "--db", url, "--copy-from", store]) == 0
    assert rows(url, "select id, user_id from line") == [(70, "mumu")]


def test_plain_postgresql_keeps_its_keys_and_ownerless_saves(postgres_url):
    url = fresh_database(postgres_url, "rolemem_not_citus")
    assert main(["init-db", "--db", url]) == 0
    assert rows(
        url, "select pg_get_constraintdef(oid) from pg_constraint where conname = 'save_pkey'"
    ) == [("PRIMARY KEY (id)",)]
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("insert into save (name) values ('the game''s own')")
    assert rows(url, "select count(*) from save where user_id is null") == [(1,)]
