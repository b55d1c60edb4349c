"""The HTTP service under uvicorn on 127.0.0.1, called over HTTP with httpx: recall, turns,
designer routes, snapshots."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import pytest

from rolemem.cli import main
from rolemem.memory_loop.llm import OpenAICompatibleLLM
from rolemem.service import create_app
from rolemem.service.core.settings import ServiceSettings
from rolemem.testing.scripted_llm import ScriptedChatServer

from .conftest import demo_store, demo_store_on, error_of, serving

KEY = {"X-API-Key": "secret"}
DESIGNER = {"X-API-Key": "designer"}
NOW = "2021-02-21T12:00:00"


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def service(request, tmp_path_factory):
    """The service on the demo store: an embedded file, or the same rows in a PostgreSQL
    database (every test using this fixture runs on both)."""
    folder = tmp_path_factory.mktemp("service")
    path = demo_store_on(request, tmp_path_factory, "rolemem_service")
    llm_server = ScriptedChatServer().start()
    llm = OpenAICompatibleLLM(base_url=llm_server.base_url, model="scripted", max_retries=0)
    app = create_app(
        path,
        llm=llm,
        embedder=None,
        snapshot_path=str(folder / "snapshot.duckdb"),
        settings=ServiceSettings(api_key="secret", designer_key="designer"),
    )
    with serving(app) as client:
        yield client, folder
    llm_server.stop()


def test_health_needs_no_key_and_everything_else_its_key(service):
    client, _ = service
    assert client.get("/health").json() == {"status": "ok"}
    answer = client.post("/query", json={"query": "火锅", "user_id": "mumu", "agent_id": "qiyu"})
    assert answer.status_code == 401
    assert error_of(answer) == {
        "type": "Unauthorized",
        "message": "missing or wrong X-API-Key header",
        "field": "X-API-Key",
    }
    # a key in any script is simply wrong
    wrong = client.post("/query", headers={"X-API-Key": "ключ".encode()}, json={})
    assert wrong.status_code == 401 and error_of(wrong)["type"] == "Unauthorized"
    # designer routes take the designer key, not the game's
    assert client.get("/official/qiyu", headers=KEY).status_code == 401
    assert client.get("/official/qiyu", headers=DESIGNER).status_code == 200
    assert client.post("/query", headers=DESIGNER, json={}).status_code == 401
    assert client.get("/docs").status_code == 200


def test_query_returns_the_specs_shape(service):
    client, _ = service
    body = {
        "query": "室友失恋了，我们陪她吃了一晚上火锅",
        "limit": 5,
        "user_id": "mumu",
        "agent_id": "qiyu",
        "now": NOW,
        "dry_run": True,
    }
    answer = client.post("/query", json=body, headers=KEY).json()
    assert set(answer) == {
        "memory_events",
        "memory_entities",
        "additional_info",
        "timeline",
        "prompt_text",
    }
    assert answer["memory_events"][0]["description"] == (
        "木木的室友失恋了，木木陪她吃了一晚上火锅，还讲了很多笑话逗她开心。"
    )
    assert answer["prompt_text"].startswith("前情提要：\n2021-02-01 下午画廊:")
    simple = client.post("/query_simple", json=body, headers=KEY).json()
    assert simple["memory_events"] == [e["description"] for e in answer["memory_events"]]
    assert simple["prompt_text"] == answer["prompt_text"]


def test_expand_words_in_the_specs_shape(service):
    client, _ = service
    answer = client.post(
        "/expand_words",
        headers=KEY,
        json={
            "sentence": "红色",
            "chinese_rd_count": 3,
            "logic_type": "first",
            "filter_values": [0],
        },
    )
    assert answer.json() == {
        "原始关键词列表": ["红色"],
        "输入的单词列表": ["红色"],
        "扩展的联想词列表": [{"喜庆": 7}, {"火焰": 6}, {"玫瑰": 6}],
    }


def test_recall_reproduces_the_specs_example_1_and_explains_when_asked(service):
    client, _ = service
    body = {
        "character_id": "qiyu",
        "user_id": "mumu",
        "text": "今天画画时你好温柔",
        "context": {"intimacy": 2, "exploration": 3, "scene": "studio", "time": "day"},
    }
    answer = client.post("/recall", headers=KEY, json=body).json()
    assert answer["character_memory_attributes"] == (
        "能力特征：艺术天赋、创作出独特的变色画作\n性格特征：温柔、内心温柔"
    )
    assert answer["explain"] == []
    explained = client.post("/recall", headers=KEY, json={**body, "explain": True}).json()
    row = next(r for r in explained["explain"] if r["content"] == "艺术天赋")
    assert (row["status"], row["reason"]) == ("shown", "matched 创作、画画、艺术")


def test_a_designer_keyword_fires_inside_a_longer_word(service):
    client, _ = service
    doc = {
        "character_id": "innkeeper",
        "attributes": {
            "爱好": [
                {"关键词": ["酒"], "内容": "最爱喝自家酿的桂花酒", "强度": 4, "queryParams": []}
            ]
        },
    }
    assert client.post("/config/import", headers=DESIGNER, json=doc).status_code == 200
    for text in ("再来一壶酒", "这酒有点烈"):
        answer = client.post(
            "/recall",
            headers=KEY,
            json={"character_id": "innkeeper", "user_id": text, "text": text, "explain": True},
        ).json()
        assert answer["character_memory_attributes"] == "爱好：最爱喝自家酿的桂花酒"
        assert answer["explain"][0]["matches"][0]["how"] == "keyword inside a word"


def test_turn_then_lines_append_the_reply(service):
    client, _ = service
    turn = client.post(
        "/turn",
        headers=KEY,
        json={
            "save_id": 2,
            "character_id": "qiyu",
            "role_id": 1,
            "user_id": "mumu",
            "message": "今天画画时你好温柔",
            "context": {"intimacy": 2},
            "now": NOW,
        },
    ).json()
    assert turn["messages"][-1] == {"role": "user", "content": "今天画画时你好温柔"}
    assert {row["layer"] for row in turn["trace"]} >= {"character", "history"}
    appended = client.post(
        "/lines",
        headers=KEY,
        json={
            "save_id": 2,
            "user_id": "mumu",
            "lines": [
                {"attribute": "user", "content": "今天画画时你好温柔"},
                {"attribute": "assistant", "content": "被你发现了", "role_id": 1},
            ],
            "observe": {"agent_id": "qiyu", "role_id": 1, "scene": "studio"},
        },
    )
    assert appended.status_code == 200
    ids = appended.json()["line_ids"]
    assert appended.json() == {
        "save_id": 2,
        "line_ids": ids,
        "tip_line_id": ids[1],
        "extraction": "not_due",
        "observed": [
            {"role_id": 1, "script_role_id": None, "agent_id": "qiyu", "extraction": "not_due"}
        ],
    }
    turn = client.post(
        "/turn",
        headers=KEY,
        json={
            "save_id": 2,
            "character_id": "qiyu",
            "role_id": 1,
            "user_id": "mumu",
            "message": "还有呢",
            "now": NOW,
        },
    ).json()
    assert turn["messages"][-2] == {"role": "assistant", "content": "被你发现了"}


@pytest.fixture
def engine(request) -> str:
    """The engine the test's `service` runs on."""
    return str(request.node.callspec.params.get("service", "duckdb"))


def test_eight_concurrent_clients(service):
    client, _ = service
    bodies = [
        (
            "/query",
            {"query": "火锅", "user_id": "mumu", "agent_id": "qiyu", "now": NOW, "dry_run": True},
        )
    ]
    bodies += [
        (
            "/recall",
            {
                "character_id": "qiyu",
                "user_id": f"u{n}",
                "text": "画画",
                "context": {"exploration": 3},
            },
        )
        for n in range(4)
    ]
    jobs = [bodies[i % len(bodies)] for i in range(48)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        codes = list(
            pool.map(lambda job: client.post(job[0], json=job[1], headers=KEY).status_code, jobs)
        )
    assert codes == [200] * 48


def test_rolemem_snapshot_asks_the_service_and_dbt_reads_the_copy(
    service, engine, tmp_path, capsys
):
    client, folder = service
    if engine == "postgres":  # analysts read the live database: no copy to make
        answer = client.post("/snapshot", headers=KEY)
        assert answer.status_code == 404
        assert "analysts and dbt read the live database" in error_of(answer)["message"]
        return
    url = str(client.base_url)
    assert main(["snapshot", "--url", url, "--api-key", "secret"]) == 0
    assert capsys.readouterr().out.startswith(f"snapshot {folder / 'snapshot.duckdb'} (")
    from .conftest import run_dbt_on_snapshot

    run_dbt_on_snapshot(str(folder / "snapshot.duckdb"), tmp_path)
    with duckdb.connect(str(folder / "snapshot.duckdb"), read_only=True) as con:
        assert con.execute("select count(*) from memory_messages where save_id = 2").fetchone()[0]


def test_rolemem_snapshot_of_a_file_no_one_holds(tmp_path, capsys):
    from rolemem.cli import main

    path = str(tmp_path / "quiet.duckdb")
    demo_store(path)
    out = str(tmp_path / "copy.duckdb")
    assert main(["snapshot", "--db", path, "--out", out]) == 0
    with duckdb.connect(out, read_only=True) as copy, duckdb.connect(path) as source:
        for table in ("line", "memory_event", "memory_entity", "character_attributes"):
            query = f"select count(*) from {table}"
            assert copy.execute(query).fetchone() == source.execute(query).fetchone()


def test_official_memories_round_trip_over_http(service):
    client, _ = service
    added = client.post(
        "/official/events",
        headers=DESIGNER,
        json={
            "agent_id": "qiyu",
            "description": "祁煜的画廊在海边",
            "created_at": "2020-01-01T10:00:00",
            "keywords": ["画廊", "海边"],
        },
    )
    assert added.status_code == 200, added.text
    event_id = added.json()["event_id"]
    entity = client.post(
        "/official/entities",
        headers=DESIGNER,
        json={
            "agent_id": "qiyu",
            "entity_name": "祁煜",
            "entity_type": "主体",
            "kind": "特殊实体属性",
            "keyword": "职业",
            "description": "是画家",
            "updated_at": "2020-01-01T10:00:00",
        },
    )
    assert entity.status_code == 200, entity.text
    edited = client.patch(
        f"/official/events/{event_id}", headers=DESIGNER, json={"importance": 0.9}
    )
    assert edited.json() == {"memory_type": "event", "memory_id": event_id, "status": "updated"}
    exported = client.get("/official/qiyu", headers=DESIGNER).json()
    mine = [e for e in exported["events"] if e["description"] == "祁煜的画廊在海边"]
    assert mine[0]["importance"] == pytest.approx(0.9)
    deleted = client.delete(f"/official/events/{event_id}", headers=DESIGNER)
    assert deleted.json() == {"memory_type": "event", "memory_id": event_id, "status": "archived"}
    missing = client.delete(f"/official/events/{event_id}", headers=DESIGNER)
    assert missing.status_code == 404
    assert error_of(missing) == {
        "type": "NotFoundError",
        "message": f"no event memory {event_id} of official",
        "field": "id",
    }
    bad = client.patch(f"/official/events/{event_id}", headers=DESIGNER, json={"importance": 5})
    assert bad.status_code == 422 and error_of(bad)["field"] == "importance"
    assert error_of(bad)["message"] == "importance: must be a number from 0 to 1"


def test_merged_official_entities_stay_within_the_limit_and_their_export_imports(service):
    """Two writes of 1,201 characters merge into one description: the older part is dropped
    (it would make 2,403 characters, past the 2,000 the import takes), so the export imports."""
    client, _ = service
    entity = {
        "agent_id": "merge-hole",
        "entity_name": "祁煜",
        "entity_type": "主体",
        "kind": "特殊实体属性",
        "keyword": "职业",
        "updated_at": "2020-01-01T10:00:00",
    }
    for text in ("旧" * 1201, "新" * 1201):
        written = client.post(
            "/official/entities", headers=DESIGNER, json={**entity, "description": text}
        )
        assert written.status_code == 200, written.text
    exported = client.get("/official/merge-hole", headers=DESIGNER).json()
    [merged] = exported["entities"]
    assert merged["description"] == "新" * 1201
    imported = client.post("/official/import", headers=DESIGNER, json=exported)
    assert imported.status_code == 200, imported.text
    again = client.get("/official/merge-hole", headers=DESIGNER).json()
    assert again["entities"] == exported["entities"]


def test_an_official_import_refuses_unknown_fields(service):
    client, _ = service
    answer = client.post(
        "/official/import",
        headers=DESIGNER,
        json={
            "agent_id": "qiyu",
            "events": [{"description": "x", "created_at": "2020-01-01T10:00:00", "scope": "user"}],
        },
    )
    assert answer.status_code == 422
    assert error_of(answer)["field"] == "events[0].scope"


def test_designer_config_import_changes_what_recall_shows(service):
    client, _ = service
    doc = {
        "character_id": "newcomer",
        "attributes": {
            "兴趣爱好": [
                {
                    "关键词": ["画画", "绘画", "画作"],
                    "内容": "喜欢在海边画画",
                    "强度": 5,
                    "queryParams": [],
                }
            ]
        },
    }
    answer = client.post("/config/import", headers=DESIGNER, json=doc)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "character_id": "newcomer",
        "written": {
            "character_attributes": 1,
            "character_events": 0,
            "character_dialogue_styles": 0,
        },
        "advice": [
            "<designer config>: attributes.兴趣爱好[0]: content: is 7 characters; 10-30 are advised"
        ],
    }
    recalled = client.post(
        "/recall",
        headers=KEY,
        json={"character_id": "newcomer", "user_id": "u", "text": "我们去画画"},
    ).json()
    assert recalled["character_memory_attributes"] == "兴趣爱好：喜欢在海边画画"
    exported = client.get("/config/newcomer", headers=DESIGNER).json()
    assert exported["attributes"]["兴趣爱好"][0]["内容"] == "喜欢在海边画画"
    still = client.post(
        "/recall",
        headers=KEY,
        json={
            "character_id": "qiyu",
            "user_id": "u",
            "text": "今天画画时你好温柔",
            "context": {"intimacy": 2, "exploration": 3, "scene": "studio"},
        },
    ).json()
    assert still["character_memory_attributes"].startswith("能力特征：艺术天赋")
    broken = client.post(
        "/config/import",
        headers=DESIGNER,
        json={
            "character_id": "broken",
            "attributes": {"x": [{"关键词": ["a"], "内容": "c", "强度": 9, "queryParams": []}]},
        },
    )
    assert broken.status_code == 400 and "strength" in error_of(broken)["message"]


def test_scheduled_snapshots_follow_the_store(tmp_path):
    """`snapshot_every`: the service rewrites the snapshot on a schedule; a copy taken after a
    line was appended holds it, and readers open the copy while the service runs."""
    path = str(tmp_path / "live.duckdb")
    demo_store(path)
    copy = tmp_path / "scheduled.duckdb"
    app = create_app(path, embedder=None, snapshot_path=str(copy), snapshot_every=0.2)

    def copied_lines() -> int | None:
        try:
            with duckdb.connect(str(copy), read_only=True) as con:
                return con.execute("select count(*) from line").fetchone()[0]
        except (duckdb.IOException, duckdb.CatalogException):
            return None  # not written yet

    def wait_for(condition) -> None:
        deadline = time.monotonic() + 30
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert condition()

    with serving(app) as client:
        wait_for(lambda: copied_lines() is not None)
        before = copied_lines()
        appended = client.post(
            "/lines",
            json={
                "save_id": 2,
                "user_id": "mumu",
                "lines": [{"attribute": "user", "content": "在吗"}],
            },
        )
        assert appended.status_code == 200
        wait_for(lambda: copied_lines() == before + 1)


def test_a_schedule_needs_a_snapshot_path(tmp_path):
    from rolemem.errors import RolememError

    with pytest.raises(RolememError, match="snapshot_every needs a snapshot path"):
        create_app(str(tmp_path / "x.duckdb"), snapshot_every=60)


def test_appended_lines_bring_the_save_up_to_date_off_the_request_path(tmp_path):
    """After /lines answers, a background job refreshes the save's write-time history, so the
    next /turn reads it instead of paying the upkeep."""
    path = str(tmp_path / "live.duckdb")
    demo_store(path)
    app = create_app(path, embedder=None)
    with serving(app) as client:
        store = app.state.store

        def recorded_tip() -> int | None:
            with store.engine.con.cursor() as cur:
                row = cur.execute(
                    "select tip_line_id from int_save_history_tips where save_id = 2"
                ).fetchone()
            return None if row is None else row[0]

        appended = client.post(
            "/lines",
            json={
                "save_id": 2,
                "user_id": "mumu",
                "lines": [{"attribute": "user", "content": "在吗"}],
            },
        )
        assert appended.status_code == 200
        tip = appended.json()["tip_line_id"]
        deadline = time.monotonic() + 30
        while recorded_tip() != tip and time.monotonic() < deadline:
            time.sleep(0.05)
        assert recorded_tip() == tip


def test_a_sillytavern_lorebook_imports_recalls_and_exports_over_http(service):
    client, _ = service
    lorebook = json.loads(
        (Path(__file__).resolve().parent / "fixtures/sillytavern/world_info.json").read_text(
            "utf-8"
        )
    )
    answer = client.post("/config/import/sillytavern/atelier", headers=DESIGNER, json=lorebook)
    assert answer.status_code == 200
    imported = answer.json()
    assert imported["written"] == {
        "character_attributes": 3,
        "character_events": 1,
        "character_dialogue_styles": 0,
    }
    assert imported["report"][0].startswith("cooldown: ")
    recalled = client.post(
        "/recall",
        headers=KEY,
        json={
            "character_id": "atelier",
            "user_id": "st",
            "text": "今天画画累了，想去海边喝茶",
            "context": {"intimacy": 2, "exploration": 1},
        },
    ).json()
    # 日记本 is a constant entry (recalled unmatched); 海边 passes its NOT_ALL secondary keys
    assert (
        recalled["character_memory_attributes"]
        == "能力特征：擅长画会变色的画\n世界书：日记本藏在画架后面"
    )
    assert recalled["character_memory_event"] == "回忆：\n-十年前，小时候在海边差点溺水\n"
    # the rules are the database's: GET /config says them in the designers' terms
    config = client.get("/config/atelier", headers=DESIGNER).json()
    assert config["events"]["回忆"][0]["次要关键词逻辑"] == "NOT_ALL"
    assert config["events"]["回忆"][0]["停留轮数"] == 3
    exported = client.get("/config/atelier/sillytavern", headers=DESIGNER).json()
    assert [(e["key"], e["disable"]) for e in exported["entries"].values()] == [
        (["画画", "绘画"], False),
        (["秘密"], False),
        (["Tea", "茶"], True),
        (["大海", "海边"], False),
    ]
    assert client.get("/config/atelier/sillytavern").status_code == 401
    bad = client.post("/config/import/sillytavern/atelier", headers=DESIGNER, json={"entries": 3})
    assert bad.status_code == 400 and error_of(bad)["type"] == "ConfigError"


def test_the_service_runs_each_statement_on_its_engine_threads(tmp_path):
    """Requests run side by side on the request threads; each DuckDB statement on
    `engine_threads` (1 by default: the per-turn statements are planning-bound)."""
    from rolemem.errors import RolememError

    path = str(tmp_path / "store.duckdb")
    demo_store(path)
    for threads in (ServiceSettings().engine_threads, 2):
        app = create_app(path, embedder=None, settings=ServiceSettings(engine_threads=threads))
        with serving(app) as client:
            assert client.get("/health").status_code == 200
            con = app.state.store.engine.con
            assert con.execute("select current_setting('threads')").fetchone() == (threads,)
    assert ServiceSettings().engine_threads == 1
    with pytest.raises(RolememError, match="engine_threads must be at least 1") as refused:
        ServiceSettings(engine_threads=0)
    assert refused.value.field == "engine_threads"
