"""The HTTP service a game server calls (FastAPI): the single owner of the DuckDB file.

`rolemem serve` runs `create_app(...)` under uvicorn. Nothing in rolemem imports this package
(and importing it loads FastAPI only when the app is asked for).
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from .app import create_app

        return create_app
    raise AttributeError(f"module 'rolemem.service' has no attribute {name!r}")
