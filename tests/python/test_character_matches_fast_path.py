"""Character recall's keyword matches computed in Python (character_memory.entry_matches)
against the model they stand in for (int_recall_entries_matched): a library binding them and
one planning the model answer every recall alike, explain rows (each entry's matches, words,
secondary words and relevance) included, for edge cases and 200 random texts."""

from __future__ import annotations

import random
import warnings

import pytest

from rolemem.character_memory import CharacterLibrary, CharacterMemory, entry_matches
from rolemem.character_memory.config import ConfigWarning, parse_designer_json
from rolemem.character_memory.library import RecallRequest
from rolemem.text.tokens import tokenize

# every kind of hit: keywords inside words and in another case, a keyword that is a name, one
# folding like another (Wine, WINE), secondary keywords under each logic, association words
# (the shipped seed's 画画 -> 绘画 …), words in the content only, constant entries
DESIGNER = {
    "attributes": {
        "爱好": [
            {"关键词": ["酒", "Wine"], "内容": "喜欢喝桂花酿", "强度": 3},
            {"关键词": ["WINE", "红酒"], "内容": "收藏红酒和画", "强度": 2},
            {"关键词": ["画画", "绘画"], "内容": "周末去海边写生", "强度": 3},
        ],
        "人": [
            {"关键词": ["木木"], "内容": "木木喜欢猫", "强度": 3},
            {"关键词": ["祁煜"], "内容": "祁煜是画家", "强度": 2},
        ],
        "习惯": [
            {"关键词": ["日记"], "内容": "每晚写日记", "强度": 1, "常驻": True},
        ],
    },
    "events": {
        "回忆": [
            {
                "关键词": ["海边", "大海"],
                "内容": "在海边捡贝壳",
                "强度": 3,
                "次要关键词": ["夏天", "游泳"],
                "次要关键词逻辑": logic,
            }
            for logic in ("AND_ANY", "NOT_ALL", "NOT_ANY", "AND_ALL")
        ],
    },
    "dialogue_styles": {
        "口癖": [
            {"关键词": ["猫"], "内容": "猫？我画过一只橘猫。", "强度": 2},
            {"关键词": ["Cat", "ねこ"], "内容": "Cats are lovely", "强度": 1},
        ]
    },
}
CONTEXT = {"intimacy": 3, "exploration": 3, "scene": "studio"}
TEXTS = [
    "再来一壶酒",
    "a glass of WINE and red wine",
    "木木来了，祁煜在画画",
    "夏天我们去海边游泳",
    "大海",
    "夏天的大海，没有游泳",
    "写日记",
    "猫猫 CAT ねこ cat",
    "周末写生",
    "画画 绘画 海边 夏天",
    "",
    "e\u0301 👨‍👩‍👧 酒",
    "İstanbul WİNE",
]
VOCABULARY = [
    "酒", "wine", "Wine", "WINE", "红酒", "画画", "绘画", "木木", "祁煜", "日记", "海边", "大海",
    "夏天", "游泳", "猫", "cat", "CAT", "ねこ", "写生", "贝壳", "桂花", "周末", "我们", "你",
    "的", "了", "，", " ", "e\u0301", "👨‍👩‍👧", "İ",
]  # fmt: skip


def _library() -> CharacterLibrary:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        return CharacterLibrary(config=parse_designer_json(DESIGNER, character_id="c"))


@pytest.fixture(scope="module")
def libraries() -> tuple[CharacterLibrary, CharacterLibrary]:
    fast, model = _library(), _library()
    assert fast._matcher is not None and fast._has_secondary_keywords
    model._matcher = None  # its statement plans int_recall_entries_matched, as dbt does
    return fast, model


def _texts() -> list[str]:
    rng = random.Random(20261130)
    return TEXTS + [
        "".join(rng.choice(VOCABULARY) for _ in range(rng.randint(1, 12))) for _ in range(200)
    ]


def recalled_by_both(
    libraries: tuple[CharacterLibrary, CharacterLibrary], character_id: str, text: str, **kwargs
) -> list:
    """The same dry-run recall (explain rows included) on each library."""
    return [
        CharacterMemory(character_id=character_id, library=library)
        .session("u")
        .recall(text, CONTEXT, explain=True, dry_run=True, **kwargs)
        for library in libraries
    ]


def test_python_matches_equal_the_model(libraries):
    names = [(None, None), ("木木", "祁煜"), ("wine", None), ("", "")]
    for number, text in enumerate(_texts()):
        user_name, char_name = names[number % len(names)]
        fast, model = recalled_by_both(
            libraries,
            "c",
            text,
            user_name=user_name,
            char_name=char_name,
            require_match=number % 5 != 0,
        )
        assert fast == model, text


def test_matches_equal_without_secondary_keywords():
    """A config without secondary keywords: every match is relevant, none has its words."""
    fast, model = CharacterLibrary(), CharacterLibrary()
    assert not fast._has_secondary_keywords
    model._matcher = None
    matched = 0
    for text in ("今天画画时你好温柔", "我们去海边散步吧", "你还记得那次火锅吗", "猫"):
        answers = recalled_by_both((fast, model), "qiyu", text)
        assert answers[0] == answers[1]
        matched += sum(bool(row["matches"]) for row in answers[0].explain)
    assert matched


def test_the_edge_cases_match_as_designed(libraries):
    """What the parity above compares is not empty: each kind of hit occurs."""
    fast, _ = libraries
    session = CharacterMemory(character_id="c", library=fast).session("edges")

    def matched(text: str, **names: str) -> dict[str, list[dict]]:
        explain = session.recall(text, CONTEXT, explain=True, dry_run=True, **names).explain
        return {row["content"]: row["matches"] for row in explain if row["matches"]}

    assert matched("a glass of WINE")["收藏红酒和画"] == [
        {"word": "WINE", "how": "keyword", "text_position": 12}
    ]
    assert "木木喜欢猫" not in matched("木木来了", user_name="木木")
    hows = {m["how"] for found in matched("我们画画吧").values() for m in found}
    assert {"keyword", "associated keyword"} <= hows
    assert matched("周末写生")["周末去海边写生"][0]["how"] == "content"
    # 夏天 is one of the two secondary keywords: AND_ANY and NOT_ALL pass, NOT_ANY and AND_ALL fail
    recalled = [
        row["is_recalled"]
        for row in session.recall("夏天的大海", CONTEXT, explain=True, dry_run=True).explain
        if row["entry_kind"] == "event"
    ]
    assert recalled == [True, True, False, False]


def test_where_python_costs_more_the_model_answers(monkeypatch):
    """Past ROW_LIMIT matched entries (binding rows costs more), or for a character whose
    contents pass CONTENT_LIMIT (looking for words in them does), the statement plans the
    model."""
    doc = {
        "attributes": {
            "类": [{"关键词": [f"词{i}"], "内容": f"第{i}幅画画", "强度": 3} for i in range(600)]
        }
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        fast, model = (
            CharacterLibrary(config=parse_designer_json(doc, character_id="many")) for _ in range(2)
        )
        model._matcher = None
        answers = [
            CharacterMemory(character_id="many", library=library)
            .session("u")
            .recall(text, explain=True, dry_run=True)
            for library in (fast, model)
            for text in ("画画", "词7")
        ]
    assert answers[:2] == answers[2:]
    assert sum(bool(row["matches"]) for row in answers[0].explain) == 600
    assert sum(bool(row["matches"]) for row in answers[1].explain) == 1
    assert fast._matched_params([request("画画")], [[("画画", "token", None, 1)]]) is None
    assert fast._matched_params([request("词7")], [[("词7", "token", None, 1)]]) is not None
    monkeypatch.setattr(entry_matches, "CONTENT_LIMIT", 100)
    assert fast._matched_params([request("词7")], [[("词7", "token", None, 1)]]) is None


def request(text: str) -> RecallRequest:
    """A recall of character `many` with the defaults (only what matching reads)."""
    values = {"character_id": "many", "query_text": text, "tokens": [text]}
    return RecallRequest({**values, "user_name": None, "char_name": None}, explain=False)


def test_a_batch_of_several_characters_matches_as_the_model():
    """One statement for several requests of two characters (request ids 1..n)."""
    fast, model = CharacterLibrary(), CharacterLibrary()
    model._matcher = None
    requests = [
        RecallRequest(
            {
                "character_id": character,
                "query_text": text,
                "tokens": tokenize(text),
                "context": '{"intimacy":3}',
                "require_match": True,
                "user_name": "木木",
                "char_name": None,
                "template": None,
                "turn_number": 1,
                **fast.default_limits,
                "queued_keys": [],
                "queued_turns": [],
                "queued_qualities": [],
            },
            explain=True,
        )
        for character, text in [
            ("qiyu", "今天画画时你好温柔"),
            ("qinling", "我们去海边散步吧"),
            ("qiyu", "画廊里的海洋画"),
            ("qinling", "猫"),
        ]
    ]
    answers = fast._recall_batch(requests)
    assert answers == model._recall_batch(requests)
    assert sum(bool(row["matches"]) for answer in answers for row in answer[6]) > 1
