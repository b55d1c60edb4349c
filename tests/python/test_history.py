"""Write-time history tables: refreshed for a save whose tip moved, never read stale."""

from __future__ import annotations

import duckdb
import pytest

from rolemem import ChainError, build_memory_for_save
from rolemem.memory_builder import history
from rolemem.memory_builder.history import refresh_history

from .conftest import make_tree_db, run_dbt


def lines_of(con, save_id=1):
    return con.execute(
        "select count(*) from int_lines_chained_to_root where save_id = ?", [save_id]
    ).fetchone()[0]


@pytest.fixture
def con():
    return make_tree_db(
        [
            (1, 1, None, "system", "你是钦灵", 1, "钦灵"),
            (2, 1, 1, "user", "你好", None, "莱姆"),
            (3, 1, 2, "assistant", "你好呀", 1, "钦灵"),
        ],
        [(1, 3)],
    )


def test_a_line_the_game_appends_itself_is_in_the_next_read(con):
    assert build_memory_for_save(con, 1, role_id=1)[-1] == {
        "role": "assistant",
        "content": "你好呀",
    }
    assert lines_of(con) == 3
    # the game writes the next turn directly, without rolemem
    con.execute(
        "insert into line (id, save_id, parent_line_id, attribute, content) "
        "values (4, 1, 3, 'user', '今天去哪')"
    )
    con.execute("update save set last_message_id = 4 where id = 1")
    assert build_memory_for_save(con, 1, role_id=1)[-1] == {"role": "user", "content": "今天去哪"}
    assert lines_of(con) == 4


def test_tables_are_checked_once_per_connection(con, monkeypatch):
    """The history tables and the game's columns are checked on a connection's first refresh,
    not before each (a catalog scan); a new connection is checked again."""
    checks = []
    check = history.ensure_tables
    monkeypatch.setattr(history, "ensure_tables", lambda cur: checks.append(1) or check(cur))
    assert refresh_history(con) == 1
    con.execute(
        "insert into line (id, save_id, parent_line_id, attribute, content) "
        "values (4, 1, 3, 'user', '今天去哪')"
    )
    con.execute("update save set last_message_id = 4 where id = 1")
    assert refresh_history(con) == 1
    assert lines_of(con) == 4
    assert len(checks) == 1
    history.ensure_fresh(con.cursor(), [1])  # a cursor without its connection: checked
    assert len(checks) == 2
    con.execute("drop table int_save_history_tips")  # a demo store recreated, say
    assert refresh_history(con) == 1  # made again, the save rebuilt
    assert len(checks) == 3


def test_a_regenerated_reply_replaces_the_old_branch(con):
    build_memory_for_save(con, 1, role_id=1)
    con.execute(
        "insert into line (id, save_id, parent_line_id, attribute, content, role_id) "
        "values (5, 1, 2, 'assistant', '重新生成的回复', 1)"
    )
    con.execute("update save set last_message_id = 5 where id = 1")
    assert build_memory_for_save(con, 1, role_id=1)[-1]["content"] == "重新生成的回复"
    assert con.execute(
        "select list(line_id order by line_position) from "
        "int_lines_chained_to_root where save_id = 1"
    ).fetchone()[0] == [1, 2, 5]


def test_characters_not_in_the_table_are_built_from_the_stored_chain(con):
    by_name = build_memory_for_save(con, 1, display_name="钦灵", context_emotion=False)
    assert by_name == build_memory_for_save(con, 1, role_id=1)
    # role 2 never speaks here: every line is someone else's
    assert build_memory_for_save(con, 1, role_id=2) == [
        {"role": "user", "content": "{莱姆：你好\n钦灵：你好呀}"}
    ]


def test_the_stored_history_names_the_player_by_the_saves_name_and_a_request_by_its_own():
    """A player line without a display name is named by the save's user_name in the stored
    rows; a request naming another is rendered from the chain (the rows stay the save's), and
    a save renamed by the game is rebuilt before it is read."""
    con = make_tree_db(
        [
            (1, 1, None, "user", "在吗", None, None),
            (2, 1, 1, "assistant", "在", 2, "白小喵"),
            (3, 1, 2, "assistant", "嗯", 1, "钦灵"),
        ],
        [(1, 3)],
    )
    refresh_history(con)  # the save gains its user_name column, still null
    asked = {"role": "user", "content": "{用户：在吗\n白小喵：在}"}
    assert build_memory_for_save(con, 1, role_id=1)[0] == asked

    def stored():
        return con.execute(
            "select content from memory_messages where target_key = 'role_id=1' "
            "and message_index = 0"
        ).fetchone()[0]

    con.execute("update save set user_name = '木木' where id = 1")
    assert build_memory_for_save(con, 1, role_id=1)[0]["content"] == "{木木：在吗\n白小喵：在}"
    assert stored() == "{木木：在吗\n白小喵：在}"
    assert build_memory_for_save(con, 1, role_id=1, user_name="阿远")[0]["content"] == (
        "{阿远：在吗\n白小喵：在}"
    )
    assert stored() == "{木木：在吗\n白小喵：在}"
    con.execute("update save set user_name = '' where id = 1")  # blank: no name
    assert build_memory_for_save(con, 1, role_id=1)[0] == asked


def test_a_tip_that_is_missing_or_in_another_save_is_a_chain_error():
    con = make_tree_db(
        [(1, 1, None, "user", "a", None, None), (2, 2, None, "user", "b", None, None)],
        [(1, 9), (2, 1)],
    )
    with pytest.raises(ChainError, match="save 1: last_message_id 9 does not exist"):
        build_memory_for_save(con, 1, role_id=1)
    with pytest.raises(ChainError, match="save 2: last_message_id 1 is a line of save 1"):
        build_memory_for_save(con, 2, role_id=1)


def test_a_read_only_database_is_answered_from_the_lines(tmp_path):
    path = str(tmp_path / "ro.duckdb")
    source = make_tree_db(
        [(1, 1, None, "user", "你好", None, None), (2, 1, 1, "assistant", "嗯", 1, None)], [(1, 2)]
    )
    source.execute(f"attach '{path}' as target")
    source.execute("copy from database memory to target")
    source.close()
    with duckdb.connect(path, read_only=True) as read_only:
        assert build_memory_for_save(read_only, 1, role_id=1) == [
            {"role": "user", "content": "你好"},
            {"role": "assistant", "content": "嗯"},
        ]


def test_refresh_history_and_dbt_build_the_same_rows(tmp_path):
    from .synthetic_dialogue import generate_dialogue

    path = str(tmp_path / "rolemem.duckdb")
    with duckdb.connect(path) as con:
        generate_dialogue(con, saves=8, lines_per_save=60)
        assert refresh_history(con) == 8
        assert refresh_history(con) == 0
        python = con.execute(
            "select * exclude (target_role_id, target_script_role_id) "
            "from memory_messages order by all"
        ).fetchall()
        tips = con.execute("select * from int_save_history_tips order by all").fetchall()
    run_dbt(path, tmp_path, "run", "--select", "+memory_messages", "+int_save_history_tips")
    with duckdb.connect(path) as con:
        assert (
            con.execute(
                "select * exclude (target_role_id, target_script_role_id) "
                "from memory_messages order by all"
            ).fetchall()
            == python
        )
        assert con.execute("select * from int_save_history_tips order by all").fetchall() == tips
        assert refresh_history(con) == 0  # dbt recorded the same tips


def history_rows(con, save_id):
    return {
        table: con.execute(
            f"select * from {table} where save_id = ? order by all", [save_id]
        ).fetchall()
        for table in history.TABLES
    }


def test_appended_lines_give_the_rows_a_full_rebuild_gives(monkeypatch):
    """Lines appended at the tip are refreshed without rebuilding the save (new lines walked
    alone, each character's messages rebuilt from its last one); every kind of next line —
    the player, the character, a second line of the same speaker, a narrator, a character
    speaking for the first time, a system line, a regenerated reply (a branch: rebuilt
    whole) — must leave exactly the rows a rebuild from nothing gives."""
    from .synthetic_dialogue import generate_dialogue

    taken = []
    append = history._append
    monkeypatch.setattr(
        history,
        "_append",
        lambda *args: taken.append(append(*args)) or taken[-1],
    )
    con = duckdb.connect()
    generate_dialogue(con, saves=1, lines_per_save=40, seed=3)
    refresh_history(con, [1])
    taken.clear()
    # the last two: who was present (none said so before them): the first line that says it,
    # then a line inheriting it from the recorded tip
    nexts = [
        ("user", None, None, "莱姆", "教室", None),
        ("assistant", 1, None, "钦灵", None, None),
        ("assistant", 1, None, "钦灵", None, None),
        ("user", None, None, "莱姆", None, None),
        ("user", None, None, "莱姆", "天台", None),
        ("assistant", None, "1", "白小喵", None, None),
        ("assistant", 9, None, "新角色", None, None),
        ("assistant", None, None, "旁白", None, None),
        ("system", 9, None, None, None, None),
        ("user", None, None, "莱姆", None, None),
        ("assistant", 1, None, "钦灵", "教室", None),
        ("regenerate", 1, None, "钦灵", None, None),
        ("user", None, None, "莱姆", None, None),
        ("user", None, None, "莱姆", None, "[9]"),
        ("assistant", 9, None, "新角色", None, None),
        ("assistant", 1, None, "钦灵", None, None),
    ]
    for n, (attribute, role_id, script_role_id, name, scene, present) in enumerate(nexts):
        tip, parent_of_tip = con.execute(
            "select s.last_message_id, l.parent_line_id from save as s "
            "join line as l on l.id = s.last_message_id where s.id = 1"
        ).fetchone()
        parent = parent_of_tip if attribute == "regenerate" else tip
        con.execute(
            "insert into line (id, save_id, parent_line_id, attribute, role_id, script_role_id,"
            " display_name, content, scene, present_role_ids)"
            " select max(id) + 1, 1, ?, ?, ?, ?, ?, ?, ?, ? from line",
            [
                parent,
                "assistant" if attribute == "regenerate" else attribute,
                role_id,
                script_role_id,
                name,
                f"第{n}句",
                scene,
                present,
            ],
        )
        con.execute("update save set last_message_id = (select max(id) from line) where id = 1")
        refresh_history(con, [1])
        appended = history_rows(con, 1)
        con.execute("delete from int_save_history_tips where save_id = 1")  # forget: rebuild
        refresh_history(con, [1])
        assert appended == history_rows(con, 1), f"after next line {n} ({attribute})"
    # every next line but the regenerated reply took the append path (each rebuild did not)
    assert taken == [x for attribute, *_ in nexts for x in (attribute != "regenerate", False)]
    # the presence said was inherited: the last line's row says it too
    assert con.execute(
        "select present_role_ids from int_lines_chained_to_root where save_id = 1"
        " order by line_position desc limit 1"
    ).fetchone() == ("[9]",)
