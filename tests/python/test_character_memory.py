"""Character (solidified) memory: the spec's three examples, filters, recall, queues, config."""

from __future__ import annotations

import copy
import json
import threading
import warnings
from pathlib import Path

import pytest

from rolemem.character_memory import CharacterLibrary, CharacterMemory
from rolemem.character_memory.config import (
    ConfigError,
    ConfigWarning,
    demo_config,
    export_designer_json,
    parse_designer_json,
)

DATA = Path(__file__).resolve().parents[2] / "python" / "rolemem" / "data" / "characters"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="module")
def qiyu() -> CharacterMemory:
    return CharacterMemory(character_id="qiyu")


def test_spec_example_1_attributes(qiyu):
    result = qiyu.session("ex1").recall(
        "今天画画时你好温柔",
        {"intimacy": 2, "exploration": 3, "scene": "studio", "time": "day"},
    )
    assert result.attributes == "能力特征：艺术天赋、创作出独特的变色画作\n性格特征：温柔、内心温柔"


def test_spec_example_2_events(qiyu):
    result = qiyu.session("ex2").recall(
        "你为什么会来到这里？",
        {"intimacy": 2, "exploration": 2, "scene": "gallery", "time": "day"},
        require_match=False,
    )
    assert result.events == (
        "身世：\n-数百年前，在人类世界建立了第一间画廊，开始收集美好的画作\n"
        "\n"
        "相遇：\n-2024-01-20，在画廊偶遇闯入禁区的{{user}}，被她对画作的独特见解吸引\n"
        "-为了保护{{user}}，主动请缨成为她的保镖，开始了双重身份的生活\n"
    )


def test_spec_example_3_dialogue_styles(qiyu):
    result = qiyu.session("ex3").recall(
        "今天的画真漂亮！",
        {"intimacy": 1, "exploration": 2, "scene": "gallery", "time": "day", "emotion": "happy"},
    )
    assert result.dialogue_style == (
        "-被你发现我的小心思了呢，这幅画可是为你准备的\n"
        "-谢谢你的夸奖，不过比起画作，我更想听听你的想法\n"
        "-这幅画的灵感来自于你的笑容，所以才会这么美\n"
    )


def test_names_fill_placeholders_and_are_stopwords(qiyu):
    result = qiyu.session("names").recall(
        "木木在画廊", {"intimacy": 2, "scene": "gallery"}, user_name="木木", char_name="祁煜"
    )
    assert "在画廊偶遇闯入禁区的木木" in result.events
    assert [w["word"] for w in result.words if w["word_source"] == "token"] == ["画廊"]


def test_result_fills_a_prompt_template(qiyu):
    result = qiyu.session("fill").recall(
        "今天的画真漂亮！", {"intimacy": 1, "scene": "gallery", "time": "day"}
    )
    template = (
        "<character>\n{{character_memory_attributes}}\n</character>\n"
        "<events>{{character_memory_event}}</events>\n"
        "<style>\n{{character_dialogue_style}}</style> {{user}}"
    )
    assert result.fill(template) == (
        f"<character>\n{result.attributes}\n</character>\n<events>{result.events}</events>\n"
        f"<style>\n{result.dialogue_style}</style> {{{{user}}}}"
    )
    assert "{{character" not in result.fill(template)


def test_explain_says_why(qiyu):
    result = qiyu.session("explain").recall(
        "今天画画时你好温柔", {"intimacy": 2, "exploration": 3, "scene": "studio"}, explain=True
    )
    by_content = {row["content"]: row for row in result.explain}
    assert by_content["对{{user}}格外温柔"]["status"] == "locked"
    assert by_content["对{{user}}格外温柔"]["failed_condition"] == "intimacy gte 3 (context: 2)"
    assert by_content["艺术天赋"]["status"] == "shown"
    assert by_content["艺术天赋"]["match_kind"] == "keyword"
    assert by_content["艺术天赋"]["reason"] == "matched 创作、画画、艺术"
    assert by_content["艺术天赋"]["matches"] == [
        {"word": "画画", "how": "keyword", "text_position": 3},
        {"word": "创作", "how": "associated keyword", "text_position": None},
        {"word": "艺术", "how": "associated keyword", "text_position": None},
        {"word": "艺术", "how": "content", "text_position": None},
    ]
    assert by_content["创作出独特的变色画作"]["match_kind"] == "associated keyword"
    # an entry that matched no word is not judged by its lock: not relevant, and why
    assert by_content["外公是强大的东海龙王"]["status"] == "not relevant"
    assert by_content["外公是强大的东海龙王"]["reason"] == (
        "none of its keywords (外公、东海、龙王、家族、血脉) is in the text, "
        "nor a word of the text in its content"
    )
    configured = demo_config().tables.values()
    assert len(result.explain) == sum(r["character_id"] == "qiyu" for t in configured for r in t)
    assert qiyu.session("quiet").recall("今天画画时你好温柔").explain == []  # only when asked
    everything = qiyu.session("explain-all").recall(
        "今天画画时你好温柔",
        {"intimacy": 2, "exploration": 3, "scene": "studio"},
        require_match=False,
        explain=True,
    )
    by_content = {row["content"]: row for row in everything.explain}
    assert by_content["外公是强大的东海龙王"]["status"] == "locked"
    assert by_content["外公是强大的东海龙王"]["failed_condition"] == (
        "exploration gte 4 (context: 3)"
    )
    assert by_content["利莫里亚文明覆灭，作为最后的海神带着族人的希望逃离"]["status"] == "shown"


# --- queryParams operators, on a one-entry character ---------------------------------------


def one_entry(conditions: list[dict]) -> CharacterMemory:
    doc = {
        "attributes": {
            "测试": [
                {"关键词": ["钥匙"], "内容": "她有一把钥匙", "强度": 3, "queryParams": conditions}
            ]
        }
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        return CharacterMemory.from_designer_json(doc, character_id="t")


def unlocked(conditions: list[dict], context: dict | None) -> bool:
    result = one_entry(conditions).session("u").recall("钥匙", context)
    return result.attributes == "测试：她有一把钥匙"


@pytest.mark.parametrize(
    ("condition", "context", "expected"),
    [
        ({"field": "lv", "operator": "eq", "value": 2}, {"lv": 2}, True),
        ({"field": "lv", "operator": "eq", "value": 2}, {"lv": 2.0}, True),
        ({"field": "lv", "operator": "eq", "value": 2}, {"lv": 3}, False),
        ({"field": "lv", "operator": "ne", "value": 2}, {"lv": 3}, True),
        ({"field": "lv", "operator": "ne", "value": 2}, {"lv": 2}, False),
        ({"field": "lv", "operator": "gt", "value": 2}, {"lv": 3}, True),
        ({"field": "lv", "operator": "gt", "value": 2}, {"lv": 2}, False),
        ({"field": "lv", "operator": "gte", "value": 2}, {"lv": 2}, True),
        ({"field": "lv", "operator": "lt", "value": 2}, {"lv": 1}, True),
        ({"field": "lv", "operator": "lt", "value": 2}, {"lv": 2}, False),
        ({"field": "lv", "operator": "lte", "value": 2}, {"lv": 2}, True),
        ({"field": "lv", "operator": "lte", "value": 2}, {"lv": 3}, False),
        ({"field": "lv", "operator": "gt", "value": 9}, {"lv": 10}, True),  # numeric, not text
        ({"field": "s", "operator": "eq", "value": "day"}, {"s": "day"}, True),
        ({"field": "s", "operator": "eq", "value": "day"}, {"s": "Day"}, False),
        ({"field": "s", "operator": "gt", "value": "b"}, {"s": "c"}, True),  # text order
        ({"field": "s", "operator": "in", "value": ["a", "b"]}, {"s": "b"}, True),
        ({"field": "s", "operator": "in", "value": ["a", "b"]}, {"s": "c"}, False),
        ({"field": "s", "operator": "in", "value": "b"}, {"s": "b"}, True),  # scalar = [scalar]
        ({"field": "s", "operator": "in", "value": []}, {"s": "b"}, False),
        ({"field": "s", "operator": "not_in", "value": ["a", "b"]}, {"s": "c"}, True),
        ({"field": "s", "operator": "not_in", "value": ["a", "b"]}, {"s": "a"}, False),
        ({"field": "n", "operator": "in", "value": [1, 2]}, {"n": 2}, True),
        ({"field": "t", "operator": "contains", "value": "雨"}, {"t": "下雨天"}, True),
        ({"field": "t", "operator": "contains", "value": "雪"}, {"t": "下雨天"}, False),
        ({"field": "t", "operator": "contains", "value": "xmas"}, {"t": ["new", "xmas"]}, True),
        ({"field": "t", "operator": "contains", "value": "xm"}, {"t": ["new", "xmas"]}, False),
        ({"field": "b", "operator": "eq", "value": True}, {"b": True}, True),
        # type mixes: a number and a string compare as text
        ({"field": "lv", "operator": "eq", "value": 2}, {"lv": "2"}, True),
        ({"field": "lv", "operator": "gt", "value": 9}, {"lv": "10"}, False),
        # a field missing from the context fails, whatever the operator
        ({"field": "lv", "operator": "ne", "value": 2}, {}, False),
        ({"field": "lv", "operator": "not_in", "value": [2]}, {}, False),
    ],
)
def test_operators(condition, context, expected):
    assert unlocked([condition], context) is expected


def test_all_conditions_must_hold():
    conditions = [
        {"field": "a", "operator": "gte", "value": 1},
        {"field": "b", "operator": "eq", "value": "x"},
    ]
    assert unlocked(conditions, {"a": 1, "b": "x"}) is True
    assert unlocked(conditions, {"a": 1, "b": "y"}) is False


def test_intimacy_defaults_to_level_1():
    condition = [{"field": "intimacy", "operator": "eq", "value": 1}]
    assert unlocked(condition, {}) is True
    assert unlocked(condition, None) is True
    assert unlocked(condition, {"intimacy": 2}) is False


def test_bad_context_types_are_clear():
    memory = one_entry([])
    with pytest.raises(TypeError, match=r"context\['x'\] must be a number, string, bool"):
        memory.session("u").recall("钥匙", {"x": {"nested": 1}})
    with pytest.raises(TypeError, match="context must be a mapping"):
        memory.session("u").recall("钥匙", ["intimacy"])


# --- recall: relevance, ranking, caps ----------------------------------------------------


def many(entries_by_category: dict, **limits) -> CharacterMemory:
    doc = {"attributes": entries_by_category}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        return CharacterMemory.from_designer_json(doc, character_id="c", limits=limits or None)


def test_single_character_words_never_match_content():
    memory = many({"类": [{"关键词": ["无关"], "内容": "画里有猫", "强度": 3}]})
    assert memory.session("u").recall("猫").attributes == ""
    assert memory.session("v").recall("画里").attributes == "类：画里有猫"


def test_a_keyword_matches_inside_a_longer_word_and_explain_says_where():
    memory = many(
        {
            "爱好": [
                {"关键词": ["酒"], "内容": "喜欢喝桂花酿", "强度": 3},
                {"关键词": ["Wine"], "内容": "收藏红酒", "强度": 2},
            ]
        }
    )
    for text, position in (("再来一壶酒", 5), ("这酒有点烈", 2)):
        result = memory.session(text).recall(text, explain=True)
        assert result.attributes == "爱好：喜欢喝桂花酿"
        row = next(r for r in result.explain if r["content"] == "喜欢喝桂花酿")
        assert row["matches"] == [
            {"word": "酒", "how": "keyword inside a word", "text_position": position}
        ]
    result = memory.session("en").recall("a glass of WINE", explain=True)
    assert result.attributes == "爱好：收藏红酒"  # letters in any case
    row = next(r for r in result.explain if r["content"] == "收藏红酒")
    assert row["matches"] == [{"word": "Wine", "how": "keyword inside a word", "text_position": 12}]
    # a keyword that is the player's or the character's name is never a match
    named = many({"人": [{"关键词": ["木木"], "内容": "木木喜欢画画", "强度": 3}]})
    assert named.session("u").recall("木木来了", user_name="木木").attributes == ""


def test_a_dry_run_leaves_the_turn_and_the_queue_as_they_were():
    session = queue_memory().session("u")
    assert session.recall("苹果").attributes == "类1：内容1"
    preview = session.recall("香蕉", dry_run=True)
    assert preview.attributes == "类1：内容1\n类2：内容2"
    assert session.turn == 1
    assert session.recall("你好").attributes == "类1：内容1"  # 香蕉 was never queued


def test_ranking_strength_then_match_then_designer_order_and_caps():
    entries = {
        "甲": [
            {"关键词": ["猫"], "内容": "内容一", "强度": 3},
            {"关键词": ["狗"], "内容": "内容二", "强度": 5},
            {"关键词": ["无"], "内容": "猫在内容三", "强度": 5},
            {"关键词": ["猫"], "内容": "内容四", "强度": 5},
        ],
        "乙": [{"关键词": ["猫"], "内容": "内容五", "强度": 1}],
    }
    memory = many(entries, attributes_per_category=2, attributes_total=2)
    # strength 5 first: exact keyword (内容四) before content match (猫在内容三); 狗 not relevant
    result = memory.session("u").recall("猫猫")
    assert [w["word"] for w in result.words] == ["猫猫"]
    result = memory.session("w").recall("猫 狗", explain=True)
    assert result.attributes == "甲：内容二、内容四"
    status = {row["content"]: row["status"] for row in result.explain}
    assert status["内容一"] == "over the limit"
    assert status["内容五"] == "over the limit"


def test_require_match_false_recalls_every_unlocked_entry():
    memory = many(
        {
            "类": [
                {"关键词": ["a"], "内容": "内容一", "强度": 3},
                {
                    "关键词": ["b"],
                    "内容": "内容二",
                    "强度": 4,
                    "queryParams": [{"field": "lv", "value": 9, "operator": "gte"}],
                },
            ]
        }
    )
    assert memory.session("u").recall("无关", require_match=False).attributes == "类：内容一"


@pytest.mark.parametrize(
    ("limits", "expanded"),
    [
        # strategy 0: each token's strongest association in turn
        ({"expand_strategy": 0, "max_expanded_words": 3}, ["绘画", "体贴", "画作"]),
        # strategy 1: pooled; 艺术 (画画 6, 绘画... ) and others ranked by level
        ({"expand_strategy": 1, "max_expanded_words": 3}, ["绘画", "画作", "体贴"]),
        ({"expand_strategy": 0, "max_expanded_words": 2, "filter_levels": [9]}, ["画作", "体贴"]),
    ],
)
def test_association_expansion_strategies(qiyu, limits, expanded):
    memory = CharacterMemory(character_id="qiyu", limits=limits)
    words = memory.session("u").recall("画画温柔").words
    assert [w["word"] for w in words if w["word_source"] == "token"] == ["画画", "温柔"]
    assert [w["word"] for w in words if w["word_source"] == "expanded"] == expanded


def test_strategy_1_lifts_words_called_up_by_several_tokens():
    memory = CharacterMemory(
        character_id="qiyu", limits={"expand_strategy": 1, "max_expanded_words": 1}
    )
    # 画作: 画画 8, 画 9, 绘画 9 -> 9 + 2*2 = 13 beats 绘画 (画画 9, 画 8 -> 11)
    words = memory.session("u").recall("画画 画 绘画").words
    assert [(w["word"], w["level"]) for w in words if w["word_source"] == "expanded"] == [
        ("画作", 13)
    ]


# --- sticky queues ----------------------------------------------------------------------

FRUITS = ["苹果", "香蕉", "橘子", "葡萄", "西瓜", "草莓", "柠檬"]


def queue_memory(**limits) -> CharacterMemory:
    entries = {
        f"类{i}": [{"关键词": [fruit], "内容": f"内容{i}", "强度": 3}]
        for i, fruit in enumerate(FRUITS, start=1)
    }
    return many(entries, **limits)


def test_recalled_entries_stay_three_turns_and_rerecall_refreshes():
    session = queue_memory().session("u")
    assert session.recall("苹果").attributes == "类1：内容1"
    assert session.recall("你好").attributes == "类1：内容1"  # turn 2
    assert session.recall("香蕉").attributes == "类1：内容1\n类2：内容2"  # turn 3
    assert session.recall("你好").attributes == "类2：内容2"  # turn 4: 内容1 expired
    assert session.recall("香蕉").attributes == "类2：内容2"  # refreshed at turn 5
    session.recall("你好")
    assert session.recall("你好").attributes == "类2：内容2"  # turn 7: still (5, 6, 7)
    assert session.recall("你好").attributes == ""
    assert session.turn == 8


def test_duplicates_merge_and_full_queue_drops_the_oldest():
    session = queue_memory(queue_attribute_categories=2).session("u")
    session.recall("苹果")
    session.recall("香蕉 苹果")
    result = session.recall("橘子", explain=True)
    # categories queue holds 2: 类1 and 类2 were both recalled at turn 2, 类3 now: 类1 oldest? no:
    # 类1 was refreshed at turn 2 like 类2, so the tie is broken by name and 类2 goes
    assert result.attributes == "类1：内容1\n类3：内容3"
    carried = [row for row in result.explain if row["is_carried_over"]]
    assert [row["content"] for row in carried] == ["内容1"]


def test_sessions_are_per_user_and_thread_safe():
    memory = queue_memory()
    assert memory.session("a") is memory.session("a")
    assert memory.session("a") is not memory.session("b")
    errors: list[BaseException] = []

    def talk(user: str) -> None:
        try:
            session = memory.session(user)
            for _ in range(5):
                session.recall("苹果")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=talk, args=(user,)) for user in ("a", "a", "b", "c")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert [memory.session(u).turn for u in ("a", "b", "c")] == [10, 5, 5]


# --- config import / validation ---------------------------------------------------------


def test_importer_round_trip_keeps_designer_order_and_normalises_keys():
    original = json.loads((DATA / "qiyu.json").read_text(encoding="utf-8"))
    config = parse_designer_json(DATA / "qiyu.json")
    exported = export_designer_json(config, "qiyu")
    assert list(exported["attributes"]) == ["能力特征", "性格特征"]
    assert list(exported["events"]) == ["身世", "相遇", "重要时刻"]
    entry = original["attributes"]["能力特征"][1]
    assert exported["attributes"]["能力特征"][1] == {
        "内容": entry["内容"],
        "关键词": entry["关键词"],
        "强度": entry["强度"],
        "queryParams": entry["queryParams "],
    }
    # each entry's keys in the designers' order, as the file had them
    assert list(exported["events"]["身世"][0]) == ["日期", "内容", "关键词", "强度", "queryParams"]
    assert export_designer_json(parse_designer_json(exported), "qiyu") == exported


def test_spec_attribute_example_with_stray_braces_is_malformed_json():
    with pytest.raises(
        ConfigError,
        match=r"spec_attributes_malformed.json: malformed JSON at "
        r"line 13 column 9",
    ):
        CharacterMemory.from_designer_json(
            FIXTURES / "spec_attributes_malformed.json", character_id="x"
        )


def bad(entry_changes: dict) -> dict:
    entry = {"关键词": ["一", "二", "三"], "内容": "这是一条足够长的属性内容啊", "强度": 3}
    entry.update(entry_changes)
    return {"attributes": {"性格特征": [copy.deepcopy(entry)]}}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"强度": 7}, r"attributes.性格特征\[0\]: strength: must be 1-5, got 7"),
        ({"强度": None}, r"attributes.性格特征\[0\]: strength: is required"),
        ({"关键词": []}, r"attributes.性格特征\[0\]: keywords: is empty"),
        (
            {"queryParams": [{"field": "a", "value": 1, "operator": "like"}]},
            r"queryParams\[0\]: unknown operator 'like' \(expected one of \(eq, ne, gt",
        ),
        ({"queryParams": [{"value": 1, "operator": "eq"}]}, r"queryParams\[0\]: field is missing"),
        (
            {"queryParams": [{"field": "a", "operator": "eq"}]},
            r"queryParams\[0\]: value is missing",
        ),
    ],
)
def test_bad_entries_name_entry_and_field(changes, message):
    with pytest.raises(ConfigError, match=message):
        CharacterMemory.from_designer_json(bad(changes), character_id="x")


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            {"attributes": {"类": [{"关键词": "画", "内容": "x", "强度": 3}]}},
            r"attributes.类\[0\]: keywords must be a list of strings",
        ),
        ({"attributes": {"类": [{"内容": "x", "强度": 3}]}}, r"keywords is required"),
        (
            {"attributes": {"类": [{"关键词": ["a"], "内容": "x", "强度": "5"}]}},
            r"strength must be an integer 1-5, got '5'",
        ),
        (
            {"attributes": {"类": [{"关键词": ["a"], "内容": "x", "颜色": 1}]}},
            r"unknown key '颜色'",
        ),
        (
            {"attributes": {"类": [{"关键词": ["a"], "内容": "x", "queryParams": {"a": 1}}]}},
            r"queryParams must be a list",
        ),
        ({"persona": {}}, r"unknown section\(s\) \['persona'\]"),
    ],
)
def test_bad_structure_is_named(doc, message):
    with pytest.raises(ConfigError, match=message):
        CharacterMemory.from_designer_json(doc, character_id="x")


def test_sizes_outside_the_advice_only_warn():
    doc = {"attributes": {"类": [{"关键词": ["一"], "内容": "短", "强度": 3}]}}
    with pytest.warns(ConfigWarning) as caught:
        memory = CharacterMemory.from_designer_json(doc, character_id="x")
    messages = sorted(str(w.message) for w in caught)
    assert messages == [
        "<designer config>: attributes.类[0]: content: is 1 characters; 10-30 are advised",
        "<designer config>: attributes.类[0]: keywords: has 1 keywords; 3-30 are advised",
    ]
    # loaded anyway; a one-character token may still equal a keyword
    assert memory.session("u").recall("一").attributes == "类：短"


def test_unknown_character_is_an_error():
    with pytest.raises(ConfigError, match="no config for character 'nobody'"):
        CharacterMemory(character_id="nobody")


def _one_entry_per_category(strengths: dict[str, int]) -> dict:
    return {
        "attributes": {
            category: [
                {
                    "关键词": ["画画", "绘画", "画作"],
                    "内容": f"{category}的内容",
                    "强度": strength,
                    "queryParams": [],
                }
            ]
            for category, strength in strengths.items()
        }
    }


def test_more_matching_categories_than_the_queue_holds_are_chosen_by_strength():
    import warnings

    strengths = {"甲类": 1, "乙类": 1, "丙类": 1, "丁类": 1, "戊类": 1, "己类": 3}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sizes outside the advice only warn
        memory = CharacterMemory.from_designer_json(
            _one_entry_per_category(strengths), character_id="strong"
        )
    shown = memory.session("u").recall("我们去画画吧").attributes.splitlines()
    # five categories fit; 己类 (strength 3, last in designer order) is one of them
    assert len(shown) == 5
    assert "己类：己类的内容" in shown
    assert "戊类：戊类的内容" not in shown


def test_fill_substitutes_once_from_the_template_only():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        memory = CharacterMemory.from_designer_json(
            {
                "attributes": {
                    "喜好": [
                        {
                            "关键词": ["画画", "绘画", "画作"],
                            "内容": "喜欢和{{user}}画画，模板里写着{{character_memory_event}}",
                            "强度": 5,
                            "queryParams": [],
                        }
                    ]
                }
            },
            character_id="once",
        )
    result = memory.session("u").recall("画画", user_name="{{char}}", char_name="祁煜")
    assert result.attributes == "喜好：喜欢和{{char}}画画，模板里写着{{character_memory_event}}"
    assert result.fill("{{char}}记得：{{character_memory_attributes}}|{{user}}") == (
        "祁煜记得：喜好：喜欢和{{char}}画画，模板里写着{{character_memory_event}}|{{char}}"
    )


def test_verdicts_judged_once_per_context_and_evicted_oldest_first():
    small = CharacterMemory(
        character_id="qiyu", library=CharacterLibrary(character_id="qiyu", max_contexts=2)
    )
    fresh = CharacterMemory(character_id="qiyu")
    contexts = [
        {"intimacy": level, "exploration": 3, "scene": scene}
        for level in (1, 2, 3)
        for scene in ("studio", "gallery")
    ]
    for round_number in range(2):
        for number, context in enumerate(contexts):
            user = f"u{round_number}-{number}"
            got = small.session(user).recall("今天画画时你好温柔", context, explain=True)
            want = fresh.session(user).recall(
                "今天画画时你好温柔", dict(reversed(context.items())), explain=True
            )
            assert (got.attributes, got.events, got.explain) == (
                want.attributes,
                want.events,
                want.explain,
            )
    # key order does not make a new context; only the two most recent stay
    cache = small.library._verdicts
    assert cache is not None and len(cache) == 2
    assert set(cache._read) <= set(cache._users)  # the rows read into Python go with them
    kept = small.library._con.execute(
        "select distinct context_signature from int_recall_context_verdicts order by 1"
    ).fetchall()
    assert kept == [
        ('{"exploration":3,"intimacy":3,"scene":"gallery"}',),
        ('{"exploration":3,"intimacy":3,"scene":"studio"}',),
    ]


def test_config_rows_built_before_the_recall_rules_take_their_defaults(tmp_path):
    """Rows without the recall rules' columns (built by hand, or by code older than them)."""
    from rolemem.character_memory.config import CharacterConfig, read_seed_csvs, write_seed_csvs

    config = CharacterConfig()
    config.tables["character_attributes"].append(
        {
            "ordinal": 1,
            "character_id": "old",
            "category": "性格",
            "keywords": ["温柔"],
            "content": "对人温柔体贴",
            "strength": 3,
            "query_params": [],
        }
    )
    config.locations[("attribute", 1)] = "by hand"
    memory = CharacterMemory(config=config, character_id="old")
    assert memory.session("a").recall("你好温柔").attributes == "性格：对人温柔体贴"
    write_seed_csvs(config, tmp_path)
    [row] = read_seed_csvs(tmp_path).tables["character_attributes"]
    assert (row["secondary_keywords"], row["is_constant"], row["sticky_turns"]) == ([], False, None)


def test_a_config_without_secondary_keywords_plans_none_and_answers_alike():
    """int_recall_entries_matched's var: the planned statement recalls as the general one."""
    planned, general = CharacterLibrary(), CharacterLibrary()
    assert not planned._has_secondary_keywords
    general._has_secondary_keywords = True  # every part planned, as dbt does
    context = {"intimacy": 3, "exploration": 3, "scene": "studio"}
    for text in ("今天画画时你好温柔", "我们去海边散步吧", "你还记得那次火锅吗"):
        answers = [
            CharacterMemory(character_id="qiyu", library=library)
            .session("a")
            .recall(text, context, explain=True)
            for library in (planned, general)
        ]
        assert answers[0] == answers[1]


def test_an_empty_block_takes_its_header_and_unplaced_blocks_get_headers():
    from rolemem.character_memory.recall import RecallResult

    result = RecallResult(
        attributes="性格：温柔", events="", dialogue_style="", explain=[], words=[]
    )
    assert (
        result.fill(
            "【角色设定】\n{{character_memory_attributes}}\n【经历】\n{{character_memory_event}}\n"
            "<style>\n{{character_dialogue_style}}\n</style>"
        )
        == "【角色设定】\n性格：温柔\n\n<style>\n\n</style>"
    )
    assert result.labelled("你是钦灵。") == (
        "你是钦灵。\n【记忆单元】\n{{character_memory_attributes}}\n【记忆事件】\n"
        "{{character_memory_event}}\n【角色参考语料】\n{{character_dialogue_style}}"
    )
    assert result.fill(result.labelled("你是钦灵。")) == "你是钦灵。\n【记忆单元】\n性格：温柔\n\n"
