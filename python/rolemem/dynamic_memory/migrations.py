"""Data migrations done once per store (recorded in rolemem_migration)."""

from __future__ import annotations

import json
import logging
from typing import Any

import duckdb

from ..schema.memory import BATCH_LINES_RECORDED, EVENT_LINES_RECORDED
from ..sql.project import write_sql
from .postings import _postings

log = logging.getLogger(__name__)


# each change to what postings hold; a store missing any has its postings recomputed once
_POSTINGS_VERSIONS = ("search_mode_terms", "whole_tag_terms", "english_terms")


def _reindex_terms_once(cur: duckdb.DuckDBPyConnection) -> None:
    """Postings written before the current _postings (search-mode words, whole tags, English
    stems without stopwords) recomputed from each event's description and tags, the
    player's and the official ones, once per store (recorded in rolemem_migration)."""
    done = {
        name
        for (name,) in cur.execute(
            "select name from rolemem_migration where list_contains($names, name)",
            {"names": list(_POSTINGS_VERSIONS)},
        ).fetchall()
    }
    missing = [name for name in _POSTINGS_VERSIONS if name not in done]
    if not missing:
        return
    count = sum(
        _reindex_table(cur, events, terms)
        for events, terms in (
            ("memory_event", "memory_event_term"),
            ("official_event", "official_event_term"),
        )
    )
    cur.execute("insert into rolemem_migration (name) select unnest($names)", {"names": missing})
    if count:
        log.info("recomputed the postings of %d events (%s)", count, ", ".join(missing))


def _reindex_table(cur: duckdb.DuckDBPyConnection, table: str, terms_table: str) -> int:
    """The postings of `table`'s events recomputed into `terms_table` (names from the code,
    never from input); how many events."""
    events = cur.execute(
        f"select id, description, keywords, agent_id, scope, user_id from {table}"
    ).fetchall()
    columns: dict[str, list[Any]] = {
        name: []
        for name in (
            *("ids", "agent_ids", "scopes", "user_ids"),
            *("terms", "description_counts", "keyword_counts", "tag_counts"),
        )
    }
    lengths = []
    for event_id, description, keywords, *owner in events:
        postings = _postings(description or "", json.loads(keywords or "[]"))
        owned = zip(("ids", "agent_ids", "scopes", "user_ids"), (event_id, *owner), strict=True)
        for name, value in owned:
            columns[name] += [value] * len(postings["terms"])
        for name, values in postings.items():
            columns[name] += values
        lengths.append(sum(postings["description_counts"]) + sum(postings["keyword_counts"]))
    cur.execute(f"delete from {terms_table}")
    cur.execute(
        f"""insert into {terms_table} (event_id, agent_id, scope, user_id, term,
            description_count, keyword_count, tag_count)
        select unnest($ids), unnest($agent_ids), unnest($scopes), unnest($user_ids),
            unnest($terms), unnest($description_counts), unnest($keyword_counts),
            unnest($tag_counts)""",
        columns,
    )
    cur.execute(
        f"""update {table} set token_count = lengths.token_count
        from (select unnest($ids) as id, unnest($lengths) as token_count) as lengths
        where {table}.id = lengths.id""",
        {"ids": [row[0] for row in events], "lengths": lengths},
    )
    return len(events)


def record_batch_lines_once(cur: duckdb.DuckDBPyConnection) -> None:
    """The lines of extraction batches written before lines were recorded, recorded once per
    store (macro backfill_extracted_lines), so the watermark reads recorded lines only."""
    name = BATCH_LINES_RECORDED
    if cur.execute("select 1 from rolemem_migration where name = $name", {"name": name}).fetchall():
        return
    recorded = len(cur.execute(write_sql("backfill_extracted_lines")).fetchall())
    cur.execute("insert into rolemem_migration (name) values ($name)", {"name": name})
    if recorded:
        log.info("recorded %d lines of extraction batches written before lines were", recorded)


def record_event_lines_once(cur: duckdb.DuckDBPyConnection) -> None:
    """Events extracted before memories kept their lines get their batch's lines, and
    extracted lines their batch's last line, once per store (macro backfill_event_lines)."""
    name = EVENT_LINES_RECORDED
    if cur.execute("select 1 from rolemem_migration where name = $name", {"name": name}).fetchall():
        return
    for step in ("lines", "events"):
        cur.execute(write_sql("backfill_event_lines", step)).fetchall()
    cur.execute("insert into rolemem_migration (name) values ($name)", {"name": name})
