"""`rolemem mcp`: the tools over stdio, for an agent that starts the server itself. With a
store (`db`), the process opens it as `rolemem serve` does (the service's app in this
process, no port); with `url`, every call goes to that running service (a DuckDB file has
one owner), its key from the environment as for any HTTP client."""

from __future__ import annotations

import os
from typing import Any

import httpx2
from mcp.server import ServerRequestContext
from mcp.server.stdio import stdio_server

from .server import Routes, build_server
from .tools import TOOLS, Tool

API_KEY_VARIABLE = "ROLEMEM_API_KEY"
DESIGNER_KEY_VARIABLE = "ROLEMEM_DESIGNER_KEY"


def environment_key(ctx: ServerRequestContext[Any], tool: Tool) -> str | None:
    """The route's key from the environment (a designer's falls back to the game's, as the
    service does)."""
    game = os.environ.get(API_KEY_VARIABLE) or None
    if tool.scope == "designer":
        return os.environ.get(DESIGNER_KEY_VARIABLE) or game
    return game


async def serve_store(db: str, *, designer: bool, keyword_only: bool, version: str) -> None:
    """Serve the tools over stdio on the store `db` (a DuckDB file or a PostgreSQL URL)."""
    from ..app import create_app

    app = create_app(db, embedder=None if keyword_only else "default")
    async with app.router.lifespan_context(app), Routes.in_process(app) as routes:
        await _serve(routes, designer, version)


async def serve_url(url: str, *, designer: bool, timeout: float, version: str) -> None:
    """Serve the tools over stdio, each call a request to the service at `url`."""
    async with httpx2.AsyncClient(base_url=url, timeout=timeout) as client:
        document = await client.get("/openapi.json")
        document.raise_for_status()
        await _serve(Routes(client, document.json()), designer, version)


async def _serve(routes: Routes, designer: bool, version: str) -> None:
    """The player-facing tools, and the designer's when asked for (`--designer`)."""
    tools = [tool for tool in TOOLS if designer or tool.scope == "game"]
    server = build_server(routes, tools, environment_key, version=version)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
