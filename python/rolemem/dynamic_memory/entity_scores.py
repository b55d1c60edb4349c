"""Models int_memory_entities_recalled and memory_query_entities written out in Python, over
the hits a recall on the embedded store reads (int_memory_entity_hits: scope, matches and rank
stay in SQL, so a query sends back at most entity_limit), so its statement plans neither. The
models stay the rule dbt and PostgreSQL read; test_entity_scores holds the two equal."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..text.recall_words import Word
from .event_scores import format_decimal, round_to

# the entity's own columns, one value per entity (the model's any_value)
_ENTITY_COLUMNS = ("scope", "kind", "entity_name", "keyword", "description", "updated_at")
# what macro list_text quotes in a DuckDB list's text (a list value's special characters)
_QUOTED = frozenset("\"'(),:=[\\]{}")
_SPACES = "\t\n\v\f\r "


def base_word_count(words: Iterable[Word]) -> int:
    """How many of the query's words are its own tokens (the score's denominator)."""
    return sum(1 for _, source, _, _ in words if source == "token")


def recalled(hits: Iterable[Mapping[str, Any]], base_words: int) -> list[dict[str, Any]]:
    """Model int_memory_entities_recalled for one query: its hits (int_memory_entity_hits,
    already ranked and cut to its entity_limit) one row per entity, in rank order, with the
    words that matched (sorted) and the score; `base_words`: base_word_count."""
    entities: dict[int, dict[str, Any]] = {}
    for hit in hits:
        row = entities.get(hit["entity_id"])
        if row is None:
            row = entities[hit["entity_id"]] = {
                "query_id": hit["query_id"],
                "entity_id": hit["entity_id"],
                "tier": hit["tier"],
                "matched_keywords": [],
                **{name: hit[name] for name in _ENTITY_COLUMNS},
                "entity_rank": hit["entity_rank"],
            }
        row["tier"] = min(row["tier"], hit["tier"])
        row["entity_rank"] = min(row["entity_rank"], hit["entity_rank"])
        row["matched_keywords"].append(hit["word"])
    for row in entities.values():
        row["matched_keywords"].sort()
        count = row["matched_word_count"] = len(row["matched_keywords"])
        row["base_word_count"] = base_words
        # least(1.0, count / greatest(base, 1)) in doubles
        row["score"] = min(1.0, float(count) / max(base_words, 1))
    return sorted(entities.values(), key=lambda r: r["entity_rank"])


def list_text(values: Sequence[str | None]) -> str:
    """Macro list_text on DuckDB: a list of text cast to text, each value bare or, where
    DuckDB quotes it (empty, null spelled out, leading or trailing whitespace, a special
    character), in single quotes with ' and \\ escaped."""
    return "[" + ", ".join(_list_value(value) for value in values) + "]"


def _list_value(value: str | None) -> str:
    if value is None:
        return "NULL"
    if (
        value == ""
        or value.lower() == "null"
        or value[0] in _SPACES
        or value[-1] in _SPACES
        or not _QUOTED.isdisjoint(value)
    ):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return value


def shown_entities(
    rows: Iterable[Mapping[str, Any]], lines: Mapping[int, tuple[Any, Any]]
) -> list[dict[str, Any]]:
    """Model memory_query_entities for one query: its recalled entities in priority order, in
    the answer's shape, with the lines the save sees each came from (`lines`: entity id ->
    save id and line ids, int_memory_entity_mention_lines; none: by hand)."""
    answer = []
    for row in rows:
        description, kind = row["description"], row["kind"]
        save_id, line_ids = lines.get(row["entity_id"], (None, None))
        answer.append(
            {
                "query_id": row["query_id"],
                "result_index": row["entity_rank"] - 1,
                **{name: row[name] for name in ("entity_id", "scope", "kind", "keyword")},
                "entity_name": row["entity_name"],
                # an entity's own attribute reads whole only with its name in front (v22 note)
                "description": _joined(row["entity_name"], description)
                if kind == "特殊实体属性"
                else description,
                "matched_keywords": row["matched_keywords"],
                "updatetime": _timestamp_text(row["updated_at"]),
                "log": _entity_log(row),
                "tier": row["tier"],
                "score": round_to(row["score"], 4),
                "updated_at": row["updated_at"],
                "save_id": save_id,
                "line_ids": line_ids,
            }
        )
    return answer


def _timestamp_text(at: datetime | None) -> str | None:
    """Macro format_timestamp(at, '%Y-%m-%dT%H:%M:%S') as DuckDB writes it (a year of four
    digits, which Python's strftime does not pad but isoformat does)."""
    return None if at is None else at.isoformat(timespec="seconds")


def _joined(*parts: str | None) -> str | None:
    """SQL's ||: null when a part is."""
    texts = [part for part in parts if part is not None]
    return "".join(texts) if len(texts) == len(parts) else None


def _entity_log(row: Mapping[str, Any]) -> str | None:
    """The entity's log line (the model's description, before the name goes in front)."""
    return _joined(
        row["kind"],
        f"--score={format_decimal(row['score'], 4)},index={{'index': {row['entity_id']}}}, ",
        row["description"],
        "---命中",
        list_text(row["matched_keywords"]),
        "，数据库关键词: ",
        row["keyword"],
    )
