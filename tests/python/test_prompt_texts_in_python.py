"""The recall's prompt text rendered in Python (dynamic_memory.prompt_texts) against the model
it stands in for (memory_prompt_texts): a store rendering it and one whose statement plans the
model answer every query alike, on the demo store with entities of every kind (relations
dated, an official memory written with the name placeholders) and names of every shape."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import pytest

from rolemem import DynamicMemory
from rolemem.testing.demo_data import load_demo

KINDS = ["用户属性", "与主体和客体的关系", "特殊实体属性", "与其它实体的关系", "记忆画面"]
TEXTS = [
    "今天画画时你好温柔", "我们去海边散步吧", "你还记得画廊吗", "火锅", "猫", "打雷的时候",
    "昨天你在做什么", "生日蛋糕", "What did we paint?", "颜色",
]  # fmt: skip
NAMES = [(None, None), ("木木", "祁煜"), ("{{char}}", "\x01祁\x02"), ("", "")]


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> tuple[DynamicMemory, DynamicMemory]:
    path = str(tmp_path_factory.mktemp("prompt_texts") / "demo.duckdb")
    load_demo(path)
    writer = DynamicMemory(path, embedder=None)
    rng = random.Random(1130)
    for number in range(24):
        writer.add_entity(
            user_id=None if number % 6 == 0 else "mumu",
            scope="official" if number % 6 == 0 else "user",
            agent_id="qiyu",
            entity_name=rng.choice(["木木", "祁煜", "小猫", "画廊"]),
            entity_type="客体",
            kind=KINDS[number % len(KINDS)],
            keyword=rng.choice(["画画", "海边", "猫", "颜色", "火锅"]),
            description=rng.choice(["{{user}}喜欢{{char}}的画", "喜欢海边", "怕打雷", "爱吃火锅"])
            + str(number),
            # a year of three digits: the day is written with four, as DuckDB writes it
            updated_at=datetime(999, 1 + number % 12, 1 + number % 28)
            if number % 7 == 1
            else datetime(2021, 2, 1) + timedelta(days=number),
        )
    writer.close()
    fast, model = DynamicMemory(path, embedder=None), DynamicMemory(path, embedder=None)
    model._recall._renders_prompt_text = False  # its statement plans memory_prompt_texts
    return fast, model


def test_python_prompt_texts_equal_the_model(stores):
    fast, model = stores
    seen_entities = dated = 0
    for number, text in enumerate(TEXTS * 4):
        user_name, agent_name = NAMES[number % len(NAMES)]
        kwargs = {
            "user_id": "mumu",
            "agent_id": "qiyu",
            "update": False,
            "user_name": user_name,
            "agent_name": agent_name,
            "now": datetime(2021, 3, 1) + timedelta(days=number * 40),
            "save_id": (None, 1, 2)[number % 3],
        }
        answers = [store.query(text, **kwargs) for store in (fast, model)]
        assert answers[0].prompt_text == answers[1].prompt_text, text
        assert answers[0].memory_entities == answers[1].memory_entities
        seen_entities += len(answers[0].memory_entities)
        dated += "0999-" in answers[0].prompt_text
    assert seen_entities and dated  # the entities' block is compared, relations dated too


def test_a_batch_renders_only_what_its_queries_ask(stores):
    fast, _ = stores
    assert fast.query("火锅", user_id="mumu", agent_id="qiyu", update=False).prompt_text
    answer = fast.query("火锅", user_id="mumu", agent_id="qiyu", update=False, prompt_text=False)
    assert answer.prompt_text == ""
