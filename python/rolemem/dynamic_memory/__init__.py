"""Dynamic (per-player) memory: entity and event memories, hybrid recall, prompt text.

Recall is the dbt models under models/intermediate/dynamic_memory and marts/dynamic_memory,
run on the store's engine (its own DuckDB, or PostgreSQL: rolemem.engines) with the query bound
as parameters. This package validates input (`checks`; a memory's own fields by its
`contract`, the service's too), tokenises and embeds (`vectors`: Python's share of the text
work), writes memories (`store`, `entities`, `official`), changes them (`edits`), runs recall
(queries waiting together answered by one statement: `rolemem.sql.batching`) and applies its
side effects (recall count, time, +strength) in one transaction (`recall`).
`DynamicMemory` holds the parts, each over the shared `base.Context` (`memory`).
"""

from __future__ import annotations

from .checks import MemoryInputError, checked_text, naive_time
from .entities import checked_entity
from .memory import DynamicMemory
from .responses import QueryResponse
from .settings import SETTING_SEEDS
from .sql import PLAYER_EVENTS
from .store import EventVectors
from .times import format_memory_time, time_window

__all__ = [
    "DynamicMemory",
    "EventVectors",
    "MemoryInputError",
    "PLAYER_EVENTS",
    "QueryResponse",
    "SETTING_SEEDS",
    "checked_entity",
    "checked_text",
    "format_memory_time",
    "naive_time",
    "time_window",
]
