"""What recall answers: the spec's QueryResponse and the rows it is made of."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

# the timestamps of the answer's rows: JSON (another engine's lists) carries them as text
_TIMESTAMPS = ("created_at", "updated_at", "last_recalled_at")


@dataclass
class QueryResponse:
    """The spec's QueryResponse: events and entities best first, plus diagnostics."""

    memory_events: list[dict[str, Any]]
    memory_entities: list[dict[str, Any]]
    additional_info: dict[str, Any]
    prompt_text: str = ""
    # with explain=True: every scored event and its score components
    candidates: list[dict[str, Any]] = field(default_factory=list, repr=False)
    # the overview timeline (前情提要), oldest first: the player's newest events, which detail
    # recall does not repeat
    timeline: list[dict[str, Any]] = field(default_factory=list)
    # the facts on the queried chain a later fact ended: never recalled (model
    # int_memory_facts_resolved), so they take no place under the entity limit
    superseded_facts: int = 0


def _event_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """What a returned event and a timeline event share, in the spec's shape."""
    return {
        "id": row["result_index"],
        "scope": row["scope"],
        "index": str(row["event_id"]),
        "event_id": row["event_id"],
        "description": row["description"],
        "deepinsight": row["deepinsight"],
        "place": row["place"],
        "updatetime": row["updatetime"],
        "time_text": row["time_text"],
        "keyword": list(row["keywords"] or []),
    }


def _event_out(row: Mapping[str, Any]) -> dict[str, Any]:
    return {**_event_fields(row), "score": row["score"], "log": row["log"]}


def _timeline_out(row: Mapping[str, Any]) -> dict[str, Any]:
    return {**_event_fields(row), "save_id": row["save_id"]}


def _entity_out(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": row["result_index"],
        "kind": row["kind"],
        "score": row["score"],
        "scope": row["scope"],
        "index": {"index": row["entity_id"]},
        "entity_id": row["entity_id"],
        "description": row["description"],
        "updatetime": row["updatetime"],
        "matched_keywords": list(row["matched_keywords"]),
        "keyword": row["keyword"],
        "log": row["log"],
        # where a player's entity came from (its visible mentions; none: by hand)
        "save_id": row["save_id"],
        "line_ids": None if row["line_ids"] is None else [int(line) for line in row["line_ids"]],
    }


def from_json(value: Any) -> Any:
    """An answer column as another engine returns it (lists of rows as JSON) in DuckDB's
    shape: the rows' timestamps as datetimes."""
    if not isinstance(value, list):
        return value
    return [
        {
            name: datetime.fromisoformat(item)
            if name in _TIMESTAMPS and isinstance(item, str)
            else item
            for name, item in row.items()
        }
        if isinstance(row, dict)
        else row
        for row in value
    ]
