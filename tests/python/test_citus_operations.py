"""Growing a Citus cluster under a game (issue 32 item 6), on a real cluster: a worker added and
the shards rebalanced onto it while players play over HTTP, with no failed request and no lost
line; and a store made on one plain PostgreSQL database distributed in place once the database
has the citus extension (rows and ids kept, the game goes on). The operator's steps are the
shell blocks of docs/scale-out.md, run here as printed (psql from the cluster's install)."""

from __future__ import annotations

import concurrent.futures
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from rolemem.cli import main
from rolemem.dynamic_memory import SETTING_SEEDS
from rolemem.schema.citus import PLAYER_TABLES, SET_ASIDE
from rolemem.schema.memory import OFFICIAL_TABLES
from rolemem.service import create_app
from rolemem.service.core.settings import ServiceSettings

from .conftest import REPO, serving
from .docs_blocks import blocks_of

KEY = {"X-API-Key": "game"}
PAGE = "docs/scale-out.md"
THIS = "tests/python/test_citus_operations.py"
# fewer shards than Citus's 32 keep the moves few (each is a logical replication of one shard
# group); every shard still holds a player (below), so whichever move, live players move
SHARDS = 8
CLIENTS = 4


def doc_blocks(heading: str) -> list[str]:
    """The shell blocks this test runs from the page's section `heading`, in order."""
    text = (REPO / PAGE).read_text(encoding="utf-8")
    start = text.index(f"\n### {heading}\n")
    end = text.find("\n#", start + 1)
    first = text.count("\n", 0, start) + 1
    last = text.count("\n", 0, end if end >= 0 else len(text)) + 1
    found = [
        block.text
        for block in blocks_of(REPO / PAGE)
        if first <= block.line <= last and block.marker == f"run by {THIS}"
    ]
    assert found, f"{PAGE}: no block run by this test under {heading}"
    return found


def run_blocks(blocks: list[str], cluster: Any, **env: str) -> str:
    """The blocks with bash, psql and rolemem on PATH; their output."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{Path(cluster.install.bin('psql')).parent}"
    out = []
    for block in blocks:
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block],
            env={**os.environ, "PATH": f"{path}{os.pathsep}{os.environ['PATH']}", **env},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, (block, done.stdout[-2000:], done.stderr[-4000:])
        out.append(done.stdout)
    return "".join(out)


def rows(url: str, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as con:
        return [tuple(row) for row in con.execute(sql, params).fetchall()]


class Game:
    """Players playing over HTTP from client threads: every request's status kept, and every
    line each save's branch should hold, in order."""

    def __init__(self, base_url: str, role_id: int) -> None:
        self.base_url = base_url
        self.role_id = role_id
        self.requests: list[tuple[str, int, str]] = []
        self.answered: list[float] = []  # when each request was answered (monotonic)
        self.steps = [0.0, 0.0]  # when the operator's steps started and ended
        self.errors: list[BaseException] = []  # what stopped a client thread
        self.branches: dict[tuple[str, int], list[str]] = {}
        self.read_back: dict[tuple[str, int], list[str]] = {}
        self.stop = threading.Event()
        self._lock = threading.Lock()

    def call(self, client: httpx.Client, method: str, route: str, **kwargs: Any) -> Any:
        answer = client.request(method, route, headers=KEY, **kwargs)
        with self._lock:
            self.requests.append((f"{method} {route}", answer.status_code, answer.text[:300]))
            self.answered.append(time.monotonic())
        return answer.json() if answer.status_code < 300 else None

    def play(self, players: list[str], rounds_after_stop: int = 3) -> None:
        """Each player: a save, then turns (the prompt, the player's line and the reply
        appended), a fork on the third turn; until stopped, then a few turns more."""
        try:
            self._play(players, rounds_after_stop)
        except BaseException as error:  # the test reports it (a thread's own is lost)
            self.errors.append(error)

    def _play(self, players: list[str], rounds_after_stop: int) -> None:
        with httpx.Client(base_url=self.base_url, timeout=120) as client:
            tips: dict[str, tuple[int, list[int]]] = {}
            for player in players:
                save = self.call(client, "POST", "/saves", json={"user_id": player})
                tips[player] = (save["save_id"], [])
                self.branches[(player, save["save_id"])] = []
            turn, left = 0, rounds_after_stop
            while left > 0:
                turn += 1
                for player in players:
                    self.one_turn(client, player, turn, tips)
                if self.stop.is_set():
                    left -= 1

    def one_turn(self, client: httpx.Client, player: str, turn: int, tips: dict[str, Any]) -> None:
        save_id, line_ids = tips[player]
        owner = {"user_id": player}
        if turn == 3 and line_ids:
            fork = self.call(client, "POST", "/saves", json={**owner, "from_line_id": line_ids[1]})
            if fork is None:
                return
            kept = self.branches[(player, save_id)][:2]
            save_id, line_ids = fork["save_id"], line_ids[:2]
            self.branches[(player, save_id)] = list(kept)
        message = f"{player} turn {turn}"
        self.call(
            client,
            "POST",
            "/turn",
            json={**owner, "save_id": save_id, "role_id": self.role_id, "message": message},
        )
        lines = [
            {"attribute": "user", "content": message},
            {"attribute": "assistant", "content": f"reply {turn}", "role_id": self.role_id},
        ]
        done = self.call(client, "POST", f"/saves/{save_id}/lines", json={**owner, "lines": lines})
        if done is not None:
            self.branches[(player, save_id)] += [line["content"] for line in lines]
            tips[player] = (save_id, line_ids + done["line_ids"])

    def failed(self) -> list[tuple[str, int, str]]:
        return [request for request in self.requests if not 200 <= request[1] < 300]


def branch(client: httpx.Client, player: str, save_id: int) -> list[str]:
    page = client.get(
        f"/saves/{save_id}/lines", headers=KEY, params={"user_id": player, "limit": 1000}
    )
    assert page.status_code == 200, page.text
    return [line["content"] for line in page.json()["lines"]]


def one_player_per_shard(url: str) -> list[str]:
    """Players whose saves fall on every shard of `save`, one each (Citus's hash of user_id)."""
    by_shard: dict[int, str] = {}
    with psycopg.connect(url) as con:
        for number in range(10 * SHARDS):
            player = f"player-{number}"
            (shard,) = con.execute(
                "select get_shard_id_for_distribution_column('save', %s::text)", (player,)
            ).fetchone() or (None,)
            by_shard.setdefault(shard, player)
            if len(by_shard) == SHARDS:
                break
    assert len(by_shard) == SHARDS
    return list(by_shard.values())


@pytest.fixture(scope="module")
def grown(citus_cluster: Any) -> Iterator[tuple[Game, str, Any, str]]:
    """A game played by one player per shard from CLIENTS threads while the docs' steps add a
    third worker and rebalance; yields the game, the store, the new node and the steps'
    output once every thread is done."""
    name = "rolemem_citus_operations"
    url = citus_cluster.create_database(name)
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(f"alter database {name} set citus.shard_count = {SHARDS}")
    # the new node starts (not yet added) while the demo loads: the character config a turn reads
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        starting = pool.submit(citus_cluster.start_node, (name,))
        assert main(["init-db", "--db", url, "--demo"]) == 0
        node = starting.result()
    players = one_player_per_shard(url)
    settings = ServiceSettings(api_key="game", designer_key="designer")
    with serving(create_app(url, embedder=None, settings=settings)) as client:
        role = client.post("/roles", headers=KEY, json={"name": "祁煜", "character_id": "qiyu"})
        game = Game(str(client.base_url), role.json()["role_id"])
        threads = [
            threading.Thread(target=game.play, args=(players[index::CLIENTS],))
            for index in range(CLIENTS)
        ]
        for thread in threads:
            thread.start()
        try:
            game.steps[0] = time.monotonic()
            output = run_blocks(
                doc_blocks("Adding a worker"),
                citus_cluster,
                ROLEMEM_DB=url,
                WORKER_HOST="127.0.0.1",
                WORKER_PORT=str(node.port),
            )
        finally:
            game.steps[1] = time.monotonic()
            game.stop.set()
            for thread in threads:
                thread.join(300)
        assert not any(thread.is_alive() for thread in threads)
        game.read_back = {
            (player, save_id): branch(client, player, save_id) for player, save_id in game.branches
        }
        yield game, url, node, output


def test_adding_a_worker_and_rebalancing_while_the_game_plays_fails_no_request(grown):
    game, _, node, output = grown
    assert game.errors == []
    assert game.failed() == []
    # every player saved, forked and played turns before, during and after the moves
    routes = [route for route, _, _ in game.requests]
    assert routes.count("POST /turn") >= 3 * SHARDS
    start, end = game.steps
    assert sum(start < answered < end for answered in game.answered) >= 2 * SHARDS
    # the steps' last query: the distributed shards per node, the new worker among them
    assert f"127.0.0.1 | {node.port:>8} |" in output, output


def test_no_line_is_lost_and_each_branch_reads_back_in_order(grown):
    game, _, _, _ = grown
    assert len(game.branches) == 2 * SHARDS  # a save and its fork per player
    assert game.read_back == game.branches
    # a save: two turns, then the fork from its second line plays on
    lengths = sorted(len(lines) for lines in game.branches.values())
    assert lengths[:SHARDS] == [4] * SHARDS
    assert min(lengths[SHARDS:]) >= 6


def test_shards_and_players_moved_onto_the_new_worker(grown):
    _, url, node, _ = grown
    placed = dict(
        rows(
            url,
            "select citus_table_type, count(*) from citus_shards where nodeport = %s group by 1",
            (node.port,),
        )
    )
    # its share of the shard groups (every player table of a group moves together), and a
    # copy of every reference table
    assert placed["distributed"] % len(PLAYER_TABLES) == 0
    assert placed["distributed"] >= len(PLAYER_TABLES) * (SHARDS // 3 - 1)
    references = rows(url, "select 1 from pg_dist_partition where partmethod = 'n'")
    assert placed["reference"] == len(references)
    on_new_worker = {
        player
        for (player,) in rows(url, "select distinct user_id from save")
        for (port,) in rows(
            url,
            "select nodeport from citus_shards "
            "where shardid = get_shard_id_for_distribution_column('save', %s::text)",
            (player,),
        )
        if port == node.port
    }
    assert on_new_worker, "no player's saves on the new worker"


PLAYER = "mumu"


def play_a_little(url: str, turns: int) -> dict[int, list[str]]:
    """A player's save and its fork over HTTP, `turns` turns each (the prompt, then the
    player's line and the reply appended); the lines of each save's branch, read back."""
    settings = ServiceSettings(api_key="game", designer_key="designer")
    owner = {"user_id": PLAYER}
    with serving(create_app(url, embedder=None, settings=settings)) as client:
        game = Game(str(client.base_url), role_id=1)  # the demo's 钦灵
        saves = [
            save["save_id"]
            for save in client.get(f"/users/{PLAYER}/saves", headers=KEY).json()["items"]
        ]
        if not saves:
            saves = [game.call(client, "POST", "/saves", json=owner)["save_id"]]
        for turn in range(1, turns + 1):
            for save_id in saves:
                game.call(
                    client,
                    "POST",
                    "/turn",
                    json={**owner, "save_id": save_id, "role_id": 1, "message": f"问{turn}"},
                )
                lines = [
                    {"attribute": "user", "content": f"问{turn}"},
                    {"attribute": "assistant", "content": f"答{turn}", "role_id": 1},
                ]
                game.call(client, "POST", f"/saves/{save_id}/lines", json={**owner, "lines": lines})
        assert game.failed() == []
        return {save_id: branch(client, PLAYER, save_id) for save_id in saves}


def snapshot(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every player row that has its player, by table, sorted."""
    return {
        table: sorted(rows(url, f"select * from {table} where user_id is not null"), key=repr)
        for table in PLAYER_TABLES
    }


@pytest.fixture(scope="module")
def in_place(citus_cluster: Any) -> dict[str, Any]:
    """The demo store made on the coordinator's database `rolemem` without the extension and
    played, with a line the game wrote itself; then the docs' steps make it a Citus database
    and run init-db again."""
    with psycopg.connect(citus_cluster.url, autocommit=True) as con:
        con.execute("drop database if exists rolemem with (force)")
        con.execute("create database rolemem")
    url = citus_cluster.coordinator.url("rolemem")
    assert main(["init-db", "--db", url, "--demo"]) == 0  # one PostgreSQL: every demo row
    before = play_a_little(url, turns=2)
    # a line the game wrote itself, without its player (the customer's Line has no user_id)
    save_id = next(iter(before))
    with psycopg.connect(url) as con:
        con.execute(
            "with added as (insert into line (save_id, parent_line_id, attribute, content) "
            "select id, last_message_id, 'user', '自己写的' from save where id = %s "
            "returning id, save_id) "
            "update save set last_message_id = added.id from added where save.id = added.save_id",
            (save_id,),
        )
    before[save_id].append("自己写的")
    # as a store written before official memories had tables of their own: the demo's in the
    # player tables (scope official, no player), the move not yet recorded (after playing:
    # opening the store would move them)
    with psycopg.connect(url) as con:
        for table, official in OFFICIAL_TABLES.items():
            con.execute(f"insert into {table} select * from {official}")
            con.execute(f"delete from {official}")
        con.execute("delete from rolemem_migration where name = 'official_tables'")
    ownerless = {
        table: rows(url, f"select count(*) from {table} where user_id is null")[0][0]
        for table in PLAYER_TABLES
    }
    stored = snapshot(url)
    ids = {table: rows(url, f"select max(id) from {table}")[0][0] for table in ("save", "line")}
    workers = " ".join(f"127.0.0.1:{node.port}" for node in citus_cluster.nodes[1:])
    run_blocks(
        doc_blocks("From one PostgreSQL to Citus"),
        citus_cluster,
        ROLEMEM_DB=url,
        WORKERS=workers,
        COORDINATOR_HOST="127.0.0.1",
        COORDINATOR_PORT=str(citus_cluster.coordinator.port),
    )
    return {"url": url, "before": before, "stored": stored, "ownerless": ownerless, "ids": ids}


def test_a_store_made_on_one_postgresql_is_distributed_in_place(in_place):
    url = in_place["url"]
    kinds = dict(rows(url, "select table_name::text, citus_table_type from citus_tables"))
    assert {name: kind for name, kind in kinds.items() if name in PLAYER_TABLES} == {
        name: "distributed" for name in PLAYER_TABLES
    }
    # every row that had its player is there as it was, ids and all; the line the game wrote
    # without one got its save's (and was the only line without one)
    after, stored = snapshot(url), in_place["stored"]
    assert {table: after[table] for table in PLAYER_TABLES if table != "line"} == {
        table: stored[table] for table in PLAYER_TABLES if table != "line"
    }
    assert in_place["ownerless"]["line"] == 1
    added = [row for row in after["line"] if row not in stored["line"]]
    assert len(after["line"]) == len(stored["line"]) + 1
    assert [(row[0], "自己写的") for row in added] == [(in_place["ids"]["line"], "自己写的")]
    assert rows(url, "select user_id from line where id = %s", (in_place["ids"]["line"],)) == [
        (PLAYER,)
    ]
    # the coordinator's local copies are emptied: the rows live on the workers only
    assert rows(url, "select max(pg_relation_size(logicalrelid)) from pg_dist_partition") == [(0,)]


def test_official_memories_move_to_reference_tables_and_nothing_is_lost(in_place):
    """The older store's official memories (events, their terms and vectors, in the player
    tables without a player) are moved, ids and all, to the official tables, reference tables
    that every player's recall reads; any other row without a player is set aside."""
    url = in_place["url"]
    ownerless = {table: count for table, count in in_place["ownerless"].items() if count}
    assert ownerless.pop("line") == 1
    official = {table: ownerless.pop(table) for table in OFFICIAL_TABLES if table in ownerless}
    assert set(official) >= {"memory_event", "memory_event_term", "memory_event_embedding"}
    assert {
        table: rows(url, f"select count(*) from {OFFICIAL_TABLES[table]}")[0][0]
        for table in official
    } == official
    assert rows(url, "select id, scope from official_event") == [(1, "official")]
    kinds = dict(rows(url, "select table_name::text, citus_table_type from citus_tables"))
    assert {kinds[table] for table in OFFICIAL_TABLES.values()} == {"reference"}
    assert rows(url, "select count(*) from memory_event where user_id is null") == [(0,)]
    # nothing official was set aside; what else had no player was, rows kept
    set_aside = rows(
        url,
        "select table_name::text from information_schema.tables where table_schema = %s",
        (SET_ASIDE,),
    )
    assert {table for (table,) in set_aside} == set(ownerless)
    assert {
        table: rows(url, f"select count(*) from {SET_ASIDE}.{table}")[0][0] for table in ownerless
    } == ownerless
    # a player's recall finds the moved official event
    settings = ServiceSettings(api_key="game", designer_key="designer")
    with serving(create_app(url, embedder=None, settings=settings)) as client:
        found = client.post(
            "/query",
            headers=KEY,
            json={"query": "画廊", "user_id": PLAYER, "agent_id": "qiyu", "dry_run": True},
        )
    assert found.status_code == 200, found.text
    assert (1, "official") in [(e["event_id"], e["scope"]) for e in found.json()["memory_events"]]


def test_the_game_goes_on_after_distributing_in_place(in_place):
    url, before = in_place["url"], in_place["before"]
    after = play_a_little(url, turns=1)
    assert after == {save_id: [*lines, "问1", "答1"] for save_id, lines in before.items()}
    # the service's config copies, made before the extension: those dynamic recall joins to a
    # player's rows are reference tables now, with the replica identity a worker added later
    # copies them by; character recall's (read with no player's rows) stay the coordinator's
    copies = rows(
        url,
        "select relname::text, relreplident, citus_table_type from pg_class "
        "left join citus_tables on table_name = pg_class.oid "
        "where relnamespace = 'rolemem'::regnamespace and relkind = 'r'",
    )
    kinds = {name: (kind, identity) for name, identity, kind in copies}
    assert {kinds[name] for name in SETTING_SEEDS} == {("reference", "f")}, copies
    assert {kind for name, (kind, _) in kinds.items() if name not in SETTING_SEEDS} == {None}
    assert "character_recall_stopwords" in kinds, copies
    # a new save's id follows the store's (the coordinator's sequence, not a worker's range)
    settings = ServiceSettings(api_key="game", designer_key="designer")
    with serving(create_app(url, embedder=None, settings=settings)) as client:
        made = client.post("/saves", headers=KEY, json={"user_id": PLAYER})
    assert made.status_code == 201, made.text
    assert made.json()["save_id"] == in_place["ids"]["save"] + 1


def test_a_store_with_a_save_without_a_player_is_refused_unchanged(citus_cluster, capsys):
    """A save without a player cannot be sharded by player: init-db says so, naming user_id,
    and the store stays as it was (one transaction)."""
    with psycopg.connect(citus_cluster.url, autocommit=True) as con:
        con.execute("drop database if exists rolemem_ownerless_save with (force)")
        con.execute("create database rolemem_ownerless_save")
    url = citus_cluster.coordinator.url("rolemem_ownerless_save")
    assert main(["init-db", "--db", url]) == 0
    keys = "select conrelid::regclass::text, pg_get_constraintdef(oid) from pg_constraint"
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("insert into save (name) values ('no player')")
        con.execute("create extension citus")
        shape = sorted(con.execute(keys).fetchall())
    capsys.readouterr()
    assert main(["init-db", "--db", url]) == 2
    error = capsys.readouterr().err
    assert error.startswith("rolemem: error: 1 saves have no player (user_id)"), error
    assert rows(url, "select count(*) from pg_dist_partition") == [(0,)]
    assert rows(url, "select name, user_id from save") == [("no player", None)]
    assert sorted(rows(url, keys)) == shape


def test_a_statement_a_shard_move_overtook_runs_again(citus_cluster, monkeypatch):
    """The engine's answer to a read planned against a placement a move had just dropped (the
    race the game above meets now and then), made certain: the shard is renamed away on its
    worker, and put back where the engine waits before running the statement again."""
    from rolemem.engines import PostgresEngine

    name = "rolemem_citus_overtaken"
    url = citus_cluster.create_database(name)
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("create table moved (user_id text primary key, n int)")
        con.execute("select create_distributed_table('moved', 'user_id', shard_count => 1)")
        con.execute("insert into moved values ('mumu', 1)")
        [(shard, port)] = con.execute(
            "select shard_name, nodeport from citus_shards where table_name = 'moved'::regclass"
        ).fetchall()
    worker = next(node for node in citus_cluster.nodes if node.port == port)

    def rename(old: str, new: str) -> None:
        with psycopg.connect(worker.url(name), autocommit=True) as con:
            con.execute(f"alter table {old} rename to {new}")

    waits: list[float] = []

    def put_back(seconds: float) -> None:
        waits.append(seconds)
        rename("away", shard)

    with PostgresEngine(url, max_size=1) as engine:
        rename(shard, "away")
        monkeypatch.setattr("rolemem.retry.time.sleep", put_back)
        read = "select n from moved where user_id = $user_id"
        assert engine.run(read, {"user_id": "mumu"}) == [(1,)]
        assert len(waits) == 1
        # a table missing on the coordinator itself is an error of the statement: no retry
        with pytest.raises(psycopg.errors.UndefinedTable):
            engine.run("select n from not_a_table", {})
        assert len(waits) == 1
