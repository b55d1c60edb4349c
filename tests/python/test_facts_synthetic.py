"""Facts that change at scale: 500 slots, each changed 3 times on each of 2 branches (a save and
a fork of its first line), written in shuffled order so neither ids nor clock follow the
chain. On each branch every slot's current value is its branch's last, and a recall naming the
slot ranks it first (the other values of the slot, superseded or on the other branch, never
appear). On the embedded DuckDB file and on PostgreSQL."""

from __future__ import annotations

import random
import time
from datetime import datetime, timedelta

import duckdb
import pytest

from rolemem import DynamicMemory
from rolemem.cli import main
from rolemem.engines import PostgresEngine
from rolemem.memory_builder.saves import Saves

from .conftest import MODELS_AND_SEEDS, demo_store, fresh_database, run_dbt

SLOTS, CHANGES = 500, 3
PLAYER, AGENT = "yuan", "qiyu"


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def store(request, tmp_path_factory):
    if request.param == "postgres":
        url = fresh_database(request.getfixturevalue("postgres_url"), "rolemem_facts_synthetic")
        assert main(["init-db", "--db", url]) == 0
        with Saves(url) as saves, PostgresEngine(url) as engine:
            branches = _branches(saves)
            with DynamicMemory(engine=engine, embedder=None) as memory:
                yield memory, branches
        return
    path = str(tmp_path_factory.mktemp("facts") / "facts.duckdb")
    with Saves(path) as saves:
        branches = _branches(saves)
    with DynamicMemory(path, embedder=None) as memory:
        yield memory, branches


def _branches(saves: Saves) -> dict[str, tuple[int, list[int]]]:
    """Save A: a first line, then 3 lines; save B: a fork of the first line, then 3 lines of
    its own. Per branch: its save and the 3 lines the changes are stated at."""
    saves.create_role("钦灵", role_id=1)
    first = saves.create_save(user_id=PLAYER)["save_id"]
    start = saves.append(first, [{"attribute": "user", "content": "开始"}], user_id=PLAYER)
    fork = saves.create_save(user_id=PLAYER, from_line_id=start["line_ids"][0])["save_id"]
    branches = {}
    for name, save in (("A", first), ("B", fork)):
        said = [
            {"attribute": "assistant", "content": f"{name}{n}", "role_id": 1}
            for n in range(CHANGES)
        ]
        branches[name] = (save, saves.append(save, said, user_id=PLAYER)["line_ids"])
    return branches


def value(branch: str, slot: int, change: int) -> str:
    return f"{branch}{slot:03d}v{change}"


def test_the_current_value_ranks_first_on_every_slot_of_every_branch(store):
    memory, branches = store
    stated = [
        (branch, slot, change)
        for branch in branches
        for slot in range(SLOTS)
        for change in range(CHANGES)
    ]
    random.Random(7).shuffle(stated)  # ids and clock in no chain order
    written = datetime(2024, 5, 1, 20, 0)
    for number, (branch, slot, change) in enumerate(stated):
        save, lines = branches[branch]
        memory.add_fact(
            user_id=PLAYER,
            agent_id=AGENT,
            subject="阿远",
            attribute=f"k{slot:03d}",
            value=value(branch, slot, change),
            save_id=save,
            line_id=lines[change],
            created_at=written - timedelta(seconds=number),
        )
    for branch, (save, _) in branches.items():
        current = memory.facts(user_id=PLAYER, agent_id=AGENT, save_id=save)
        assert [item["value"] for item in current] == [
            value(branch, slot, CHANGES - 1) for slot in range(SLOTS)
        ]
        started = time.perf_counter()
        for slot in range(SLOTS):
            answer = memory.query(
                f"k{slot:03d}", user_id=PLAYER, agent_id=AGENT, save_id=save, update=False
            )
            shown = [entity["description"] for entity in answer.memory_entities]
            assert shown == [f"阿远的k{slot:03d}：{value(branch, slot, CHANGES - 1)}"], slot
            assert answer.superseded_facts == SLOTS * (CHANGES - 1)
        per_query = (time.perf_counter() - started) / SLOTS * 1000
        print(f"{branch}: {per_query:.1f} ms a recall over {len(stated)} facts")


def test_the_mart_resolves_the_demo_facts_as_recall_does(tmp_path):
    """dbt's memory_fact_timeline and DynamicMemory.facts over the same store: one rule
    (macro resolve_facts), the same rows for the demo save whose facts changed."""
    path = demo_store(str(tmp_path / "rolemem.duckdb"))
    run_dbt(
        path,
        tmp_path,
        *MODELS_AND_SEEDS,
        "--select",
        "memory_fact_attributes",
        "memory_fact_attribute_aliases",
        "+memory_fact_timeline",
    )
    with duckdb.connect(path, read_only=True) as con:
        mart = con.execute(
            "select fact_id, attribute, value, is_current, ended_by_fact_id, ended_at_line_id "
            "from memory_fact_timeline where save_id = 2 order by fact_id"
        ).fetchall()
    with DynamicMemory(path, embedder=None) as memory:
        facts = memory.facts(user_id="mumu", agent_id="qiyu", save_id=2, history=True)
    names = ("fact_id", "attribute", "value", "is_current", "ended_by_fact_id", "ended_at_line_id")
    assert mart == sorted(tuple(fact[name] for name in names) for fact in facts)
    assert [(row[2], row[3]) for row in mart] == [
        ("南京", False),
        ("上海", True),
        ("画画", True),
        ("钢琴", False),
        ("游泳", True),
    ]
