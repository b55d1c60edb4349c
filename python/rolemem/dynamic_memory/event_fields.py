"""The fields a lone recall shows of its events (macro memory_event_fields_by_id) on the
embedded store, held per player (description_cache.EventCache) and read again when the scope
read gives its event another `revision` (every change of a field a recall shows bumps it:
macro update_memory_fields); the time text is the query's (times.memory_time_text). A held
event takes about 1.5 KB: the default 20,000 events is about 30 MB."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..sql.project import render_macro
from .description_cache import EventCache
from .times import memory_time_text

# the fields by id, read at no particular now: the time text is the query's, not held
_FIELDS = render_macro("memory_event_fields_by_id")

Fields = dict[str, Any]


class EventFields:
    """Each player's shown events' fields, by event id."""

    def __init__(self, max_events: int = 20_000) -> None:
        self.cache: EventCache[Fields] = EventCache(max_events)

    def fields(
        self,
        fetch_rows: Callable[[str, Mapping[str, Any]], list[Fields]],
        owner: tuple[str, str],
        revisions: Mapping[int, int],
        now: Any,
    ) -> dict[int, Fields]:
        """The fields at `now` of the events of `revisions` (id -> revision, as the scope read
        them), by id; an event since deleted is missing."""
        if not revisions:
            return {}

        held = self.cache.held(
            owner,
            list(revisions),
            lambda missing: read_fields(fetch_rows, missing),
            lambda event, row: row["revision"] == revisions[event],
        )
        return {
            event: {
                **{name: value for name, value in row.items() if name != "revision"},
                "time_text": memory_time_text(row["created_at"], now),
            }
            for event, row in held.items()
        }


def read_fields(
    fetch_rows: Callable[[str, Mapping[str, Any]], list[Fields]], ids: list[int]
) -> dict[int, Fields]:
    """The fields of events `ids` as stored, by id (an event since deleted: none)."""
    return {row["event_id"]: row for row in fetch_rows(_FIELDS, {"ids": ids})}


def revisions_of(ids: np.ndarray, revision: np.ndarray, wanted: Sequence[int]) -> dict[int, int]:
    """The revisions of events `wanted` among `ids` (ascending) and their `revision`s."""
    at = np.searchsorted(ids, np.asarray(wanted, dtype=np.int64))
    return dict(zip(wanted, revision[at].tolist(), strict=True))
