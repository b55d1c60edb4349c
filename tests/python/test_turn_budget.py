"""A budget per prompt: `max_prompt_tokens` holds (prompt_tokens ≤ it) with the cuts in the
trace, over HTTP on the embedded DuckDB file and on PostgreSQL, and through the Python API;
the one token rule (macro prompt_token_count); the cut order (model memory_prompt_budget_cuts:
the lowest-ranked memory items first, then the oldest history, never the template's text or
the message)."""

from __future__ import annotations

from typing import Any

import duckdb
import pytest

from rolemem.dynamic_memory import MemoryInputError
from rolemem.service.core.settings import ServiceSettings
from rolemem.sql.project import render_macro
from rolemem.turn import budget
from rolemem.turn.companion import Companion
from rolemem.turn.token_counts import Counted, counted

from .conftest import demo_store, error_of, scripted_game

MESSAGE = "今天画画时你好温柔"
TURN = {
    "save_id": 2,
    "user_id": "mumu",
    "role_id": 1,
    "message": MESSAGE,
    "context": {"intimacy": 2, "exploration": 3, "scene": "studio"},
    "user_name": "木木",
    "char_name": "钦灵",
    "dry_run": True,
}


def test_the_token_rule_counts_cjk_by_character_and_ascii_by_four():
    sql = "select " + render_macro("prompt_token_count", "cast($text as varchar)")
    counts = {
        text: duckdb.execute(sql, {"text": text}).fetchone()[0]  # type: ignore[index]
        for text in ("今天画画", "hello", "今天 ok", "", None)
    }
    assert counts == {"今天画画": 4, "hello": 2, "今天 ok": 3, "": 0, None: 0}


def _pieces() -> list[dict[str, Any]]:
    return [
        {"layer": "system", "item_index": 0, "content": "你叫祁煜。"},
        {"layer": "message", "item_index": 0, "content": MESSAGE},
        {"layer": "history", "item_index": 0, "item_rank": 2, "content": "你来了，今天想画什么？"},
        {"layer": "history", "item_index": 1, "item_rank": 1, "content": "嗯，我来看你画画。"},
        *(
            {
                "layer": "dynamic_event",
                "item_index": event_id,
                "item_rank": rank,
                "content": text,
                "time_text": "2021-01-05",
                "place": None,
                "day_text": f"2021-01-05 10:00:0{event_id}",
            }
            for event_id, rank, text in ((7, 1, "祁煜画了海。"), (8, 2, "木木喂了猫。"))
        ),
    ]


def _cut(max_prompt_tokens: int | None) -> tuple[dict[tuple[str, int], bool], str, int]:
    pieces = _pieces()
    counted, text, tokens = budget.cut(
        pieces,
        max_prompt_tokens=max_prompt_tokens,
        user_name="木木",
        agent_name="祁煜",
        is_dynamic_inline=False,
        template_alone=None,
    )
    cuts = {
        (piece["layer"], piece["item_index"]): count["is_cut"]
        for piece, count in zip(pieces, counted, strict=True)
    }
    return cuts, text, tokens


def test_the_lowest_ranked_memory_goes_first_then_the_oldest_history():
    cuts, text, everything = _cut(None)
    assert not any(cuts.values())
    assert text == ("脑海中回忆起的事件：\n2021-01-05:祁煜画了海。\n2021-01-05:木木喂了猫。")
    # the step (from the whole prompt down) at which each piece is first cut
    first_cut: dict[tuple[str, int], int] = {}
    for limit in range(everything, 0, -1):
        cuts, text, tokens = _cut(limit)
        assert tokens <= max(limit, 14)  # the template's text and the message: 5 + 9
        for key, is_cut in cuts.items():
            if is_cut:
                first_cut.setdefault(key, everything - limit)
            else:
                assert key not in first_cut  # a smaller limit keeps nothing a larger one cut
    assert set(first_cut) == {
        ("dynamic_event", 8),
        ("dynamic_event", 7),
        ("history", 0),
        ("history", 1),
    }
    assert first_cut[("dynamic_event", 8)] <= first_cut[("dynamic_event", 7)]
    assert first_cut[("dynamic_event", 7)] < first_cut[("history", 0)]
    assert first_cut[("history", 0)] < first_cut[("history", 1)]
    assert not cuts[("system", 0)] and not cuts[("message", 0)]


def test_companion_keeps_max_prompt_tokens(tmp_path):
    companion = Companion(
        demo_store(str(tmp_path / "demo.duckdb")), character_id="qiyu", embedder=None
    )
    try:
        whole = companion.turn(**{k: v for k, v in TURN.items() if k != "message"}, message=MESSAGE)
        assert not any(row["status"] == "budget" for row in whole.trace)
        smaller = companion.turn(**TURN, max_prompt_tokens=whole.prompt_tokens - 100)
        assert smaller.prompt_tokens <= whole.prompt_tokens - 100
        assert smaller.messages[0] == whole.messages[0]  # the template is never cut
        assert smaller.messages[-1] == {"role": "user", "content": MESSAGE}
        cut = [row for row in smaller.trace if row["status"] == "budget"]
        assert cut and all(row["layer"] != "history" for row in cut)
        with pytest.raises(MemoryInputError) as refused:
            companion.turn(**TURN, max_prompt_tokens=10)
        assert refused.value.field == "max_prompt_tokens"
    finally:
        companion.close()


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def client(request, tmp_path_factory):
    with scripted_game(request, tmp_path_factory, "rolemem_budget", settings=ServiceSettings()) as (
        client,
        _,
        _,
    ):
        yield client


def test_max_prompt_tokens_holds_over_http(client):
    whole = client.post("/turn", json=TURN)
    assert whole.status_code == 200, whole.text
    assert not any(row["status"] == "budget" for row in whole.json()["trace"])
    limit = whole.json()["prompt_tokens"] // 2
    answer = client.post("/turn", json={**TURN, "max_prompt_tokens": limit})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["prompt_tokens"] <= limit
    assert body["messages"][-1] == {"role": "user", "content": MESSAGE}
    layers = {row["layer"] for row in body["trace"] if row["status"] == "budget"}
    assert {"dynamic_event", "timeline", "history"} <= layers
    refused = client.post("/turn", json={**TURN, "max_prompt_tokens": 10})
    assert refused.status_code == 400, refused.text
    assert error_of(refused)["field"] == "max_prompt_tokens"


def _more_pieces() -> list[dict[str, Any]]:
    """The pieces above with entities of both kinds and names to fill, and more events than
    the dynamic_event budget (800) holds."""
    return [
        *_pieces(),
        *(
            {
                "layer": "dynamic_entity",
                "item_index": index,
                "item_rank": index + 1,
                "content": text,
                "kind": kind,
                "day_text": "2021-01-04 09:00:00",
            }
            for index, kind, text in (
                (0, "与主体和客体的关系", "{{user}}是{{char}}的朋友"),
                (1, "用户属性", "{{user}} likes the sea"),
            )
        ),
        {
            "layer": "timeline",
            "item_index": 0,
            "item_rank": 1,
            "content": "{{char}}开了画展。",
            "time_text": "昨天",
            "place": "画廊",
        },
    ]


def _many_events() -> list[dict[str, Any]]:
    return [
        *_pieces()[:4],
        *(
            {
                "layer": "dynamic_event",
                "item_index": index,
                "item_rank": index + 1,
                "content": "祁煜和木木在海边画了很久很久的海。" * 4,
                "time_text": "2021-01-05",
                "place": None,
                "day_text": f"2021-01-05 10:00:{index:02d}",
            }
            for index in range(20)
        ),
    ]


@pytest.mark.parametrize(
    ("make", "inline"),
    [(_pieces, False), (_more_pieces, False), (_more_pieces, True), (_many_events, False)],
)
def test_the_lean_count_answers_as_the_budget_does(make, inline):
    """Parity: the count with nothing cut (memory_prompt_token_counts, as token_counts writes it
    out), when it says nothing can be cut, answers the prompt_tokens, dynamic text and kept
    pieces the budget's statement (memory_prompt_budget_cuts) does; and it never says so when
    the budget cuts."""
    pieces = make()
    if inline:  # the template places the dynamic memory between its two texts
        pieces = [{"layer": "system", "item_index": 1, "content": "请回答。"}, *pieces]

    def both(limit: int | None) -> tuple[Any, Any]:
        turn = {
            "max_prompt_tokens": limit,
            "user_name": "木木",
            "agent_name": "祁煜",
            "is_dynamic_inline": inline,
            "template_alone": "你叫祁煜。请回答。" if inline else None,
        }
        return (
            counted(pieces, budget._seed_budgets(), **turn),
            budget._cut(pieces, budget._params(pieces, **turn)),
        )

    def kept(lean: Counted) -> tuple[Any, ...]:
        return [{"is_cut": False, "cut_reason": None}] * len(pieces), *lean[:2]

    lean, full = both(None)
    assert lean.needs_cuts or kept(lean) == full
    limits = range(full[2] + 20, 0, -1) if make is not _many_events else [None]
    answered_lean = 0
    for limit in limits:
        lean, full = both(limit)
        assert lean.needs_cuts or kept(lean) == full, limit
        assert lean.needs_cuts or not any(piece["is_cut"] for piece in full[0])
        answered_lean += not lean.needs_cuts
    if make is _many_events:
        assert any(piece["is_cut"] for piece in full[0])  # over the dynamic_event budget
    else:
        assert answered_lean  # the largest limits cut nothing: the lean count answers
