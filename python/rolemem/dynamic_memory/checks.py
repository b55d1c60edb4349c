"""Input checks of dynamic memory: every caller value is checked before any write or query,
and a bad one is a MemoryInputError naming it and what is valid (a memory's own fields: by
its contract, `contract`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..engines import duckdb_connect
from ..errors import RolememError
from ..schema.memory import SCOPES
from .settings import _SETTING_TYPES


class MemoryInputError(RolememError, ValueError):
    """A memory or query argument is invalid; the message names it and what is valid."""


def naive_time(value: Any, name: str) -> datetime:
    """Times are the game's clock, naive. An aware datetime is refused rather than converted
    with whatever zone the server runs in (15:30 would become 23:30 under Asia/Shanghai)."""
    if not isinstance(value, datetime):
        raise MemoryInputError(f"{name} must be a datetime, got {type(value).__name__}")
    if value.tzinfo is not None:
        raise MemoryInputError(
            f"{name} must be a naive datetime in the game's clock, got one with a time zone "
            f"({value.isoformat()}); convert it first, e.g. value.astimezone(game_zone)"
            ".replace(tzinfo=None)"
        )
    return value


def _memory_id(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MemoryInputError(f"{name} must be an integer id, got {value!r}")
    if not -(2**63) <= value < 2**63:
        raise MemoryInputError(f"{name} must fit in 64 bits, got {value}")
    return value


def _count(value: Any, name: str, *, low: int = 0, high: int = 2**31 - 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise MemoryInputError(f"{name} must be an integer from {low} to {high}, got {value!r}")
    return value


def checked_text(value: Any, name: str, *, required: bool = True) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise MemoryInputError(f"{name} must be a non-empty string, got {value!r}")
    if not duckdb_connect.is_storable_text(value):
        raise MemoryInputError(
            f"{name} is not text rolemem can store (a lone surrogate or a NUL character)"
        )
    return value


def _unit(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise MemoryInputError(f"{name} must be a number from 0 to 1, got {value!r}")
    return float(value)


def _scope(scope: Any, user_id: Any) -> str | None:
    if scope not in SCOPES:
        raise MemoryInputError(f"scope must be one of {SCOPES}, got {scope!r}")
    if scope == "user":
        return checked_text(user_id, "user_id")
    if user_id is not None:
        raise MemoryInputError("official memories belong to the agent: user_id must be None")
    return None


def _setting(name: str, value: Any) -> Any:
    """A profile / limits value checked by its kind: NaN, infinity, negatives, wrong types and
    unknown choices are refused (a NaN weight would rank NaN scores first)."""
    choices = {
        "fusion": ("convex", "rrf"),
        "memory_scope": ("player", "save"),
        "expand_strategy": (0, 1),
    }
    if name in choices:
        if value not in choices[name] or isinstance(value, bool):
            raise MemoryInputError(f"{name} must be one of {choices[name]}, got {value!r}")
        return value
    if name == "filter_levels":
        if not isinstance(value, list | tuple) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise MemoryInputError(f"filter_levels must be a list of integers, got {value!r}")
        return list(value)
    if _SETTING_TYPES.get(name) == "integer":
        return _count(value, name)
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
        or value > 1e9
    ):
        raise MemoryInputError(f"{name} must be a finite number from 0, got {value!r}")
    if name in _DIVISORS and value == 0:
        raise MemoryInputError(f"{name} must be more than 0 (scores divide by it), got {value!r}")
    return float(value)


# the settings a score divides by (model int_memory_events_scored)
_DIVISORS = ("recency_half_life_days", "recent_use_hours")


def checked_weights(settings: Mapping[str, Any]) -> None:
    """A profile whose word weights are both 0 is refused: a query without a vector has no
    other relevance, and its score would divide 0 by 0 (model int_memory_events_scored)."""
    if settings["bm25_weight"] + settings["keyword_weight"] == 0:
        raise MemoryInputError(
            "bm25_weight and keyword_weight cannot both be 0 (a query without a vector would "
            "have no relevance to divide by)"
        )
