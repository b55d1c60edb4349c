"""build_memory_for_save: the recursive walk over a stored tree, and its errors."""

from __future__ import annotations

import json

import pytest

from rolemem import ChainError, SaveNotFoundError, build_memory, build_memory_for_save
from rolemem.cli import main
from rolemem.testing.demo_data import load_demo

from .conftest import make_tree_db

# (id, save_id, parent_line_id, attribute, content, role_id, display_name)
BRANCHING = [
    (1, 1, None, "system", "设定", None, None),
    (2, 1, 1, "user", "你好", None, "莱姆"),
    (3, 1, 2, "assistant", "第一版回答", 1, "钦灵"),  # regenerated away
    (4, 1, 2, "assistant", "第二版回答", 1, "钦灵"),
    (5, 1, 4, "user", "再见", None, "莱姆"),
    (6, 1, 3, "user", "另一条分支", None, "莱姆"),
]


def test_only_the_current_branch_is_history():
    con = make_tree_db(BRANCHING, [(1, 5)])
    assert build_memory_for_save(con, 1, role_id=1) == [
        {"role": "system", "content": "设定"},
        {"role": "user", "content": "你好"},
        {"role": "assistant", "content": "第二版回答"},
        {"role": "user", "content": "再见"},
    ]


def test_switching_the_save_tip_switches_the_branch():
    con = make_tree_db(BRANCHING, [(1, 6)])
    assert build_memory_for_save(con, 1, role_id=1)[2:] == [
        {"role": "assistant", "content": "第一版回答"},
        {"role": "user", "content": "另一条分支"},
    ]


def test_a_missing_parent_ends_the_walk():
    con = make_tree_db(
        [(10, 1, 999, "user", "孤儿", None, None), (11, 1, 10, "assistant", "嗯", 1, None)],
        [(1, 11)],
    )
    assert build_memory_for_save(con, 1, role_id=1) == [
        {"role": "user", "content": "孤儿"},
        {"role": "assistant", "content": "嗯"},
    ]


def test_a_cycle_is_a_clear_error():
    con = make_tree_db(
        [
            (1, 1, 3, "user", "a", None, None),
            (2, 1, 1, "user", "b", None, None),
            (3, 1, 2, "user", "c", None, None),
        ],
        [(1, 3)],
    )
    with pytest.raises(ChainError, match=r"^save 1: the parent chain has a cycle through line 3$"):
        build_memory_for_save(con, 1, role_id=1)


def test_a_self_parented_line_is_a_cycle():
    con = make_tree_db([(7, 1, 7, "user", "a", None, None)], [(1, 7)])
    with pytest.raises(ChainError, match="cycle through line 7"):
        build_memory_for_save(con, 1, role_id=1)


def test_a_parent_from_another_save_is_a_clear_error():
    con = make_tree_db(
        [(1, 1, None, "user", "a", None, None), (2, 2, 1, "user", "b", None, None)],
        [(1, 1), (2, 2)],
    )
    with pytest.raises(ChainError, match=r"^save 2: line 2 has parent line 1 from save 1$"):
        build_memory_for_save(con, 2, role_id=1)
    assert build_memory_for_save(con, 1, role_id=1) == [{"role": "user", "content": "a"}]


def test_unknown_save_and_empty_save():
    con = make_tree_db([], [(1, None)])
    assert build_memory_for_save(con, 1, role_id=1) == []
    with pytest.raises(SaveNotFoundError, match="save 2 does not exist"):
        build_memory_for_save(con, 2, role_id=1)


def test_unknown_attribute_in_a_stored_save_names_the_line():
    con = make_tree_db([(5, 1, None, "npc", "x", None, None)], [(1, 5)])
    with pytest.raises(ValueError, match="line 5 has unknown attribute 'npc'"):
        build_memory_for_save(con, 1, role_id=1)


def test_demo_database_file_matches_the_list_api(tmp_path, example_2):
    path = str(tmp_path / "demo.duckdb")
    load_demo(path)
    from_file = build_memory_for_save(path, 2, role_id=1, context_emotion=False)
    assert from_file == build_memory(example_2, role_id=1, context_emotion=False)


def test_cli_prints_json_and_fails_in_one_line(tmp_path, capsys, example_2):
    path = str(tmp_path / "demo.duckdb")
    assert main(["init-db", "--db", path, "--demo"]) == 0
    capsys.readouterr()
    assert main(["memory", "--db", path, "--save", "2", "--role", "1"]) == 0
    assert json.loads(capsys.readouterr().out) == build_memory(example_2, role_id=1)

    assert main(["memory", "--db", path, "--save", "99", "--role", "1"]) == 2
    err = capsys.readouterr().err
    assert err == "rolemem: error: save 99 does not exist\n"

    assert main(["memory", "--db", path, "--save", "2"]) == 2
    assert "give the character with --role" in capsys.readouterr().err

    missing = str(tmp_path / "nope.duckdb")
    assert main(["memory", "--db", missing, "--save", "1", "--role", "1"]) == 2
    assert capsys.readouterr().err == (
        f"rolemem: error: {missing}: no such database file (run `rolemem init-db`)\n"
    )
    assert not (tmp_path / "nope.duckdb").exists()


def test_env_var_chooses_the_default_database(tmp_path, monkeypatch, capsys):
    path = str(tmp_path / "env.duckdb")
    monkeypatch.setenv("ROLEMEM_DB", path)
    assert main(["init-db", "--demo"]) == 0
    assert path in capsys.readouterr().out
    assert build_memory_for_save(None, 1, role_id=1)[0] == {
        "role": "system",
        "content": "你叫钦灵，进行角色扮演",
    }
