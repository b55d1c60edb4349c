"""Every per-turn statement names its player on a real Citus cluster: a
game's lifecycle over HTTP on the coordinator (keyword-only: no embedder; a scripted LLM
extracting) answers 2xx to every request, and each statement it sent that names the player
(macro player_filter, the engine `citus`) is a single-task router plan (EXPLAIN: "Task Count:
1"), as are the upserts whose conflict target leads with the player there (macro player_key).
Every statement a `/turn` and an append with a loop observation (its extraction included)
sent is one task: one player's shard, or reference tables only."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import psycopg
import pytest
import sqlglot

from rolemem import DynamicMemory
from rolemem.cli import main
from rolemem.engines.postgres import transpile
from rolemem.memory_loop.llm import OpenAICompatibleLLM
from rolemem.service import create_app
from rolemem.service.core.settings import ServiceSettings
from rolemem.sql.project import write_sql
from rolemem.testing.scripted_llm import ScriptedChatServer

from .conftest import serving

KEY = {"X-API-Key": "game"}
PLAYER = "mumu"
# a statement naming its player on Citus, as the engine sends it (psycopg placeholders)
_NAMES_PLAYER = ("user_id = %(user_id)s", "user_id = %(save_user_id)s")
_MEMORY_TABLE = re.compile(r"\b(FROM|JOIN)\s+(memory_|character_recall)", re.IGNORECASE)
# what a turn sends: the requests of these phases of the lifecycle (_play), and the
# extraction the observation scheduled; then the reads of the loop's state and a player's
# memories
PER_TURN = (
    "turn",
    "observe",
    "recalling turn",
    "save's reads",
    "memory status",
    "swipe",
    "reload",
    "memories",
    "export",
)
_PLANNED = ("SELECT", "WITH", "INSERT", "UPDATE", "DELETE")
EXTRACTED = json.dumps(
    {"events": [{"description": "玩家说喜欢海", "keywords": ["海"]}], "entities": []},
    ensure_ascii=False,
)


@pytest.fixture(scope="module")
def citus_store(citus_cluster: Any) -> str:
    url = citus_cluster.create_database("rolemem_citus_routing")
    assert main(["init-db", "--db", url, "--demo"]) == 0
    return str(url)


class _Recorder:
    """Every statement the service sends (text, parameters), each with the lifecycle's phase
    it was sent in; the test's own reads (`quiet`) are left out."""

    def __init__(self) -> None:
        self.phase = "setup"
        self.sent: list[tuple[str, str, dict[str, Any]]] = []
        self.local = threading.local()

    def quiet_read(self, url: str, sql: str) -> Any:
        self.local.quiet = True
        try:
            with psycopg.connect(url) as con:
                return con.execute(sql).fetchone()[0]
        finally:
            self.local.quiet = False


@pytest.fixture(scope="module")
def played(
    citus_store: str,
) -> Iterator[tuple[list[tuple[str, int, str]], list[tuple[str, str, dict[str, Any]]]]]:
    """The lifecycle played over HTTP: every request with its status, and every statement
    the service sent (phase, text, parameters)."""
    recorder = _Recorder()
    execute = psycopg.Cursor.execute

    def recording(self: Any, query: Any, params: Any = None, **options: Any) -> Any:
        quiet = getattr(recorder.local, "quiet", False)
        if isinstance(query, str) and isinstance(params, dict | None) and not quiet:
            recorder.sent.append((recorder.phase, query, dict(params or {})))
        return execute(self, query, params, **options)

    settings = ServiceSettings(api_key="game", designer_key="designer")
    with ScriptedChatServer(responder=lambda request: EXTRACTED) as llm_server:
        llm = OpenAICompatibleLLM(base_url=llm_server.base_url, model="scripted", max_retries=0)
        app = create_app(citus_store, llm=llm, embedder=None, settings=settings)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(psycopg.Cursor, "execute", recording)
            with serving(app) as client:
                # warm first (the designer config loaded, the word lists read): on a slow host
                # the warm-up's reads would otherwise land in the turn's phase
                deadline = time.monotonic() + 120
                while client.get("/ready").status_code != 200:
                    assert time.monotonic() < deadline, "the service never became ready"
                    time.sleep(0.1)
                yield _play(client, recorder, citus_store), recorder.sent


def _play(client: Any, recorder: _Recorder, url: str) -> list[tuple[str, int, str]]:
    done: list[tuple[str, int, str]] = []

    def call(method: str, route: str, headers: Any = (), **kwargs: Any) -> Any:
        answer = client.request(method, route, headers={**KEY, **dict(headers)}, **kwargs)
        done.append((f"{method} {route}", answer.status_code, answer.text[:300]))
        return answer.json()

    role = {"name": "祁煜", "character_id": "qiyu"}
    once = {"Idempotency-Key": "role-1"}
    role_id = call("POST", "/roles", json=role, headers=once)["role_id"]
    # a retry of a request of no player: its record is kept on Citus too (the same answer)
    assert call("POST", "/roles", json=role, headers=once)["role_id"] == role_id
    save_id = call("POST", "/saves", json={"user_id": PLAYER, "name": "第一章"})["save_id"]
    lines = [
        {"attribute": "user", "content": "你好"},
        {"attribute": "assistant", "content": "你好呀", "role_id": role_id},
        {"attribute": "user", "content": "在画什么"},
        {"attribute": "assistant", "content": "海", "role_id": role_id},
    ]
    owner = {"user_id": PLAYER}
    line_ids = call("POST", f"/saves/{save_id}/lines", json={**owner, "lines": lines})["line_ids"]
    recorder.phase = "save's reads"
    call("GET", f"/saves/{save_id}", params=owner)
    call("GET", f"/saves/{save_id}/lines", params={**owner, "limit": 2})
    saved = {"save_id": save_id}
    turn = {**saved, "user_id": PLAYER, "role_id": role_id, "message": "你喜欢海吗"}
    recorder.phase = "turn"
    call("POST", "/turn", json=turn)
    # 20 more turns with the loop observing: an extraction is due (extract_at_turns 20) and
    # runs in the background; the phase lasts until its event is stored
    recorder.phase = "observe"
    observe = {"user_id": PLAYER, "agent_id": "qiyu", "role_id": role_id, "scene": "studio"}
    more = [
        {"attribute": "user", "content": f"第{n}句"} if n % 2 == 0 else lines[1] for n in range(40)
    ]
    appended = call(
        "POST",
        f"/saves/{save_id}/lines",
        json={**owner, "lines": more, "observe": observe},
        headers={"Idempotency-Key": "append-1"},
    )
    assert appended["extraction"] == "scheduled", appended
    deadline = time.monotonic() + 60
    count = "select count(*) from memory_extraction_batch where extracted_at is not null"
    while recorder.quiet_read(url, count) == 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(0.5)  # the batch's last writes after its event
    # a turn that recalls the extracted event (its strength and count updated)
    recorder.phase = "recalling turn"
    answer = call("POST", "/turn", json={**turn, "message": "还记得海吗"})
    assert "喜欢海" in json.dumps(answer, ensure_ascii=False), answer
    # a recall and a listing about the save: its row is read on the player's shard too
    recorder.phase = "save's reads"
    call("POST", "/query", json={"query": "海", "user_id": PLAYER, "agent_id": "qiyu", **saved})
    call("GET", f"/users/{PLAYER}/timeline", params={"agent_id": "qiyu", **saved})
    recorder.phase = "memory status"
    status = {"user_id": PLAYER, "agent_id": "qiyu", "role_id": role_id}
    call("GET", f"/saves/{save_id}/memory_status", params=status)
    recorder.phase = "swipe"
    call("POST", f"/saves/{save_id}/regenerate", json={**owner, "line": {"content": "山"}})
    recorder.phase = "reload"
    call("PUT", f"/saves/{save_id}/tip", json={**owner, "line_id": line_ids[1]})
    recorder.phase = "after"
    fork_id = call("POST", "/saves", json={**owner, "from_line_id": line_ids[1]})["save_id"]
    call("POST", f"/saves/{fork_id}/lines", json={**owner, "lines": lines[2:3]})
    call("GET", f"/saves/{fork_id}/lines", params=owner)
    recorder.phase = "memories"
    call("GET", f"/users/{PLAYER}/memories", params={"kind": "event"})
    recorder.phase = "export"
    call("GET", f"/users/{PLAYER}/export")
    recorder.phase = "after"
    call("POST", f"/users/{PLAYER}/forget", json={"purge": True})
    return done


def _task_count(url: str, sql: str, params: dict[str, Any]) -> str:
    # the service's search path: rolemem's tables, then the game's
    with psycopg.connect(url, options="-c search_path=rolemem,public") as con:
        plan = [row[0] for row in con.execute(f"explain {sql}", params).fetchall()]
    counts = [line.strip() for line in plan if "Task Count" in line]
    return counts[0] if len(counts) == 1 else "\n".join(plan)


def test_a_lifecycle_over_http_answers_2xx_to_every_request(played):
    requests, _ = played
    assert [(route, status) for route, status, _ in requests if not 200 <= status < 300] == []
    assert [route for route, _, _ in requests][-1] == f"POST /users/{PLAYER}/forget"


def test_every_statement_naming_its_player_is_a_single_task_router_plan(played, citus_store):
    _, sent = played
    # the statements of the save routes (saves, lines, tips, chains, the purge's save delete);
    # reads of the memory tables (dynamic recall, the loop's state) are item 2's next layer
    naming = {
        sql: params
        for _, sql, params in sent
        if any(name in sql for name in _NAMES_PLAYER) and not _MEMORY_TABLE.search(sql)
    }
    # the save's locked read, the tip moves, the tip walk and its budget, the lineage walk,
    # the chain's reads, the purge's save delete and mark (issue 32 item 2's worklist, 1-4 and 6)
    heads = {" ".join(sql.split())[:60] for sql in naming}
    # EXPLAIN plans a statement without running it (the writes change nothing here)
    for expected in (
        "FOR UPDATE",
        "UPDATE save SET last_message_id",
        "WITH RECURSIVE up",
        "WITH RECURSIVE lineage",
        "DELETE FROM save",
        "UPDATE save SET erasing",
        "SELECT COUNT(*) FROM line",
    ):
        assert any(expected in " ".join(sql.split()) for sql in naming), (expected, heads)
    plans = {
        " ".join(sql.split())[:120]: _task_count(citus_store, sql, params)
        for sql, params in naming.items()
    }
    assert {head: plan for head, plan in plans.items() if plan != "Task Count: 1"} == {}


def test_every_statement_of_a_turn_and_an_observation_is_one_task(played, citus_store):
    """Dynamic recall's reads and its strength and count updates, the loop's plan, state and
    window reads, the extraction's writes, the sticky queue: each one task (a player's shard,
    or reference tables only), or a statement that reads no table at all."""
    _, sent = played
    planned: dict[str, tuple[str, dict[str, Any]]] = {}
    phases = set()
    for phase, sql, params in sent:
        if phase in PER_TURN and sql.lstrip().upper().startswith(_PLANNED):
            planned.setdefault(sql, (phase, params))
            phases.add(phase)
    assert phases == set(PER_TURN), phases
    heads = {" ".join(sql.split()) for sql in planned}
    # what the phases must have sent: recall's reads of the memory tables and its updates,
    # the loop's plan and its window read, the extraction's event (merged: a mention of one
    # the player holds reinforces it, else it is inserted)
    for expected in (
        "FROM memory_event_term",
        "UPDATE memory_event SET recall_count",
        "FROM memory_loop_state",
        "FROM memory_extraction_batch",
        "UPDATE memory_event SET strength = strength + (SELECT increment",
        "INSERT INTO memory_event",
        "FROM character_recall_queue",
    ):
        assert any(expected in head for head in heads), expected
    plans = {
        f"{phase}: {' '.join(sql.split())[:160]}": _tasks(citus_store, sql, params)
        for sql, (phase, params) in planned.items()
    }
    several = {
        head: plan for head, plan in plans.items() if plan not in ("1", "none", "bound rows")
    }
    assert several == {}, "\n\n".join(f"{head}\n{plan}" for head, plan in several.items())


def test_character_recall_reads_no_citus_table_and_a_routed_read_materializes(played, citus_store):
    """Character recall reads the service's plain copies (no Citus table: PostgreSQL plans
    it alone, its generic plan cached); dynamic recall's read, routed to the player's shard,
    has every CTE materialized (Citus ships and plans no inlined copy)."""
    _, sent = played
    turns = [(sql, params) for phase, sql, params in sent if phase in PER_TURN]
    character = {sql: params for sql, params in turns if "int_recall_requests" in sql}
    dynamic = {sql: params for sql, params in turns if "int_memory_queries" in sql}
    assert character and dynamic
    assert {_tasks(citus_store, sql, params) for sql, params in character.items()} == {"none"}
    assert {_tasks(citus_store, sql, params) for sql, params in dynamic.items()} == {"1"}
    for sql in dynamic:
        # as PostgreSQL reads it: placeholders bound, a doubled % one
        text = re.sub(r"%\(\w+\)s", "null", sql).replace("%%", "%")
        tree = sqlglot.parse_one(text, read="postgres")
        modes = [cte.args.get("materialized") for cte in tree.find_all(sqlglot.exp.CTE)]
        assert modes and set(modes) == {True}, modes


def _tasks(url: str, sql: str, params: dict[str, Any]) -> str:
    """How many tasks Citus runs `sql` in: "1"; "none" (no distributed or reference table:
    planned by PostgreSQL alone); "bound rows" (an insert of the caller's bound lists, which
    Citus evaluates on the coordinator and copies to the shards its rows name: each row
    carries the player, so one shard); else the plan."""
    with psycopg.connect(url, options="-c search_path=rolemem,public") as con:
        plan = [row[0] for row in con.execute(f"explain {sql}", params).fetchall()]
    counts = [line.split(":")[1].strip() for line in plan if "Task Count" in line]
    if counts == ["1"]:
        return "1"
    if not counts and not any("Citus" in line for line in plan):
        return "none"
    reads = [line for line in plan if re.search(r"\bScan\b", line)]
    pulled = any("INSERT/SELECT method: pull to coordinator" in line for line in plan)
    if pulled and not counts and reads == [plan[0]]:  # the insert's own node only
        return "bound rows"
    return "\n".join(plan)


@pytest.mark.parametrize(
    ("name", "params"),
    [
        (
            "write_recall_queue",
            {"character_id": "qiyu", "turn_number": 1, "queue": "[]"},
        ),
        (
            "upsert_loop_state",
            {
                "target_key": "1|",
                "agent_id": "qiyu",
                "scene": None,
                "role_id": 1,
                "script_role_id": None,
                "keep_scene": False,
                "extracted": True,
            },
        ),
        (
            "record_loop_failure",
            {
                "target_key": "1|",
                "agent_id": "qiyu",
                "role_id": 1,
                "script_role_id": None,
                "error": "e",
                "next_attempt_at": None,
            },
        ),
    ],
)
def test_an_upsert_on_a_players_key_is_a_single_task_router_plan(name, params, citus_store):
    sql = transpile(write_sql(name, engine="citus"))
    assert "ON CONFLICT(user_id, save_id" in sql.replace("ON CONFLICT (", "ON CONFLICT(")
    bound = {**params, "save_id": 1, "user_id": PLAYER, "now": datetime(2026, 1, 1)}
    assert _task_count(citus_store, sql, bound) == "Task Count: 1"


@pytest.mark.parametrize(
    ("table", "scope", "player"),
    [("official_entity", "official", None), ("memory_entity", "user", PLAYER)],
)
def test_an_entity_merge_is_one_task(table, scope, player, citus_store):
    """The merge keeps a description within the limit with functions Citus runs (its UPDATE
    refuses a CASE or COALESCE holding a function not IMMUTABLE, or a subquery: concat_ws, the
    spacing increment's fallback) on a reference table's copies, or on the player's shard."""
    DynamicMemory(citus_store, embedder=None).close()  # its seeds: the spacing increments
    sql = transpile(write_sql("merge_memory_entity", table, engine="citus"))
    bound = {
        "scope": scope,
        "agent_id": "qiyu",
        "user_id": player,
        "user_name": None,
        "entity_name": "祁煜",
        "kind": "特殊实体属性",
        "keyword": "职业",
        "description": "是画家",
        "at": datetime(2026, 1, 1),
    }
    assert _tasks(citus_store, sql, bound) == "1"


def test_a_players_entity_merges_on_citus(citus_store):
    """A player's entity mentioned again merges into its row on a cluster (the extraction
    loop's entity writes; before, Citus refused every such merge)."""
    with DynamicMemory(citus_store, embedder=None) as memory:
        first, again = (
            memory.add_entity(
                user_id=PLAYER,
                agent_id="qiyu",
                entity_name="木木",
                entity_type="主体",
                kind="用户属性",
                keyword="爱好",
                description=description,
                updated_at=datetime(2026, 1, day),
            )
            for day, description in ((1, "喜欢画画"), (9, "喜欢大海"))
        )
        assert again == first
        [row] = memory.store.run(
            "select description, merge_count from memory_entity where id = $id", {"id": first}
        )
    assert row == ("喜欢画画；喜欢大海", 1)


def test_a_players_event_mentioned_again_is_reinforced_on_citus_in_one_task(citus_store):
    """The extraction's merge of an event the player holds: the statement every engine runs
    (its increment a scalar subquery, its player by equality) is one task on the player's
    shard, and the event mentioned again grows stronger in its row."""
    sql = transpile(write_sql("reinforce_memory_event", engine="citus"))
    event = {
        "scope": "user",
        "agent_id": "qiyu",
        "user_id": PLAYER,
        "description": "木木说喜欢海",
        "created_at": datetime(2026, 1, 1),
    }
    with DynamicMemory(citus_store, embedder=None) as memory:  # its seeds: the increments
        assert _tasks(citus_store, sql, event) == "1"
        ids = []
        for day in (1, 9):
            rows, vectors = memory.prepare_events([{**event, "created_at": datetime(2026, 1, day)}])
            with memory.store.transaction() as cur:
                ids += memory.write_events(cur, rows, vectors, merge=True)
        [row] = memory.store.run(
            "select strength, updated_at from memory_event where id = $id", {"id": ids[0]}
        )
    assert ids[1] == ids[0] and row[0] > 1 and row[1] == datetime(2026, 1, 9)


@pytest.mark.parametrize("table", ["memory_event", "memory_entity"])
def test_cleanups_lock_of_its_candidates_is_one_task(table, citus_store):
    """Cleanup locks one player's candidates at a time (macro lock_unpinned_memories): a
    row lock Citus takes on that player's shard, and the lock a pin waits on."""
    sql = transpile(write_sql("lock_unpinned_memories", table, engine="citus"))
    assert "FOR UPDATE" in sql
    assert _tasks(citus_store, sql, {"user_id": PLAYER, "ids": [1, 2]}) == "1"


@pytest.mark.parametrize("name", ["record_recalls", "record_batched_recalls"])
@pytest.mark.parametrize("table", ["official_event", "official_entity"])
def test_an_official_memorys_recall_bookkeeping_is_one_task(name, table, citus_store):
    """A recalled official memory's strength and count: an update of a reference table (no
    player: `by_player` false), one task run on every node's copy."""
    sql = transpile(write_sql(name, table, False, engine="citus"))
    assert "user_id" not in sql
    bound = {"ids": [1], "now": datetime(2026, 1, 1), "recalled_at": [datetime(2026, 1, 1)]}
    assert _tasks(citus_store, sql, {**bound, "bonus": 1}) == "1"
