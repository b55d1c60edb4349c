"""Per-event values a lone recall scored in Python (scope) holds per player: the descriptions,
as written and as the engine lowercases them, for model int_memory_event_candidates' tests of
the whole query and of time words without reading or lowercasing every description each turn
(~2 ms of a 400-event player's read); and the shown events' fields (event_fields). Only the
events the scope read finds reachable are looked up: a description never changes once written
(a new one is a new event), a value that can change in place is checked against that read.
Bounded by events held, least recently used players first (an event of 40 Chinese characters
takes about 270 bytes: the default 200,000 is about 55 MB); thread-safe."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Generic, TypeVar

from ..sql.project import render_macro
from .reachable import Fetch
from .sql import with_official

Value = TypeVar("Value")


class EventCache(Generic[Value]):
    """Each player's values of events, by event id."""

    def __init__(self, max_events: int) -> None:
        self.max_events = max_events
        self._players: OrderedDict[tuple[str, str], dict[int, Value]] = OrderedDict()
        self._held = 0  # values held, over every player
        self._lock = threading.Lock()

    def held(
        self,
        owner: tuple[str, str],
        ids: Sequence[int],
        load: Callable[[list[int]], Mapping[int, Value]],
        is_current: Callable[[int, Value], bool] = lambda event, value: True,
    ) -> dict[int, Value]:
        """The player's values of `ids` (`owner`: agent and player), `load` reading those not
        held or not current (outside the lock: a read of one player waits for no other's);
        an id `load` finds no value for is missing."""
        with self._lock:
            player = self._players.get(owner, {})
            missing = [
                event for event in ids if not (event in player and is_current(event, player[event]))
            ]
        loaded = load(missing) if missing else {}
        with self._lock:
            player = self._players.pop(owner, {})
            self._held -= len(player)
            player.update(loaded)  # a late read's older value is not current: read again
            self._players[owner] = player  # most recently used last
            self._held += len(player)
            while self._held > self.max_events and len(self._players) > 1:
                _, evicted = self._players.popitem(last=False)
                self._held -= len(evicted)
            return {event: player[event] for event in ids if event in player}


_LOAD = with_official("int_memory_events_with_official", render_macro("event_descriptions_by_id"))

# an event's description as written and lowercased by the engine (None: none)
Texts = tuple[str | None, str | None]


class DescriptionCache:
    """Each player's event descriptions, by event id."""

    def __init__(self, max_events: int = 200_000) -> None:
        self.cache: EventCache[Texts] = EventCache(max_events)

    def texts(self, fetch: Fetch, owner: tuple[str, str], ids: Sequence[int]) -> dict[int, Texts]:
        """The player's descriptions (`owner`: agent and player), once every event of `ids`
        is loaded."""

        def load(missing: list[int]) -> dict[int, Texts]:
            loaded = fetch(_LOAD, {"ids": missing})
            return {
                # one string where lowercasing changes nothing (Chinese text)
                event: (text, text if lowered == text else lowered)
                for event, text, lowered in zip(
                    *(column.tolist() for column in loaded.values()), strict=True
                )
            }

        return self.cache.held(owner, ids, load)
