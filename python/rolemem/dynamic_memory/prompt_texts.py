"""The recalled memory as the chat prompt reads it: model memory_prompt_texts and its macros
written out in Python. A recall on the embedded store renders it here from its statement's rows
(which then plans none of it); a turn's count (turn.token_counts) reads the same lines. The
model stays the rule dbt and PostgreSQL read; test_prompt_texts_in_python holds the two equal."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..text.names import names_filled

HEADERS = ("前情提要：\n", "脑海中回想起的片段：\n", "脑海中回忆起的事件：\n")
_RELATIONS = ("与主体和客体的关系", "与其它实体的关系")
_KIND_ORDER = {"用户属性": 1, "与主体和客体的关系": 2, "特殊实体属性": 3, "与其它实体的关系": 4}


def kind_order(kind: str | None) -> int:
    """Macro memory_entity_kind_order: the player's attributes first."""
    return _KIND_ORDER.get(kind or "", 5)


def event_line(time_text: str | None, place: str | None, description: str | None) -> str | None:
    """Macro memory_event_line: {时间}{地点}:{事件} (None where the SQL's is null)."""
    if time_text is None or description is None:
        return None
    return f"{time_text}{place or ''}:{description}"


def entity_line(kind: str | None, day_text: str | None, description: str | None) -> str | None:
    """Macro memory_entity_line: a relation as 日期：描述, an attribute as its description."""
    if kind not in _RELATIONS:
        return description
    return None if day_text is None or description is None else f"{day_text}：{description}"


def memory_text(blocks: Iterable[str | None]) -> str:
    """Macro dynamic_memory_text: the timeline's, entities' and events' lines (None: no block)
    under their headers."""
    return "\n".join(
        header + block for header, block in zip(HEADERS, blocks, strict=True) if block is not None
    )


def joined(rows: Iterable[tuple[Any, str | None]]) -> str | None:
    """string_agg(line, chr(10) order by the key): None when no line is there."""
    lines = [line for _, line in sorted(rows, key=lambda row: row[0]) if line is not None]
    return "\n".join(lines) if lines else None


def _day(at: datetime | None) -> str | None:
    """macro format_timestamp(at, '%Y-%m-%d') as DuckDB writes it (a year of four digits)."""
    return None if at is None else at.date().isoformat()


def prompt_text(
    events: Sequence[Mapping[str, Any]],
    entities: Sequence[Mapping[str, Any]],
    timeline: Sequence[Mapping[str, Any]],
    user_name: str | None,
    agent_name: str | None,
) -> str:
    """Model memory_prompt_texts over a query's answer rows (memory_query_events,
    memory_query_entities, memory_query_timeline)."""
    blocks = (
        joined(
            (row["result_index"], event_line(row["time_text"], row["place"], row["description"]))
            for row in timeline
        ),
        joined(
            (
                (kind_order(row["kind"]), row["result_index"]),
                entity_line(row["kind"], _day(row["updated_at"]), row["description"]),
            )
            for row in entities
        ),
        joined(
            (
                (row["created_at"], row["event_id"]),
                event_line(row["time_text"], row["place"], row["description"]),
            )
            for row in events
        ),
    )
    return names_filled(memory_text(blocks), user_name, agent_name)
