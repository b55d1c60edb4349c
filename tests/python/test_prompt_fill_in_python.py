"""The prompt template rules written out in Python (character_memory.prompt_fill) against the
macros and the model they stand in for: fill_prompt_template and label_memory_blocks run on
DuckDB, and a library filling a recall's template in Python against one whose statement plans
model character_memory_prompts, over edge cases and random templates."""

from __future__ import annotations

import random

import duckdb
import pytest

from rolemem.character_memory import CharacterLibrary, CharacterMemory, prompt_fill
from rolemem.sql.project import render_macro

from .test_character_matches_fast_path import recalled_by_both

# pieces a template is drawn from: headers (】, ：, :, #), each placeholder, unknown ones,
# blanks of every kind, the rules' private marks, text
PIECES = [
    "【记忆单元】", "【经历】", "# 设定", "性格：", "Note:", "<events>", "</events>",
    "你是{{char}}。",
    "{{character_memory_attributes}}", "{{character_memory_event}}",
    "{{character_dialogue_style}}", "{{dynamic_memory}}", "{{user}}", "{{char}}", "{{other}}",
    "\n", "\n", "\n", "\n\n", " ", "\t", "\u3000", "\r", "\f", "\v", "-", "：",
    "\ue001", "\ue041", "\uf8ff", "画画", "木木", "{", "}}",
]  # fmt: skip
VALUES = [
    None,
    "",
    " ",
    "\u3000\n",
    "温柔",
    "性格：温柔\n爱好：画画",
    "{{char}}",
    "\ue002画",
    "\uf8ff",
]


def random_texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 14))) for _ in range(count)]


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    return duckdb.connect()


def macro_fill(con: duckdb.DuckDBPyConnection, template: str, pairs: list) -> str:
    sql = "select " + render_macro(
        "fill_prompt_template",
        "cast($template as varchar)",
        [(f"cast($p{i} as varchar)", f"cast($v{i} as varchar)") for i in range(len(pairs))],
    )
    params = {"template": template}
    for i, (placeholder, value) in enumerate(pairs):
        params[f"p{i}"], params[f"v{i}"] = placeholder, value
    return con.execute(sql, params).fetchone()[0]


def test_fill_and_labels_equal_the_macros(con):
    rng = random.Random(1130)
    placeholders = [p for p in PIECES if p.startswith("{{") and p.endswith("}}")] + [""]
    label_sql = "select " + render_macro("label_memory_blocks", "cast($template as varchar)")
    for template in random_texts(400, 7):
        chosen = rng.sample(placeholders, rng.randint(1, 5))
        pairs = [(placeholder, rng.choice(VALUES)) for placeholder in chosen]
        assert prompt_fill.fill(template, pairs) == macro_fill(con, template, pairs), template
        [(labelled,)] = con.execute(label_sql, {"template": template}).fetchall()
        assert prompt_fill.labelled(template) == labelled


def test_a_recall_fills_its_template_as_the_model_does():
    fast, model = CharacterLibrary(), CharacterLibrary()
    assert fast._fills_prompts
    model._fills_prompts = False  # its statement plans character_memory_prompts, as dbt does
    names = [(None, None), ("木木", "祁煜"), ("", "{{user}}"), ("\uf8ff", "\ue001")]
    for number, template in enumerate(random_texts(150, 11) + ["", "{{dynamic_memory}}"]):
        user_name, char_name = names[number % len(names)]
        text = ("今天画画时你好温柔", "我们去海边散步吧", "猫")[number % 3]
        answers = recalled_by_both(
            (fast, model), "qiyu", text, user_name=user_name, char_name=char_name, template=template
        )
        assert answers[0] == answers[1], template
        assert (answers[0].system_prompt, answers[0].prompt_around_dynamic) == (
            answers[1].system_prompt,
            answers[1].prompt_around_dynamic,
        )


def test_a_full_width_space_is_blank_inside_the_recall_statement():
    """DuckDB turns Unicode spaces in a statement into ASCII ones, string literals included
    once a comment before them holds an apostrophe: macro blank_characters writes U+3000 as
    RE2's escape, so the model trims it as prompt_fill does."""
    model = CharacterLibrary()
    model._fills_prompts = False
    result = (
        CharacterMemory(character_id="qiyu", library=model)
        .session("u")
        .recall("猫", template="\u3000你好\u3000\n\u3000\n{{character_memory_event}}", dry_run=True)
    )
    assert result.system_prompt == "你好"
