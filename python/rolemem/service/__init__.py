"""The HTTP service a game server calls (FastAPI): the single owner of the DuckDB file.

`rolemem serve` runs `create_app(...)` under uvicorn. Nothing in rolemem imports this package.
"""

from .app import create_app

__all__ = ["create_app"]
