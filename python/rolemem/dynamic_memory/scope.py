"""A lone query's recall answered without the recall statement (embedded store): its reachable
events read once with whether each is in its scope (macro is_event_in_scope: the scope stays
decided in SQL on every call), then model int_memory_event_candidates' join and tests and the
timeline's pick (macro newest_events_per_query) done here over the signal rows, the shown
events' fields held in memory (event_fields). test_event_scores and
test_recall_follows_every_write hold the answers equal to the statement's
(docs/decisions/recall-without-its-statement.md)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..sql.project import render_macro
from .description_cache import Texts
from .reachable import Fetch, Reachable, by_id, flags, floats
from .sql import PLAYER_EVENTS, SIGNAL_COLUMNS


class Scope(NamedTuple):
    """One query's reachable events (ascending ids, as read_reachable gives them) with, row
    for row, whether each is in its scope and is the player's own (not an official one), its
    importance, feedback, use count, last recall time and revision (event_fields); and the
    query's text as the engine lowercases it, and whether it is longer than one character."""

    reachable: Reachable
    in_scope: np.ndarray
    is_own: np.ndarray
    importance: np.ndarray
    feedback: np.ndarray
    recall_count: np.ndarray
    last_recalled_at: np.ndarray  # datetime64, NaT: never recalled
    revision: np.ndarray
    lowered_query: str
    is_long_query: bool


# what the read takes of each reachable event: the two tables' parts are unioned first, so the
# branch rule and the chain's joins are planned once over both (each part binding its own cost
# ~0.5 ms a read on LoCoMo's players)
_EVENT_COLUMNS = (
    "id, token_count, created_at, save_id, root_line_id, last_line_id, scope, importance, "
    "feedback, recall_count, last_recalled_at, revision"
)


@functools.cache
def _scope_sql(chained: bool) -> str:
    """The read (macro lone_query_scope) of the reachable events (sql.PLAYER_EVENTS, as
    reachable.REACHABLE reads them); `chained`: the query has a save."""
    parts = " union all ".join(
        f"select {_EVENT_COLUMNS} from ({events}) as events" for events in PLAYER_EVENTS.values()
    )
    return render_macro("lone_query_scope", parts, chained)


def read_scope(fetch: Fetch, query: Mapping[str, Any]) -> Scope:
    """The lone `query`'s scope."""
    columns = fetch(
        _scope_sql(query["save_id"] is not None),
        {
            "scope_query": {
                name: query[name] for name in ("save_id", "memory_scope", "lineage_save_ids")
            },
            "save_id": query["save_id"],
            "query_text": query["query_text"],
            "agent_id": [query["agent_id"]],
            "user_id": [query["user_id"]],
        },
    )
    reachable, order = by_id(columns)
    return Scope(
        reachable,
        flags(columns["is_in_scope"])[order],
        flags(columns["is_own"])[order],
        floats(columns["importance"])[order],
        floats(columns["feedback"])[order],
        np.asarray(columns["recall_count"], dtype=np.int64)[order],
        _times(columns["last_recalled_at"])[order],
        np.asarray(columns["revision"], dtype=np.int64)[order],
        str(columns["lowered_query"][0]) if len(order) else "",  # no event: no candidate
        bool(len(order) and columns["is_long_query"][0]),
    )


def _times(column: Any) -> np.ndarray:
    """A fetched timestamp column as datetime64[us], NaT for null (a masked array's)."""
    if isinstance(column, np.ma.MaskedArray):
        return np.ma.filled(column.astype("datetime64[us]"), np.datetime64("NaT"))
    return np.asarray(column, dtype="datetime64[us]")


def timeline_ids(scope: Scope, size: int) -> list[int]:
    """Macro newest_events_per_query for the query: its newest `size` own events in scope
    (creation time, then id, newest first), oldest first (memory_query_timeline's order)."""
    events = scope.reachable
    shown = np.flatnonzero(scope.in_scope & scope.is_own)
    newest = shown[np.lexsort((-events.ids[shown], -events.created_at[shown].astype(np.int64)))]
    return events.ids[newest[: max(size, 0)][::-1]].tolist()


def candidates_in_scope(
    scope: Scope,
    signals: Mapping[str, Sequence[Any]],
    has_window: bool,
    texts: Callable[[list[int]], Mapping[int, Texts]],
    time_question_words: Sequence[str],
    time_words: tuple[tuple[str, bool], ...],
) -> list[dict[str, Any]] | None:
    """Model int_memory_event_candidates for the query: each signal row (`signals`: bound
    lists, signals.signal_rows) of an event in scope, with what scoring reads. `has_window`:
    its text names a time window; `texts`: the descriptions of events by id
    (description_cache); `time_question_words`: seed memory_time_question_words lowercased
    (the query asks when when its lowered text holds one); `time_words`: seed
    time_expressions, each with whether it is lowercase (then found in the lowered
    description, else in the description as written). None: an event was deleted since the
    scope was read."""
    events = scope.reachable
    lowered = scope.lowered_query
    asks_when = any(word in lowered for word in time_question_words)
    in_lowered, as_written = _time_patterns(time_words)
    ids = np.asarray(signals["signals_event_id"], dtype=np.int64)
    at = np.minimum(np.searchsorted(events.ids, ids), len(events.ids) - 1)
    kept = np.flatnonzero((events.ids[at] == ids) & scope.in_scope[at]).tolist()
    held = texts(ids[kept].tolist())
    if any(int(ids[number]) not in held for number in kept):
        return None  # deleted since its scope was read: the statement answers alone
    columns = [(name, signals[f"signals_{name}"]) for name in SIGNAL_COLUMNS]
    # and what scoring reads of each event, row for row with the signals
    for name in ("importance", "feedback", "recall_count"):
        columns.append((name, getattr(scope, name)[at].tolist()))
    columns.append(("created_at", events.created_at[at].tolist()))
    last = (None if np.isnat(when) else when.item() for when in scope.last_recalled_at[at])
    columns.append(("last_recalled_at", list(last)))
    rows = []
    for number in kept:
        text, lowered_text = held[int(ids[number])]
        row = {name: values[number] for name, values in columns}
        row["has_time_window"] = has_window
        row["has_query_in_description"] = (
            scope.is_long_query and lowered_text is not None and lowered in lowered_text
        )
        row["asks_when"] = asks_when
        row["names_time"] = (
            asks_when
            and text is not None
            and lowered_text is not None
            and (
                (in_lowered is not None and in_lowered.search(lowered_text) is not None)
                or (as_written is not None and as_written.search(text) is not None)
            )
        )
        rows.append(row)
    return rows


@functools.cache
def _time_patterns(
    time_words: tuple[tuple[str, bool], ...],
) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
    """One search for any of the lowercase time words (in a lowered text) and one for the
    others (as written): a literal alternation finds a text exactly when one word is in it."""

    def pattern(words: list[str]) -> re.Pattern[str] | None:
        return re.compile("|".join(map(re.escape, words))) if words else None

    return (
        pattern([word for word, lowercase in time_words if lowercase]),
        pattern([word for word, lowercase in time_words if not lowercase]),
    )
