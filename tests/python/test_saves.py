"""The save lifecycle in Python (rolemem.memory_builder.saves): roles, saves, forks, swipes,
reloads, owners."""

from __future__ import annotations

import pytest

from rolemem import build_memory_for_save
from rolemem.errors import (
    ConflictError,
    NotFoundError,
    OwnerlessSaveError,
    RolememError,
    SaveNotFoundError,
)
from rolemem.memory_builder.saves import Saves

from .conftest import demo_store


@pytest.fixture
def saves(tmp_path):
    path = str(tmp_path / "saves.duckdb")
    demo_store(path)
    with Saves(path) as book:
        yield book


def line_count(book: Saves) -> int:
    return book._con.execute("select count(*) from line").fetchone()[0]


def contents(book: Saves, save_id: int, user_id: str | None = "mumu") -> list[str]:
    return [line["content"] for line in book.lines(save_id, user_id=user_id)["lines"]]


def played(book: Saves) -> tuple[int, int, list[int]]:
    """A role and mumu's save with two turns."""
    role = book.create_role("祁煜")["role_id"]
    save = book.create_save(user_id="mumu", name="mine")["save_id"]
    ids = book.append(
        save,
        [
            {"attribute": "user", "content": "你好"},
            {"attribute": "assistant", "content": "你好呀", "role_id": role},
            {"attribute": "user", "content": "在画什么"},
            {"attribute": "assistant", "content": "海", "role_id": role},
        ],
        user_id="mumu",
    )["line_ids"]
    return role, save, ids


def test_roles_and_saves_take_chosen_or_new_keys(saves):
    no_ids = {"character_id": None, "agent_id": None, "omniscient": False}
    assert saves.create_role("祁煜") == {"role_id": 2, "name": "祁煜", **no_ids}
    assert saves.create_role("钦灵的猫", role_id=40) == {
        "role_id": 40,
        "name": "钦灵的猫",
        **no_ids,
    }
    # the sequence's next key, not max(id) + 1; a key a caller took is skipped
    assert saves.create_role("下一个")["role_id"] == 3
    saves.create_role("抢先", role_id=4)
    assert saves.create_role("再下一个")["role_id"] == 5
    with pytest.raises(ConflictError, match="this role id is taken"):
        saves.create_role("again", role_id=40)
    assert saves.create_save(user_id="mumu", save_id=9) == {
        "save_id": 9,
        "user_id": "mumu",
        "name": None,
        "tip_line_id": None,
        "forked_from_line_id": None,
        "user_name": None,
    }
    assert saves.create_save(user_id="mumu")["save_id"] == 4  # the demo holds 1 to 3; not 10
    with pytest.raises(ConflictError, match="this save id is not available"):
        saves.create_save(user_id="mumu", save_id=9)


def test_every_save_has_an_owner_and_chosen_ids_fit_a_javascript_number(saves):
    with pytest.raises(RolememError, match="user_id must be non-empty text") as caught:
        saves.create_save(name="nobody's")
    assert caught.value.field == "user_id"
    for too_big in (2**53, 2**63 - 1):
        with pytest.raises(RolememError, match=r"id must be from 1 to 9007199254740991"):
            saves.create_role("x", role_id=too_big)
        with pytest.raises(RolememError, match=r"id must be from 1 to 9007199254740991"):
            saves.create_save(user_id="mumu", save_id=too_big)
    saves.create_role("最后", role_id=2**53 - 1)
    saves.create_save(user_id="mumu", save_id=2**53 - 1)
    # the next keys are the sequence's: a chosen id at the ceiling pushes none out of range
    assert saves.create_role("再一个")["role_id"] == 2
    assert saves.create_save(user_id="mumu")["save_id"] == 4


def test_a_new_role_or_save_is_held_to_the_services_contract(saves):
    """The Python API reads a new role or save by the contract POST /roles and /saves read
    (contract.NewRole, NewSave): what it stores, the service would accept and answer."""
    roles_before = saves._con.execute("select count(*) from role").fetchone()[0]
    refused = [
        (lambda: saves.create_role("名" * 129), "name", "at most 128 characters"),
        (lambda: saves.create_role("x", character_id="c" * 129), "character_id", "at most 128"),
        (lambda: saves.create_role("x", agent_id=" "), "agent_id", "must be non-empty text"),
        (lambda: saves.create_role("x", agent_id="a\x00"), "agent_id", "no NUL"),
        (lambda: saves.create_role("x\ud800"), "name", "no lone surrogate"),
        (lambda: saves.create_save(user_id="u" * 129), "user_id", "at most 128 characters"),
        (lambda: saves.create_save(user_id="mumu", name="n" * 129), "name", "at most 128"),
        (lambda: saves.create_save(user_id="mumu", user_name=""), "user_name", "non-empty text"),
        (
            lambda: saves.create_save(user_id="mumu", from_line_id=2**53),
            "from_line_id",
            "must be from 1 to 9007199254740991",
        ),
    ]
    for call, field, message in refused:
        with pytest.raises(RolememError, match=message) as caught:
            call()
        assert caught.value.field == field
        assert str(caught.value).startswith(f"{field} ")
    assert saves._con.execute("select count(*) from role").fetchone()[0] == roles_before
    # at the limits, both are stored
    assert saves.create_role("名" * 128, agent_id="a" * 128)["name"] == "名" * 128
    assert saves.create_save(user_id="u" * 128, name="n" * 128)["user_id"] == "u" * 128


def test_appended_lines_page_from_the_tip(saves):
    _, save, ids = played(saves)
    assert saves.get(save, user_id="mumu")["line_count"] == 4
    first = saves.lines(save, user_id="mumu", limit=3)
    assert [line["line_id"] for line in first["lines"]] == ids[1:]
    assert (first["has_more"], first["next_before"]) == (True, ids[1])
    rest = saves.lines(save, user_id="mumu", limit=3, before=first["next_before"])
    assert [line["line_id"] for line in rest["lines"]] == ids[:1]
    assert (rest["has_more"], rest["next_before"]) == (False, None)


def test_a_regenerated_reply_is_a_sibling_that_becomes_the_tip(saves):
    role, save, ids = played(saves)
    answer = saves.regenerate(save, {"content": "山"}, user_id="mumu")
    assert answer["replaced_line_id"] == ids[-1]
    assert contents(saves, save) == ["你好", "你好呀", "在画什么", "山"]
    assert build_memory_for_save(saves._con, save, role_id=role)[-1] == {
        "role": "assistant",
        "content": "山",
    }
    saves.append(save, [{"attribute": "user", "content": "好看"}], user_id="mumu")
    with pytest.raises(ConflictError, match="is a user line: only a reply"):
        saves.regenerate(save, {"content": "x"}, user_id="mumu")


def test_a_reload_moves_the_tip_within_the_saves_tree_only(saves):
    role, save, ids = played(saves)
    swiped = saves.regenerate(save, {"content": "山"}, user_id="mumu")["tip_line_id"]
    assert saves.set_tip(save, ids[-1], user_id="mumu") == {"save_id": save, "tip_line_id": ids[-1]}
    assert contents(saves, save) == ["你好", "你好呀", "在画什么", "海"]
    saves.set_tip(save, swiped, user_id="mumu")
    assert contents(saves, save)[-1] == "山"
    with pytest.raises(RolememError, match="line 3 is not in save 4's tree") as caught:
        saves.set_tip(save, 3, user_id="mumu")
    assert caught.value.field == "line_id"
    with pytest.raises(NotFoundError, match="no line with id 9999"):
        saves.set_tip(save, 9999, user_id="mumu")


def test_a_fork_shares_the_lines_up_to_its_start(saves):
    role, save, ids = played(saves)
    before = line_count(saves)
    fork = saves.create_save(user_id="mumu", from_line_id=ids[1])
    assert (fork["tip_line_id"], fork["forked_from_line_id"]) == (ids[1], ids[1])
    assert line_count(saves) == before  # shared, not copied
    assert contents(saves, fork["save_id"]) == ["你好", "你好呀"]
    saves.append(
        fork["save_id"],
        [
            {"attribute": "user", "content": "去海边吧"},
            {"attribute": "assistant", "content": "好", "role_id": role},
        ],
        user_id="mumu",
    )
    assert build_memory_for_save(saves._con, fork["save_id"], role_id=role) == [
        {"role": "user", "content": "你好"},
        {"role": "assistant", "content": "你好呀"},
        {"role": "user", "content": "去海边吧"},
        {"role": "assistant", "content": "好"},
    ]
    assert contents(saves, save) == ["你好", "你好呀", "在画什么", "海"]  # the origin is as it was
    # a fork of the fork passes through both fork points
    grand = saves.create_save(
        user_id="mumu", from_line_id=saves.get(fork["save_id"], user_id="mumu")["tip_line_id"]
    )
    goodbye = saves.append(
        grand["save_id"],
        [
            {"attribute": "user", "content": "再见"},
            {"attribute": "assistant", "content": "拜拜", "role_id": role},
        ],
        user_id="mumu",
    )["tip_line_id"]
    assert contents(saves, grand["save_id"]) == ["你好", "你好呀", "去海边吧", "好", "再见", "拜拜"]
    # reloading to a shared line moves the fork point there; back to its own line restores it
    saves.set_tip(grand["save_id"], ids[1], user_id="mumu")
    assert saves.get(grand["save_id"], user_id="mumu")["forked_from_line_id"] == ids[1]
    assert contents(saves, grand["save_id"]) == ["你好", "你好呀"]
    saves.append(grand["save_id"], [{"attribute": "user", "content": "嗯"}], user_id="mumu")
    assert contents(saves, grand["save_id"]) == ["你好", "你好呀", "嗯"]
    saves.set_tip(grand["save_id"], goodbye, user_id="mumu")  # its line 拜拜
    assert contents(saves, grand["save_id"]) == ["你好", "你好呀", "去海边吧", "好", "再见", "拜拜"]


def test_another_players_save_is_not_revealed(saves):
    _, save, ids = played(saves)
    for call in (
        lambda: saves.get(save, user_id="stranger"),
        lambda: saves.lines(save, user_id="stranger"),
        lambda: saves.lines(save),
        lambda: saves.append(save, [{"attribute": "user", "content": "x"}], user_id="stranger"),
        lambda: saves.regenerate(save, {"content": "x"}, user_id="stranger"),
        lambda: saves.set_tip(save, ids[0], user_id="stranger"),
    ):
        with pytest.raises(SaveNotFoundError, match=f"no save with id {save}"):
            call()
    with pytest.raises(NotFoundError, match=f"no line with id {ids[0]}"):
        saves.create_save(user_id="stranger", from_line_id=ids[0])
    # a reload onto another player's line does not reveal whose save holds it
    own = saves.create_save(user_id="stranger")["save_id"]
    saves.append(own, [{"attribute": "user", "content": "嗨"}], user_id="stranger")
    with pytest.raises(NotFoundError, match=f"no line with id {ids[0]}$"):
        saves.set_tip(own, ids[0], user_id="stranger")


def test_a_save_without_an_owner_is_refused_unless_the_game_keeps_ownership(saves):
    # a save the game wrote itself, with no owner
    con = saves._con
    con.execute("insert into save (id, name) values (50, 'the game''s')")
    (line,) = con.execute(
        """insert into line (save_id, attribute, content) values (50, 'user', '你好')
        returning id"""
    ).fetchone()
    con.execute("update save set last_message_id = $line where id = 50", {"line": line})
    calls = (
        lambda book: book.get(50, user_id="anyone"),
        lambda book: book.lines(50),
        lambda book: book.append(50, [{"attribute": "user", "content": "x"}], user_id="anyone"),
        lambda book: book.regenerate(50, {"content": "x"}, user_id="anyone"),
        lambda book: book.set_tip(50, line, user_id="anyone"),
    )
    before = line_count(saves)
    for call in calls:
        with pytest.raises(OwnerlessSaveError, match="save 50 has no owner") as caught:
            call(saves)
        assert caught.value.field == "save_id"
    with pytest.raises(OwnerlessSaveError) as caught:
        saves.create_save(user_id="anyone", from_line_id=line)
    assert caught.value.field == "from_line_id"
    assert line_count(saves) == before
    with Saves(con, open_ownerless_saves=True) as open_book:
        assert open_book.get(50, user_id="anyone")["line_count"] == 1


def test_bad_lines_name_the_field_and_write_nothing(saves):
    _, save, _ = played(saves)
    before = line_count(saves)
    cases = [
        ({"attribute": "robot", "content": "x"}, "lines[1].attribute"),
        ({"attribute": "user", "content": "  "}, "lines[1].content"),
        ({"attribute": "user", "content": "x", "role_id": 2**63}, "lines[1].role_id"),
        ({"attribute": "assistant", "content": "x", "role_id": 77}, "lines[1].role_id"),
        ({"attribute": "user", "content": "x\ud800"}, "lines[1].content"),
        ({"attribute": "user", "content": "x", "mood": "?"}, "lines[1]"),
    ]
    for bad, field in cases:
        with pytest.raises(RolememError) as caught:
            saves.append(save, [{"attribute": "user", "content": "ok"}, bad], user_id="mumu")
        assert caught.value.field == field, (bad, caught.value)
    assert line_count(saves) == before


def test_a_saves_lineage_is_itself_and_every_save_it_was_forked_from(saves):
    """A read of a save's memory (`fresh_lineage`) walks the fork links only for a fork, and
    answers as the walk (`lineage`) does for forks and others alike."""
    from rolemem.memory_builder import history

    _, save, ids = played(saves)
    fork = saves.create_save(user_id="mumu", from_line_id=ids[1])["save_id"]
    grand = saves.create_save(user_id="mumu", from_line_id=ids[0])["save_id"]
    [own] = saves.append(fork, [{"attribute": "user", "content": "去海边吧"}], user_id="mumu")[
        "line_ids"
    ]
    grandchild = saves.create_save(user_id="mumu", from_line_id=own)["save_id"]
    cur = saves._con.cursor()
    history.ensure_fresh(cur, [save])  # the tables checked on this cursor: the one-statement read
    expected = {
        save: [save],
        fork: [save, fork],
        grand: [save, grand],
        grandchild: [save, fork, grandchild],
    }
    for save_id, lineage in expected.items():
        # the first read may bring the save up to date; the second finds it fresh
        assert history.fresh_lineage(cur, [save_id]) == lineage
        assert history.fresh_lineage(cur, [save_id]) == lineage
        assert history.lineage(cur, [save_id]) == lineage
