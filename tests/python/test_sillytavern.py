"""SillyTavern lorebooks and character cards in and out (rolemem.sillytavern, `rolemem config
import --from sillytavern` / `export --to sillytavern`)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from rolemem.character_config import ConfigError, parse_designer_json
from rolemem.character_memory import CharacterMemory
from rolemem.cli import main
from rolemem.sillytavern import from_lorebook, to_lorebook

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
        "constant: constant entries are always unlocked (no conditions) and still recalled by "
        "their keys (entries 2)",
        "cooldown: cooldown is carried, not applied (entries 1)",
        "delay: delay is carried, not applied (entries 1)",
        "depth: insertion depth is carried; rolemem fills its three prompt blocks (entries 0)",
        "disable: disabled entries are never unlocked (a condition no game context meets) "
        "(entries 7)",
        "group: inclusion groups are carried, not applied (entries 1)",
        "keysecondary: secondary keys are carried; recall matches the primary keys "
        "(entries 1, 2, 7)",
        "position: insertion position is carried; rolemem fills its three prompt blocks "
        "(entries 1, 2)",
        "probability: probability is carried, not applied (recall is deterministic) (entries 1)",
        "selective: selective logic is carried; recall matches the primary keys "
        "(entries 0, 1, 2, 7)",
        "selectiveLogic: selective logic is carried; recall matches the primary keys "
        "(entries 1, 2, 7)",
        "sticky: stickiness is carried; rolemem's queue keeps every recalled entry queue_turns "
        "turns (a recall limit) (entries 1)",
        "useProbability: probability is carried, not applied (recall is deterministic) "
        "(entries 0, 1, 7)",
    ]
    card_report = from_lorebook(lorebook("card_v2"), "atelier").report
    assert [line.split(":")[0] for line in card_report] == [
        "constant",
        "depth",
        "enabled",
        "group_weight",
        "position",
        "priority",
        "secondary_keys",
        "selective",
        "sticky",
    ]


def test_an_imported_lorebook_recalls_as_its_keys_and_conditions_say():
    memory = memory_of(from_lorebook(lorebook("world_info"), "atelier").document)
    result = memory.session("a").recall(TEXT, CONTEXT, explain=True)
    assert result.attributes == "能力特征：擅长画会变色的画"
    assert result.events == "回忆：\n-十年前，小时候在海边差点溺水\n"
    assert {row["entry_key"]: row["status"] for row in result.explain} == {
        "attribute:1": "shown",
        "attribute:2": "not relevant",
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


def test_cli_imports_a_lorebook_and_exports_it_back(tmp_path, capsys):
    path = str(tmp_path / "t.duckdb")
    converted = tmp_path / "atelier.json"
    source = FIXTURES / "world_info.json"
    assert main(["init-db", "--db", path]) == 0
    args = ["config", "import", "--from", "sillytavern", "--character", "atelier"]
    assert main([*args, str(source), "--json", str(converted), "--db", path]) == 0
    out, err = capsys.readouterr()
    assert "wrote 3 character_attributes, 1 character_events, 0 character_dialogue_styles" in out
    assert f"{source}: keysecondary: secondary keys are carried" in err
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
