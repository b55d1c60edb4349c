"""SillyTavern lorebooks and character cards in and out (rolemem.character_memory.sillytavern,
`rolemem config import --from sillytavern` / `export --to sillytavern`)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from rolemem.character_memory import CharacterMemory
from rolemem.character_memory.config import ConfigError, parse_designer_json
from rolemem.character_memory.sillytavern import from_lorebook, to_lorebook
from rolemem.cli import main

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "sillytavern"
CONTEXT = {"intimacy": 2, "exploration": 1, "scene": "gallery"}
TEXT = "今天画画累了，想去海边喝茶，猫咪也去画廊"


def lorebook(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def memory_of(document: dict) -> CharacterMemory:
    with warnings.catch_warnings():  # lorebook contents are longer than the spec's advice
        warnings.simplefilter("ignore")
        return CharacterMemory(config=parse_designer_json(document), character_id="atelier")


@pytest.mark.parametrize("name", ["world_info", "card_v2"])
def test_export_gives_back_the_same_file(name):
    doc = lorebook(name)
    assert to_lorebook(from_lorebook(doc, "atelier").document) == doc


def test_a_bare_character_book_round_trips():
    book = lorebook("card_v2")["data"]["character_book"]
    document = from_lorebook(book, "atelier").document
    assert to_lorebook(document) == book
    # its entries read as a card's: a name stands for a missing comment
    assert list(document["attributes"]) == ["兴趣爱好"]


def test_world_info_maps_keys_content_comment_order_and_game_conditions():
    document = from_lorebook(lorebook("world_info"), "atelier").document
    entries = {
        (kind, group): [(e["关键词"], e["内容"], e["强度"], e["queryParams"]) for e in rows]
        for kind in ("attributes", "events", "dialogue_styles")
        for group, rows in document[kind].items()
    }
    disabled = {"field": "sillytavern_disabled_entry", "value": True, "operator": "eq"}
    assert entries == {
        ("attributes", "能力特征"): [
            (
                ["画画", "绘画"],
                "擅长画会变色的画",
                4,
                [{"field": "exploration", "value": 1, "operator": "gte"}],
            )
        ],
        ("attributes", "世界书"): [(["秘密"], "日记本藏在画架后面", 1, [])],
        ("attributes", "兴趣爱好"): [(["Tea", "茶"], "下午总要喝一壶茶", 5, [disabled])],
        ("events", "回忆"): [
            (
                ["大海", "海边"],
                "小时候在海边差点溺水",
                2,
                [{"field": "intimacy", "value": 2, "operator": "gte"}],
            )
        ],
    }
    assert document["events"]["回忆"][0]["日期"] == "十年前"


def test_import_reports_every_field_with_no_meaning_here():
    assert from_lorebook(lorebook("world_info"), "atelier").report == [
        "cooldown: cooldown is carried, not applied (entries 1)",
        "delay: delay is carried, not applied (entries 1)",
        "depth: insertion depth is carried; rolemem fills its three prompt blocks (entries 0)",
        "disable: disabled entries are never unlocked (a condition no game context meets) "
        "(entries 7)",
        "group: inclusion groups are carried, not applied (entries 1)",
        "position: insertion position is carried; rolemem fills its three prompt blocks "
        "(entries 1, 2)",
        "probability: probability is carried, not applied (recall is deterministic) (entries 1)",
        "useProbability: probability is carried, not applied (recall is deterministic) "
        "(entries 0, 1, 7)",
    ]
    card_report = from_lorebook(lorebook("card_v2"), "atelier").report
    assert [line.split(":")[0] for line in card_report] == [
        "depth",
        "enabled",
        "group_weight",
        "position",
        "priority",
    ]
    # secondary keys of an entry that is not selective do nothing in SillyTavern either
    unselective = {"entries": {"0": {"key": ["猫"], "keysecondary": ["狗"], "selective": False}}}
    assert from_lorebook(unselective, "atelier").report == [
        "keysecondary: secondary keys of an entry that is not selective are carried, not "
        "applied (as in SillyTavern) (entries 0)"
    ]


def rules_of(name: str) -> dict:
    """Each entry's recall rules, by kind and group, as the import wrote them."""
    document = from_lorebook(lorebook(name), "atelier").document
    return {
        (kind, group): [
            {k: e[k] for k in ("次要关键词", "次要关键词逻辑", "常驻", "停留轮数") if k in e}
            for e in rows
        ]
        for kind in ("attributes", "events")
        for group, rows in document[kind].items()
    }


def test_selective_logic_constant_and_sticky_become_recall_rules():
    assert rules_of("world_info") == {
        ("attributes", "能力特征"): [{}],  # no secondary keys: nothing to decide
        ("attributes", "世界书"): [
            {"次要关键词": ["日记"], "次要关键词逻辑": "NOT_ANY", "常驻": True}
        ],
        ("attributes", "兴趣爱好"): [{"次要关键词": ["下午", "点心"], "次要关键词逻辑": "AND_ALL"}],
        ("events", "回忆"): [
            {"次要关键词": ["夏天", "游泳"], "次要关键词逻辑": "NOT_ALL", "停留轮数": 3}
        ],
    }
    # a card keeps sticky and the logic under extensions; selective false turns its keys off
    assert rules_of("card_v2") == {
        ("attributes", "兴趣爱好"): [{"停留轮数": 2}],
        ("events", "计划"): [{"次要关键词": ["展览"], "次要关键词逻辑": "AND_ANY", "常驻": True}],
    }


# one entry per selective logic, all keyed on 画廊, with 展览 and 夜晚 as secondary keys
LOGIC_BOOK = {
    "entries": {
        str(uid): {
            "uid": uid,
            "key": ["画廊"],
            "keysecondary": ["展览", "夜晚"],
            "selective": True,
            "selectiveLogic": uid,
            "comment": logic,
            "content": f"{logic}的画廊",
        }
        for uid, logic in enumerate(("AND_ANY", "NOT_ALL", "NOT_ANY", "AND_ALL"))
    }
}


@pytest.mark.parametrize(
    ("text", "recalled"),
    [
        ("我们去画廊吧", ["NOT_ALL", "NOT_ANY"]),  # no secondary key in the text
        ("画廊有展览吗", ["AND_ANY", "NOT_ALL"]),  # one of the two
        ("画廊夜晚的展览", ["AND_ANY", "AND_ALL"]),  # both
        ("去看展览", []),  # a secondary key alone matches nothing
    ],
)
def test_each_selective_logic_recalls_as_sillytavern_would(text, recalled):
    memory = memory_of(from_lorebook(LOGIC_BOOK, "atelier").document)
    result = memory.session("a").recall(text, {"intimacy": 1}, explain=True)
    shown = sorted(row["group_name"] for row in result.explain if row["status"] == "shown")
    assert shown == sorted(recalled)
    reasons = {row["group_name"]: row["reason"] for row in result.explain}
    if text == "画廊有展览吗":
        assert reasons["NOT_ANY"] == (
            "matched 画廊, but its secondary keywords (展览、夜晚) fail NOT_ANY: 展览 in the text"
        )
        assert reasons["AND_ALL"] == (
            "matched 画廊, but its secondary keywords (展览、夜晚) fail AND_ALL: 展览 in the text"
        )


def test_a_constant_entry_is_recalled_unmatched_while_unlocked_and_sticky_turns_hold_it():
    book = {
        "entries": {
            "0": {
                "key": ["秘密"],
                "comment": "常驻",
                "content": "日记本藏在画架后面",
                "constant": True,
            },
            "1": {
                "key": ["猫咪"],
                "comment": "停留",
                "content": "养了一只叫墨墨的黑猫",
                "sticky": 5,
                "extensions": {
                    "rolemem": {
                        "queryParams": [{"field": "intimacy", "value": 2, "operator": "gte"}]
                    }
                },
            },
            "2": {"key": ["大海"], "comment": "默认", "content": "小时候在海边差点溺水"},
        }
    }
    session = memory_of(from_lorebook(book, "atelier").document).session("a")
    first = session.recall("猫咪和大海", {"intimacy": 2}, explain=True)
    assert (
        first.attributes
        == "常驻：日记本藏在画架后面\n停留：养了一只叫墨墨的黑猫\n默认：小时候在海边差点溺水"
    )
    assert {r["group_name"]: r["reason"] for r in first.explain}["常驻"] == (
        "constant: recalled whenever it is unlocked"
    )
    # the limits' queue keeps 默认 3 turns; 停留 stays 5
    for turn in range(2, 6):
        shown = session.recall("今天天气不错", {"intimacy": 2}).attributes
        assert ("停留" in shown, "默认" in shown) == (True, turn <= 3), turn
    assert "停留" not in session.recall("今天天气不错", {"intimacy": 2}).attributes
    # locked, a constant entry is not shown either
    locked = book["entries"]["0"] | {
        "extensions": {
            "rolemem": {"queryParams": [{"field": "scene", "value": "beach", "operator": "eq"}]}
        }
    }
    other = memory_of(from_lorebook({"entries": {"0": locked}}, "atelier").document)
    assert other.session("b").recall("你好", {"scene": "studio"}).attributes == ""


def test_rules_changed_here_are_written_back_and_the_rest_of_the_file_stays():
    document = from_lorebook(lorebook("world_info"), "atelier").document
    entry = document["events"]["回忆"][0]
    entry["次要关键词逻辑"] = "AND_ANY"
    del entry["停留轮数"]
    exported = to_lorebook(document)
    expected = lorebook("world_info")
    expected["entries"]["1"] |= {"selectiveLogic": 0, "sticky": 0}
    assert exported == expected


def test_export_checks_only_the_rules_it_reads():
    """What the export carries is carried as it is: a designer's own rolemem extension or a
    carried field of another type does not stop it; a rule it reads of a wrong type does."""
    entry = {"关键词": ["酒"], "内容": "x", "强度": 3}
    carried = {"rolemem": {"kind": None, "date": 5}, "sillytavern": {"comment": 7}}
    exported = to_lorebook({"attributes": {"g": [{**entry, "extensions": carried}]}})
    assert exported["entries"]["0"]["extensions"] == {"rolemem": {"kind": None, "date": 5}}
    wrong = {"extensions": {"sillytavern": {"selectiveLogic": "x"}}}
    with pytest.raises(ConfigError, match="selectiveLogic must be 0"):
        to_lorebook({"attributes": {"g": [{**entry, **wrong}]}})


def test_an_imported_lorebook_recalls_as_its_keys_and_conditions_say():
    memory = memory_of(from_lorebook(lorebook("world_info"), "atelier").document)
    result = memory.session("a").recall(TEXT, CONTEXT, explain=True)
    # 日记 is constant (shown unmatched); 海边 matched and NOT_ALL holds (no 夏天, no 游泳)
    assert result.attributes == "能力特征：擅长画会变色的画\n世界书：日记本藏在画架后面"
    assert result.events == "回忆：\n-十年前，小时候在海边差点溺水\n"
    assert {row["entry_key"]: row["status"] for row in result.explain} == {
        "attribute:1": "shown",
        "attribute:2": "shown",
        "attribute:3": "locked",  # 茶 matched, but the entry is disabled in the lorebook
        "event:1": "shown",
    }
    # the game-state condition from extensions.rolemem: intimacy 1 locks the memory of the sea
    assert memory.session("b").recall(TEXT, {**CONTEXT, "intimacy": 1}).events == ""


def test_a_card_recalls_its_book():
    memory = memory_of(from_lorebook(lorebook("card_v2"), "atelier").document)
    result = memory.session("a").recall(TEXT, CONTEXT)
    assert (result.attributes, result.events) == ("兴趣爱好：养了一只叫墨墨的黑猫", "")


def test_config_written_here_exports_as_world_info_and_comes_back():
    demo = json.loads(
        (
            Path(__file__).resolve().parents[2] / "python/rolemem/data/characters/qinling.json"
        ).read_text(encoding="utf-8")
    )
    exported = to_lorebook(demo)
    assert list(exported["entries"]) == [str(n) for n in range(len(exported["entries"]))]
    first = exported["entries"]["0"]
    assert (first["key"], first["comment"], first["order"], first["disable"]) == (
        ["害羞", "脸红", "难为情"],
        "性格特征",
        100,
        False,
    )
    back = from_lorebook(exported, "qinling").document
    for kind in ("attributes", "events", "dialogue_styles"):
        assert {
            group: [(e["关键词"], e["内容"], e["queryParams"], e.get("日期")) for e in rows]
            for group, rows in back[kind].items()
        } == {
            group: [(e["关键词"], e["内容"], e["queryParams"], e.get("日期")) for e in rows]
            for group, rows in demo[kind].items()
        }


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"entries": 3}, "not a SillyTavern lorebook"),
        (
            {"entries": {"0": {"key": "猫", "content": "x"}}},
            "entry 0: keys must be a list of strings",
        ),
        ({"entries": {"0": {"key": [], "content": "x", "order": "1"}}}, "order must be a number"),
        ({"data": {"character_book": {"entries": {}}}}, "entries must be a list"),
        (
            {"entries": {"0": {"key": [], "extensions": "x"}}},
            "entry 0: extensions must be an object",
        ),
        (
            {"entries": {"0": {"key": [], "extensions": {"rolemem": 3}}}},
            "entry 0: extensions.rolemem must be an object",
        ),
        (
            {"entries": {"0": {"key": [], "extensions": {"rolemem": {"queryParams": 3}}}}},
            "entry 0: extensions.rolemem.queryParams must be a list",
        ),
        (
            {"entries": {"0": {"key": [], "extensions": {"rolemem": {"group": ["a"]}}}}},
            r"entry 0: extensions\.rolemem\.group must be a string",
        ),
        ({"entries": {"0": {"key": [], "comment": 5}}}, "entry 0: comment must be a string"),
        (
            {"entries": {"0": {"key": [], "disable": "yes"}}},
            "entry 0: disable must be true or false",
        ),
        ({"entries": [{"keys": [], "enabled": 1}]}, "entry 0: enabled must be true or false"),
    ],
)
def test_bad_lorebooks_are_named(doc, message):
    with pytest.raises(ConfigError, match=message):
        from_lorebook(doc, "atelier")


def test_a_bad_entry_is_named_by_its_path_its_long_key_and_value_cut_short():
    uid, value = "k" * 500, ["c" * 500]
    with pytest.raises(ConfigError) as caught:
        from_lorebook({"entries": {uid: {"key": [], "comment": value}}}, "atelier")
    key = "k" * 59 + "…"
    assert str(caught.value) == (f"entry {key}: comment must be a string, got {repr(value)[:59]}…")
    assert caught.value.field == f"entries.{key}"
    card = {"data": {"character_book": {"entries": [{"keys": []}, {"keys": [], "enabled": 1}]}}}
    with pytest.raises(ConfigError) as caught:
        from_lorebook(card, "atelier")
    assert caught.value.field == "data.character_book.entries[1]"


def test_cli_imports_a_lorebook_and_exports_it_back(tmp_path, capsys):
    path = str(tmp_path / "t.duckdb")
    converted = tmp_path / "atelier.json"
    source = FIXTURES / "world_info.json"
    assert main(["init-db", "--db", path]) == 0
    args = ["config", "import", "--from", "sillytavern", "--character", "atelier"]
    assert main([*args, str(source), "--json", str(converted), "--db", path]) == 0
    out, err = capsys.readouterr()
    assert "wrote 3 character_attributes, 1 character_events, 0 character_dialogue_styles" in out
    assert f"{source}: cooldown: cooldown is carried, not applied" in err
    assert main(["config", "export", "--to", "sillytavern", "--json", str(converted)]) == 0
    assert json.loads(capsys.readouterr().out) == lorebook("world_info")
    # from the database: the config as rolemem holds it (the carried fields are in the --json)
    assert (
        main(["config", "export", "--to", "sillytavern", "--db", path, "--character", "atelier"])
        == 0
    )
    entries = json.loads(capsys.readouterr().out)["entries"]
    assert [(e["key"], e["disable"]) for e in entries.values()] == [
        (["画画", "绘画"], False),
        (["秘密"], False),
        (["Tea", "茶"], True),
        (["大海", "海边"], False),
    ]
