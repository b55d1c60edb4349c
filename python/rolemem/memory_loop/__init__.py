"""The memory loop (dynamic-memory §四, §八): played turns -> LLM extraction -> memories, and
cleanup that archives the weakest.

Rules are SQL (models/intermediate/memory_loop): which turns are pending after the watermark,
which batches are due (window full / scene change), which memories a cleanup archives. This
module binds the observation, renders each due batch with the memory builder (the character's
own point of view), asks the LLM, and writes the memories, the batch row (the watermark) and
the loop state in one transaction. The LLM is called outside any transaction: a failure, a
timeout or a kill before the commit writes nothing, and the next observation asks again.
"""

from __future__ import annotations

from ..dynamic_memory.archive import archived
from .loop import MemoryLoop
from .reports import MaintenanceReport, ObserveReport, event_times, observed_target
from .sql import SETTING_NAMES

__all__ = [
    "SETTING_NAMES",
    "MaintenanceReport",
    "MemoryLoop",
    "ObserveReport",
    "archived",
    "event_times",
    "observed_target",
]
