"""A turn's prompt budget (model memory_prompt_budget_cuts): each piece counted (macro
prompt_token_count), cut where a memory block passes its budget (seed memory_prompt_budgets)
or the prompt passes max_prompt_tokens, and the dynamic memory text rebuilt from what is kept.
The pieces are the turn's own values: the statement runs on rolemem's in-memory DuckDB whatever
the store's engine, and only when token_counts (model memory_prompt_token_counts in Python)
says a budget could cut, or at once for a request with max_prompt_tokens."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from ..engines.duckdb_connect import scratch_seeded
from ..sql.project import compose, render_macro
from .token_counts import counted

# the seed the statements read, loaded once in rolemem's in-memory database (its cursor per
# thread keeps each statement as a table macro, parsed once)
_SEED = "memory_prompt_budgets"
_COLUMNS = ("layer", "item_index", "item_rank", "content", "time_text", "place", "kind", "day_text")


@functools.cache
def _sql() -> str:
    return compose(
        "memory_prompt_budget_cuts",
        {
            "int_prompt_pieces": render_macro("bound_prompt_pieces"),
            "int_prompt_turns": render_macro("bound_prompt_turn"),
        },
        "select layer, item_index, is_cut, cut_reason, dynamic_text, prompt_tokens "
        "from memory_prompt_budget_cuts",
        existing=(_SEED,),
    )


@functools.cache
def _seed_budgets() -> dict[str, int]:
    """The seed's budget per layer, as the statements read it (for token_counts)."""
    sql = "select layer, max_tokens from memory_prompt_budgets where max_tokens is not null"
    return dict(scratch_seeded(_SEED).cursor.execute(sql).fetchall())


def cut(
    pieces: Sequence[Mapping[str, Any]],
    *,
    max_prompt_tokens: int | None,
    user_name: str | None,
    agent_name: str | None,
    is_dynamic_inline: bool,
    template_alone: str | None,
) -> tuple[list[dict[str, Any]], str, int]:
    """Each piece's cut (`is_cut`, `cut_reason`; in `pieces`' order), the kept dynamic memory
    text, the prompt's token count."""
    # a request that bounds its prompt is the one likely to be cut: the statement at once,
    # without counting first
    turn: dict[str, Any] = {
        "user_name": user_name,
        "agent_name": agent_name,
        "max_prompt_tokens": max_prompt_tokens,
        "is_dynamic_inline": is_dynamic_inline,
        "template_alone": template_alone,
    }
    if max_prompt_tokens is None:
        lean = counted(pieces, _seed_budgets(), **turn)
        if not lean.needs_cuts:
            kept = [{"is_cut": False, "cut_reason": None} for _ in pieces]
            return kept, lean.dynamic_text, lean.prompt_tokens
    return _cut(pieces, _params(pieces, **turn))


def _params(pieces: Sequence[Mapping[str, Any]], **turn: Any) -> dict[str, Any]:
    params: dict[str, Any] = {name: [piece.get(name) for piece in pieces] for name in _COLUMNS}
    return {**params, **turn}


def _cut(
    pieces: Sequence[Mapping[str, Any]], params: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], str, int]:
    rows = scratch_seeded(_SEED).run(_sql(), params)
    by_piece = {
        (layer, item_index): {"is_cut": is_cut, "cut_reason": reason}
        for layer, item_index, is_cut, reason, _, _ in rows
    }
    dynamic_text, prompt_tokens = rows[0][4], rows[0][5]
    return (
        [by_piece[(piece["layer"], piece["item_index"])] for piece in pieces],
        dynamic_text or "",
        int(prompt_tokens),
    )
