"""Threads share one store; a second process gets one clear error; readers share a file."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta

import duckdb
import pytest

from rolemem import DynamicMemory, build_memory_for_save
from rolemem.engines.duckdb_connect import transaction
from rolemem.errors import WriteConflictError

from .conftest import demo_store

NOW = datetime(2021, 2, 21, 12, 0)


def test_eight_threads_mixed_calls_for_a_fixed_time_without_an_error(tmp_path):
    path = str(tmp_path / "threads.duckdb")
    demo_store(path)
    con = duckdb.connect(path)
    memory = DynamicMemory(con, embedder=None)
    errors: list[BaseException] = []
    calls = [0] * 8
    stop = time.monotonic() + 3.0

    def worker(index: int) -> None:
        user = f"player{index}"
        try:
            n = 0
            while time.monotonic() < stop:
                n += 1
                event = memory.add_event(
                    user_id=user,
                    agent_id="qiyu",
                    keywords=["火锅"],
                    description=f"{user}第{n}次吃火锅",
                    created_at=NOW - timedelta(minutes=n),
                )
                memory.update_event(event, importance=0.9)
                # recalls of every thread touch the same official and demo memories
                memory.query("火锅", user_id=user, agent_id="qiyu", now=NOW, update=True)
                memory.query("室友失恋了", user_id="mumu", agent_id="qiyu", now=NOW, update=True)
                assert memory.list_events(agent_id="qiyu", user_id=user)
                assert build_memory_for_save(con, 2, role_id=1)
                calls[index] += 6
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert all(count > 0 for count in calls)
    (events,) = con.execute(
        "select count(*) from memory_event where user_id like 'player%'"
    ).fetchone()
    assert events == sum(calls) // 6
    con.close()


HOLDER = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
print("holding", flush=True)
time.sleep(30)
"""


def test_a_second_process_gets_one_clear_error(tmp_path):
    path = str(tmp_path / "held.duckdb")
    demo_store(path)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, path], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"holding"
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "rolemem.cli",
                "query",
                "--db",
                path,
                "--user",
                "mumu",
                "--agent",
                "qiyu",
                "--keyword-only",
                "火锅",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 2
        assert result.stderr.startswith(f"rolemem: error: {path} is in use by another process")
        assert "one process owns a DuckDB file" in result.stderr
        assert result.stderr.count("\n") == 1  # one line, no traceback
    finally:
        holder.kill()
        holder.wait()


READER = """
import sys
from rolemem import CharacterMemory
memory = CharacterMemory(sys.argv[1], character_id="qiyu")
print(memory.session("u").recall("今天画画时你好温柔", {"intimacy": 2, "exploration": 3,
      "scene": "studio"}).attributes.splitlines()[0], flush=True)
"""


def test_readers_share_a_file_no_one_writes(tmp_path):
    path = str(tmp_path / "rolemem.duckdb")
    from .conftest import seed_demo

    seed_demo(path, tmp_path)
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", READER, path],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [reader.communicate(timeout=120) for reader in readers]
    assert [reader.returncode for reader in readers] == [0, 0], outputs
    assert [out.strip() for out, _ in outputs] == ["能力特征：艺术天赋、创作出独特的变色画作"] * 2


def test_read_only_stores_look_but_never_write(tmp_path):
    import pytest

    from rolemem.dynamic_memory import MemoryInputError

    path = str(tmp_path / "ro.duckdb")
    demo_store(path)
    with DynamicMemory(path, embedder=None, read_only=True) as memory:
        response = memory.query("火锅", user_id="mumu", agent_id="qiyu", now=NOW, update=False)
        assert response.memory_events
        with pytest.raises(MemoryInputError, match="read_only"):
            memory.query("火锅", user_id="mumu", agent_id="qiyu", now=NOW)
        with pytest.raises(MemoryInputError, match="read_only"):
            memory.add_event(user_id="u", agent_id="qiyu", description="x", created_at=NOW)
    # two CLI queries (read-only by default) share the file at once
    queries = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "rolemem.cli",
                "query",
                "--db",
                path,
                "--user",
                "mumu",
                "--agent",
                "qiyu",
                "--keyword-only",
                "--now",
                "2021-02-21T12:00",
                "火锅",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [query.communicate(timeout=120) for query in queries]
    assert [query.returncode for query in queries] == [0, 0], outputs
    import json

    answers = [json.loads(out) for out, _ in outputs]
    for answer in answers:
        answer.pop("additional_info")  # timings differ
    assert answers[0] == answers[1] and answers[0]["memory_events"]


def test_a_row_written_after_the_one_it_refers_to_was_deleted_is_a_conflict(tmp_path):
    """A line appended while its save was erased (the erasure deletes lines in transactions
    of its own) met DuckDB's foreign key check and answered 500: it is a WriteConflictError,
    which the service retries (then 404, or the 503 to try again)."""
    path = str(tmp_path / "gone.duckdb")
    demo_store(path)
    con = duckdb.connect(path)
    line = "insert into line (id, save_id, parent_line_id, attribute, content) values "
    with pytest.raises(WriteConflictError), transaction(con) as cur:
        cur.execute(line + "(999999, 2, 888888, 'user', '你好')")  # a parent deleted meanwhile
    with pytest.raises(duckdb.ConstraintException), transaction(con) as cur:
        cur.execute(line + "(1, 2, null, 'user', '你好')")  # a key taken stays what it is
    assert con.execute("select count(*) from line where id = 999999").fetchone() == (0,)
