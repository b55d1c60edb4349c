"""Each memory-builder rule on its own (the SQL models, through the Python wrapper)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from rolemem import Line, LineError, build_memory


def line(attribute: str, content: str, **fields):
    return {"attribute": attribute, "content": content, **fields}


def me(content: str, **fields):
    return line("assistant", content, role_id=1, **fields)


def test_consecutive_own_lines_merge_with_all_brackets():
    lines = [
        me("一", original_emotion="喜", tts_content="いち", action_content="笑"),
        me("二"),
        me("三", action_content="走"),
    ]
    assert build_memory(lines, role_id=1) == [
        {"role": "assistant", "content": "【喜】一<いち>（笑）二三（走）"}
    ]


def test_user_lines_alone_concatenate_without_braces():
    lines = [line("user", "甲"), line("user", "乙"), me("好")]
    assert build_memory(lines, role_id=1) == [
        {"role": "user", "content": "甲乙"},
        {"role": "assistant", "content": "好"},
    ]


def test_other_speakers_only_are_all_background():
    lines = [
        line("assistant", "风起", display_name="旁白"),
        line(
            "assistant",
            "嗨",
            role_id=2,
            display_name="莉莉",
            original_emotion="笑",
            tts_content="ハイ",
        ),
    ]
    assert build_memory(lines, role_id=1) == [
        {"role": "user", "content": "{旁白：风起\n莉莉：【笑】嗨}"}
    ]


def test_player_lines_before_another_speaker_stay_in_background_with_default_names():
    lines = [
        line("user", "在吗"),
        line("assistant", "嗯", role_id=2),
        line("user", "你好", display_name="莱姆"),
        line("user", "呀"),
        me("来了"),
    ]
    assert build_memory(lines, role_id=1) == [
        {"role": "user", "content": "{用户：在吗\n旁白：嗯}\n你好呀"},
        {"role": "assistant", "content": "来了"},
    ]


def test_system_lines_kept_only_without_identity_or_when_own():
    lines = [
        line("system", "世界观"),
        line("system", "你是钦灵", role_id=1),
        line("system", "你是莉莉", role_id=2),
        line("system", "你是NPC", script_role_id="7"),
        line("system", "你是旁白", display_name="旁白"),
    ]
    assert build_memory(lines, role_id=1) == [
        {"role": "system", "content": "世界观"},
        {"role": "system", "content": "你是钦灵"},
    ]


def test_a_kept_system_line_splits_groups_and_a_dropped_one_does_not():
    lines = [
        me("一"),
        line("system", "插入"),
        me("二"),
        line("system", "别人的", role_id=2),
        me("三"),
    ]
    assert build_memory(lines, role_id=1) == [
        {"role": "assistant", "content": "一"},
        {"role": "system", "content": "插入"},
        {"role": "assistant", "content": "二三"},
    ]


@pytest.mark.parametrize(
    ("target", "speaker"),
    [
        ({"role_id": 3}, {"role_id": 3}),
        ({"script_role_id": "9"}, {"script_role_id": "9"}),
        ({"script_role_id": 9}, {"script_role_id": "9"}),
        ({"script_role_id": "9"}, {"script_role_id": 9}),
        ({"display_name": "白小喵"}, {"display_name": "白小喵"}),
        ({"role_id": 5, "display_name": "白小喵"}, {"role_id": 8, "display_name": "白小喵"}),
    ],
)
def test_any_given_identity_field_makes_a_line_self(target, speaker):
    lines = [line("assistant", "喵", **speaker)]
    assert build_memory(lines, **target) == [{"role": "assistant", "content": "喵"}]


def test_fields_the_caller_did_not_give_never_match():
    lines = [line("assistant", "喵", role_id=None, display_name=None)]
    assert build_memory(lines, role_id=1) == [{"role": "user", "content": "{旁白：喵}"}]
    assert build_memory(lines) == [{"role": "user", "content": "{旁白：喵}"}]


def test_no_name_is_derived_from_an_id():
    lines = [line("assistant", "喵", display_name="钦灵")]
    assert build_memory(lines, role_id=1) == [{"role": "user", "content": "{钦灵：喵}"}]


def test_blank_optional_strings_count_as_absent():
    lines = [
        line("system", "全局", role_id=None, script_role_id="  ", display_name="\t　"),
        line(
            "assistant",
            "嗨",
            display_name=" ",
            original_emotion="",
            tts_content=" ",
            action_content="\n",
        ),
        me("好", original_emotion=" ", tts_content="", action_content="　"),
    ]
    assert build_memory(lines, role_id=1, display_name="  ", script_role_id="") == [
        {"role": "system", "content": "全局"},
        {"role": "user", "content": "{旁白：嗨}"},
        {"role": "assistant", "content": "好"},
    ]


def test_blank_target_fields_match_nothing():
    lines = [line("assistant", "嗨", display_name=" ")]
    assert build_memory(lines, display_name=" ") == [{"role": "user", "content": "{旁白：嗨}"}]


def test_unknown_attribute_is_a_value_error_naming_the_line():
    with pytest.raises(ValueError, match=r"line 42 has unknown attribute 'narrator'"):
        build_memory([line("user", "hi", id=1), line("narrator", "x", id=42)], role_id=1)
    with pytest.raises(LineError, match=r"line at position 0 has unknown attribute null"):
        build_memory([{"content": "x"}], role_id=1)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"role_id": "1"}, r"line 1: role_id must be an integer or None, got '1'"),
        ({"role_id": True}, r"line 1: role_id must be an integer or None, got True"),
        ({"content": 5}, r"line 1: content must be a string or None, got 5"),
        ({"display_name": ["a"]}, r"line 1: display_name must be a string or None"),
    ],
)
def test_wrong_field_types_are_named(bad, message):
    with pytest.raises(LineError, match=message):
        build_memory([{"id": 1, "attribute": "user", "content": "x", **bad}], role_id=1)


def test_wrong_target_types_are_named():
    with pytest.raises(LineError, match="target: role_id must be an integer"):
        build_memory([], role_id="1")
    with pytest.raises(TypeError, match="context_emotion must be True or False"):
        build_memory([], role_id=1, context_emotion="no")


def test_empty_history_is_empty_memory():
    assert build_memory([], role_id=1) == []


def test_accepts_line_models_objects_and_mappings():
    as_model = Line(id=1, attribute="user", content="你好", save_id=1)
    as_object = SimpleNamespace(
        id=2,
        attribute="assistant",
        content="嗯",
        role_id=1,
        original_emotion=None,
        tts_content=None,
        action_content=None,
        script_role_id=None,
        display_name=None,
    )
    as_mapping = {"line_id": 3, "attribute": "assistant", "content": "好", "role_id": 1}
    assert build_memory([as_model, as_object, as_mapping], role_id=1) == [
        {"role": "user", "content": "你好"},
        {"role": "assistant", "content": "嗯好"},
    ]


def test_a_role_name_is_read_from_every_kind_of_line_and_a_model_without_it_has_none():
    from pydantic import BaseModel, ConfigDict

    class WithExtras(BaseModel):  # a pydantic line whose role_name is an extra
        model_config = ConfigDict(extra="allow")
        id: int
        attribute: str
        content: str
        role_id: int | None = None

    first = {"id": 1, "attribute": "user", "content": "你好"}
    last = {"id": 3, "attribute": "assistant", "content": "好", "role_id": 1}
    npc = {"id": 2, "attribute": "assistant", "content": "嗯", "role_id": 2}
    named = [
        {**npc, "role_name": "钦灵"},
        SimpleNamespace(**npc, role_name="钦灵"),
        WithExtras(**npc, role_name="钦灵"),
    ]
    for line in named:
        assert build_memory([first, line, last], role_id=1) == [
            {"role": "user", "content": "{用户：你好\n钦灵：嗯}"},
            {"role": "assistant", "content": "好"},
        ]
    # SQLModel's Line has no role_name: the voice is the narrator's
    assert build_memory([first, Line(**npc, save_id=1), last], role_id=1) == [
        {"role": "user", "content": "{用户：你好\n旁白：嗯}"},
        {"role": "assistant", "content": "好"},
    ]


HOSTILE = [
    "{花括号} 和 }{ 反着",
    "引号 ' \" `反引号`",
    "换行\n第二行\r\n第三行",
    "'); drop table line; --",
    "$save_id ? %s {{ ref('x') }} {% if %}",
    "表情 😀🐱‍👤 和零宽\u200b字符",
    "\\n 不是换行 \\",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_passes_through_unchanged(text):
    lines = [
        line("system", text),
        line("user", text, display_name=text),
        line("assistant", text, role_id=2, display_name=text),
        line("user", text),
        me(text, original_emotion=text, tts_content=text, action_content=text),
    ]
    assert build_memory(lines, role_id=1) == [
        {"role": "system", "content": text},
        {"role": "user", "content": f"{{{text}：{text}\n{text}：{text}}}\n{text}"},
        {"role": "assistant", "content": f"【{text}】{text}<{text}>（{text}）"},
    ]


def test_tfidf_keywords_are_jiebas_without_importing_jieba_analyse():
    import jieba.analyse

    from rolemem.text.tokens import extract_keywords

    texts = [
        "室友失恋了，我们陪她吃了一晚上火锅",
        "你还记得我们一起去图书馆吗",
        "When did Caroline go to the LGBTQ support group?",
        "今天画画时你好温柔",
        "那本推理小说你看完了吗？凶手是谁",
        "吃",
    ]
    for text in texts:
        expected = [
            w for w in jieba.analyse.extract_tags(text, topK=10) if any(c.isalnum() for c in w)
        ]
        assert extract_keywords(text, 10) == expected, text


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("id", 2**63),
        ("id", -(2**63) - 1),
        ("id", True),
        ("role_id", 1.0),
        ("content", "火锅\x00夜"),
        ("content", "\ud83d"),  # half of a pair: its other half in the next line is still lone
        ("display_name", 3),
    ],
)
def test_a_bad_value_anywhere_in_a_long_history_names_its_line_and_field(field, value):
    lines = [{"id": i, "attribute": "user", "content": "嗯"} for i in range(1, 2001)]
    lines[999] = {**lines[999], field: value}
    lines[1000] = {**lines[1000], "content": "\ude00"} if value == "\ud83d" else lines[1000]
    named = value if field == "id" else 1000  # a line is named by its id, a bad one too
    with pytest.raises(LineError, match=rf"^line {re.escape(str(named))}: {field} "):
        build_memory(lines, role_id=1)
