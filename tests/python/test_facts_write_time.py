"""DuckDB keeps the facts resolved on each save's chain as a write-time table
(int_save_facts_resolved), kept current by every write that changes them: a fact written,
changed or deleted, a tip moved away and back (the append path), a fork, a save erased. After
each step its rows equal a rebuild of every save from scratch, and the facts a save answers
follow its chain."""

from __future__ import annotations

from typing import Any

import pytest

from rolemem import DynamicMemory
from rolemem.dynamic_memory import player_memories
from rolemem.engines import duckdb_connect
from rolemem.memory_builder import erasure, history
from rolemem.memory_builder.saves import Saves

PLAYER, AGENT = "yuan", "qiyu"
_ROWS = f"select * from main.{history.FACTS_TABLE} order by save_id, agent_id, fact_id"


def _stored(memory: DynamicMemory) -> list[tuple[Any, ...]]:
    history.refresh_history(memory.con)
    return memory.con.cursor().execute(_ROWS).fetchall()


def _rebuilt(memory: DynamicMemory) -> list[tuple[Any, ...]]:
    """Every save's rows recomputed from nothing (no recorded tip: no append path)."""
    memory.con.cursor().execute("delete from int_save_history_tips")
    history.refresh_history(memory.con)
    return memory.con.cursor().execute(_ROWS).fetchall()


def _current(memory: DynamicMemory, save_id: int) -> dict[str, str]:
    facts = memory.facts(user_id=PLAYER, agent_id=AGENT, save_id=save_id)
    return {fact["attribute"]: fact["value"] for fact in facts}


@pytest.fixture
def story(tmp_path):
    path = str(tmp_path / "facts.duckdb")
    with Saves(path) as saves:
        saves.create_role("钦灵", role_id=1)
        save = saves.create_save(user_id=PLAYER)["save_id"]
        said = [
            {"attribute": "user", "content": f"第{n}句"}
            if n % 2 == 0
            else {"attribute": "assistant", "content": f"第{n}句", "role_id": 1}
            for n in range(6)
        ]
        lines = saves.append(save, said, user_id=PLAYER)["line_ids"]
    memory = DynamicMemory(path, embedder=None)
    yield memory, path, save, lines
    memory.close()


def _fact(memory: DynamicMemory, save: int, line: int, attribute: str, value: str) -> int:
    return memory.add_fact(
        user_id=PLAYER,
        agent_id=AGENT,
        subject="阿远",
        attribute=attribute,
        value=value,
        save_id=save,
        line_id=line,
    )


def test_every_write_keeps_the_table_equal_to_a_rebuild(story):
    memory, path, save, lines = story

    def same() -> None:
        assert _stored(memory) == _rebuilt(memory)

    _fact(memory, save, lines[1], "住址", "上海")
    shanghai_then_beijing = _fact(memory, save, lines[4], "居住地", "北京")  # an alias: 住址
    _fact(memory, save, lines[2], "兴趣", "画画")
    same()
    assert _current(memory, save) == {"住址": "北京", "兴趣": "画画"}

    with Saves(path) as saves:
        saves.set_tip(save, lines[3], user_id=PLAYER)  # reload before 北京
    assert _current(memory, save) == {"住址": "上海", "兴趣": "画画"}
    same()
    with Saves(path) as saves:
        saves.set_tip(save, lines[5], user_id=PLAYER)  # back: the append path meets 北京
    assert _current(memory, save) == {"住址": "北京", "兴趣": "画画"}
    same()

    with Saves(path) as saves:
        fork = saves.create_save(user_id=PLAYER, from_line_id=lines[3])["save_id"]
        [own] = saves.append(
            fork, [{"attribute": "user", "content": "我搬去杭州了"}], user_id=PLAYER
        )["line_ids"]
    _fact(memory, fork, own, "住址", "杭州")
    assert _current(memory, fork) == {"住址": "杭州", "兴趣": "画画"}
    assert _current(memory, save) == {"住址": "北京", "兴趣": "画画"}
    same()

    changed = memory.change_fact(user_id=PLAYER, fact_id=shanghai_then_beijing, value="广州")
    assert _current(memory, save)["住址"] == "广州"
    same()
    memory.delete_fact(user_id=PLAYER, fact_id=changed)
    memory.delete_fact(user_id=PLAYER, fact_id=shanghai_then_beijing)
    assert _current(memory, save)["住址"] == "上海"  # the earlier value is current again
    same()

    player_memories.forget(memory.con, PLAYER, agent_id=AGENT)  # archived: no fact left
    assert _current(memory, save) == {} and _current(memory, fork) == {}
    assert _stored(memory) == [] == _rebuilt(memory)


def test_erasing_a_fork_ends_its_facts_on_the_parent(story):
    """A fact extracted on a fork at a line the parent shares is on the parent's chain too;
    erasing the fork deletes it, and the parent's value before it is current again."""
    memory, path, save, lines = story
    _fact(memory, save, lines[1], "住址", "上海")
    with Saves(path) as saves:
        fork = saves.create_save(user_id=PLAYER, from_line_id=lines[3])["save_id"]
    _fact(memory, fork, lines[2], "住址", "南京")  # stated on a shared line
    assert _current(memory, save)["住址"] == "南京"

    def write(step: Any) -> dict[str, int]:
        with duckdb_connect.transaction(memory.con) as cur:
            return step(cur)

    first = write(lambda cur: erasure.delete_save(cur, fork, PLAYER))
    erasure.erase(write, [fork], first["deleted"], user_id=PLAYER)
    assert _current(memory, save)["住址"] == "上海"
    assert _stored(memory) == _rebuilt(memory)
