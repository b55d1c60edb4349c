"""Baseline for the character-memory benchmark: the same recall as a plain Python loop over
entries held in memory (what a game server would write first). Never used by rolemem."""

from __future__ import annotations

import operator
from typing import Any

_OPS = {"gt": operator.gt, "gte": operator.ge, "lt": operator.lt, "lte": operator.le}


def _holds(condition: dict[str, Any], context: dict[str, Any]) -> bool:
    field, op, value = condition["field"], condition["operator"], condition["value"]
    if field not in context:
        return False
    have = context[field]
    if op == "eq":
        return have == value
    if op == "ne":
        return have != value
    if op in _OPS:
        return _OPS[op](have, value)
    values = value if isinstance(value, list) else [value]
    if op == "in":
        return have in values
    if op == "not_in":
        return have not in values
    return value in have  # contains


def recall(
    entries: list[dict[str, Any]], words: list[str], expanded: list[str], context: dict[str, Any]
) -> dict[str, list[str]]:
    context = {"intimacy": 1, **context}
    tokens, more = set(words), set(expanded)
    picked: dict[str, list[tuple[Any, ...]]] = {"attribute": [], "event": [], "dialogue_style": []}
    for entry in entries:
        if not all(_holds(c, context) for c in entry["query_params"]):
            continue
        keywords = set(entry["keywords"])
        if keywords & tokens:
            quality = 1
        elif keywords & more:
            quality = 2
        elif any(len(w) > 1 and w in entry["content"] for w in tokens | more):
            quality = 3
        else:
            continue
        picked[entry["kind"]].append(
            (-(entry["strength"] or 0), quality, entry["ordinal"], entry["group"], entry["content"])
        )
    out: dict[str, list[str]] = {}
    caps = {"attribute": 10, "event": 10, "dialogue_style": 5}
    for kind, rows in picked.items():
        rows.sort()
        per_group: dict[str, int] = {}
        kept = []
        for row in rows:
            if kind == "attribute":
                per_group[row[3]] = per_group.get(row[3], 0) + 1
                if per_group[row[3]] > 3:
                    continue
            kept.append(row[4])
        out[kind] = kept[: caps[kind]]
    return out
