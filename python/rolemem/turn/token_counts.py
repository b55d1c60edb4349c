"""A turn's prompt counted with nothing cut, written out in Python: model
memory_prompt_token_counts over int_prompt_lines (macros prompt_token_count,
fill_name_placeholders, memory_event_line, memory_entity_line, prompt_from_lines). Most turns
cut nothing, and this answers them without a statement (the model's planned 21 operators and
compiled its regular expressions on every call, about 9 ms of a turn); the budget's statement
(memory_prompt_budget_cuts) runs when it says a budget could cut. The models stay the rule dbt
reads; test_token_counts_in_python holds the two equal. Its lines are built by
dynamic_memory.prompt_texts, as a recall's prompt text is."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from ..character_memory.recall_rows import nulls_last
from ..dynamic_memory.prompt_texts import (
    HEADERS,
    entity_line,
    event_line,
    joined,
    kind_order,
    memory_text,
)
from ..text.names import names_filled

_MEMORY_LAYERS = ("dynamic_event", "timeline", "dynamic_entity")
_NOT_ASCII = re.compile("[^\x01-\x7f]")
_NO_LIMIT = 2147483647


class Counted(NamedTuple):
    """Model memory_prompt_token_counts' answer."""

    dynamic_text: str
    prompt_tokens: int
    needs_cuts: bool


def token_count(text: str | None) -> int:
    """Macro prompt_token_count: ceil((n + 3m) / 4) for n characters, m of them outside
    ASCII; 0 for None."""
    if text is None:
        return 0
    return -(-(len(text) + 3 * len(_NOT_ASCII.findall(text))) // 4)


_HEADER_TOKENS = token_count("\n".join(HEADERS))


def _line(piece: Mapping[str, Any], user_name: str | None, agent_name: str | None) -> str | None:
    """A piece as the prompt reads it (int_prompt_lines.line)."""
    layer, content = piece["layer"], piece.get("content")
    if layer not in _MEMORY_LAYERS:
        return content
    if layer == "dynamic_entity":
        day = piece.get("day_text")
        line = entity_line(piece.get("kind"), None if day is None else day[:10], content)
    else:
        line = event_line(piece.get("time_text"), piece.get("place"), content)
    return None if line is None else names_filled(line, user_name, agent_name)


def counted(
    pieces: Sequence[Mapping[str, Any]],
    budgets: Mapping[str, int],
    *,
    user_name: str | None,
    agent_name: str | None,
    max_prompt_tokens: int | None,
    is_dynamic_inline: bool,
    template_alone: str | None,
) -> Counted:
    """The prompt's dynamic memory text and token count with nothing cut, and whether a
    budget could cut (a layer's pieces together pass its budget in `budgets`, or the pieces
    with the memory's headers pass `max_prompt_tokens`)."""
    layer_tokens: dict[str, int] = {}
    piece_tokens = conversation_tokens = template_tokens = 0
    has_memory = False
    timeline, entities, events = [], [], []
    template: dict[int, str] = {}
    for piece in pieces:
        layer = piece["layer"]
        line = _line(piece, user_name, agent_name)
        fixed = layer in ("system", "message", "history")
        tokens = token_count(line) + (0 if fixed else 1)
        has_memory = has_memory or not fixed
        piece_tokens += tokens
        layer_tokens[layer] = layer_tokens.get(layer, 0) + tokens
        if layer in ("history", "message"):
            conversation_tokens += tokens
        elif layer == "system":
            template_tokens += tokens
            index = piece.get("item_index")
            if index in (0, 1) and line is not None:
                template[index] = line if index not in template else max(template[index], line)
        elif layer == "timeline":
            timeline.append((nulls_last(piece.get("item_index")), line))
        elif layer == "dynamic_entity":
            entities.append(
                ((kind_order(piece.get("kind")), nulls_last(piece.get("item_rank"))), line)
            )
        elif layer == "dynamic_event":
            key = (nulls_last(piece.get("day_text")), nulls_last(piece.get("item_index")))
            events.append((key, line))
    dynamic_text = memory_text((joined(timeline), joined(entities), joined(events)))
    if has_memory:
        piece_tokens += _HEADER_TOKENS
    if is_dynamic_inline and dynamic_text == "":
        prompt_tokens = conversation_tokens + token_count(template_alone)
    elif is_dynamic_inline:
        inline = (template.get(0) or "") + dynamic_text + (template.get(1) or "")
        prompt_tokens = conversation_tokens + token_count(inline)
    else:
        prompt_tokens = conversation_tokens + template_tokens + token_count(dynamic_text)
    over_layer = any(
        layer in budgets and total > budgets[layer] for layer, total in layer_tokens.items()
    )
    limit = _NO_LIMIT if max_prompt_tokens is None else max_prompt_tokens
    return Counted(dynamic_text, prompt_tokens, over_layer or piece_tokens > limit)
