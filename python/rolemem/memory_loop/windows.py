"""Context windows kept between a save's observation and its next turn.

A turn asks for the save's context window (`MemoryLoop.context_window`) right after the
previous turn's observation planned the same save with the same statement. The window depends
only on the save's chain (lines are append-only, so the chain is named by its tip), the lines
extracted for the character (the player's, on any save sharing them: counted, as they are only
added) and the save's own batches, and two settings. Each plan row says which tip and
batches it read; a cached window is returned while a two-subquery statement reads the same
two versions now, instead of planning the loop's models again (model
int_loop_observations_planned, a ~150-operator statement).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from ..sql.project import write_sql

# a window's save x character and player (what the version statement binds); with the window
# settings, its key
_BOUND = ("save_id", "role_id", "script_role_id", "user_id")
_Version = tuple[int | None, tuple[int, ...] | None, int]


def window_of(plan: Mapping[str, Any]) -> dict[str, Any]:
    """The context window part of a plan row: the lines from the window's start on that the
    character witnessed (the plan's `is_witnessed`: macro is_witnessed)."""
    start = plan["window_start_position"]
    return {
        "lines": [
            line
            for line in plan["lines"] or []
            if start is not None and line["line_position"] >= start and line["is_witnessed"]
        ],
        "pending_turns": plan["pending_turns"],
        "watermark_line_id": plan["watermark_line_id"],
        "window_turns": plan["window_turns"],
    }


def _key(params: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(params[name] for name in (*_BOUND, "context_max_turns", "min_window_turns"))


def _version(tip: int | None, batches: list[int] | None, extracted: int) -> _Version:
    return tip, None if batches is None else tuple(batches), extracted


class WindowCache:
    """The newest `size` windows, by save x character x window settings, with the versions
    their plan read. Shared by every thread of one loop."""

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._windows: OrderedDict[tuple[Any, ...], tuple[_Version, dict[str, Any]]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def stats(self) -> dict[str, int]:
        """Windows asked for: reused, and planned again (none kept, or what it read moved)."""
        with self._lock:
            return {"reused": self.hits, "planned": self.misses}

    def keep(self, params: Mapping[str, Any], plan: Mapping[str, Any]) -> None:
        """Remember the window of a plan that found its save and a whole chain, with no memory
        cut off it (what covers its lines may then be written on another save)."""
        if not plan["saves_found"] or plan["problem"] or plan["chain_tip_line_id"] is None:
            return
        if plan["has_cut"]:
            return
        version = _version(
            plan["chain_tip_line_id"], plan["batch_last_line_ids"], plan["extracted_line_count"]
        )
        with self._lock:
            self._windows[_key(params)] = (version, window_of(plan))
            self._windows.move_to_end(_key(params))
            while len(self._windows) > self._size:
                self._windows.popitem(last=False)

    def current(self, store: Any, params: Mapping[str, Any]) -> dict[str, Any] | None:
        """The kept window if the save's tip and batches are still those its plan read
        (`store`: the engine holding them, rolemem.engines)."""
        with self._lock:
            kept = self._windows.get(_key(params))
        if kept is not None:
            [(tip, batches, extracted)] = store.run(
                write_sql("context_window_version", engine=store.name),
                {name: params[name] for name in _BOUND},
            )
            if _version(tip, batches, extracted) == kept[0]:
                with self._lock:
                    self.hits += 1
                return {**kept[1], "lines": list(kept[1]["lines"])}
        with self._lock:
            self.misses += 1
        return None
