"""A turn's prompt counted with nothing cut, written out in Python (turn.token_counts), against
the model it stands in for (memory_prompt_token_counts over int_prompt_lines), over 500 random
turns: every layer, names and placeholders, missing values, texts past a layer's budget."""

from __future__ import annotations

import random

from rolemem.engines.duckdb_connect import private_connection
from rolemem.sql.project import compose, render_macro
from rolemem.sql.seeds import load_seed
from rolemem.turn import budget
from rolemem.turn.token_counts import counted, token_count

TEXTS = [
    None, "", "你好", "hello world", "{{user}}和{{char}}", "\x01\x02", "😀 e\u0301", "画" * 900,
    "a" * 30000, "前情提要：", "木木去了画廊",
]  # fmt: skip
KINDS = [None, "用户属性", "与主体和客体的关系", "特殊实体属性", "与其它实体的关系", "其它"]
NAMES = [None, "", "木木", "{{char}}", "祁\x01煜\x02"]


def random_turn(rng: random.Random) -> tuple[list[dict], dict]:
    pieces: list[dict] = [
        {"layer": "system", "item_index": i, "content": rng.choice(TEXTS)}
        for i in range(rng.choice((1, 2)))
    ]
    pieces.append({"layer": "message", "item_index": 0, "content": rng.choice(TEXTS[1:])})
    for layer in ("history", "timeline", "dynamic_event", "dynamic_entity"):
        # ranks and indexes unique in a layer, as a turn's are (the order has no ties)
        count = rng.randint(0, 5)
        indexes, ranks = rng.sample(range(1, 40), count), rng.sample(range(1, 9), count)
        for index, rank in zip(indexes, ranks, strict=True):
            pieces.append(
                {
                    "layer": layer,
                    "item_index": index,
                    "item_rank": rank,
                    "content": rng.choice(TEXTS),
                    "time_text": rng.choice((None, "昨天", "2026-11-29 ")),
                    "place": rng.choice((None, "", "画廊")),
                    "kind": rng.choice(KINDS),
                    "day_text": rng.choice((None, "2026-11-29 10:00:00", "2025-01-02")),
                }
            )
    rng.shuffle(pieces)
    turn = {
        "user_name": rng.choice(NAMES),
        "agent_name": rng.choice(NAMES),
        "max_prompt_tokens": rng.choice((None, None, 5, 200, 5000)),
        "is_dynamic_inline": rng.random() < 0.5,
        "template_alone": rng.choice(TEXTS),
    }
    return pieces, turn


def test_python_counts_equal_the_model():
    con = private_connection()
    load_seed(con, "memory_prompt_budgets")
    sql = compose(
        "memory_prompt_token_counts",
        {
            "int_prompt_pieces": render_macro("bound_prompt_pieces"),
            "int_prompt_turns": render_macro("bound_prompt_turn"),
        },
        "select dynamic_text, prompt_tokens, needs_cuts from memory_prompt_token_counts",
        existing=("memory_prompt_budgets",),
    )
    budgets = budget._seed_budgets()
    rng = random.Random(20261130)
    cuts = 0
    for _ in range(500):
        pieces, turn = random_turn(rng)
        [want] = con.execute(sql, budget._params(pieces, **turn)).fetchall()
        got = counted(pieces, budgets, **turn)
        assert (got.dynamic_text, got.prompt_tokens, got.needs_cuts) == (
            want[0] or "",
            want[1],
            want[2],
        ), (pieces, turn)
        cuts += got.needs_cuts
    assert 50 < cuts < 450  # both answers are exercised


def test_the_token_rule():
    """Macro prompt_token_count's examples: a CJK character 1, ASCII 1 per 4 (rounded up)."""
    assert [token_count(t) for t in (None, "", "abcd", "abcde", "你好", "你好a")] == [
        0,
        0,
        1,
        2,
        2,
        3,
    ]
