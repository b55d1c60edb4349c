"""The dbt batch path and the Python per-save path give identical rows on the same database."""

from __future__ import annotations

import duckdb
import pytest

from rolemem import build_memory_for_save

from .conftest import MODELS_AND_SEEDS, run_dbt
from .synthetic_dialogue import generate_dialogue


@pytest.fixture(scope="module")
def built_db(tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp("parity")
    path = str(tmp / "rolemem.duckdb")
    with duckdb.connect(path) as con:
        generate_dialogue(con, saves=25, lines_per_save=40)
    run_dbt(path, tmp, "run", "--select", "+memory_messages")
    return path


def test_memory_messages_model_equals_python_for_every_target(built_db):
    with duckdb.connect(built_db) as con:
        rows = con.execute(
            """select save_id, target_role_id, target_script_role_id, role, content
            from memory_messages order by save_id, target_key, message_index"""
        ).fetchall()
        batch: dict[tuple, list[dict[str, str]]] = {}
        for save_id, role_id, script_role_id, role, content in rows:
            batch.setdefault((save_id, role_id, script_role_id), []).append(
                {"role": role, "content": content}
            )
        python = {
            key: build_memory_for_save(con, key[0], role_id=key[1], script_role_id=key[2])
            for key in batch
        }
    # every save has targets role 1, role 2 and script NPC 1 (their system lines open each save)
    assert len(batch) == 25 * 3
    assert sum(len(messages) for messages in batch.values()) > 25 * 3 * 10
    assert python == batch


def test_extraction_pending_model_equals_python_observe(tmp_path):
    """The loop's batch mart and MemoryLoop.observe agree on watermark and pending turns."""
    from datetime import datetime

    from rolemem import DynamicMemory
    from rolemem.memory_loop import MemoryLoop

    path = str(tmp_path / "rolemem.duckdb")
    with duckdb.connect(path) as con:
        generate_dialogue(con, saves=6, lines_per_save=120)
        DynamicMemory(con).close()
        loop = MemoryLoop(con, llm=None)
        python = {}
        for save_id in range(1, 7):
            for role_id in (1, 2):
                report = loop.observe(
                    save_id=save_id,
                    user_id="u",
                    agent_id="a",
                    role_id=role_id,
                    scene="s",
                    now=datetime(2024, 1, 1),
                )
                python[(save_id, f"role_id={role_id}")] = (
                    report.watermark_line_id,
                    report.pending_turns,
                )
    selected = ("memory_loop_settings", "+memory_extraction_pending")
    run_dbt(path, tmp_path, *MODELS_AND_SEEDS, "--select", *selected)
    with duckdb.connect(path) as con:
        rows = con.execute(
            """select save_id, target_key, watermark_line_id, pending_turns
            from memory_extraction_pending where target_key like 'role_id=%'"""
        ).fetchall()
    batch = {(save_id, key): (watermark, pending) for save_id, key, watermark, pending in rows}
    assert any(pending >= 20 for _, pending in batch.values())
    assert batch == python


def test_the_loop_plan_model_equals_python_plans(tmp_path):
    """The loop's plan model built by dbt (every save x character, the scene last seen) and
    the Python path's plans of the same observations give the same batches, lines and
    versions."""
    from rolemem import DynamicMemory
    from rolemem.memory_loop import MemoryLoop

    path = str(tmp_path / "rolemem.duckdb")
    observed = [(save_id, role_id) for save_id in range(1, 5) for role_id in (1, 2)]
    with duckdb.connect(path) as con:
        generate_dialogue(con, saves=4, lines_per_save=160)
        DynamicMemory(con).close()
        loop = MemoryLoop(con, llm=None)
        for save_id, role_id in observed:  # the scene noted: dbt's observation reads it
            loop.due(save_id=save_id, user_id="u", agent_id="a", role_id=role_id, record=True)
        plans = loop._plans
        python = {
            (save_id, role_id): plans.plan(plans.observation(save_id, role_id, None, "u", "a"))
            for save_id, role_id in observed
        }
    selected = ("memory_loop_settings", "+int_loop_observations_planned")
    run_dbt(path, tmp_path, *MODELS_AND_SEEDS, "--select", *selected)
    columns = (
        "batches",
        "pending_turns",
        "watermark_line_id",
        "window_start_position",
        "window_turns",
        "lines",
        "problem",
        "saves_found",
        "chain_tip_line_id",
        "batch_last_line_ids",
        "extracted_line_count",
    )
    with duckdb.connect(path) as con:
        rows = con.execute(
            f"""select save_id, target_role_id, {", ".join(columns)}
            from int_loop_observations_planned where target_role_id is not null"""
        ).fetchall()
    batch = {(row[0], row[1]): dict(zip(columns, row[2:], strict=True)) for row in rows}
    assert any(row["batches"] for row in batch.values())
    assert batch == {key: {name: plan[name] for name in columns} for key, plan in python.items()}
