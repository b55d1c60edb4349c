"""rolemem: memory for LLM role-play characters, computed by SQL models on DuckDB.

`import rolemem` is light: SQLModel tables load only when `rolemem.Line` & co. are touched,
and dbt is never imported.
"""

from __future__ import annotations

from typing import Any

from .errors import ChainError, LineError, RolememError, SaveNotFoundError
from .memory_builder import build_memory, build_memory_for_save

__all__ = [
    "ChainError",
    "Line",
    "LineError",
    "Role",
    "RolememError",
    "Save",
    "SaveNotFoundError",
    "build_memory",
    "build_memory_for_save",
]

_LAZY = {"Line": "schema", "Role": "schema", "Save": "schema"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'rolemem' has no attribute {name!r}")
