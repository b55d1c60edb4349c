"""Rows an older rolemem stored past the limits a memory is now written in (macros/rules:
memory_length, keyword_length, max_keywords, name_length; the memory contract reads the same),
brought inside them once (migration step `memory_limits`): the contract checks a whole event
again when its text is edited, and an official memory when its export is imported, so such a
row could be neither. A text past its limit is cut to it, a blank optional text is null, and
an event keeps its first max_keywords tags, each cut to keyword_length."""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from ..sql.project import render_macro

log = logging.getLogger(__name__)

MEMORY_LENGTH, KEYWORD_LENGTH, MAX_KEYWORDS, NAME_LENGTH = (
    int(render_macro(name))
    for name in ("memory_length", "keyword_length", "max_keywords", "name_length")
)
# each kind's texts and the limit each is written in (the optional ones: _OPTIONAL)
EVENT_TEXTS = {
    "description": MEMORY_LENGTH,
    "deepinsight": MEMORY_LENGTH,
    "place": NAME_LENGTH,
    "scene": NAME_LENGTH,
}
ENTITY_TEXTS = {"entity_name": NAME_LENGTH, "keyword": KEYWORD_LENGTH, "description": MEMORY_LENGTH}
_OPTIONAL = {"deepinsight", "place", "scene"}


def _fit(value: str | None, limit: int, optional: bool) -> str | None:
    """A text within `limit` characters (cut past it, its outer spaces first, so it stays
    non-blank); an optional one blank: null."""
    if value is None or (optional and not value.strip()):
        return None
    return value if len(value) <= limit else value.strip()[:limit]


def _tags(tags: Any) -> list[str] | None:
    """An event's tags within the limits: each cut, the blank ones dropped, the first
    MAX_KEYWORDS kept. Whatever an older version stored is read as tags, never refused (a
    step that raised would keep the store from opening): a number as its text, one text as
    one tag, anything else as none."""
    if tags is None:
        return None
    if isinstance(tags, str):
        tags = [tags]
    if not isinstance(tags, list):
        return []
    texts = (tag if isinstance(tag, str) else json.dumps(tag) for tag in tags if tag is not None)
    fitted = (_fit(tag, KEYWORD_LENGTH, optional=True) for tag in texts)
    return [tag for tag in fitted if tag is not None][:MAX_KEYWORDS]


def fit_rows(connection: Any, table: str, texts: Mapping[str, int], *, tags: bool) -> list[int]:
    """`table`'s rows past the limits of `texts` (and, with `tags`, of an event's keywords)
    brought inside them; the ids of the rows changed (names from this package, never from
    input)."""
    names = [*texts, *(["keywords"] if tags else [])]
    selected = connection.exec_driver_sql(f"select id, {', '.join(names)} from {table}")
    changed = []
    for stored in selected.mappings():
        row = dict(stored)
        if tags and isinstance(row["keywords"], str):  # DuckDB's JSON is text
            with contextlib.suppress(ValueError):  # text that is not JSON: itself (one tag)
                row["keywords"] = json.loads(row["keywords"])
        fitted: dict[str, Any] = {
            name: _fit(row[name], limit, name in _OPTIONAL) for name, limit in texts.items()
        }
        if tags:
            fitted["keywords"] = _tags(row["keywords"])
        if any(fitted[name] != row[name] for name in names):
            changed.append({"id": row["id"], **fitted})
    sets = [f"{name} = :{name}" for name in texts]
    if tags:
        sets.append("keywords = cast(:keywords as json)")
        for fitted in changed:
            kept = fitted["keywords"]
            fitted["keywords"] = None if kept is None else json.dumps(kept, ensure_ascii=False)
    if changed:
        update = sa.text(f"update {table} set {', '.join(sets)} where id = :id")
        connection.execute(update, changed)
        # what was cut is gone: said, not silent
        log.warning("%s: %d rows brought within today's limits", table, len(changed))
    return [fitted["id"] for fitted in changed]
