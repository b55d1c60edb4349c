"""Dynamic memory through dbt and the CLI: same SQL, same answers."""

from __future__ import annotations

import csv
import json
from datetime import datetime

import duckdb
import pytest

from rolemem import DynamicMemory
from rolemem.cli import main
from rolemem.dynamic_memory import MemoryInputError
from rolemem.text.tokens import extract_keywords

from .conftest import MODELS_AND_SEEDS, REPO, demo_store, run_dbt

QUERIES = REPO / "seeds" / "memory" / "demo_memory_queries.csv"


def demo_queries() -> list[dict]:
    with open(QUERIES, encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_demo_query_tokens_are_the_tfidf_keywords():
    for row in demo_queries():
        assert json.loads(row["tokens"]) == extract_keywords(row["text"], 10)


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp("dynamic")
    path = str(tmp / "rolemem.duckdb")
    demo_store(path)
    selected = ("resource_type:seed", "+memory_prompt_texts", "+memory_query_events")
    run_dbt(path, tmp, *MODELS_AND_SEEDS, "--select", *selected)
    return path


def test_dbt_marts_equal_python_queries(demo_db):
    import duckdb

    with duckdb.connect(demo_db) as con:
        prompts = dict(
            con.execute("select query_id, prompt_text from memory_prompt_texts").fetchall()
        )
        events = {}
        for query_id, event_id, score in con.execute(
            "select query_id, event_id, score from memory_query_events "
            "order by query_id, result_index"
        ).fetchall():
            events.setdefault(query_id, []).append((event_id, score))
        memory = DynamicMemory(con, embedder=None)  # the batch path has no query vectors
        for row in demo_queries():
            response = memory.query(
                row["text"],
                user_id=row["user_id"],
                agent_id=row["agent_id"],
                now=datetime.fromisoformat(row["now"]),
                limit=int(row["result_limit"]),
                score_threshold=float(row["score_threshold"]),
                user_name=row["user_name"],
                agent_name=row["agent_name"],
                update=False,
            )
            query_id = int(row["query_id"])
            assert response.prompt_text == (prompts[query_id] or "")
            assert [(e["event_id"], e["score"]) for e in response.memory_events] == events.get(
                query_id, []
            )
    assert events[2][0][0] == 3  # the hotpot night is the best memory for query 2


def test_cli_query(tmp_path, capsys):
    path = str(tmp_path / "demo.duckdb")
    demo_store(path)
    code = main(
        [
            "query",
            "--db",
            path,
            "--user",
            "mumu",
            "--agent",
            "qiyu",
            "--now",
            "2021-02-21T12:00",
            "--threshold",
            "0.3",
            "--user-name",
            "木木",
            "--keyword-only",
            "室友失恋了，我们陪她吃了一晚上火锅",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["memory_events"][0]["description"] == (
        "木木的室友失恋了，木木陪她吃了一晚上火锅，还讲了很多笑话逗她开心。"
    )
    # the overview timeline comes first (前情提要), then the recalled fragments and events
    assert out["prompt_text"].startswith(
        "前情提要：\n2021-02-01 下午画廊:木木第一次走进祁煜的画廊，被一幅会变色的海洋画吸引。\n"
    )
    assert "\n脑海中回想起的片段：\n2024-06-01：室友是木木大学时最好的朋友\n" in out["prompt_text"]
    assert (
        main(["query", "--db", path, "--user", "mumu", "--agent", "qiyu", "--now", "soon", "x"])
        == 2
    )
    assert "expected an ISO time" in capsys.readouterr().err


def test_cli_official_export_then_import_with_progress(tmp_path, capsys):
    source = str(tmp_path / "source.duckdb")
    demo_store(source)
    assert main(["official", "export", "--agent", "qiyu", "--db", source]) == 0
    exported = capsys.readouterr().out
    doc = tmp_path / "official.json"
    doc.write_text(exported, encoding="utf-8")
    target = str(tmp_path / "target.duckdb")
    assert main(["init-db", "--db", target]) == 0
    capsys.readouterr()
    assert main(["--verbose", "official", "import", str(doc), "--db", target]) == 0
    counts = json.loads(exported)
    assert capsys.readouterr().out.strip() == (
        f"imported {len(counts['events'])} official events and {len(counts['entities'])} entities"
    )
    assert main(["official", "export", "--agent", "qiyu", "--db", target]) == 0
    assert json.loads(capsys.readouterr().out) == counts


def test_close_waits_for_running_calls_and_refuses_new_ones(tmp_path):
    import threading

    path = str(tmp_path / "close.duckdb")
    demo_store(path)
    memory = DynamicMemory(path, embedder=None)
    started, release = threading.Event(), threading.Event()
    original = memory._events.prepare_events

    def slow(*args, **kwargs):
        started.set()
        release.wait(5)
        return original(*args, **kwargs)

    memory._events.prepare_events = slow  # type: ignore[method-assign]
    adder = threading.Thread(
        target=lambda: memory.add_event(
            user_id="u", agent_id="qiyu", description="关闭前写入", created_at=datetime(2021, 1, 1)
        )
    )
    adder.start()
    started.wait(5)
    closer = threading.Thread(target=memory.close)
    closer.start()
    closer.join(0.3)
    assert closer.is_alive()  # still waiting for the write
    release.set()
    adder.join(5)
    closer.join(5)
    assert not closer.is_alive()
    with pytest.raises(MemoryInputError, match="closed"):
        memory.list_events(agent_id="qiyu", user_id="u")
    with duckdb.connect(path) as con:
        assert con.execute(
            "select count(*) from memory_event where description = '关闭前写入'"
        ).fetchone() == (1,)
